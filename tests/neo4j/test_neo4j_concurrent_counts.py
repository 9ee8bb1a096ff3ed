"""True counts when another index run writes to the same store meanwhile, as two terminals or two cron
jobs would: the phrases and facts a run reports as new are those its own writes inserted, so the two
reports add up to what the store holds. Before, a run also counted the phrases it had found missing and
the other run stored between that check and its write. Real embedder and spaCy, embedded store on disk;
the other run is made to write exactly in that gap.

Split by tier from the former tests/test_concurrent_counts.py: this file holds the Neo4j test; the rest is
in tests/integration/test_concurrent_counts.py.
"""

from __future__ import annotations

import pytest

from hipporag_neo4j import HippoRAG
from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.neo4j import Neo4jStore
from tests.support.concurrent_runs import OtherRunWritesInTheGap, race
from tests.support.fakes import HashEmbedder
from tests.support.neo4j_support import TEST_EMBEDDING_DIM, neo4j_settings_or_skip

pytestmark = pytest.mark.integration


@pytest.mark.neo4j
def test_counts_are_what_this_run_inserted_on_neo4j() -> None:
    """The same race on one Neo4j namespace: the counts come from the MERGEs of each run's own write
    transaction (write_phrases / write_facts count what they create), not from its earlier check."""
    n4j = neo4j_settings_or_skip(ppr_engine="local", vector_search="client")
    settings = load_settings(
        {"llm": {"model": None}, "store": {"backend": "neo4j"}, "neo4j": n4j.model_dump()}, env_file=None
    )
    embedder = HashEmbedder(TEST_EMBEDDING_DIM)
    other = HippoRAG(settings, store=Neo4jStore(n4j), embedder=embedder)
    racing = OtherRunWritesInTheGap(Neo4jStore(n4j), other)
    mine = HippoRAG(settings, store=racing, embedder=embedder)  # type: ignore[arg-type]
    report, theirs, stats = race(mine, other, racing)
    assert theirs.new_phrases > 0 and report.new_phrases > 0  # both runs inserted some (not a no-op race)
    assert report.new_phrases + theirs.new_phrases == stats.phrases, (report, theirs, stats)
    assert report.new_facts + theirs.new_facts == stats.facts, (report, theirs, stats)
