"""The evaluation runner and ``hipporag-neo4j eval`` on a tiny hand-made benchmark with the real MiniLM.

The graph is small enough to reason about by hand: each person's passage links to one city passage through
a shared phrase, and nothing links the two people, the kettle or the tulip. With fixed query entities the
graph modes retrieve exactly the passages reachable from the linked phrase, the seed's own passage first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.common.text import make_passage_id
from hipporag_neo4j.errors import ConfigError, InputError
from hipporag_neo4j.evaluation.loaders import load_corpus, load_questions
from hipporag_neo4j.evaluation.report import analyse_misses, format_table, link_summary, report_payload
from hipporag_neo4j.evaluation.runner import (
    EvalReport,
    corpus_passage_ids,
    index_corpus,
    run_evaluation,
)
from hipporag_neo4j.settings import load_settings
from tests.support.fakes import FixedQueryNER

pytestmark = pytest.mark.integration

CORPUS = [
    ("Alice Moreau", "Alice Moreau is a violinist who was born in Lyon."),
    ("Lyon", "Lyon is a city in France on the Rhone river."),
    ("Bram Olsen", "Bram Olsen is a painter who lives in Bergen."),
    ("Bergen", "Bergen is a city in Norway known for its fish market."),
    ("Kettle", "A kettle boils water for tea."),
    ("Tulip", "The tulip is a spring flower grown in the Netherlands."),
]
TRIPLES = {
    "Alice Moreau": [["Alice Moreau", "is a", "violinist"], ["Alice Moreau", "born in", "Lyon"]],
    "Lyon": [["Lyon", "city in", "France"], ["Lyon", "on", "Rhone river"]],
    "Bram Olsen": [["Bram Olsen", "is a", "painter"], ["Bram Olsen", "lives in", "Bergen"]],
    "Bergen": [["Bergen", "city in", "Norway"], ["Bergen", "known for", "fish market"]],
    "Kettle": [["kettle", "boils", "water"]],
    "Tulip": [["tulip", "is a", "spring flower"], ["tulip", "grown in", "Netherlands"]],
}
# (id, question, answer, gold titles, query entities)
QUESTIONS = [
    ("q1", "In which country was Alice Moreau born?", "France", ["Alice Moreau", "Lyon"], ["Alice Moreau"]),
    ("q2", "Which country does Bram Olsen live in?", "Norway", ["Bram Olsen", "Bergen"], ["Bram Olsen"]),
    ("q3", "What boils water?", "a kettle", ["Kettle"], ["water"]),
    ("q4", "Which flower blooms in spring?", "tulip", ["Tulip"], []),  # no entity: dense fallback
]
ALL_MODES = ["dense", "hipporag", "ensemble", "hybrid"]


def _musique_record(qid: str, question: str, answer: str, gold: list[str]) -> dict[str, Any]:
    paragraphs = [
        {"idx": i, "title": title, "paragraph_text": text, "is_supporting": title in gold}
        for i, (title, text) in enumerate(CORPUS)
    ]
    return {"id": qid, "question": question, "answer": answer, "answer_aliases": [], "paragraphs": paragraphs}


def write_benchmark(directory: Path, *, leave_out: str | None = None) -> dict[str, Path]:
    """Corpus (JSON list), questions (MuSiQue format) and OpenIE JSONL with ids p0..p5 (not content hashes,
    so the runner must map corpus passages to recorded ids by content)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {name: directory / f"{name}.{ext}" for name, ext in [("corpus", "json"), ("questions", "json")]}
    paths["openie"] = directory / "openie.jsonl"
    paths["corpus"].write_text(json.dumps([{"title": t, "text": x} for t, x in CORPUS]), encoding="utf-8")
    records = [_musique_record(qid, q, a, gold) for qid, q, a, gold, _ in QUESTIONS]
    paths["questions"].write_text(json.dumps(records), encoding="utf-8")
    lines = [
        json.dumps({"passage_id": f"p{i}", "title": title, "text": text, "triples": TRIPLES[title]})
        for i, (title, text) in enumerate(CORPUS)
        if title != leave_out
    ]
    paths["openie"].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


