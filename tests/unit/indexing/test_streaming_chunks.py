"""The streaming chunker (issue 37 item 4): the chunks of the greedy sentence packer it replaced, counted in
linear time; chunks within the window for a tokenizer whose counts do not add up; resuming from a chunk's
offset gives the chunks that follow it; a text is never tokenized whole."""

from __future__ import annotations

import random
import re

import pytest

from hipporag_neo4j.indexing.pipeline import chunk_text, iter_chunks

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


def reference_chunks(text: str, max_tokens: int, count_tokens) -> list[str]:  # type: ignore[no-untyped-def]
    """The packer before issue 37, as it was: each candidate chunk tokenized whole (quadratic)."""
    pieces: list[str] = []
    for sentence in [s for s in _SENTENCE_END.split(text.strip()) if s]:
        if count_tokens(sentence) <= max_tokens:
            pieces.append(sentence)
            continue
        current: list[str] = []
        for word in sentence.split():
            if current and count_tokens(" ".join([*current, word])) > max_tokens:
                pieces.append(" ".join(current))
                current = []
            current.append(word)
        if current:
            pieces.append(" ".join(current))
    chunks: list[str] = []
    for piece in pieces:
        if chunks and count_tokens(chunks[-1] + " " + piece) <= max_tokens:
            chunks[-1] = chunks[-1] + " " + piece
        else:
            chunks.append(piece)
    return chunks


class Counter:
    """Words + 2 special tokens (a count that adds up over a space, as WordPiece's does), remembering
    the longest text it was given."""

    def __init__(self) -> None:
        self.longest = 0
        self.calls = 0

    def __call__(self, text: str) -> int:
        self.calls += 1
        self.longest = max(self.longest, len(text))
        return len(text.split()) + 2


def chars_count(text: str) -> int:
    """A count that does not add up over a space (characters / 4, as the OpenAI embedder estimates)."""
    return len(text) // 4 + 1


WORDS = [
    "a",
    "bb",
    "Ccc.",
    "x!",
    "\n",
    " ",
    "  ",
    "\t",
    "supercalifragilistic",
    "?",
    "。",
    "1234.5",
    "\u00a0",
]


def random_texts(count: int) -> list[str]:
    rng = random.Random(7)
    return [
        "".join(rng.choice(WORDS) + (" " if rng.random() < 0.5 else "") for _ in range(rng.randint(0, 300)))
        for _ in range(count)
    ]


@pytest.mark.parametrize("window", [3, 5, 12, 40])
def test_same_chunks_as_the_packer_it_replaced(window: int) -> None:
    for text in random_texts(150):
        assert chunk_text(text, window, Counter()) == reference_chunks(text, window, Counter()), text


def test_a_tokenizer_whose_counts_do_not_add_up_still_gets_chunks_within_the_window() -> None:
    for text in random_texts(150):
        for chunk in chunk_text(text, 12, chars_count):
            assert chars_count(chunk) <= 12 or len(chunk.split()) == 1, chunk  # one word over it stays whole


def test_resuming_from_a_chunks_offset_gives_the_chunks_after_it() -> None:
    resumed = 0
    for text in random_texts(80):
        full = list(iter_chunks(text, 6, Counter()))
        for number, (_, offset) in enumerate(full):
            if offset is None:  # the chunk ends inside a sentence: no resuming there
                continue
            assert [c for c, _ in iter_chunks(text, 6, Counter(), offset)] == [
                c for c, _ in full[number + 1 :]
            ]
            resumed += 1
    assert resumed > 100


def test_a_long_text_is_counted_a_sentence_or_word_at_a_time_never_whole() -> None:
    text = " ".join(f"Sentence {n} says something about item {n}." for n in range(20_000))  # ~1 MB
    logline = " ".join(f"2026-11-28T10:{n % 60:02d} worker-{n} queued job {n}" for n in range(20_000))
    for long in (text, logline):  # the second has no sentence end at all
        counter = Counter()
        chunks = chunk_text(long, 64, counter)
        assert len(chunks) > 100
        assert counter.longest < 64 * 64  # no text longer than the window times 64 characters counted
        assert counter.calls < 3 * len(long.split())  # linear: about one count per word or sentence
        assert " ".join(chunks).split() == long.split()  # nothing lost or repeated
