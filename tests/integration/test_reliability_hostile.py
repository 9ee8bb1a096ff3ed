"""Hostile names and text on the embedded store: nothing escapes the store's folder, nothing crashes,
and SQL or Cypher in a passage is stored and returned as text."""

from __future__ import annotations

from pathlib import Path

import pytest

from hipporag_neo4j.errors import StoreError
from tests.support.pipeline_support import make_memory

pytestmark = pytest.mark.integration

PAYLOADS = [
    "Robert'); DROP TABLE passages; -- lives in Paris.",
    'x" OR 1=1; DELETE FROM phrases WHERE "1"="1 is near Paris.',
    "MATCH (n) DETACH DELETE n // Bobby lives in Paris.",
    "`backtick` }) SET n:Admin WITH n CALL db.clearQueryCaches() lives in Paris.",
    "null \x00 byte and\nnew line and \u202e right-to-left lives in Paris.",
]
NAMES = [
    "it's",
    'say "hi"',
    "back`tick",
    "semi;colon -- comment",
    "new\nline",
    "tab\tand space ",
    "ünïcødé 東京",
    "$(touch pwned)",
    "%s%n{0}",
]


def files_under(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*")}


def index_and_read_back(store: Path) -> None:
    table = {text: [["bobby", "lives in", "paris"]] for text in PAYLOADS}
    memory = make_memory(store, table, {"Who lives in Paris?": ["paris"]})
    report = memory.index(
        [{"id": f"id {i} '; `x` \n", "text": t, "title": "t'`\"; --"} for i, t in enumerate(PAYLOADS)]
    )
    assert not report.failed and len(report.indexed) == len(PAYLOADS)
    found = memory.retrieve("Who lives in Paris?", top_k=len(PAYLOADS))
    assert sorted(p.passage.text for p in found.passages) == sorted(t.strip() for t in PAYLOADS)
    assert memory.stats().passages == len(PAYLOADS)  # every table still there, every row in it
    memory.close()


@pytest.mark.parametrize("name", NAMES)
def test_store_paths_with_quotes_backticks_and_newlines(tmp_path: Path, name: str) -> None:
    index_and_read_back(tmp_path / name / name)
    assert {p.parts[0] for p in files_under(tmp_path)} == {name}  # nothing written beside the store


def test_a_store_path_with_dot_dot_stays_where_it_resolves(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    index_and_read_back(tmp_path / "a" / ".." / "b")
    assert files_under(tmp_path / "a") == set()
    assert {p.name for p in (tmp_path / "b").iterdir()} <= {
        "graph.sqlite",
        "graph.sqlite-wal",
        "graph.sqlite-shm",
        "snapshot",  # the persisted retrieval snapshot
    }


@pytest.mark.parametrize(
    ("path", "reason"),
    [("x" * 300, "File name too long"), ("nul\x00byte", "null"), ("/proc/no-such-store", "")],
)
def test_unusable_store_paths_are_a_clear_error(tmp_path: Path, path: str, reason: str) -> None:
    memory = make_memory(tmp_path / path if not path.startswith("/") else Path(path), {})
    with pytest.raises(StoreError, match="cannot open embedded store at") as error:
        memory.stats()
    assert reason in str(error.value)


def test_long_store_paths_work_up_to_sqlites_limit_and_fail_clearly_beyond(tmp_path: Path) -> None:
    room = 480 - len(str(tmp_path))  # a path of ~480 bytes to graph.sqlite: under SQLite's limit
    index_and_read_back(tmp_path.joinpath(*["d" * 50] * (room // 51)))
    deep = tmp_path.joinpath(*["d" * 200] * 10)  # 2,000 characters, each part under the 255-byte limit
    with pytest.raises(StoreError, match="use a shorter path"):
        make_memory(deep, {}).stats()