def _memory(path: Path, embedder: Any, **groups: dict[str, Any]) -> HippoRAG:
    ner = FixedQueryNER({q: entities for _, q, _, _, entities in QUESTIONS})
    settings = load_settings({"store": {"path": str(path)}, **groups})
    return HippoRAG(settings, embedder=embedder, query_ner=ner)


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory, minilm: Any) -> tuple[EvalReport, list[str]]:
    directory = tmp_path_factory.mktemp("tiny_benchmark")
    paths = write_benchmark(directory)
    corpus, questions = load_corpus(paths["corpus"]), load_questions(paths["questions"])
    # the walk's own reach, which these hand-computed figures are about: no passages filled from dense
    # (tests/integration/test_query_many.py drives the filling)
    memory = _memory(directory / "s", minilm, retrieval={"fill_from_dense": False})
    try:
        indexed = index_corpus(memory, corpus, paths["openie"])
        report = run_evaluation(memory, questions, corpus, ALL_MODES, passage_ids=indexed.passage_ids)
    finally:
        memory.close()
    return report, indexed.passage_ids


def test_corpus_is_mapped_to_the_recorded_passage_ids(evaluated: tuple[EvalReport, list[str]]) -> None:
    report, passage_ids = evaluated
    assert passage_ids == [f"p{i}" for i in range(len(CORPUS))]
    assert [q.gold_ids for q in report.questions] == [["p0", "p1"], ["p2", "p3"], ["p4"], ["p5"]]
    assert report.questions[0].gold_titles == ["Alice Moreau", "Lyon"]
    assert report.gold_not_in_store == []


def test_graph_modes_retrieve_exactly_what_the_walk_reaches(evaluated: tuple[EvalReport, list[str]]) -> None:
    report, _ = evaluated
    by_id = {q.question_id: q for q in report.questions}
    for mode in ("hipporag", "ensemble"):  # every link is exact (cosine 1), so ensemble stays on the graph
        assert by_id["q1"].modes[mode].retrieved_ids == ["p0", "p1"]
        assert by_id["q2"].modes[mode].retrieved_ids == ["p2", "p3"]
        assert by_id["q3"].modes[mode].retrieved_ids == ["p4"]
        assert not by_id["q1"].modes[mode].used_dense_fallback
    q1 = by_id["q1"].modes["hipporag"]
    assert q1.gold_ranks == {"p0": 1, "p1": 2}
    assert [(x.query_entity, x.phrase, x.similarity) for x in q1.linked] == [
        ("Alice Moreau", "alice moreau", pytest.approx(1.0, abs=1e-5))
    ]
    assert by_id["q1"].graph_reached_gold == {"p0": True, "p1": True}
    # nothing links for q4: every graph mode falls back to the dense ranking
    q4 = by_id["q4"]
    assert q4.modes["hipporag"].linked == []
    assert q4.modes["hipporag"].used_dense_fallback
    assert q4.modes["hipporag"].retrieved_ids == q4.modes["dense"].retrieved_ids
    assert q4.graph_reached_gold == {"p5": False}


def test_metrics_match_hand_computed_values(evaluated: tuple[EvalReport, list[str]]) -> None:
    report, _ = evaluated
    assert report.n_questions == 4 and report.n_corpus == 6
    dense_q4_r1 = report.questions[3].modes["dense"].metrics["R@1"]
    hippo = report.tables["hipporag"].means
    # q1, q2: 1 of 2 gold at rank 1, both by rank 2; q3: its one gold at rank 1; q4 as dense
    assert hippo["R@1"] == pytest.approx((0.5 + 0.5 + 1.0 + dense_q4_r1) / 4)
    assert hippo["AR@2"] == pytest.approx(
        (1.0 + 1.0 + 1.0 + report.questions[3].modes["dense"].metrics["AR@2"]) / 4
    )
    for key in ("R@2", "R@5", "R@10", "AR@5"):
        assert hippo[key] == pytest.approx(1.0)
    for mode in ("dense", "hybrid"):  # six passages: everything is in the top 10
        assert report.tables[mode].means["R@10"] == 1.0
        assert all(len(q.modes[mode].retrieved_ids) == 6 for q in report.questions)
    # every mean is the mean of the per-question values recomputed from the gold ranks
    for mode in ALL_MODES:
        for k in (1, 2, 5, 10):
            by_hand = [
                sum(r is not None and r <= k for r in q.modes[mode].gold_ranks.values()) / len(q.gold_ids)
                for q in report.questions
            ]
            assert report.tables[mode].means[f"R@{k}"] == pytest.approx(sum(by_hand) / 4), (mode, k)


