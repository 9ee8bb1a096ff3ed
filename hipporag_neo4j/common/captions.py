"""Short names for drawing the graph: what Neo4j Browser and the graph explorer write on a node.

A passage is named by its title, else by the file name in its id (directories dropped); a chunk keeps
its ``#n`` either way (``notes.md#3``, ``Release notes #3``), so the chunks of one file never look alike.
A fact is named by its predicate and object (a passage's facts mostly share their subject), cut with an
ellipsis beyond :data:`FACT_CAPTION_CHARS`.
"""

from __future__ import annotations

import re

#: the ``#n`` the indexer appends to the id of a long text's n-th chunk
CHUNK_SUFFIX = re.compile(r"#\d+\Z")
FACT_CAPTION_CHARS = 40


def split_chunk(passage_id: str) -> tuple[str, str]:
    """``("docs/notes.md", "#3")`` for ``"docs/notes.md#3"``; ``(passage_id, "")`` when not a chunk."""
    found = CHUNK_SUFFIX.search(passage_id)
    if found is None:
        return passage_id, ""
    return passage_id[: found.start()], found.group(0)


def shorten(text: str, chars: int) -> str:
    """``text`` cut to at most ``chars`` characters, the last one an ellipsis when cut."""
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: max(chars - 1, 0)].rstrip() + "\u2026"


def shorten_keeping_chunk(label: str, chars: int) -> str:
    """``label`` cut to ``chars`` as :func:`shorten` does, but a trailing ``#n`` is kept whole (the
    ellipsis goes before it): ``support-tickets-ar…#1234``."""
    head, chunk = split_chunk(label)
    if len(label) <= chars or not chunk:
        return shorten(label, chars)
    return shorten(head, max(chars - len(chunk), 2)) + chunk


def passage_caption(passage_id: str, title: str | None) -> str:
    """What a passage is called in a drawing: its title, else the file name of its id; with ``#n`` for
    a chunk (after a space when it follows a title)."""
    head, chunk = split_chunk(passage_id)
    if title and title.strip():
        name = " ".join(title.split())
        return f"{name} {chunk}" if chunk else name
    name = head.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or head
    return name + chunk


def fact_caption(text: str, predicate: str, chars: int = FACT_CAPTION_CHARS) -> str:
    """A fact's predicate and object (its text from the predicate on: ``fact_text`` is ``subject
    predicate object``), cut with an ellipsis beyond ``chars``; the whole text when the predicate is not
    found in it."""
    text = " ".join(text.split())
    predicate = " ".join(predicate.split())
    at = f" {text} ".find(f" {predicate} ") if predicate else -1
    return shorten(text[at:] if at > 0 else text, chars)
