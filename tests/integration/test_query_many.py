"""``query`` as a user asks many questions: several arguments, a file of questions, standard input; one
process, the models loaded once; JSON lines with --json. And results as asked: every mode returns top_k
passages when the store holds that many, the ones the graph did not reach filled from dense scores and
said so; the notes are true for the mode. Real embedder, spaCy, embedded store on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hipporag_neo4j.cli.main import main

pytestmark = pytest.mark.integration

NOTES = {
    "thomas.txt": "Thomas is a professor at Stanford.",
    "alz.txt": "Thomas researches Alzheimer's disease.",
    "kim.txt": "Kim grows tomatoes in Lisbon.",
}
STANFORD = "Which Stanford professor works on Alzheimer's?"
LISBON = "Who grows tomatoes in Lisbon?"


def cli(store: Path, *args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, ["--store", str(store), *args], input=stdin, catch_exceptions=False)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("many")
    notes = root / "notes"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    result = cli(root / "store", "index", str(notes))
    assert result.exit_code == 0, result.output
    return root / "store"


def test_several_questions_as_arguments_print_json_lines_in_order(store: Path) -> None:
    result = cli(store, "--json", "query", STANFORD, LISBON, "--top-k", "1")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert first["query"] == STANFORD and second["query"] == LISBON
    assert second["passages"][0]["passage"]["id"].endswith("kim.txt")


def test_questions_from_a_file_and_from_standard_input(store: Path, tmp_path: Path) -> None:
    questions = tmp_path / "questions.txt"
    questions.write_text(f"{STANFORD}\n\n   {LISBON}  \n", encoding="utf-8")
    result = cli(store, "query", "--questions-file", str(questions), "--no-explain", "--top-k", "1")
    assert result.exit_code == 0
    assert f"[1/2] {STANFORD}" in result.stdout and f"[2/2] {LISBON}" in result.stdout
    assert result.stdout.index("[2/2]") < result.stdout.index("kim.txt")

    piped = cli(store, "--json", "query", "-f", "-", "--top-k", "1", stdin=f"{LISBON}\n{STANFORD}\n")
    assert piped.exit_code == 0
    assert [json.loads(line)["query"] for line in piped.stdout.splitlines()] == [LISBON, STANFORD]

    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    refused = cli(store, "query", "-f", str(empty))
    assert refused.exit_code == 2 and "no question in" in refused.stderr


def test_one_question_keeps_its_single_json_document(store: Path) -> None:
    result = cli(store, "--json", "query", STANFORD)
    assert result.exit_code == 0
    assert json.loads(result.stdout)["query"] == STANFORD and result.stdout.startswith("{\n")


@pytest.mark.parametrize("mode", ["hipporag2", "hipporag", "dense", "ensemble", "hybrid"])
def test_every_mode_returns_top_k_with_notes_true_for_it(store: Path, mode: str) -> None:
    result = cli(store, "--json", "query", STANFORD, "--mode", mode, "--top-k", "3")
    assert result.exit_code == 0
    found = json.loads(result.stdout)
    assert len(found["passages"]) == 3, f"{mode}: {len(found['passages'])} passages for top_k 3 of 3"
    note = found["note"] or ""
    assert "ensemble" not in note
    if mode == "dense":
        assert note == ""
    if mode == "ensemble":  # every entity links at cosine >= the threshold here: it is said
        assert "the walk alone ranks (as hipporag does)" in note
    filled = [p for p in found["passages"] if p["score"] == 0.0 and not p["explanation"]["top_phrases"]]
    if mode in ("hipporag", "ensemble"):
        # the walk reaches only the two Stanford notes: the third comes from dense, last, and is said to
        assert len(filled) == 1, found["passages"]
        assert "the graph reached 2 of the 3 passages asked for: the other passage comes from dense" in note
        assert filled[-1]["rank"] == 3 and filled[-1]["explanation"]["dense_score"] is not None


def test_explain_says_what_each_number_is_sorted(store: Path) -> None:
    result = cli(store, "query", STANFORD)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    facts = next(line for line in lines if line.startswith("facts (cosine to the question"))
    scores = [float(part.rsplit(") ", 1)[1]) for part in facts.split(": ", 1)[1].split("; ")]
    assert scores == sorted(scores, reverse=True)
    seeds = next(line for line in lines if line.startswith("seeds (walk start weight"))
    weights = [float(part.rsplit("(", 1)[1].rstrip(")")) for part in seeds.split(": ", 1)[1].split(", ")]
    assert weights == sorted(weights, reverse=True)
    assert any(line.startswith("[score]: the passage's PageRank probability") for line in lines)
