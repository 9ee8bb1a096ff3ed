"""Helpers for pipeline tests: a HippoRAG over an embedded store with fake components."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.embedding.encoder import Embedder
from hipporag_neo4j.evaluation.loaders import load_corpus, load_questions
from hipporag_neo4j.evaluation.report import format_comparisons, format_table
from hipporag_neo4j.evaluation.runner import EvalReport, index_corpus, run_evaluation
from hipporag_neo4j.extraction.spacy_extractor import SpacyQueryNER
from hipporag_neo4j.settings import load_settings
from hipporag_neo4j.stores.embedded.schema import TEXT_ROWS
from tests.support.fakes import FixedQueryNER, HashEmbedder, TableExtractor


def make_memory(
    path: Path,
    table: dict[str, list[list[str]]],
    queries: dict[str, list[str]] | None = None,
    **retrieval: object,
) -> HippoRAG:
    settings = load_settings({"store": {"path": str(path)}, "retrieval": retrieval or {}})
    return HippoRAG(
        settings,
        embedder=HashEmbedder(),
        extractor=TableExtractor(table),
        query_ner=FixedQueryNER(queries or {}),
    )


def dump_embedded(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the embedded store's graph tables (sorted), for exact comparisons. Synonym scores are
    rounded to 1e-6: the same cosine computed in another batch shape differs in the last float32 bits."""
    conn = sqlite3.connect(path / "graph.sqlite")
    try:
        tables = {
            table: sorted(conn.execute(TEXT_ROWS[table]).fetchall())
            for table in ("passages", "phrases", "mentions", "facts", "states")
        }
        tables["synonyms"] = sorted(
            (s, t, round(score, 6)) for s, t, score in conn.execute(TEXT_ROWS["synonyms"])
        )
        return tables
    finally:
        conn.close()


def data_set_memory(store_dir: Path, embedder: Embedder) -> HippoRAG:
    """HippoRAG as the data-set regression tests run it: default settings with the store in ``store_dir``,
    whatever HIPPORAG_* variables the machine has (module-scoped fixtures run before conftest's per-test
    isolation), the given embedder and spaCy query NER."""
    saved = {
        k: os.environ.pop(k)
        for k in list(os.environ)
        if k.startswith("HIPPORAG_") and not k.startswith("HIPPORAG_TEST_")
    }
    try:
        settings = load_settings({"store": {"path": str(store_dir)}}, env_file=None)
    finally:
        os.environ.update(saved)
    return HippoRAG(settings, embedder=embedder, query_ner=SpacyQueryNER(settings.extraction.spacy_model))


def data_set_report(
    store_dir: Path,
    embedder: Embedder,
    corpus_file: Path,
    questions_file: Path,
    modes: Sequence[str],
    openie_file: Path | None = None,
    passages: int | None = None,
) -> EvalReport:
    """A data set's corpus indexed into a fresh store (:func:`data_set_memory`; from its published OpenIE
    where given) and ``modes`` evaluated on its questions, as the regression tests run them: nothing
    missing or failed, ``passages`` passages indexed where given (asserted); the table printed (``-s``)."""
    memory = data_set_memory(store_dir, embedder)
    try:
        corpus = load_corpus(corpus_file)
        indexed = index_corpus(memory, corpus, openie_file)
        assert indexed.missing == [] and not indexed.report.failed
        assert passages is None or len(indexed.report.indexed) == passages
        report = run_evaluation(
            memory, load_questions(questions_file), corpus, modes, passage_ids=indexed.passage_ids
        )
    finally:
        memory.close()
    print("\n" + format_table(report) + "\n\n" + format_comparisons(report))
    return report
