"""The CLI as a user runs it: real embedder, embedded store on disk, recorded extraction or spaCy."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from hipporag_neo4j.cli.main import main

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
OPENIE = REPO / "tests" / "data" / "openie" / "records.jsonl"


def run(*args: str, store: Path | None = None) -> tuple[int, str]:
    prefix = ["--store", str(store)] if store else []
    result = CliRunner().invoke(main, [*prefix, *args], catch_exceptions=False)
    return result.exit_code, result.stdout


def test_every_command_is_documented_in_the_readme() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name in main.commands:
        assert re.search(rf"hipporag-neo4j (\S+ )*{name}\b", readme), f"README does not show `{name}`"


def test_help_lists_commands() -> None:
    code, out = run("--help")
    assert code == 0
    for name in ("index", "query", "answer", "delete", "stats", "doctor", "demo", "eval", "reembed"):
        assert name in out


def test_index_query_delete_stats_round_trip(tmp_path: Path) -> None:
    store = tmp_path / "store"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "thomas.txt").write_text("Thomas Müller is a professor at Stanford University.", encoding="utf-8")
    (docs / "lab.json").write_text(
        json.dumps(
            [{"id": "lab", "title": "Müller Lab", "text": "Thomas Müller studies Alzheimer's disease."}]
        ),
        encoding="utf-8",
    )
    (docs / "bad.txt").write_bytes(b"\x00\x01\x02 binary")
    code, out = run("--json", "index", str(docs), store=store)
    report = json.loads(out)
    assert code == 3  # finished, but one file failed
    assert len(report["indexed"]) == 2
    assert "binary file" in report["failed"][0]["reason"] and "bad.txt" in report["failed"][0]["source"]

    code, out = run("--json", "index", str(docs), store=store)
    again = json.loads(out)
    assert again["indexed"] == [] and len(again["skipped"]) == 2

    code, out = run(
        "--json", "query", "Which Stanford professor studies Alzheimer's?", "--top-k", "2", store=store
    )
    assert code == 0
    result = json.loads(out)
    assert result["mode"] == "hipporag2"  # the default
    assert {p["passage"]["id"] for p in result["passages"]} >= {"lab"}
    assert result["facts"] and result["seeds"], "the default mode starts from facts and their phrases"

    code, out = run("query", "Which Stanford professor studies Alzheimer's?", store=store)
    assert code == 0 and "facts (cosine to the question" in out and "seeds (walk start weight" in out
    assert "via:" in out

    question = "Which Stanford professor studies Alzheimer's?"
    code, out = run("--json", "query", question, "--mode", "hipporag", "--top-k", "2", store=store)
    assert code == 0
    assert json.loads(out)["linked"], "spaCy query entities should link to graph phrases"
    code, out = run("query", question, "--mode", "hipporag", store=store)
    assert code == 0 and "linked (query entity → graph phrase, cosine):" in out and "via:" in out

    code, out = run("--json", "stats", store=store)
    assert json.loads(out)["passages"] == 2

    code, out = run("delete", "lab", "missing-id", store=store)
    assert code == 3 and "deleted 1 passage (1 not found)" in out
    code, out = run("--json", "stats", store=store)
    assert json.loads(out)["passages"] == 1


def test_index_recorded_openie(tmp_path: Path) -> None:
    code, out = run("--json", "index", "--openie", str(OPENIE), store=tmp_path / "s")
    report = json.loads(out)
    assert report["indexed"], out
    assert code in (0, 3)
    code, out = run("--json", "reembed", store=tmp_path / "s")
    assert code == 0
    assert json.loads(out)["passage"] == len(report["indexed"])


def test_errors_exit_non_zero_with_a_clear_message(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--store", str(tmp_path / "s"), "index", str(tmp_path / "nope.json")])
    assert result.exit_code == 1 and "no such file" in result.output
    result = CliRunner().invoke(main, ["--store", str(tmp_path / "s"), "answer", "why?"])
    assert result.exit_code == 1 and "no LLM configured" in result.output
    result = CliRunner().invoke(main, ["query", "x"], env={"HIPPORAG_RETRIEVAL__DAMPING": "2"})
    assert result.exit_code == 1 and "HIPPORAG_RETRIEVAL__DAMPING" in result.output


def test_model_mismatch_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "s"
    run("index", "--openie", str(OPENIE), store=store)
    other = tmp_path / "other-model"
    other.mkdir()
    result = CliRunner().invoke(main, ["--store", str(store), "--embedding-model", str(other), "stats"])
    assert result.exit_code == 1
    assert "cannot load embedding model" in result.output or "was built with embedding model" in result.output


def test_doctor_reports_the_embedded_setup(tmp_path: Path) -> None:
    code, out = run("--json", "doctor", store=tmp_path / "s")
    report = json.loads(out)
    assert code == 0
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["embedding"]["status"] == "ok" and "384-d" in checks["embedding"]["detail"]
    assert checks["spacy"]["status"] == "ok"
    assert checks["llm"]["status"] == "info"
    assert report["backend"] == "embedded"


def test_demo_shows_hipporag_beating_dense_on_the_showcase() -> None:
    code, out = run("--json", "demo")
    assert code == 0
    outcome = json.loads(out)
    showcase = next(q for q in outcome["questions"] if q["showcase"])
    graph, dense = showcase["hipporag_gold_ranks"], showcase["dense_gold_ranks"]
    assert all(r is not None and r <= 3 for r in graph), graph
    assert any(r is None for r in dense), dense  # dense misses a needed passage in its top 5
    assert outcome["index"]["passages"] == 42 and not outcome["index"]["failed"]


def test_link_demo_shows_your_graph_changing_the_result() -> None:
    """`demo --link` (run once, through the function the command calls, to keep the suite fast)."""
    from hipporag_neo4j.demo.link import run_link_demo
    from hipporag_neo4j.settings import load_settings

    printed: list[str] = []
    outcome = run_link_demo(load_settings(env_file=None), echo=printed.append)
    plain, joined = outcome["plain"], outcome["joined"]
    assert outcome["link"]["exact"] == 3 and outcome["imported"]["relationships_added"] == 2
    assert plain != joined and plain == joined[: len(plain)]  # the question's own passages stay on top
    # the parent company (only your graph says it owns Kestrel Enzymes) and its founder came in
    assert {"Lumora Biotics", "Tomasz Wierzbicki"} <= set(outcome["new_with_joined_graph"])
    assert "Lumora Biotics" not in plain
    assert outcome["linked_entities"]["Lumora Biotics"] == ["acct-1001"]
    assert outcome["seeded_from_acct_1001"][0] == "Lumora Biotics"
    text = "\n".join(printed)
    assert "joined, via SUBSIDIARY_OF" in text and "+3. Lumora Biotics [acct-1001]" in text
    assert "--link" in run("demo", "--help")[1]


def test_demo_human_output() -> None:
    code, out = run("demo")
    assert code == 0
    assert "HippoRAG (graph, PPR)" in out and "Why HippoRAG found them" in out
