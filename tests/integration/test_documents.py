"""A user's own documents through the CLI: PDF (two columns and a table), DOCX (a title and headings),
HTML (navigation, header and footer around the article), text in other encodings than UTF-8, a damaged
file among good ones, and titles only where the document has one. The files are made here with the
libraries a user's tools would use (fpdf2 writes the PDF, python-docx the DOCX); real embedder, spaCy,
embedded store on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from hipporag_neo4j.cli.main import main
from hipporag_neo4j.stores.embedded import EmbeddedStore

pytestmark = pytest.mark.integration

LEFT = [
    "Marta Silva leads the harbor kelp project.",
    "She started it in Porto in 2021.",
    "The kelp grows fast in cold water.",
]
RIGHT = [
    "Jonas Berg repairs fishing boats.",
    "He works at the Bergen shipyard.",
    "His boats carry kelp to market.",
]


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def make_pdf(path: Path) -> None:
    """A report with a title property, a heading, two columns whose lines are written row by row across
    the page (as some generators do: reading the content stream in order interleaves the columns) and a
    ruled table."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title("Harbor Kelp Report")
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 16)
    pdf.text(20, 20, "Harbor Kelp Report")
    pdf.set_font("Helvetica", size=11)
    for row, (left, right) in enumerate(zip(LEFT, RIGHT, strict=True)):
        y = 40 + row * 5
        pdf.text(15, y, left)
        pdf.text(110, y, right)
    pdf.set_y(80)
    with pdf.table() as table:
        for cells in [
            ("Site", "Tonnes", "Manager"),
            ("Porto", "12", "Marta Silva"),
            ("Bergen", "7", "Jonas Berg"),
        ]:
            row_cells = table.row()
            for cell in cells:
                row_cells.cell(cell)
    pdf.output(str(path))


