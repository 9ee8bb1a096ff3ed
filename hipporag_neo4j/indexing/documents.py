"""Reading a user's documents: text in any encoding, PDF, DOCX and HTML, each as its text and a title
only where the document has one (a PDF's or DOCX's title property, a DOCX "Title" paragraph, an HTML
``<title>``); a file name is never a title.

The libraries, chosen for the job (the ``[documents]`` extra; text needs only charset-normalizer):

* PDF: pdfplumber, on pdfminer.six. pdfminer's layout analysis groups characters into text boxes and
  orders them column by column, so a two-column page reads down the first column and then the second
  instead of interleaving their lines (pypdf keeps the order of the content stream, which a generator may
  write row by row across the columns); pdfplumber finds tables from their ruling lines and gives their
  rows, so a row's cells stay together ("Site: Porto; Tonnes: 12") instead of coming out a column at a
  time.
* DOCX: python-docx, the maintained reader of Word's format: paragraphs and tables in document order,
  style names (headings, "Title") and the core properties (title).
* HTML: trafilatura, built and benchmarked for a page's main text: navigation, menus, footers and
  boilerplate are left out; lxml (which it uses) reads ``<title>``. Before trafilatura sees the page,
  lxml drops its frame (``<nav>``, ``<header>``, ``<footer>``, ``<aside>``, their ARIA roles, and bars of
  short links or pipe-separated words such as "Home | About | Contact | Login", which trafilatura keeps on
  a short page) and turns each table into ``Header: value`` rows as PDF and DOCX tables are read.
* Encodings: UTF-8 (with or without BOM) and UTF-16/32 with a BOM are decoded as such, an HTML page's
  declared charset is honoured, anything else is detected by charset-normalizer.
* NUL bytes: a file whose NUL bytes are at most 1% of its bytes, and whose other bytes hold at most 1% of
  control characters, is text with the NULs dropped (a stray NUL from a bad copy or a log writer), and
  the passage's metadata notes how many were dropped; more NULs or control characters make it binary.

Every problem is an :class:`InputError` naming the file and what is wrong with it; the caller reports it
and reads the other files.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hipporag_neo4j.errors import InputError

_EXTRA_HINT = "pip install 'hipporag-neo4j[documents]'"
#: PDF title properties that are not titles: a converter's name for the file it was given.
_NOT_A_TITLE = re.compile(
    r"^(untitled|microsoft (word|powerpoint) - .*|.*\.(docx?|pdf|txt|md|html?|odt|rtf))$", re.I
)
_HTML_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


#: The largest share of NUL bytes (and of other control characters) a text file may have; see
#: :func:`drop_nul_bytes`.
MAX_NUL_SHARE = 0.01
#: C0 control characters and DEL, without tab, line feed, form feed and carriage return.
_CONTROL_BYTES = bytes([*range(1, 9), 11, *range(14, 32), 127])


@dataclass(frozen=True)
class Document:
    """A file's text, its title (None unless the document has one) and the encoding it was decoded
    from (None for PDF and DOCX, which are not text files); ``notes``: what was changed in reading it
    (for the passage's metadata)."""

    text: str
    title: str | None
    encoding: str | None
    notes: tuple[str, ...] = ()


def _codec_name(name: str) -> str | None:
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def drop_nul_bytes(data: bytes, path: Path) -> tuple[bytes, int]:
    """``data`` without its NUL bytes, and how many there were, when they are a small share of it (at
    most :data:`MAX_NUL_SHARE` of the bytes) and the rest has at most that share of other control
    characters; else (a binary file) an InputError saying so."""
    nuls = data.count(0)
    if not nuls:
        return data, 0
    rest = data.replace(b"\x00", b"")
    controls = len(rest) - len(rest.translate(None, _CONTROL_BYTES))
    if nuls > len(data) * MAX_NUL_SHARE or controls > len(rest) * MAX_NUL_SHARE:
        raise InputError(
            f"{path}: a binary file ({nuls:,} NUL bytes in {len(data):,}), not text "
            f"(a text file may have up to {MAX_NUL_SHARE:.0%} NUL bytes, which are dropped)"
        )
    return rest, nuls


def decode_text(
    data: bytes, path: Path, declared: str | None = None, notes: list[str] | None = None
) -> tuple[str, str]:
    """``data`` as text and the encoding it was read as: a BOM's, else UTF-8, else ``declared`` (an HTML
    page's charset), else what charset-normalizer detects. A binary file or bytes that are text in no
    encoding are an InputError. A few NUL bytes are dropped (:func:`drop_nul_bytes`), said in ``notes``."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(name), "utf-8" if name == "utf-8-sig" else name
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"{path}: starts with a {name} byte-order mark but is not {name} "
                    f"(invalid byte at offset {exc.start})"
                ) from None
    data, nuls = drop_nul_bytes(data, path)
    if nuls and notes is not None:
        notes.append(f"dropped {nuls} NUL byte{'s' if nuls != 1 else ''}")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as exc:
        utf8_error = exc.start
    if declared and (codec := _codec_name(declared)) is not None:
        try:
            return data.decode(codec), codec
        except UnicodeDecodeError:
            pass
    from charset_normalizer import from_bytes

    results = from_bytes(data)
    best = results.best()
    if best is None:
        raise InputError(
            f"{path}: not text in any encoding found (not UTF-8: invalid byte at offset {utf8_error}; "
            "charset-normalizer found none that fits)"
        )
    # charset-normalizer ranks by "chaos" first: on Western European text several single-byte code pages
    # tie at zero chaos (cp1250 reads "São" as "Săo"); among the near-ties, the best language fit wins,
    # and on a tie again the most used code page, cp1252
    near = [m for m in results if m.chaos <= best.chaos + 0.05]
    best = max(near, key=lambda m: (round(m.coherence, 3), m.encoding == "cp1252"))
    return str(best), best.encoding


def read_text_file(path: Path) -> Document:
    notes: list[str] = []
    text, encoding = decode_text(path.read_bytes(), path, notes=notes)
    return Document(text, None, encoding, tuple(notes))


def _missing_extra(path: Path, what: str) -> InputError:
    return InputError(f"{path}: reading {what} needs the [documents] extra ({_EXTRA_HINT})")


def _clean_title(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    title = " ".join(value.split())
    return title if title and not _NOT_A_TITLE.match(title) else None


def table_text(rows: Iterable[Sequence[str | None]]) -> str:
    """A table as text that keeps each row together: with a header row (every cell filled), one line per
    row of ``Header: value; ...``; otherwise the cells of a row joined with `` | ``."""
    cleaned = [[" ".join((cell or "").split()) for cell in row] for row in rows]
    cleaned = [row for row in cleaned if any(row)]
    if not cleaned:
        return ""
    header = cleaned[0]
    if len(cleaned) > 1 and len(header) > 1 and all(header):
        lines = []
        for row in cleaned[1:]:
            pairs = [f"{name}: {value}" for name, value in zip(header, row, strict=False) if value]
            lines.append("; ".join(pairs) + ".")
        return "\n".join(lines)
    return "\n".join(" | ".join(cell for cell in row if cell) for row in cleaned)


def _drop_leading_title(paragraphs: list[str], title: str | None) -> list[str]:
    """Without the first paragraph when it is the title itself (it is the passage's title already)."""
    if title and paragraphs and " ".join(paragraphs[0].split()).casefold() == title.casefold():
        return paragraphs[1:]
    return paragraphs


def _box_text(text: str) -> str:
    """A PDF text box's lines as one paragraph: a word hyphenated at a line end joined again."""
    joined = re.sub(r"(\w)-\n(?=[a-z])", r"\1", text.strip())
    return " ".join(joined.split())


def _pdf_page_paragraphs(page: Any) -> list[str]:
    from pdfminer.layout import LTTextBox

    tables = [(table.bbox, table_text(table.extract())) for table in page.find_tables()]
    height = float(page.height)
    # (top, text) of every text box outside the tables, in pdfminer's reading order (column by column)
    boxes: list[tuple[float, str]] = []
    for obj in page.layout:
        if not isinstance(obj, LTTextBox):
            continue
        x0, top, x1, bottom = obj.x0, height - obj.y1, obj.x1, height - obj.y0
        inside = any(
            x0 >= bx0 - 1 and x1 <= bx1 + 1 and top >= btop - 1 and bottom <= bbottom + 1
            for (bx0, btop, bx1, bbottom), _ in tables
        )
        if not inside and (text := _box_text(obj.get_text())):
            boxes.append((top, text))
    paragraphs: list[str] = []
    pending = sorted(tables, key=lambda t: t[0][1])
    for top, text in boxes:
        while pending and pending[0][0][1] <= top:  # a table above this box comes before it
            if pending[0][1]:
                paragraphs.append(pending[0][1])
            pending.pop(0)
        paragraphs.append(text)
    paragraphs.extend(text for _, text in pending if text)
    return paragraphs


def _pdf_problem(exc: Exception) -> str:
    """Why a PDF cannot be read. pdfplumber wraps pdfminer's error in a ``PdfminerException`` whose own
    message is empty: the wrapped error is the one to name, and an encrypted file is said to be one."""
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect

    cause = exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], Exception) else exc
    if isinstance(cause, PDFPasswordIncorrect):
        return "encrypted PDF: needs a password (save a copy without one to index it)"
    if isinstance(cause, PDFEncryptionError):
        detail = f": {cause}" if str(cause) else ""
        return (
            f"encrypted PDF that cannot be read ({type(cause).__name__}{detail}); "
            "save a copy without encryption"
        )
    detail = str(cause) or "no details given"
    return f"not a readable PDF ({type(cause).__name__}: {detail})"


