"""Text normalisation and stable ids.

Phrases are normalised like HippoRAG's ``processing_phrases`` (lower case, punctuation to spaces) but
Unicode-aware: letters, marks and digits of every script are kept, where the reference keeps only
``[A-Za-z0-9]`` and so collapses e.g. every Chinese name into the empty string.
"""

from __future__ import annotations

import hashlib
import unicodedata


def normalize_phrase(text: str) -> str:
    """Lower-cased, NFKC-normalised, punctuation replaced by spaces, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).lower()
    kept = [ch if unicodedata.category(ch)[0] in "LMN" else " " for ch in text]
    return " ".join("".join(kept).split())


def fold_accents(text: str) -> str:
    """``normalize_phrase`` without diacritics ("Crème Brûlée" -> "creme brulee"); for fuzzy matching."""
    decomposed = unicodedata.normalize("NFKD", normalize_phrase(text))
    return "".join(ch for ch in decomposed if unicodedata.category(ch) != "Mn")


def alnum_count(text: str) -> int:
    return sum(1 for ch in text if ch.isalnum())


def _digest(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def passage_content(text: str, title: str | None) -> str:
    """The string HippoRAG indexes and embeds for a passage: ``title + "\\n" + text``."""
    return f"{title}\n{text}" if title else text


def make_passage_id(text: str, title: str | None = None) -> str:
    return "passage-" + _digest(passage_content(text, title))


def make_phrase_id(name: str) -> str:
    return "phrase-" + _digest(name)


def make_fact_id(subject: str, predicate: str, obj: str) -> str:
    return "fact-" + _digest(f"{subject}\t{predicate}\t{obj}")


def fact_text(subject: str, predicate: str, obj: str) -> str:
    return f"{subject} {predicate} {obj}"
