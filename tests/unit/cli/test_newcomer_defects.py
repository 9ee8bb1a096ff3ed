"""Defects a newcomer met in their first hour (issue 18), each as the user met it.

A folder without a store, the MCP tools' arguments against their documentation, a Markdown file's
heading, the query output's layout, the CLI's messages and options, the benchmark's missing-data message,
and `eval` indexing only its corpus.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import socket
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner, Result

from hipporag_neo4j import HippoRAG, load_settings
from hipporag_neo4j.cli.main import main
from hipporag_neo4j.cli.support import print_retrieval
from hipporag_neo4j.errors import InputError, StoreNotFoundError
from hipporag_neo4j.indexing.inputs import read_passages
from hipporag_neo4j.models import (
    Explanation,
    FactScore,
    LinkedPhrase,
    Passage,
    PhraseScore,
    PhraseSeed,
    RetrievalResult,
    RetrievedPassage,
)
from tests.support.fakes import HashEmbedder, TableExtractor

REPO = Path(__file__).resolve().parents[3]
OPENIE = REPO / "tests" / "data" / "openie" / "records.jsonl"


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _load_module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# --- a folder without a store -------------------------------------------------------------------
READING_COMMANDS = [
    ["query", "Who founded Orbis Shipyards?"],
    ["list"],
    ["delete", "docs/orbis.md"],
    ["stats"],
    ["about", "node-1"],
    ["reembed"],
    ["unlink"],
    ["link", "--label", "Customer"],
    ["serve"],
    ["mcp"],
]


@pytest.mark.unit
@pytest.mark.parametrize("args", READING_COMMANDS, ids=lambda a: a[0])
def test_reading_commands_refuse_a_folder_without_a_store(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HIPPORAG_STORE__PATH", raising=False)
    monkeypatch.delenv("HIPPORAG_NEO4J__URI", raising=False)
    result = cli(*args)
    assert result.exit_code == 1, result.output
    assert ".hipporag/store" in result.stderr and "hipporag-neo4j index" in result.stderr, result.stderr
    assert not (tmp_path / ".hipporag").exists(), "a reading command created a store"


@pytest.mark.unit
def test_a_named_store_that_does_not_exist_is_named(tmp_path: Path) -> None:
    store = tmp_path / "typo"
    result = cli("--store", str(store), "query", "anything")
    assert result.exit_code == 1
    assert str(store) in result.stderr and "no store" in result.stderr
    assert not store.exists()


@pytest.mark.unit
def test_python_api_can_refuse_a_missing_store(tmp_path: Path) -> None:
    settings = load_settings({"store": {"path": str(tmp_path / "kb")}}, env_file=None)
    with HippoRAG(settings, embedder=HashEmbedder(), create=False) as memory:
        with pytest.raises(StoreNotFoundError, match=r"no store at .*kb.*`hipporag-neo4j .*index FOLDER`"):
            memory.stats()
        with pytest.raises(StoreNotFoundError):
            memory.list_passages()
    assert not (tmp_path / "kb").exists()
    with HippoRAG(settings, embedder=HashEmbedder(), extractor=TableExtractor({})) as memory:
        memory.index([])  # the default creates the store, as before
    with HippoRAG(settings, embedder=HashEmbedder(), create=False) as memory:
        assert memory.stats().passages == 0  # now it exists


@pytest.mark.unit
def test_a_missing_neo4j_namespace_is_refused_for_reading() -> None:
    from hipporag_neo4j.stores.neo4j.store import Neo4jStore
    from tests.support.neo4j_fake import FakeDriver, server

    settings = load_settings({"neo4j": {"uri": "bolt://db:7687", "namespace": "kb2"}}, env_file=None)
    driver = server(FakeDriver()).on("meta_read", [])  # no metadata node: the namespace was never indexed
    store = Neo4jStore(settings.neo4j, driver=driver)  # type: ignore[arg-type]
    memory = HippoRAG(settings, store=store, embedder=HashEmbedder(), create=False)
    with pytest.raises(StoreNotFoundError, match="namespace 'kb2' does not exist") as caught:
        memory.stats()
    assert "bolt://db:7687" in str(caught.value) and "--namespace kb2 index FOLDER" in str(caught.value)
    ran = {call.name for call in driver.calls}
    assert "meta_read" in ran and "meta_create" not in ran, ran
    assert {call.access_mode for call in driver.calls} == {"READ"}, "a missing namespace was written to"


# --- MCP tool arguments -------------------------------------------------------------------------
async def _mcp_calls(store: Path) -> dict[str, Any]:
    from mcp import Client

    from hipporag_neo4j.mcp_server.tools import build_mcp_server
    from hipporag_neo4j.service import KnowledgeService

    text = "Orbis Shipyards was founded by Helena Várkonyi."
    service = KnowledgeService(
        load_settings({"store": {"path": str(store)}}, env_file=None),
        embedder=HashEmbedder(),
        extractor=TableExtractor({text: [["Orbis Shipyards", "founded by", "Helena Várkonyi"]]}),
    )
    seen: dict[str, Any] = {}
    try:
        async with Client(build_mcp_server(service)) as client:
            seen["tools"] = {t.name: t for t in (await client.list_tools()).tools}
            seen["by_id"] = await client.call_tool("remember", {"text": text, "id": "orbis"})
            seen["typo"] = await client.call_tool("recall", {"query": "x", "topk": 3})
            seen["ok"] = await client.call_tool("remember", {"text": text, "passage_id": "orbis"})
    finally:
        service.close()
    return seen


@pytest.mark.unit
def test_mcp_tools_refuse_unknown_arguments_naming_the_valid_ones(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    seen = asyncio.run(_mcp_calls(tmp_path / "kb"))
    by_id = seen["by_id"]
    assert by_id.is_error, "remember stored the text and ignored 'id'"
    message = by_id.content[0].text
    assert "'id'" in message and "passage_id" in message and "title" in message, message
    assert seen["typo"].is_error and "'topk'" in seen["typo"].content[0].text
    assert "top_k" in seen["typo"].content[0].text
    assert not seen["ok"].is_error and seen["ok"].structured_content["passage_ids"] == ["orbis"]
    for tool in seen["tools"].values():
        assert tool.input_schema.get("additionalProperties") is False, tool.name


def _documented_tools() -> dict[str, set[str]]:
    """The MCP tool tables of README.md and docs/*.md: a header ``| Tool | Arguments | ...``, then rows
    whose first cell is a tool's `name` and whose second cell lists its `arguments` (notes in parentheses
    are ignored; "(none)" for a tool without arguments)."""
    tables: dict[str, set[str]] = {}
    found = False
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        lines = page.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if not re.match(r"^\|\s*Tool\s*\|\s*Arguments\s*\|", line):
                continue
            found = True
            for row in lines[number + 2 :]:
                if not row.startswith("|"):
                    break
                cells = [c.strip() for c in row.strip().strip("|").split("|")]
                name = re.fullmatch(r"`(\w+)`", cells[0])
                assert name, f"{page.name}: the first cell of {row!r} is not a `tool` name"
                # the arguments are the `names` outside parentheses (notes may quote other names)
                arguments = set(re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", cells[1])))
                assert tables.get(name[1], arguments) == arguments, f"{page.name}: {name[1]} documented twice"
                tables[name[1]] = arguments
    assert found, "no MCP tool table (| Tool | Arguments | ...) in README.md or docs/*.md"
    return tables


@pytest.mark.unit
def test_documented_mcp_tools_match_the_tool_schemas(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    seen = asyncio.run(_mcp_calls(tmp_path / "kb"))
    schemas = {name: set(tool.input_schema.get("properties", {})) for name, tool in seen["tools"].items()}
    assert _documented_tools() == schemas


# --- reading files, printing results ------------------------------------------------------------
@pytest.mark.unit
def test_a_markdown_heading_becomes_the_title(tmp_path: Path) -> None:
    (tmp_path / "orbis.md").write_text(
        "# Orbis Shipyards\n\nOrbis Shipyards builds ships in Gdańsk.\n## History\nFounded in 1901.\n",
        encoding="utf-8",
    )
    (tmp_path / "plain.md").write_text("No heading here.\n# A later heading\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("# not markdown\ntext\n", encoding="utf-8")
    read = {p.metadata["source"].rsplit("/", 1)[-1]: p for p in read_passages([tmp_path]).passages}
    orbis = read["orbis.md"]
    assert orbis.title == "Orbis Shipyards"
    assert orbis.text == "Orbis Shipyards builds ships in Gdańsk.\n## History\nFounded in 1901."
    # no heading, no title: a file's name is its id, never its title (issue 27)
    assert read["plain.md"].title is None and read["plain.md"].text.startswith("No heading")
    assert read["notes.txt"].title is None and read["notes.txt"].text.startswith("# not markdown")


def _result(mode: str = "hipporag2", query: str = "Who founded Orbis?", **extra: Any) -> RetrievalResult:
    passage = Passage(
        id="docs/orbis.md", title="Orbis Shipyards", text="Orbis builds ships.\nIt was founded\n\nby Helena."
    )
    explanation = Explanation(top_phrases=[PhraseScore(phrase="orbis", score=0.5)])
    item = RetrievedPassage(rank=1, passage=passage, score=0.25, explanation=explanation)
    return RetrievalResult(query=query, mode=mode, passages=[item], **extra)  # type: ignore[arg-type]


def _printed(capsys: pytest.CaptureFixture[str], result: RetrievalResult, explain: bool) -> str:
    print_retrieval(result, explain)
    return capsys.readouterr().out


@pytest.mark.unit
def test_passage_text_keeps_the_indentation(capsys: pytest.CaptureFixture[str]) -> None:
    out = _printed(capsys, _result(), explain=True)
    body = out.split("1. [0.2500] docs/orbis.md\n", 1)[1]
    assert all(line.startswith("   ") for line in body.splitlines()), out
    assert "Orbis builds ships. It was founded by Helena." in body


@pytest.mark.unit
def test_no_explain_prints_no_explanation(capsys: pytest.CaptureFixture[str]) -> None:
    fact = FactScore(
        subject="orbis", predicate="founded by", object="helena", similarity=0.8, score=1, kept=True
    )
    seed = PhraseSeed(phrase="orbis", score=1.0, passages=1, weight=1.0)
    result = _result(facts=[fact], seeds=[seed])
    explained = _printed(capsys, result, explain=True)
    assert "facts (cosine" in explained and "seeds (walk" in explained and "via:" in explained
    assert "[score]: the passage's PageRank probability" in explained
    plain = _printed(capsys, result, explain=False)
    assert "facts" not in plain and "seeds" not in plain and "via:" not in plain and "[score]" not in plain
    assert "docs/orbis.md" in plain


@pytest.mark.unit
def test_about_without_a_question_says_it_started_from_the_nodes(capsys: pytest.CaptureFixture[str]) -> None:
    link = LinkedPhrase(query_entity="node-1", phrase_id="p1", phrase="orbis", similarity=1.0, weight=1.0)
    out = _printed(capsys, _result(query="", seed_links=[link]), explain=True)
    assert "ranked by dense retrieval" not in out
    assert "seeded from your nodes" in out and "node-1" in out


@pytest.mark.unit
def test_serve_on_a_busy_port_fails_at_once_with_a_clear_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("uvicorn")
    import hipporag_neo4j.server.app as app

    def no_models(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the models were loaded before the port was checked")

    monkeypatch.setattr(app, "create_app", no_models)
    store = tmp_path / "store"
    assert cli("--store", str(store), "index", "--openie", str(OPENIE)).exit_code == 3
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = cli("--store", str(store), "serve", "--port", str(port), "--no-auth")
    assert result.exit_code == 1, result.output  # an error, not 3 ("some passages failed")
    assert f"port {port}" in result.stderr and "in use" in result.stderr and "--port" in result.stderr


@pytest.mark.unit
def test_retrieve_names_a_bad_mode(tmp_path: Path) -> None:
    settings = load_settings({"store": {"path": str(tmp_path / "kb")}}, env_file=None)
    with HippoRAG(settings, embedder=HashEmbedder()) as memory:
        with pytest.raises(InputError, match=r"mode 'bogus'.*hipporag2.*dense") as caught:
            memory.retrieve("x", mode="bogus")  # type: ignore[arg-type]
        assert "RetrievalResult" not in str(caught.value)
        with pytest.raises(InputError, match=r"strategy 'loop'.*ircot"):
            memory.retrieve("x", strategy="loop")  # type: ignore[arg-type]


# --- benchmark data and eval --------------------------------------------------------------------
@pytest.mark.unit
@pytest.mark.parametrize(
    ("dataset", "names"),
    [
        ("hotpotqa", ["hotpotqa_train_corpus.json", "hotpotqa_train.json"]),
        ("musique", ["musique_train_corpus.json", "openie_musique_train_results_ner_gpt-3.5-turbo-1106"]),
    ],
)
def test_missing_benchmark_data_says_where_to_get_it(
    dataset: str, names: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = _load_module(REPO / "benchmarks" / "bench_quality.py", "bench_quality_under_test")
    missing = {
        k: tuple(None if p is None else tmp_path / p.name for p in v) for k, v in bench.DATASETS.items()
    }
    monkeypatch.setattr(bench, "DATASETS", missing)
    with pytest.raises(SystemExit) as caught:
        bench.require_data(dataset)
    message = str(caught.value)
    assert "OSU-NLP-Group/HippoRAG" in message and all(name in message for name in names), message


@pytest.mark.unit
def test_eval_indexes_only_the_corpus_passages_of_the_openie_file(tmp_path: Path) -> None:
    from hipporag_neo4j.evaluation.loaders import CorpusPassage
    from hipporag_neo4j.evaluation.runner import index_corpus

    settings = load_settings({"store": {"path": str(tmp_path / "kb")}}, env_file=None)
    corpus = [CorpusPassage(title="Eiffel Tower", text="The Eiffel Tower is in Paris.")]
    with HippoRAG(settings, embedder=HashEmbedder()) as memory:
        indexed = index_corpus(memory, corpus, OPENIE)
        assert indexed.passage_ids == ["p-eiffel"] and indexed.missing == []
        assert [p.id for p in memory.list_passages()] == ["p-eiffel"]
        assert indexed.report.indexed == ["p-eiffel"]
        assert all(f.passage_id in (None, "p-eiffel") for f in indexed.report.failed)


@pytest.mark.unit
def test_global_options_move_before_the_command_and_nothing_else_does() -> None:
    from hipporag_neo4j.cli.main import hoist_global_options

    args = ["query", "q", "--json", "--store", "s", "--top-k", "2", "--namespace=kb"]
    assert hoist_global_options(main, args) == [
        "--json",
        "--store",
        "s",
        "--namespace=kb",
        "query",
        "q",
        "--top-k",
        "2",
    ]
    assert hoist_global_options(main, ["--json", "stats"]) == ["--json", "stats"]
    assert hoist_global_options(main, ["query", "--", "--json"]) == ["query", "--", "--json"]
    assert hoist_global_options(main, ["nosuch", "--json"]) == ["nosuch", "--json"]