def read_pdf(path: Path) -> Document:
    try:
        import pdfplumber
    except ImportError:
        raise _missing_extra(path, "PDF files") from None
    paragraphs: list[str] = []
    try:
        with pdfplumber.open(path, laparams={}) as pdf:
            title = _clean_title((pdf.metadata or {}).get("Title"))
            for page in pdf.pages:
                paragraphs.extend(_pdf_page_paragraphs(page))
                page.close()  # frees the page's parsed objects: a long PDF is read in constant memory
    except InputError:
        raise
    except Exception as exc:  # pdfminer raises many types for damaged or encrypted files
        raise InputError(f"{path}: {_pdf_problem(exc)}") from None
    paragraphs = _drop_leading_title(paragraphs, title)
    if not paragraphs:
        raise InputError(f"{path}: the PDF has no text layer (a scanned document? run OCR on it first)")
    return Document("\n\n".join(paragraphs), title, None)


def read_docx(path: Path) -> Document:
    try:
        import docx
        from docx.table import Table
    except ImportError:
        raise _missing_extra(path, "DOCX files") from None
    try:
        document = docx.Document(str(path))
    except Exception as exc:  # python-docx raises zipfile, lxml and its own errors for broken files
        raise InputError(f"{path}: not a readable DOCX ({type(exc).__name__}: {exc})") from None
    title = _clean_title(document.core_properties.title)
    paragraphs: list[str] = []
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            text = table_text([cell.text for cell in row.cells] for row in block.rows)
        else:
            text = " ".join(block.text.split())
            style = block.style.name if block.style is not None else ""
            if style == "Title" and title is None and not paragraphs:
                title = text or None
                continue
        if text:
            paragraphs.append(text)
    paragraphs = _drop_leading_title(paragraphs, title)
    if not paragraphs:
        raise InputError(f"{path}: the DOCX has no text")
    return Document("\n\n".join(paragraphs), title, None)


