"""The IVF index behind the vector searches held in process, on every store: the embedded store and the
Neo4j store's copy (``neo4j.vector_search = client``) search through the same index from
``store.vector_index_min_rows`` rows, linking one vector at a time and the synonym step a batch, and
re-score the candidates exactly, so with every list probed they give the exact scan's answers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from hipporag_neo4j.common.text import make_phrase_id
from hipporag_neo4j.models import Passage
from hipporag_neo4j.stores.base import GraphStore, PassageRecord, PhraseRecord
from hipporag_neo4j.stores.memory.vector_index import VectorSearch
from tests.support.fakes import HashEmbedder

pytestmark = pytest.mark.integration

EMB = HashEmbedder(dim=32)
NAMES = [f"{word} {k}" for k in range(40) for word in ("river", "rivers", "harbour", "castle", "mill")]


def _opener(kind: str, tmp_path: Path) -> Callable[[VectorSearch], GraphStore]:
    """Opens the one store of ``kind`` (a path, or a fresh Neo4j namespace) with a vector search setting."""
    if kind == "embedded":
        from hipporag_neo4j.stores.embedded import EmbeddedStore

        def embedded(search: VectorSearch) -> GraphStore:
            return EmbeddedStore(tmp_path / "store", vector_search=search)

        return embedded
    from hipporag_neo4j.stores.neo4j.store import Neo4jStore
    from tests.support.neo4j_support import neo4j_settings_or_skip

    settings = neo4j_settings_or_skip()

    def neo4j(search: VectorSearch) -> GraphStore:
        return Neo4jStore(settings, vector_search=search)

    return neo4j


def _builds(store: GraphStore) -> int:
    holder = getattr(store, "cache", None) or store.copy  # type: ignore[attr-defined]
    return int(holder.indexes.builds)


@pytest.fixture(params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def stores(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[GraphStore, GraphStore, Callable[[VectorSearch], GraphStore]]]:
    """One graph opened twice: searched through the index (every list probed), and exactly."""
    opener = _opener(request.param, tmp_path)
    indexed = opener(VectorSearch("approximate", probes=64, synonym_probes=64))
    indexed.open(EMB.model_name, EMB.dimension)
    vectors = EMB.encode(NAMES)
    phrases = [PhraseRecord(make_phrase_id(n), n, vectors[k]) for k, n in enumerate(NAMES)]
    mentions = {p.id: 1 for p in phrases}
    record = PassageRecord(Passage(id="doc", text=" ".join(NAMES)), EMB.encode(["doc"])[0], mentions, [])
    indexed.write_passages(phrases, [record])
    exact = opener(VectorSearch("exact"))
    exact.open(EMB.model_name, EMB.dimension)
    yield indexed, exact, opener
    exact.close()
    indexed.close()


def test_linking_and_the_synonym_step_search_through_the_index_with_exact_answers(
    stores: tuple[GraphStore, GraphStore, Callable[[VectorSearch], GraphStore]],
) -> None:
    indexed, exact, _ = stores
    queries = EMB.encode(["river 3", "castle 12", "harbour 39"])
    linked = indexed.view().nearest_phrases(queries, 5, -1.0)
    assert _builds(indexed) == 1  # the phrase index, trained on first use
    assert linked == exact.view().nearest_phrases(queries, 5, -1.0) and all(len(h) == 5 for h in linked)
    pending = indexed.pending_synonym_phrases(1000)
    batch = np.stack([p.embedding for p in pending])
    ids = [p.id for p in pending]
    synonyms = indexed.nearest_phrases(batch, 10, 0.5, ids)
    assert synonyms == exact.nearest_phrases(batch, 10, 0.5, ids)
    assert any(synonyms) and all(
        hit.id != own for hits, own in zip(synonyms, ids, strict=True) for hit in hits
    )
    assert _builds(indexed) == 1 and _builds(exact) == 0  # the same index; the exact store trains none


def test_a_new_process_loads_the_index_another_one_trained(
    stores: tuple[GraphStore, GraphStore, Callable[[VectorSearch], GraphStore]],
) -> None:
    """The index persists (the embedded store's folder; Neo4j: beside the copy's file on disk), so each
    process and graph version does not train it again."""
    indexed, exact, opener = stores
    queries = EMB.encode(["mill 7"])
    first = indexed.view().nearest_phrases(queries, 5, -1.0)
    assert _builds(indexed) == 1
    later = opener(VectorSearch("approximate", probes=64, synonym_probes=64))
    later.open(EMB.model_name, EMB.dimension)
    try:
        assert (
            later.view().nearest_phrases(queries, 5, -1.0)
            == first
            == exact.view().nearest_phrases(queries, 5, -1.0)
        )
        assert _builds(later) == 0  # loaded, not trained
    finally:
        later.close()
