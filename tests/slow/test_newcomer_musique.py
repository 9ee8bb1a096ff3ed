"""Defects a newcomer met in their first hour (issue 18), each as the user met it.

A folder without a store, the MCP tools' arguments against their documentation, a Markdown file's
heading, the query output's layout, the CLI's messages and options, the benchmark's missing-data message,
and `eval` indexing only its corpus.

Split by tier from the former tests/test_newcomer_defects.py: this file holds the MuSiQue test; the rest
is in tests/unit/cli/test_newcomer_defects.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hipporag_neo4j import HippoRAG, load_settings
from tests.support.fakes import HashEmbedder

REPO = Path(__file__).resolve().parents[2]


MUSIQUE = REPO.parent / "shared" / "data" / "musique"


@pytest.mark.slow
def test_eval_with_the_musique_extraction_stores_only_the_corpus(tmp_path: Path) -> None:
    openie = MUSIQUE / "openie_musique_corpus1890_gpt-3.5-turbo-1106.json"
    corpus_file = MUSIQUE / "musique_corpus1890.json"
    if not openie.is_file() or not corpus_file.is_file():
        pytest.skip(f"MuSiQue data not found in {MUSIQUE}")
    from hipporag_neo4j.evaluation.loaders import load_corpus
    from hipporag_neo4j.evaluation.runner import index_corpus

    corpus = load_corpus(corpus_file)[:300]
    settings = load_settings({"store": {"path": str(tmp_path / "kb")}}, env_file=None)
    with HippoRAG(settings, embedder=HashEmbedder()) as memory:
        indexed = index_corpus(memory, corpus, openie)
        assert memory.stats().passages == 300
        assert len(set(indexed.passage_ids)) == 300 and indexed.missing == []
