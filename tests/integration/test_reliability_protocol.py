"""The store protocol's crash-safety and re-embed methods, the same assertions on every store (the
embedded one everywhere, Neo4j where a server is reachable, as in ``test_store_conformance.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from hipporag_neo4j.common.text import make_phrase_id
from hipporag_neo4j.errors import ReembedPendingError
from hipporag_neo4j.stores.base import GraphStore, ReembedState, SynonymEdge
from tests.support.store_corpus import EMB, _records

pytestmark = pytest.mark.integration


def test_new_phrases_wait_for_their_synonyms_until_written(store: GraphStore) -> None:
    phrases, records = _records({"p1", "p2"})
    written = store.write_passages(phrases, records)
    assert written.passages == ["p1", "p2"] and written.phrases == len(phrases)
    pending = {p.id: p for p in store.pending_synonym_phrases(100)}
    assert set(pending) == {p.id for p in phrases}
    for p in phrases:
        assert np.allclose(pending[p.id].embedding, p.embedding) and pending[p.id].name == p.name
    first = sorted(pending)[:2]
    assert store.write_synonyms([SynonymEdge(first[0], first[1], 0.9)], done=first) == 1
    assert {p.id for p in store.pending_synonym_phrases(100)} == set(pending) - set(first)
    assert store.write_synonyms([], done=sorted(pending)) == 0
    assert store.pending_synonym_phrases(100) == []
    assert store.stats().synonym_edges == 1
    again = store.write_passages(phrases, records)  # stored already: nothing written, nothing new
    assert (again.passages, again.phrases, again.facts) == ([], 0, 0)


def test_a_stored_phrase_written_again_is_not_marked_pending_again(store: GraphStore) -> None:
    """A writer that found a phrase missing may write it after another writer stored it and gave it its
    synonym edges: only the write that creates a phrase marks it pending (CI: on Neo4j the second mark made
    the other writer's synonym step read the same marks twice and stop with "kept ... phrases marked")."""
    first, records = _records({"p1"})
    store.write_passages(first, records)
    store.write_synonyms([], done=[p.id for p in first])
    later, more = _records({"p3"})
    shared = {p.id for p in first} & {p.id for p in later}
    assert shared == {make_phrase_id("stanford")}
    store.write_passages(later, more)  # `later` holds "stanford" too, as if this writer found it missing
    assert {p.id for p in store.pending_synonym_phrases(100)} == {p.id for p in later} - shared


def test_a_pending_reembed_is_refused_until_it_is_finished(store: GraphStore) -> None:
    phrases, records = _records({"p1", "p3"})
    store.write_passages(phrases, records)
    store.write_synonyms([SynonymEdge(phrases[0].id, phrases[1].id, 0.9)], done=[p.id for p in phrases])
    state = ReembedState("other-model", 8, {"passage": "p1"})
    store.set_reembed_state(state)
    assert store.reembed_state() == state
    with pytest.raises(ReembedPendingError, match="other-model"):
        store.open(EMB.model_name, EMB.dimension)
    assert store.open_for_reembed() is not None
    assert [b for b in store.iter_texts("passage", 10, after="p1")] == [[("p3", records[1].passage.text)]]
    vectors = np.ones((len(phrases), 8), dtype=np.float32) / np.sqrt(8)
    store.set_embeddings("phrase", [p.id for p in phrases], vectors)
    store.finish_reembed("other-model", 8)
    assert store.reembed_state() is None
    assert store.stats().synonym_edges == 0  # dropped: they were the old model's
    assert {p.id for p in store.pending_synonym_phrases(100)} == {p.id for p in phrases}
    meta = store.open("other-model", 8)
    assert (meta.embedding_model, meta.embedding_dim) == ("other-model", 8)
    assert make_phrase_id("thomas") in {p.id for p in store.pending_synonym_phrases(100)}