def test_bootstrap_compares_each_mode_with_dense(evaluated: tuple[EvalReport, list[str]]) -> None:
    report, _ = evaluated
    assert {(c.mode, c.metric) for c in report.comparisons} == {
        (m, k) for m in ("hipporag", "ensemble", "hybrid") for k in ("R@2", "R@5", "AR@5")
    }
    for c in report.comparisons:
        ours = [q.modes[c.mode].metrics[c.metric] for q in report.questions]
        dense = [q.modes["dense"].metrics[c.metric] for q in report.questions]
        assert c.bootstrap.mean_diff == pytest.approx((sum(ours) - sum(dense)) / 4)
        assert c.bootstrap.low <= c.bootstrap.mean_diff <= c.bootstrap.high
        assert c.bootstrap.n_questions == 4


def test_table_and_error_analysis(evaluated: tuple[EvalReport, list[str]]) -> None:
    report, _ = evaluated
    table = format_table(report)
    assert table.splitlines()[0].startswith("| mode | R@1 | R@2 | R@5 | R@10 | AR@2 | AR@5 |")
    assert "| hipporag | " + f"{100 * report.tables['hipporag'].means['R@1']:.1f} | 100.0 |" in table
    # at R@1 the graph misses q1 and q2 (their second gold passage is at rank 2), reached by the walk
    misses = analyse_misses(report, k=1)["hipporag"]
    missed_ids = {ex.question_id for examples in misses.examples.values() for ex in examples}
    assert {"q1", "q2"} <= missed_ids
    assert misses.counts["other"] >= 2
    example = next(ex for ex in misses.examples["other"] if ex.question_id == "q1")
    assert example.missed_gold == ["Lyon"]
    assert example.linked == ["Alice Moreau -> alice moreau (1.00)"]
    # one exact link for q1..q3, none for q4 (where ensemble falls back to dense)
    assert link_summary(report) == {
        "entities_per_question": 0.75,
        "links_per_question": 0.75,
        "share_of_links_below": 0.0,
        "questions_with_a_link_below": 0,
        "questions_without_links": 1,
        "ensemble_mixed_dense": 1,
    }


def test_report_payload_is_json_with_context(tmp_path: Path, minilm: Any) -> None:
    paths = write_benchmark(tmp_path / "data")
    corpus, questions = load_corpus(paths["corpus"]), load_questions(paths["questions"])
    memory = _memory(tmp_path / "s", minilm, neo4j={"password": "hunter2"})
    try:
        indexed = index_corpus(memory, corpus, paths["openie"])
        report = run_evaluation(
            memory, questions[:1], corpus, ["dense"], top_k=5, passage_ids=indexed.passage_ids
        )
        payload = report_payload(report, memory, command="test")
    finally:
        memory.close()
    text = json.dumps(payload)
    assert "hunter2" not in text
    decoded = json.loads(text)
    assert decoded["store"]["passages"] == 6
    assert decoded["embedding_model"] == "all-MiniLM-L6-v2"
    assert decoded["settings"]["neo4j"]["password"] == "**********"
    assert decoded["machine"]["cpu_count"] >= 1
    assert decoded["comparisons"] == []  # dense alone: nothing to compare with
    assert set(decoded["table_percent"]["dense"]) == {"R@1", "R@2", "R@5", "AR@2", "AR@5"}  # no R@10 at top 5


