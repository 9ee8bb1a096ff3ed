"""The Neo4j side of crash-safe synonyms and resumable re-embeds, against the recorded-result driver:
which statements run, in which transaction. (The behaviour itself is asserted on a real server by the
conformance suite; here no server is needed.)"""

from __future__ import annotations

import pytest

from hipporag_neo4j.errors import ReembedPendingError
from hipporag_neo4j.stores.base import PhraseRecord, ReembedState, SynonymEdge
from hipporag_neo4j.stores.neo4j.cypher import load_query
from tests.support.neo4j_store_fakes import open_store, opened_driver, passage, vec, write_driver

pytestmark = pytest.mark.unit


def test_new_phrases_are_marked_pending_in_the_transaction_that_writes_them() -> None:
    driver = write_driver(existing=set())
    store = open_store(driver)
    driver.calls.clear()
    written = store.write_passages([PhraseRecord("ph0", "paris", vec(1, 0, 0))], [passage("p1", {"ph0": 1})])
    assert written.passages == ["p1"]
    # the mark is set by the statement that writes the phrases
    text = load_query("write_phrases").text
    assert "p.written_in = $version,\n    p:SynonymsPending\n" in text  # ON CREATE: the phrases it inserts
    assert text.count("SynonymsPending") == 1
    assert [[r["id"] for r in c.params["rows"]] for c in driver.named("write_phrases")] == [["ph0"]]
    [write_tx] = {c.tx for c in driver.calls if c.name not in ("server_database_id", "meta_read")}
    assert write_tx in driver.committed  # with the phrases, one transaction


def test_synonym_edges_and_clearing_their_marks_are_one_transaction() -> None:
    driver = opened_driver().on("write_synonyms", lambda p: [{"created": len(p["rows"])}])
    store = open_store(driver)
    driver.calls.clear()
    assert store.write_synonyms([SynonymEdge("b", "a", 0.9)], done=["a", "b"]) == 1
    assert driver.named("synonyms_pending_clear")[0].params["ids"] == ["a", "b"]
    assert {c.tx for c in driver.calls} == {driver.committed[-1]}


def test_pending_phrases_come_with_the_vectors_this_process_wrote_without_reading_them() -> None:
    driver = write_driver(existing=set())
    driver.on(
        "client_state", [{"graph_version": 1, "embedding_model": "all-MiniLM-L6-v2", "embedding_dim": 3}]
    )
    driver.on("synonyms_pending_read", [{"id": "ph0", "name": "paris"}, {"id": "ph1", "name": "rome"}])
    driver.on("client_vectors_phrase", [{"ids": ["ph1"], "vectors": [[0.0, 1.0, 0.0]]}])
    store = open_store(driver, dim=3)
    store.write_passages([PhraseRecord("ph0", "paris", vec(1, 0, 0))], [passage("p1", {"ph0": 1})])
    driver.calls.clear()
    ph0, ph1 = store.pending_synonym_phrases(10)
    assert (ph0.id, ph0.name, ph0.embedding.tolist()) == ("ph0", "paris", [1.0, 0.0, 0.0])
    assert (ph1.id, ph1.name, ph1.embedding.tolist()) == ("ph1", "rome", [0.0, 1.0, 0.0])
    assert driver.named("synonyms_pending_read")[0].params["limit"] == 10
    # only the vector this process did not write is read; then it is held too
    assert [c.params["ids"] for c in driver.named("client_vectors_phrase")] == [["ph1"]]
    driver.calls.clear()
    assert [p.id for p in store.pending_synonym_phrases(10)] == ["ph0", "ph1"]
    assert not driver.named("client_vectors_phrase")


def test_open_refuses_a_namespace_whose_reembed_did_not_finish() -> None:
    state = ReembedState("other-model", 384, {"passage": "p9"})
    driver = opened_driver().on("meta_reembed_read", [{"reembed_state": state.to_json()}])
    with pytest.raises(ReembedPendingError, match=r"other-model.*reembed` again"):
        open_store(driver)


def test_finish_reembed_resets_synonyms_and_forgets_the_state() -> None:
    driver = opened_driver()
    store = open_store(driver)
    driver.calls.clear()
    store.finish_reembed("all-MiniLM-L6-v2", 384)
    ran = driver.names_run()
    assert ran.index("meta_set_model") < ran.index("synonyms_reset#0") < ran.index("synonyms_reset#1")
    cleared = driver.named("meta_reembed_set")
    assert cleared and cleared[-1].params["reembed_state"] is None
