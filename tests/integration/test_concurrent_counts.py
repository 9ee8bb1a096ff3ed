"""True counts when another index run writes to the same store meanwhile, as two terminals or two cron
jobs would: the phrases and facts a run reports as new are those its own writes inserted, so the two
reports add up to what the store holds. Before, a run also counted the phrases it had found missing and
the other run stored between that check and its write. Real embedder and spaCy, embedded store on disk;
the other run is made to write exactly in that gap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j import HippoRAG
from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.embedded import EmbeddedStore
from tests.support.concurrent_runs import OtherRunWritesInTheGap, race

pytestmark = pytest.mark.integration


def test_counts_are_what_this_run_inserted(tmp_path: Path, minilm: Any) -> None:
    settings = load_settings({"store": {"path": str(tmp_path / "kb")}}, env_file=None, config_file=None)
    other = HippoRAG(settings, embedder=minilm)
    racing = OtherRunWritesInTheGap(EmbeddedStore(tmp_path / "kb"), other)
    mine = HippoRAG(settings, store=racing, embedder=minilm)  # type: ignore[arg-type]
    report, theirs, stats = race(mine, other, racing)
    # each phrase and fact counted once, by the run that inserted it
    assert report.new_phrases + theirs.new_phrases == stats.phrases, (report, theirs, stats)
    assert report.new_facts + theirs.new_facts == stats.facts, (report, theirs, stats)
