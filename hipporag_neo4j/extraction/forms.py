"""Semi-structured text for the offline extractor: form fields are values, not text (issue 37).

A support ticket, a form, or a table that a PDF or DOCX reader turned into ``Header: value`` rows is a run
of lines of the shape ``Label: value``. Parsed as prose, the labels become entities and subjects
("agent", "resolution", "customer": one node in every ticket, a hub) and the lines run together into one
sentence ("p2 channel portal customer maple ridge orchards site ..." as a single phrase), because a line
break does not end a sentence for the parser.

The rule, stated: a **field line** is a line that starts with a label of one to four words, the first
capitalised, followed by a colon and a value. A text with at least :data:`MIN_FIELD_LINES` field lines is
a form: it is parsed as segments, each field's value alone (its label dropped) and each run of other lines
together, and no sentence runs from one segment into the next. A text with fewer field lines is parsed
whole, as before: prose with one "Note: ..." line, and every passage of MuSiQue and HotpotQA (their
passages have no line breaks), keep their extraction.
"""

from __future__ import annotations

import re

#: fewer field lines than this and the text is not a form: it is left alone
MIN_FIELD_LINES = 2
_FIELD_LINE = re.compile(
    r"^[ \t]*(?P<label>[A-Z][\w&/#'.()-]*(?:[ \t]+[\w&/#'.()-]+){0,3})[ \t]*:[ \t]+(?P<value>\S.*?)[ \t]*$",
    re.MULTILINE,
)


def field_lines(text: str) -> list[tuple[str, str]]:
    """(label, value) of every field line of ``text``, in order."""
    return [(m.group("label"), m.group("value")) for m in _FIELD_LINE.finditer(text)]


#: a field value of at most this many words, not ending a sentence, is a name or a code: a fact
MAX_FACT_WORDS = 6


def short_fields(text: str) -> list[tuple[str, str]]:
    """(label, value) of the field lines whose value is a name, a code or a date rather than a sentence:
    at most :data:`MAX_FACT_WORDS` words, not ending with a full stop, question or exclamation mark."""
    return [
        (label, value)
        for label, value in field_lines(text)
        if len(value.split()) <= MAX_FACT_WORDS and not value.endswith((".", "!", "?"))
    ]


def form_segments(text: str) -> list[str] | None:
    """The segments to parse apart when ``text`` is a form (at least :data:`MIN_FIELD_LINES` field
    lines): each field line's value, and each run of other non-blank lines joined; None otherwise."""
    if len(_FIELD_LINE.findall(text)) < MIN_FIELD_LINES:
        return None
    segments: list[str] = []
    prose: list[str] = []
    for line in text.splitlines():
        field = _FIELD_LINE.match(line)
        if field is None and line.strip():
            prose.append(line)
            continue
        if prose:
            segments.append("\n".join(prose))
            prose = []
        if field is not None:
            segments.append(field.group("value"))
    if prose:
        segments.append("\n".join(prose))
    return segments
