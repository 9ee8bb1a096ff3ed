"""Captions: what Neo4j Browser and the explorer write on a passage or a fact."""

from __future__ import annotations

import pytest

from hipporag_neo4j.common.captions import (
    fact_caption,
    passage_caption,
    shorten,
    shorten_keeping_chunk,
    split_chunk,
)
from hipporag_neo4j.common.text import fact_text

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("passage_id", "title", "caption"),
    [
        ("Helena Várkonyi", "Helena Várkonyi", "Helena Várkonyi"),
        ("docs/wiki/notes.md#3", None, "notes.md#3"),
        ("docs/wiki/notes.md#3", "", "notes.md#3"),
        ("support/tickets-2023.txt", None, "tickets-2023.txt"),
        ("C:\\data\\archive.txt#12", None, "archive.txt#12"),
        ("docs/release.md#2", "Release  notes", "Release notes #2"),
        ("passage-0123abcd", None, "passage-0123abcd"),
        ("ticket #45 is open", None, "ticket #45 is open"),  # "#45" not at the end: not a chunk
    ],
)
def test_passage_caption_is_the_title_else_the_file_name_and_keeps_the_chunk(
    passage_id: str, title: str | None, caption: str
) -> None:
    assert passage_caption(passage_id, title) == caption


def test_split_chunk() -> None:
    assert split_chunk("a/b.txt#10") == ("a/b.txt", "#10")
    assert split_chunk("a/b.txt#x") == ("a/b.txt#x", "")


def test_fact_caption_is_predicate_and_object_cut_with_an_ellipsis() -> None:
    text = fact_text("ticket fh 1939", "resolved by", "replacing the seal kit")
    assert fact_caption(text, "resolved by") == "resolved by replacing the seal kit"
    long = fact_text(
        "maple ridge orchards", "installed", "a swift s1 pump at the cedar falls pumping station"
    )
    caption = fact_caption(long, "installed")
    assert len(caption) <= 40 and caption.endswith("\u2026") and caption.startswith("installed a swift s1")
    # the predicate is not in the text (a hand-made fact): the text itself, cut
    assert fact_caption("x y z", "is") == "x y z"


def test_shorten_keeping_chunk_puts_the_ellipsis_before_the_chunk_number() -> None:
    label = "support-tickets-archive-2023.txt#1234"
    cut = shorten_keeping_chunk(label, 24)
    assert len(cut) == 24 and cut.endswith("\u2026#1234") and cut.startswith("support-tickets-ar")
    assert shorten_keeping_chunk("notes.md#3", 24) == "notes.md#3"
    assert shorten_keeping_chunk("a long title without any chunk", 10) == shorten(
        "a long title without any chunk", 10
    )
    assert shorten("a long title", 7) == "a long\u2026"
