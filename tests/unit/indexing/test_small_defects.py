"""Smaller defects a user met with a real corpus (issue 37, item 6), each as the user met it: an encrypted
PDF's reason, a text file with a few NUL bytes, HTML navigation and tables, an empty file, and what
``list`` says of a file's format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j.indexing.inputs import read_passages

pytestmark = pytest.mark.unit


def _failures(read_dir: Path) -> dict[str, str]:
    return {Path(f.source or "").name: f.reason for f in read_passages([read_dir]).failures}


def test_an_encrypted_pdf_says_it_needs_a_password(tmp_path: Path) -> None:
    fpdf = pytest.importorskip("fpdf")
    pytest.importorskip("pdfplumber")
    pdf = fpdf.FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.text(20, 20, "The harbor kelp project is confidential.")
    pdf.set_encryption(owner_password="owner", user_password="reader")
    pdf.output(str(tmp_path / "secret.pdf"))
    (tmp_path / "damaged.pdf").write_bytes(b"%PDF-1.4\n1 0 obj <<>> garbage, no trailer")
    failed = _failures(tmp_path)
    assert failed["secret.pdf"].startswith("encrypted PDF: needs a password"), failed
    # a damaged file names pdfminer's own error, never an empty "PdfminerException: "
    assert failed["damaged.pdf"].startswith("not a readable PDF (")
    assert "PdfminerException" not in failed["damaged.pdf"] and not failed["damaged.pdf"].endswith(": )")


def test_a_few_nul_bytes_are_dropped_and_noted_a_binary_file_is_still_refused(tmp_path: Path) -> None:
    text = "Ticket FH-1939: the pump at Maple Ridge Orchards was replaced. " * 20
    (tmp_path / "tickets.txt").write_bytes(text[:600].encode() + b"\x00\x00" + text[600:].encode() + b"\x00")
    (tmp_path / "mostly-nul.txt").write_bytes(b"abc\x00" * 100)
    (tmp_path / "controls.txt").write_bytes(bytes(range(1, 32)) * 50 + b"\x00")
    read = read_passages([tmp_path])
    [passage] = read.passages
    assert passage.text == text.strip() or passage.text == text
    assert "\x00" not in passage.text
    assert passage.metadata["notes"] == ["dropped 3 NUL bytes"]
    failed = {Path(f.source or "").name: f.reason for f in read.failures}
    assert set(failed) == {"mostly-nul.txt", "controls.txt"}
    assert all(reason.startswith("a binary file (") for reason in failed.values()), failed
    assert "100 NUL bytes in 400" in failed["mostly-nul.txt"]


PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Support policy</title></head><body>
<div class="topbar"><p><a href="/">Home</a> | <a href="/about">About</a> | <a href="/contact">Contact</a> |
<a href="/login">Login</a></p></div>
<div class="crumbs">Wiki &gt; Support &gt; Policies</div>
<div>Help | Status | Careers</div>
<h1>Support policy</h1>
<p>Maple Ridge Orchards answers support tickets for the Harrier H2 pump within two working days.</p>
<p>See the <a href="/manual">pump manual</a> and the <a href="/warranty">warranty terms</a> for details.</p>
<table>
<tr><th>Tier</th><th>Response</th><th>Owner</th></tr>
<tr><td>Gold</td><td>4 hours</td><td><a href="/ana">Ana Costa</a></td></tr>
<tr><td>Silver</td><td>2 days</td><td>Rui Tavares</td></tr>
</table>
<footer><p>Copyright 2026 Maple Ridge | Privacy | Terms</p></footer>
</body></html>"""


def test_html_drops_its_navigation_and_reads_tables_as_header_value_rows(tmp_path: Path) -> None:
    pytest.importorskip("trafilatura")
    from hipporag_neo4j.indexing.documents import read_html

    (tmp_path / "policy.html").write_text(PAGE, encoding="utf-8")
    document = read_html(tmp_path / "policy.html")
    assert document.title == "Support policy"
    assert document.text.split("\n\n") == [
        "Maple Ridge Orchards answers support tickets for the Harrier H2 pump within two working days.",
        "See the pump manual and the warranty terms for details.",
        # the same rows as a PDF's or a DOCX's table (table_text), not "| Tier | Response | Owner |"
        "Tier: Gold; Response: 4 hours; Owner: Ana Costa.",
        "Tier: Silver; Response: 2 days; Owner: Rui Tavares.",
    ]


