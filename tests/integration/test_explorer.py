"""The graph explorer (``/explorer`` of ``serve``): its reads on both stores, its API, and the page driven
in a real headless Chromium (Debian's ``chromium`` through Playwright; no browser download).

The integration part builds the demo store once (recorded OpenIE, the real all-MiniLM-L6-v2 embedder,
the demo's graph of accounts linked with SAME_AS, and one passage whose text is an XSS attempt) and runs
the real ``hipporag-neo4j serve`` over it on a free loopback port.

Split by tier from the former tests/test_explorer.py: this file holds the reads and the API over serve;
the rest is in tests/unit/server/test_explorer.py, tests/e2e/test_explorer_browser.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hipporag_neo4j.common.text import make_phrase_id
from hipporag_neo4j.errors import InputError
from hipporag_neo4j.stores.base import GraphEdge, GraphNode
from tests.support.explorer_fixtures import KEY, XSS_ID, XSS_TEXT
from tests.support.server_support import ServerProcess


@pytest.fixture(params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def small_store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    from hipporag_neo4j.stores.base import SynonymEdge
    from tests.support import store_corpus
    from tests.support.fakes import HashEmbedder
    from tests.support.store_corpus import CORPUS, _index, _open_store

    # 384-d like the demo's model: one Neo4j database holds vector indexes of one dimension
    monkeypatch.setattr(store_corpus, "EMB", HashEmbedder(dim=384))
    store = _open_store(request.param, tmp_path)
    _index(store, {pid for pid, _, _ in CORPUS})
    stanford, harvard = make_phrase_id("stanford"), make_phrase_id("harvard")
    store.write_synonyms([SynonymEdge(stanford, harvard, 0.85).canonical()])
    yield store
    store.close()


def _ref(name: str) -> tuple[str, str]:
    return ("phrase", make_phrase_id(name))


@pytest.mark.integration
def test_graph_explorer_reads_agree_on_both_stores(small_store: Any) -> None:
    from hipporag_neo4j.stores.base import GraphExplorer

    store = small_store
    assert isinstance(store, GraphExplorer)
    stanford, harvard = make_phrase_id("stanford"), make_phrase_id("harvard")
    assert store.search_nodes("STAN", 10) == [GraphNode("phrase", stanford, "stanford", passage_count=2)]
    assert store.search_nodes("p3", 10) == [GraphNode("passage", "p3", "p3")]

    around = store.neighbourhood("phrase", stanford, 10)
    assert around.center == GraphNode("phrase", stanford, "stanford", passage_count=2)
    assert {(n.kind, n.id) for n in around.nodes} == {
        _ref("thomas"), _ref("maria"), _ref("harvard"), ("passage", "p1"), ("passage", "p3")
    }  # fmt: skip
    assert not around.truncated
    assert set(around.edges) == {
        GraphEdge("RELATION", _ref("thomas"), ("phrase", stanford), 1.0, "is professor at"),
        GraphEdge("RELATION", _ref("maria"), ("phrase", stanford), 1.0, "works at"),
        GraphEdge("SYNONYM", *sorted([("phrase", stanford), ("phrase", harvard)]), 0.85),
        GraphEdge("MENTIONS", ("passage", "p1"), ("phrase", stanford), 1.0),
        GraphEdge("MENTIONS", ("passage", "p3"), ("phrase", stanford), 1.0),
    }
    # every neighbour counted, not only those shown
    assert around.totals == {"RELATION": 2, "SYNONYM": 1, "SAME_AS": 0, "MENTIONS": 2}
    cut = store.neighbourhood("phrase", stanford, 2)  # one relation (ties by id), then the synonym
    first = min(make_phrase_id("thomas"), make_phrase_id("maria"))
    assert [(n.kind, n.id) for n in cut.nodes] == [("phrase", first), ("phrase", harvard)]
    assert cut.truncated and cut.totals == around.totals

    passage = store.neighbourhood("passage", "p5", 10)
    assert {n.label for n in passage.nodes} == {"harvard", "cambridge"}
    assert passage.totals == {"MENTIONS": 2}
    assert GraphEdge("RELATION", _ref("harvard"), _ref("cambridge"), 1.0, "is in") in passage.edges
    assert GraphEdge("MENTIONS", ("passage", "p5"), _ref("harvard"), 2.0) in passage.edges

    among = store.edges_among([stanford, harvard, make_phrase_id("thomas")], ["p1"])
    assert set(among) == {
        GraphEdge("RELATION", _ref("thomas"), ("phrase", stanford), 1.0, "is professor at"),
        GraphEdge("SYNONYM", *sorted([("phrase", stanford), ("phrase", harvard)]), 0.85),
        GraphEdge("MENTIONS", ("passage", "p1"), _ref("thomas"), 1.0),
        GraphEdge("MENTIONS", ("passage", "p1"), ("phrase", stanford), 1.0),
    }
    assert store.neighbourhood("phrase", "phrase-missing", 5).center is None
    assert store.neighbourhood("passage", "missing", 5).center is None
    assert store.neighbourhood("entity", "missing", 5).center is None
    assert len(store.namespaces()) >= 1
    with pytest.raises(InputError, match="empty"):
        store.search_nodes("  ", 5)


@pytest.mark.integration
def test_embedded_store_explorer_reads(demo_store: Path) -> None:
    from hipporag_neo4j.stores.embedded import EmbeddedStore

    store = EmbeddedStore(demo_store)
    try:
        found = store.search_nodes("várkonyi", 10)
        assert {(n.kind, n.label) for n in found} >= {
            ("phrase", "helena várkonyi"),
            ("passage", "Helena Várkonyi"),
        }
        stanford = make_phrase_id("stanford university")
        around = store.neighbourhood("phrase", stanford, 300)
        assert not around.truncated
        kinds = {e.kind for e in around.edges}
        assert {"RELATION", "MENTIONS"} <= kinds
        assert any(n.kind == "passage" and n.label == "Helena Várkonyi" for n in around.nodes)
        cut = store.neighbourhood("phrase", stanford, 3)
        assert len(cut.nodes) == 3 and cut.truncated
        lumora = store.neighbourhood("phrase", make_phrase_id("lumora biotics"), 50)
        entity = next(n for n in lumora.nodes if n.kind == "entity")
        assert entity.label == "Lumora Biotics" and entity.labels == ("Account",)
        account = store.neighbourhood("entity", entity.id, 50)
        assert any(e.kind == "LINKED" and e.label == "SUBSIDIARY_OF" for e in account.edges)
        assert any(e.kind == "SAME_AS" for e in account.edges)
        passage_id = next(n.id for n in around.nodes if n.label == "Helena Várkonyi")
        passage = store.neighbourhood("passage", passage_id, 50)
        assert {n.label for n in passage.nodes} >= {"helena várkonyi", "stanford university"}
        assert any(e.kind == "RELATION" for e in passage.edges)  # the facts it states, among its phrases
        among = store.edges_among([stanford, make_phrase_id("helena várkonyi")], [passage_id])
        assert {e.kind for e in among} == {"RELATION", "MENTIONS"}
        assert store.neighbourhood("phrase", "phrase-none", 5).center is None
        assert store.namespaces() == ["default"]
    finally:
        store.close()


def _get(server: ServerProcess, path: str, key: str | None = KEY, **params: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.get(server.url + path, params=params, headers=headers, timeout=60)


@pytest.mark.integration
def test_explorer_api_over_serve(server: ServerProcess) -> None:
    assert _get(server, "/explorer/", key=None).status_code == 200  # the page holds no data
    assert _get(server, "/explorer/api/overview", key=None).status_code == 401
    assert _get(server, "/explorer/api/overview", key="wrong").status_code == 401
    overview = _get(server, "/explorer/api/overview").json()
    assert overview["backend"] == server.backend  # type: ignore[attr-defined]
    assert overview["namespace"] in overview["namespaces"]
    assert overview["stats"]["passages"] == 43
    on_neo4j = server.backend == "neo4j"  # type: ignore[attr-defined]
    assert (overview["cypher"] is not None) == on_neo4j  # the Browser Cypher only on Neo4j
    stanford = make_phrase_id("stanford university")
    graph = _get(server, "/explorer/api/neighbourhood", kind="phrase", id=stanford, limit=2).json()
    assert graph["center"]["key"] == f"phrase:{stanford}" and graph["truncated"]
    assert len([n for n in graph["nodes"] if n["kind"] != "more"]) == 2
    # what was left out is drawn as "+N more" nodes, N from the totals
    groups = {g["edge"]: g for g in graph["groups"]}
    mores = {n["key"]: n["label"] for n in graph["nodes"] if n["kind"] == "more"}
    assert mores and all(
        mores[g["more"]].startswith(f"+{g['total'] - g['shown']} more ") for g in groups.values() if g["more"]
    )
    assert (
        groups["MENTIONS"]["total"]
        == _get(server, "/explorer/api/search", q="stanford university").json()[0]["passage_count"]
    )
    if on_neo4j:
        assert graph["cypher"]["file"] == "cypher/explore_phrase.cypher"
        assert ':param name => "stanford university"' in graph["cypher"]["text"]
    assert (
        _get(server, "/explorer/api/neighbourhood", kind="phrase", id=stanford, limit=301).status_code == 422
    )
    assert _get(server, "/explorer/api/neighbourhood", kind="phrase", id="nope").status_code == 404
    assert _get(server, "/explorer/api/neighbourhood", kind="fact", id=stanford).status_code == 422
    page = _get(server, "/explorer/api/passages", limit=40).json()
    assert len(page["passages"]) == 40 and page["next_after"] == page["passages"][-1]["id"]
    rest = _get(server, "/explorer/api/passages", after=page["next_after"], limit=40).json()
    assert len(rest["passages"]) == 3 and rest["next_after"] is None
    passage = _get(server, "/explorer/api/passage", id=XSS_ID).json()
    assert passage["passage"]["text"] == XSS_TEXT
    assert _get(server, "/explorer/api/search", q="").status_code == 422


# --- a hub phrase: hundreds of chunks of one file mention it ---------------------------------------------

HUB_CHUNKS = 120


@pytest.fixture(params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def hub_store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    """A ticket archive's chunks (``support/tickets-2023.txt#n``, no title), each stating that its ticket
    was handled by one agent: "agent" is mentioned by every chunk and related to every ticket phrase."""
    from hipporag_neo4j.common.text import fact_text, make_fact_id
    from hipporag_neo4j.models import Passage
    from hipporag_neo4j.stores.base import FactRecord, PassageRecord, PhraseRecord
    from tests.support import store_corpus
    from tests.support.fakes import HashEmbedder
    from tests.support.store_corpus import _open_store

    emb = HashEmbedder(dim=384)
    monkeypatch.setattr(store_corpus, "EMB", emb)
    store = _open_store(request.param, tmp_path)
    hub = make_phrase_id("agent")
    phrases = {hub: PhraseRecord(hub, "agent", emb.encode(["agent"])[0])}
    records = []
    for n in range(HUB_CHUNKS):
        ticket = f"ticket fh {1900 + n}"
        tid = make_phrase_id(ticket)
        phrases[tid] = PhraseRecord(tid, ticket, emb.encode([ticket])[0])
        text = fact_text(ticket, "handled by", "agent")
        fact = FactRecord(
            make_fact_id(ticket, "handled by", "agent"), tid, "handled by", hub, text, emb.encode([text])[0]
        )
        passage = Passage(id=f"support/tickets-2023.txt#{n}", text=f"Ticket FH-{1900 + n}. Agent: Omar.")
        records.append(PassageRecord(passage, emb.encode([passage.text])[0], {hub: 1, tid: 1}, [fact]))
    store.write_passages(list(phrases.values()), records)
    yield store
    store.close()


@pytest.mark.integration
def test_a_hub_phrase_is_capped_per_kind_and_grouped_with_its_real_count(hub_store: Any) -> None:
    from hipporag_neo4j.server.explorer.routes import grouped

    hub = make_phrase_id("agent")
    found = hub_store.neighbourhood("phrase", hub, 60)
    assert found.totals == {"RELATION": HUB_CHUNKS, "SYNONYM": 0, "SAME_AS": 0, "MENTIONS": HUB_CHUNKS}
    assert found.truncated and len(found.nodes) == 60
    graph = grouped(found, 25, None)
    passages = [n for n in graph.nodes if n.kind == "passage"]
    assert len(passages) == 25 and len([n for n in graph.nodes if n.kind == "phrase"]) == 25
    more = {n.label for n in graph.nodes if n.kind == "more"}
    assert more == {f"+{HUB_CHUNKS - 25} more passages", f"+{HUB_CHUNKS - 25} more related phrases"}
    # a chunk is called by its file name and keeps its #n
    assert all(n.label == n.id.removeprefix("support/") for n in passages), passages
    assert all(n.label.startswith("tickets-2023.txt#") for n in passages)
    assert {(g.edge, g.shown, g.total) for g in graph.groups} == {
        ("RELATION", 25, HUB_CHUNKS),
        ("MENTIONS", 25, HUB_CHUNKS),
    }
    # the search and a passage's own neighbourhood call chunks the same way
    found = hub_store.search_nodes("tickets-2023.txt#7", 20)
    assert [n.label for n in found] == ["tickets-2023.txt#7", *(f"tickets-2023.txt#7{i}" for i in range(10))]
    own = hub_store.neighbourhood("passage", "support/tickets-2023.txt#7", 10)
    assert own.center.label == "tickets-2023.txt#7" and own.totals == {"MENTIONS": 2}