#: Elements that are a page's frame, not its text: navigation, header, footer, side bars (and their ARIA
#: roles), with scripts and styles.
_HTML_BOILERPLATE = (
    "//script|//style|//noscript|//template|//nav|//header|//footer|//aside|//menu"
    "|//*[@role='navigation' or @role='banner' or @role='contentinfo' or @role='menu' or @role='menubar']"
)
#: Blocks that may be a bar of links ("Home | About | Contact | Login", a breadcrumb); a list of short
#: links and nothing else counts as one.
_HTML_BLOCKS = "//p|//div|//ul|//ol"
#: What separates the items of a navigation bar.
_NAV_SEPARATORS = re.compile(r"[|·•»›>/\\–—-]+")


def _is_link_bar(element: Any) -> bool:
    """A block of short links and separators only ("Home | About | Contact | Login"), or of short items
    between pipes without links (``Home | About | Contact``): navigation, not text."""
    if element.xpath(".//table|.//pre|.//code|.//p[not(.//a)]|.//h1|.//h2|.//h3"):
        return False  # it holds text blocks of its own: only its link bars go
    text = " ".join(element.text_content().split())
    if not text:
        return False
    links = [" ".join(a.text_content().split()) for a in element.xpath(".//a")]
    links = [link for link in links if link]
    if len(links) >= 2 and all(len(link.split()) <= 4 for link in links):
        rest = text
        for link in sorted(links, key=len, reverse=True):
            rest = rest.replace(link, " ")
        if not _NAV_SEPARATORS.sub(" ", rest).strip():
            return True
    items = [item.strip() for item in text.split("|")]
    return len(items) >= 3 and all(item and len(item.split()) <= 3 for item in items)


