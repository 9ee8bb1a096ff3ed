"""The committed ticket archive (tests/data/tickets) is the generator's output, and its questions hold."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import ticket_corpus  # noqa: E402  (benchmarks/ is not a package)

pytestmark = pytest.mark.unit


def test_committed_files_are_the_generators_output() -> None:
    assert ticket_corpus.main(["--check"]) == 0


def test_same_seed_same_archive_other_seed_another() -> None:
    assert ticket_corpus.render(5) == ticket_corpus.render(5)
    assert ticket_corpus.render(5)["corpus.json"] != ticket_corpus.render(6)["corpus.json"]


def test_every_answer_is_stated_in_a_gold_ticket_and_chains_are_linked() -> None:
    tickets = json.loads((ticket_corpus.OUT / "corpus.json").read_text(encoding="utf-8"))
    questions = json.loads((ticket_corpus.OUT / "questions.json").read_text(encoding="utf-8"))
    by_title = {t["title"]: t["text"] for t in tickets}
    assert len(by_title) == len(tickets) == ticket_corpus.N_TICKETS
    kinds = {re.sub(r"-\d+$", "", q["id"]) for q in questions}
    assert kinds == {"defect", "site", "customer", "takeover", "id", "serial"}
    for question in questions:
        golds = [by_title[title] for title in question["gold_titles"]]
        assert question["answer"] in golds[-1], question["id"]
        if question["id"].startswith(("site", "customer", "takeover")):
            # the installation ticket names the model whose defect ticket holds the fix
            install, defect = golds[-2], golds[-1]
            model = re.search(r"Product: (.+)", install)
            assert model is not None and f"known {model.group(1)} defect" in defect, question["id"]
        if question["id"].startswith("id"):
            assert re.search(r"FH-\d+", question["question"]).group(0) in question["gold_titles"][0]  # type: ignore[union-attr]
