"""Load the named ``.cypher`` files and validate the few names that reach Cypher.

The files live in ``cypher/`` at the repository root and are shipped in the wheel as
``hipporag_neo4j/cypher/`` (pyproject force-include); :func:`cypher_dir` finds either. Every statement
takes its values as ``$parameters``; :class:`CypherQuery` knows which ones, so a call that passes the
wrong set fails before it reaches the server.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from hipporag_neo4j.errors import ConfigError, StoreError
from hipporag_neo4j.settings import SAFE_NAME

QUERY_NAME = re.compile(r"^[a-z][a-z0-9_]{0,80}$")
_PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def safe_identifier(value: str, what: str) -> str:
    """``value`` if it is a plain identifier (letters, digits, underscore; starts with a letter)."""
    if not SAFE_NAME.match(value):
        raise ConfigError(f"{what} {value!r} must match {SAFE_NAME.pattern} (letters, digits, underscore)")
    return value


@dataclass(frozen=True)
class CypherQuery:
    """One statement of a named file."""

    name: str
    text: str
    parameters: frozenset[str]

    def check_parameters(self, given: set[str] | frozenset[str]) -> None:
        missing = self.parameters - given
        extra = given - self.parameters
        if missing or extra:
            raise StoreError(
                f"cypher {self.name}: parameters do not match the statement "
                f"(missing: {sorted(missing)}, unexpected: {sorted(extra)})"
            )


def _scan(text: str) -> tuple[str, list[int]]:
    """``text`` with ``//`` comments removed and string literals emptied, and the offsets in ``text`` of
    the statement-ending semicolons (outside strings and comments). A small scanner: an apostrophe in
    a comment must not open a string, a ``;`` in a string must not end a statement."""
    out: list[str] = []
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif ch in "'\"`":
            j = i + 1
            while j < n and text[j] != ch:
                j += 2 if text[j] == "\\" and ch != "`" else 1
            out.append(ch + ch)
            i = j + 1
        else:
            if ch == ";":
                ends.append(i)
            out.append(ch)
            i += 1
    return "".join(out), ends


def parameters_of(text: str) -> frozenset[str]:
    """The ``$parameter`` names a statement uses (comments and string literals ignored)."""
    return frozenset(_PARAMETER.findall(_scan(text)[0]))


def split_statements(text: str) -> list[str]:
    """Statements of a script separated by ``;`` (comment-only parts dropped)."""
    parts, start = [], 0
    for end in [*_scan(text)[1], len(text)]:
        parts.append(text[start:end])
        start = end + 1
    return [part.strip() for part in parts if _scan(part)[0].strip()]


def cypher_dir() -> Traversable:
    """``hipporag_neo4j/cypher`` of an installed wheel, else ``<repo>/cypher`` of a source checkout."""
    packaged = resources.files("hipporag_neo4j").joinpath("cypher")
    if packaged.is_dir():
        return packaged
    source = Path(__file__).resolve().parents[3] / "cypher"
    if source.is_dir():
        return source
    raise StoreError(f"the Cypher files are missing: neither {packaged} nor {source} exists")


def query_names() -> list[str]:
    """Names of every shipped ``.cypher`` file."""
    return sorted(
        entry.name.removesuffix(".cypher")
        for entry in cypher_dir().iterdir()
        if entry.name.endswith(".cypher")
    )


@cache
def load_script(name: str) -> tuple[CypherQuery, ...]:
    """All statements of the named file, in order."""
    if not QUERY_NAME.match(name):
        raise StoreError(f"invalid Cypher file name {name!r}")
    entry = cypher_dir().joinpath(f"{name}.cypher")
    if not entry.is_file():
        raise StoreError(f"no Cypher file {name}.cypher in {cypher_dir()}")
    statements = split_statements(entry.read_text(encoding="utf-8"))
    if not statements:
        raise StoreError(f"Cypher file {name}.cypher holds no statement")
    return tuple(CypherQuery(name, text, parameters_of(text)) for text in statements)


def load_query(name: str) -> CypherQuery:
    """The single statement of the named file."""
    script = load_script(name)
    if len(script) != 1:
        raise StoreError(f"Cypher file {name}.cypher holds {len(script)} statements, expected one")
    return script[0]


#: Where a statement names a per-dimension index or label (``hipporag_phrase_embedding_DIM``,
#: ``PhraseEmbeddingDIM``): Cypher takes no parameter there (index and label names in schema commands,
#: the SEARCH clause's index), so :func:`with_dimension` splices the checked dimension in.
_DIMENSION_SLOT = re.compile(r"(?<=[A-Za-z]_embedding_)DIM\b|(?<=[A-Za-z]Embedding)DIM\b")


def with_dimension(query: CypherQuery, dim: int) -> CypherQuery:
    """``query`` with every ``..._embedding_DIM`` / ``...EmbeddingDIM`` name made ``dim``'s (checked: an
    integer from 1 to 4096, so only digits reach the text)."""
    from hipporag_neo4j.stores.neo4j.graph_model import check_dimension

    if not _DIMENSION_SLOT.search(query.text):
        raise StoreError(f"cypher {query.name}: no per-dimension name to splice")
    text = _DIMENSION_SLOT.sub(str(check_dimension(dim)), query.text)
    return CypherQuery(query.name, text, query.parameters)