LINKS = " | ".join(f'<a href="/{name.lower()}">{name}</a>' for name in ("Home", "About", "Contact", "Login"))
SHORT_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Pump care</title></head><body>
{bar}<h1>Pump care</h1>
<p>The Harrier H2 pump at Maple Ridge Orchards needs new seals every spring.</p>
<footer><p>Copyright 2026 Maple Ridge</p></footer></body></html>"""


@pytest.mark.parametrize(
    "bar",
    [
        f"<p>{LINKS}</p>",
        f"<header><p>{LINKS}</p></header>",
        f"<nav>{LINKS}</nav>",
        "<div>Home | About | Contact | Login</div>",
    ],
    ids=["link-bar", "header", "nav", "pipes"],
)
def test_a_short_page_keeps_no_navigation_bar(tmp_path: Path, bar: str) -> None:
    pytest.importorskip("trafilatura")
    from hipporag_neo4j.indexing.documents import read_html

    (tmp_path / "care.html").write_text(SHORT_PAGE.format(bar=bar), encoding="utf-8")
    document = read_html(tmp_path / "care.html")
    assert document.text == "The Harrier H2 pump at Maple Ridge Orchards needs new seals every spring."


def _cli_with_fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's HippoRAG with the test embedder and an extractor for any text (no model loads)."""
    import importlib

    from hipporag_neo4j import HippoRAG
    from tests.support.fakes import HashEmbedder, WordsExtractor

    def memory(settings: Any, **kwargs: Any) -> HippoRAG:
        return HippoRAG(settings, embedder=HashEmbedder(), extractor=WordsExtractor(), **kwargs)

    # the module, not the click group that hipporag_neo4j.cli exports under the same name
    cli_main = importlib.import_module("hipporag_neo4j.cli.main")
    monkeypatch.setattr(cli_main, "HippoRAG", memory)


def test_an_empty_file_is_skipped_with_its_reason_and_does_not_fail_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from hipporag_neo4j.cli.main import main

    _cli_with_fakes(monkeypatch)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "empty.txt").write_bytes(b"")
    (docs / "blank.md").write_text("\n  \n\t\n", encoding="utf-8")
    (docs / "empty.pdf").write_bytes(b"")
    runner = CliRunner()
    # a run of only empty files: nothing failed, so it succeeds (exit 3 means "some passages failed")
    result = runner.invoke(main, ["--store", str(tmp_path / "s"), "--json", "index", str(docs)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert sorted(Path(p).name for p in report["empty"]) == ["blank.md", "empty.pdf", "empty.txt"]
    assert report["failed"] == [] and report["indexed"] == []

    (docs / "pump.txt").write_text("Ana Costa repairs the Harrier pump in Porto.", encoding="utf-8")
    result = runner.invoke(main, ["--store", str(tmp_path / "s"), "index", str(docs)])
    assert result.exit_code == 0, result.output
    assert "indexed 1 passage," in result.stdout and "failed 0" in result.stdout
    assert "skipped 3 empty files (no text to index):" in result.stdout
    assert f"    {docs / 'empty.txt'}" in result.stdout.splitlines()


def test_list_names_every_files_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from hipporag_neo4j.cli.main import main
    from hipporag_neo4j.models import PassageInfo

    _cli_with_fakes(monkeypatch)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pump.txt").write_text("Ana Costa repairs the Harrier pump.", encoding="utf-8")
    (docs / "orchard.md").write_text("# Orchard\n\nMaple Ridge grows apples.", encoding="utf-8")
    (docs / "tickets.jsonl").write_text(json.dumps({"id": "FH-1939", "text": "Pump seal replaced."}))
    (docs / "notes.json").write_text(json.dumps([{"id": "n1", "text": "Rui Tavares sells kelp."}]))
    runner = CliRunner()
    store = str(tmp_path / "s")
    assert runner.invoke(main, ["--store", store, "index", str(docs)]).exit_code == 0
    listing = json.loads(runner.invoke(main, ["--store", store, "--json", "list"]).stdout)
    assert {p["id"]: p["format"] for p in listing} == {
        "docs/pump.txt": "txt",
        "docs/orchard.md": "md",
        "FH-1939": "jsonl",
        "n1": "json",
    }
    human = runner.invoke(main, ["--store", store, "list"]).stdout.splitlines()
    assert "docs/pump.txt\t-\tdocs/pump.txt\ttxt\tutf-8\t-" in human
    # the readers' own formats as recorded; a passage given without a file has none
    assert PassageInfo.of("r", None, {"source": "r.pdf", "format": "pdf"}, 3).format == "pdf"
    assert PassageInfo.of("x", None, {}, 3).format is None
    assert PassageInfo.of("w", None, {"source": "wiki"}, 3).format is None