def make_docx(path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_paragraph("Kelp Cooperative Handbook", style="Title")
    document.add_heading("Boats", level=1)
    document.add_paragraph("Jonas Berg repairs the fishing boats of the cooperative in Bergen.")
    document.add_heading("Farming", level=1)
    document.add_paragraph("Marta Silva leads the harbor kelp project in Porto.")
    table = document.add_table(rows=2, cols=2)
    for (r, c), text in {(0, 0): "Site", (0, 1): "Divers", (1, 0): "Porto", (1, 1): "Ana Costa"}.items():
        table.cell(r, c).text = text
    document.save(str(path))


HTML = """<!DOCTYPE html>
<html><head><meta charset="windows-1252"><title>Kelp farming in Porto</title></head><body>
<header><a href="/">Harbor Kelp Cooperative</a> <a href="/login">Sign in to your account</a></header>
<nav><ul><li><a href="/">Home</a></li><li><a href="/about">About us</a></li>
<li><a href="/boats">Our boats and their crews</a></li>
<li><a href="/contact">Contact the team</a></li></ul></nav>
<main><article><h1>Kelp farming in Porto</h1>
<p>Ana Costa dives for the harbor kelp project in Porto. The project started in 2021 with two boats and a
small team of divers from São João.</p>
<p>Rui Tavares sells the dried kelp at the market of Matosinhos. He works there every Saturday morning
during the summer months.</p></article></main>
<footer><p>Copyright 2026 Harbor Kelp Cooperative. All rights reserved. Privacy policy and cookie
settings.</p></footer></body></html>"""

CP1252_TEXT = (
    "Marta Silva dirige o projeto das algas no Porto. A cooperativa começou em 2021 com dois barcos e "
    "uma equipa de mergulhadores. São João é a festa da cidade, e o coração da cooperativa está à "
    "beira-mar."
)


@pytest.fixture
def documents(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    make_pdf(docs / "report.pdf")
    make_docx(docs / "handbook.docx")
    (docs / "page.html").write_bytes(HTML.encode("cp1252"))
    (docs / "algas.txt").write_bytes(CP1252_TEXT.encode("cp1252"))
    (docs / "wide.txt").write_text("Kim grows tomatoes in Lisbon.\n", encoding="utf-16")
    (docs / "2024-03-meeting-notes.txt").write_text(
        "Harbor kelp project: Marta Silva reported the first harvest.", encoding="utf-8"
    )
    (docs / "damaged.pdf").write_bytes(b"%PDF-1.4\n1 0 obj <<>> garbage, no trailer")
    (docs / "damaged.docx").write_bytes(b"PK\x03\x04 not really a zip")
    return docs


def texts(store: Path) -> dict[str, str]:
    embedded = EmbeddedStore(store)
    try:
        return {
            pid: p.text
            for pid, p in embedded.get_passages(
                [i for batch in embedded.iter_texts("passage", 1000) for i, _ in batch]
            ).items()
        }
    finally:
        embedded.close()


def phrases(store: Path) -> set[str]:
    embedded = EmbeddedStore(store)
    try:
        return {name for batch in embedded.iter_texts("phrase", 1000) for _, name in batch}
    finally:
        embedded.close()


def test_pdf_docx_html_and_other_encodings_indexed_from_a_folder(
    documents: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "store"
    result = cli("--store", str(store), "--json", "index", "docs")
    report: dict[str, Any] = json.loads(result.stdout)
    # the damaged files are named with their reason; everything else is indexed
    assert result.exit_code == 3
    assert sorted(report["indexed"]) == [
        "docs/2024-03-meeting-notes.txt",
        "docs/algas.txt",
        "docs/handbook.docx",
        "docs/page.html",
        "docs/report.pdf",
        "docs/wide.txt",
    ]
    failed = {Path(f["source"]).name: f["reason"] for f in report["failed"]}
    assert set(failed) == {"damaged.pdf", "damaged.docx"}
    assert failed["damaged.pdf"].startswith("not a readable PDF")
    assert failed["damaged.docx"].startswith("not a readable DOCX")
    assert report["unsupported"] == []

    stored = texts(store)
    pdf = stored["docs/report.pdf"]
    # the columns are read one after the other, not line by line across the page
    assert " ".join(LEFT) in pdf and " ".join(RIGHT) in pdf
    # each table row keeps its cells together, under the header's names
    assert "Site: Porto; Tonnes: 12; Manager: Marta Silva." in pdf
    assert "Site: Bergen; Tonnes: 7; Manager: Jonas Berg." in pdf
    assert "Harbor Kelp Report" not in pdf  # it is the title, not the text

    handbook = stored["docs/handbook.docx"]
    assert handbook.split("\n\n")[:4] == [
        "Boats",
        "Jonas Berg repairs the fishing boats of the cooperative in Bergen.",
        "Farming",
        "Marta Silva leads the harbor kelp project in Porto.",
    ]
    assert "Site: Porto; Divers: Ana Costa." in handbook

    page = stored["docs/page.html"]
    assert "Ana Costa dives for the harbor kelp project in Porto." in page and "São João" in page
    for boilerplate in ("Home", "About us", "Contact the team", "Sign in", "Copyright", "Privacy"):
        assert boilerplate not in page, f"{boilerplate!r} is navigation, header or footer, not the article"

    assert stored["docs/algas.txt"] == CP1252_TEXT
    assert stored["docs/wide.txt"].strip() == "Kim grows tomatoes in Lisbon."

    listing = {p["id"]: p for p in json.loads(cli("--store", str(store), "--json", "list").stdout)}
    assert {i: (p["title"], p["format"], p["encoding"]) for i, p in listing.items()} == {
        "docs/2024-03-meeting-notes.txt": (None, "txt", "utf-8"),
        "docs/algas.txt": (None, "txt", "cp1252"),
        "docs/handbook.docx": ("Kelp Cooperative Handbook", "docx", None),
        "docs/page.html": ("Kelp farming in Porto", "html", "cp1252"),
        "docs/report.pdf": ("Harbor Kelp Report", "pdf", None),
        "docs/wide.txt": (None, "txt", "utf-16"),
    }
    human = cli("--store", str(store), "list").stdout.splitlines()
    assert human[0].split("\t") == ["id", "title", "source", "format", "encoding", "chunk"]
    assert "docs/algas.txt\t-\tdocs/algas.txt\ttxt\tcp1252\t-" in human

    # a file name is an id: never a phrase, so never an entity or a fact's subject
    names = phrases(store)
    assert not {n for n in names if "meeting" in n or "2024 03" in n or "algas txt" in n}, names
    assert "marta silva" in names

    # and the documents answer questions
    out = cli("--store", str(store), "--json", "query", "Who works at the Bergen shipyard?", "--top-k", "3")
    top = [p["passage"]["id"] for p in json.loads(out.stdout)["passages"]]
    assert "docs/report.pdf" in top

    again = json.loads(cli("--store", str(store), "--json", "index", "docs").stdout)
    assert again["indexed"] == [] and len(again["skipped"]) == 6  # a re-run re-reads nothing twice


def test_a_binary_file_and_a_scanned_pdf_are_named(tmp_path: Path) -> None:
    from fpdf import FPDF

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.txt").write_text("Ann Lee met Bob Stone in Paris.", encoding="utf-8")
    (docs / "blob.txt").write_bytes(bytes(range(1, 32)) * 50 + b"\x00")
    scanned = FPDF()
    scanned.add_page()
    scanned.rect(20, 20, 100, 60, style="F")  # a page with a picture and no text layer
    scanned.output(str(docs / "scan.pdf"))
    result = cli("--store", str(tmp_path / "s"), "index", str(docs))
    assert result.exit_code == 3
    assert "indexed 1 passage," in result.stdout
    assert "binary file" in result.stdout and "blob.txt" in result.stdout
    assert "scan.pdf" in result.stdout and "no text layer" in result.stdout
