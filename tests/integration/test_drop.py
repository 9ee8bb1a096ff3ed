"""Dropping a whole knowledge base: everything of the namespace goes, nothing else does.

The store half runs on the embedded store everywhere and on Neo4j where a server is reachable; the CLI
half on the embedded store with the real model, as a user runs it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from hipporag_neo4j.cli.main import main
from hipporag_neo4j.common.text import make_phrase_id
from hipporag_neo4j.stores.base import GraphStore, SynonymEdge
from tests.support.fakes import HashEmbedder
from tests.support.store_corpus import _index

pytestmark = pytest.mark.integration

#: a dimension no other test uses, so the Neo4j test sees its vector indexes go
EMB = HashEmbedder(dim=12)
ALL = {"p1", "p2", "p3", "p4", "p5"}


def _counts(store: GraphStore) -> tuple[int, int, int, int, int, int]:
    s = store.stats()
    return (s.passages, s.phrases, s.facts, s.relation_edges, s.synonym_edges, s.mentions)


def _pair(kind: str, tmp_path: Path) -> tuple[GraphStore, GraphStore, GraphStore]:
    """Two namespaces of one store or database, and a third handle on the first (another process's)."""
    if kind == "embedded":
        from hipporag_neo4j.stores.embedded import EmbeddedStore

        root = tmp_path / "store"
        return EmbeddedStore(root), EmbeddedStore(root / "namespaces" / "other"), EmbeddedStore(root)
    from hipporag_neo4j.stores.neo4j.store import Neo4jStore
    from tests.support.neo4j_support import neo4j_settings_or_skip

    dropped = neo4j_settings_or_skip()
    return (
        Neo4jStore(dropped),
        Neo4jStore(neo4j_settings_or_skip()),
        Neo4jStore(dropped),
    )


@pytest.fixture(params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def stores(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[GraphStore, GraphStore, GraphStore]]:
    trio = _pair(request.param, tmp_path)
    yield trio
    for s in trio:
        s.close()


def test_drop_removes_the_namespace_and_nothing_else(
    stores: tuple[GraphStore, GraphStore, GraphStore],
) -> None:
    dropped, other, again = stores
    for s in (dropped, other):
        s.open(EMB.model_name, EMB.dimension)
        _index(s, ALL)
        s.write_synonyms([SynonymEdge(make_phrase_id("harvard"), make_phrase_id("stanford"), 0.9)])
    before_other = _counts(other)
    before = _counts(dropped)
    assert before[0] == 5 and before[4] == 1

    report = dropped.drop_namespace()

    assert report.removed is not None
    assert (report.removed.passages, report.removed.phrases, report.removed.facts) == before[:3]
    assert _counts(other) == before_other
    # another handle (a later process) finds no knowledge base: no metadata, nothing stored
    assert again.meta() is None
    assert again.drop_namespace().removed is None
    # and the namespace can be used again from scratch
    again.open(EMB.model_name, EMB.dimension)
    assert _counts(again) == (0, 0, 0, 0, 0, 0)
    _index(again, {"p1"})
    assert _counts(again)[0] == 1
    assert _counts(other) == before_other


def test_cli_drop_asks_first_then_drops_one_namespace(tmp_path: Path) -> None:
    store = tmp_path / "store"
    doc = tmp_path / "thomas.txt"
    doc.write_text("Thomas Müller is a professor at Stanford University.", encoding="utf-8")

    def run(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(main, ["--store", str(store), *args], catch_exceptions=False)
        return result.exit_code, result.stdout if args[0] == "--json" else result.output

    assert run("index", str(doc))[0] == 0
    assert run("--namespace", "kept", "index", str(doc))[0] == 0

    code, out = run("--json", "drop")
    assert code == 3  # shown, not done
    preview = json.loads(out)
    assert preview["dropped"] is False and preview["would_remove"]["passages"] == 1
    assert run("--json", "stats")[0] == 0

    code, out = run("--json", "drop", "--yes")
    assert code == 0
    done = json.loads(out)
    assert done["dropped"] is True and done["removed"]["passages"] == 1
    assert not (store / "graph.sqlite").exists()
    assert sorted(p.name for p in store.iterdir()) == ["namespaces"]  # nothing of it is left

    code, out = run("stats")
    assert code == 1 and "no store" in out
    code, out = run("drop", "--yes")
    assert code == 1 and "no store" in out  # nothing to drop is said, not silently done
    code, out = run("--json", "--namespace", "kept", "stats")
    assert code == 0 and json.loads(out)["passages"] == 1