def _clean_html(html: str) -> tuple[str, str | None]:
    """The page without its frame (navigation, header, footer, side bars, link bars; see
    :func:`_is_link_bar`) and with each table as ``Header: value`` paragraphs, one per row, as PDF and
    DOCX tables are read (:func:`table_text`); and its ``<title>``."""
    import lxml.html

    root = lxml.html.document_fromstring(html)
    title = root.findtext(".//title")
    for element in root.xpath(_HTML_BOILERPLATE):
        element.drop_tree()
    for element in root.xpath(_HTML_BLOCKS):
        if element.getparent() is not None and _is_link_bar(element):
            element.drop_tree()
    for table in reversed(root.xpath("//table")):  # inner tables first: a cell's table is its text
        rows = [
            [cell.text_content() for cell in row.xpath("./th|./td")]
            for row in table.xpath("./tr|./thead/tr|./tbody/tr|./tfoot/tr")
        ]
        block = lxml.html.Element("div")
        for line in table_text(rows).splitlines():
            paragraph = lxml.html.Element("p")
            paragraph.text = line
            block.append(paragraph)
        block.tail = table.tail
        parent = table.getparent()
        if parent is not None:
            parent.replace(table, block)
    return lxml.html.tostring(root, encoding="unicode"), title


def _html_fallback(html: str) -> tuple[str, str | None]:
    """The page's text without navigation, header, footer, scripts and styles (lxml), for pages too
    small or unusual for trafilatura's main-text detection; and its ``<title>``."""
    import lxml.html

    root = lxml.html.fromstring(html)
    title = root.findtext(".//title")
    for element in root.xpath("//script|//style|//nav|//header|//footer|//aside|//noscript|//title"):
        element.drop_tree()
    blocks = [" ".join(e.text_content().split()) for e in root.xpath("//p|//li|//h1|//h2|//h3|//td|//pre")]
    text = "\n\n".join(b for b in blocks if b) or " ".join(root.text_content().split())
    return text, title


def read_html(path: Path) -> Document:
    try:
        import lxml_html_clean  # noqa: F401  (jusText, which trafilatura runs, needs it; lxml no longer has it)
        import trafilatura
    except ImportError:
        raise _missing_extra(path, "HTML files") from None
    data = path.read_bytes()
    declared = _HTML_CHARSET.search(data[:4096])
    notes: list[str] = []
    html, encoding = decode_text(data, path, declared[1].decode("ascii") if declared else None, notes)
    try:
        html, page_title = _clean_html(html)
        found = trafilatura.bare_extraction(html, include_tables=True, with_metadata=True)
        fallback_text, _ = _html_fallback(html)
    except Exception as exc:  # lxml's parser errors for a page that is not HTML
        raise InputError(f"{path}: not readable HTML ({type(exc).__name__}: {exc})") from None
    text = (getattr(found, "text", None) or "").strip() if found is not None else ""
    title = _clean_title(page_title) or _clean_title(getattr(found, "title", None))
    if not text:
        text = fallback_text
    paragraphs = _drop_leading_title([p for p in re.split(r"\n\s*\n|\n", text) if p.strip()], title)
    if not paragraphs:
        raise InputError(f"{path}: the HTML page has no text")
    return Document("\n\n".join(paragraphs), title, encoding, tuple(notes))


#: Readers by file suffix (lower case); .txt, .md, .json and .jsonl are read by inputs.py from text.
READERS: dict[str, Callable[[Path], Document]] = {
    ".pdf": read_pdf,
    ".docx": read_docx,
    ".html": read_html,
    ".htm": read_html,
}
