"""Importing pre-extracted OpenIE (HippoRAG JSON and JSONL) and replaying it as an Extractor.

Split by tier from the former tests/test_recorded_extraction.py: this file holds the MuSiQue file; the
rest is in tests/unit/extraction/test_recorded_extraction.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hipporag_neo4j.common.text import make_passage_id
from hipporag_neo4j.extraction.recorded import (
    RecordedExtractor,
    load_recorded_extraction,
)
from hipporag_neo4j.models import Extraction, Passage

MUSIQUE = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "musique"


MUSIQUE_OPENIE = MUSIQUE / "openie_musique_corpus1890_gpt-3.5-turbo-1106.json"


MUSIQUE_CORPUS = MUSIQUE / "musique_corpus1890.json"


@pytest.mark.slow
def test_real_musique_openie_file_loads_completely() -> None:
    if not MUSIQUE_OPENIE.is_file():
        pytest.skip(f"MuSiQue OpenIE file not found at {MUSIQUE_OPENIE} (shared data is not beside the repo)")
    recorded = load_recorded_extraction(MUSIQUE_OPENIE)
    raw_triples = sum(len(d["extracted_triples"]) for d in json.loads(MUSIQUE_OPENIE.read_text())["docs"])
    dropped = sum(len(r.extraction.dropped) for r in recorded.records)
    print(
        f"MuSiQue OpenIE: {len(recorded)} passages, {raw_triples} raw triples, "
        f"{recorded.triple_count} valid, {dropped} dropped as invalid"
    )
    assert recorded.format == "hipporag"
    assert recorded.failures == []
    assert len(recorded.passages) == 1890
    assert raw_triples == 17_419
    # measured: 186 malformed (185 not 3 items, 1 empty after normalisation), 30 exact duplicates
    assert recorded.triple_count == 17_203
    assert dropped == 186
    if MUSIQUE_CORPUS.is_file():
        corpus = json.loads(MUSIQUE_CORPUS.read_text(encoding="utf-8"))
        extractor = RecordedExtractor(recorded)
        passages = [
            Passage(id=make_passage_id(d["text"], d["title"]), text=d["text"], title=d["title"])
            for d in corpus
        ]
        assert all(isinstance(r, Extraction) for r in extractor.extract(passages))