def test_passages_missing_from_the_openie_file_are_reported(tmp_path: Path, minilm: Any) -> None:
    paths = write_benchmark(tmp_path / "data", leave_out="Lyon")
    corpus, questions = load_corpus(paths["corpus"]), load_questions(paths["questions"])
    memory = _memory(tmp_path / "s", minilm)
    try:
        indexed = index_corpus(memory, corpus, paths["openie"])
        assert indexed.missing == [1]
        report = run_evaluation(memory, questions[:1], corpus, ["dense"], passage_ids=indexed.passage_ids)
    finally:
        memory.close()
    lyon_id = make_passage_id(CORPUS[1][1], "Lyon")
    assert indexed.passage_ids[1] == lyon_id
    assert report.gold_not_in_store == [lyon_id]
    assert report.tables["dense"].means["R@10"] == 0.5


def test_bad_inputs_raise(tmp_path: Path, minilm: Any) -> None:
    paths = write_benchmark(tmp_path / "data")
    corpus, questions = load_corpus(paths["corpus"]), load_questions(paths["questions"])
    memory = _memory(tmp_path / "s", minilm)
    try:
        with pytest.raises(InputError, match="not in the corpus"):
            run_evaluation(memory, questions, corpus[1:], ["dense"])
        with pytest.raises(InputError, match="modes"):
            run_evaluation(memory, questions, corpus, ["sparse"])
        with pytest.raises(ConfigError, match="LLM"):
            run_evaluation(memory, questions, corpus, ["dense"], answer=True)
    finally:
        memory.close()
    assert corpus_passage_ids(corpus)[0] == make_passage_id(CORPUS[0][1], CORPUS[0][0])


# --------------------------------------------------------------------------- CLI


def _eval_args(paths: dict[str, Path], *extra: str) -> list[str]:
    return [
        "eval",
        "--questions",
        str(paths["questions"]),
        "--corpus",
        str(paths["corpus"]),
        "--openie",
        str(paths["openie"]),
        *extra,
    ]


def test_cli_eval_prints_the_table_and_writes_the_report(tmp_path: Path) -> None:
    from hipporag_neo4j.cli.main import main

    paths = write_benchmark(tmp_path / "data")
    out = tmp_path / "out" / "report.json"
    result = CliRunner().invoke(
        main, _eval_args(paths, "--mode", "dense", "--mode", "hipporag", "--limit", "3", "--report", str(out))
    )
    assert result.exit_code == 0, result.output
    assert "temporary embedded store" in result.output
    assert "| dense | " in result.output and "| hipporag | " in result.output
    assert "| ensemble |" not in result.output
    assert "| hipporag | R@2 |" in result.output  # the bootstrap table
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["modes"] == ["dense", "hipporag"]
    assert report["n_questions"] == 3
    assert report["temporary_store"] is True
    assert report["table_percent"]["dense"]["R@10"] == 100.0
    assert len(report["questions"]) == 3


def test_cli_eval_json_into_a_given_store_and_partial_exit(tmp_path: Path) -> None:
    from hipporag_neo4j.cli.main import main

    paths = write_benchmark(tmp_path / "data", leave_out="Tulip")
    store = tmp_path / "kept"
    result = CliRunner().invoke(
        main, ["--store", str(store), "--json", *_eval_args(paths, "--mode", "dense")]
    )
    assert result.exit_code == 3, result.output  # a corpus passage could not be indexed
    payload = json.loads(result.stdout)
    assert payload["temporary_store"] is False
    assert payload["corpus_not_indexed"] == ["Tulip"]
    assert payload["store"]["passages"] == 5
    assert (store / "graph.sqlite").is_file()
    assert "were not indexed" in result.stderr


def test_cli_eval_usage_errors(tmp_path: Path) -> None:
    from hipporag_neo4j.cli.main import main

    paths = write_benchmark(tmp_path / "data")
    result = CliRunner().invoke(main, _eval_args(paths, "--mode", "sparse"))
    assert result.exit_code == 2
    result = CliRunner().invoke(main, ["eval", "--corpus", str(paths["corpus"])])
    assert result.exit_code == 2 and "--questions" in result.output
