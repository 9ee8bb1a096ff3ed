"""Graph phrases found verbatim in a query, and the names-only variant (issue 21): small fake store."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from hipporag_neo4j.retrieval.query_phrases import capitalised_tokens, phrases_in_query
from hipporag_neo4j.stores.base import PhraseHit

pytestmark = pytest.mark.unit


class _Phrases:
    """The two store methods phrases_in_query uses, over a fixed phrase -> passage count table."""

    def __init__(self, counts: dict[str, int], passages: int = 1000) -> None:
        self.counts = counts
        self.passages = passages

    def phrases_by_name(self, names: Iterable[str]) -> dict[str, PhraseHit]:
        return {
            n: PhraseHit(id=n, name=n, similarity=1.0, passage_count=self.counts[n])
            for n in names
            if n in self.counts
        }

    def passage_count(self) -> int:
        return self.passages


STORE = _Phrases(
    {
        "alexander and the terrible horrible no good very bad day": 1,
        "alexander": 3,
        "author": 4,
        "university": 5,
    }
)
QUERY = (
    "What kind of university did the author of Alexander and the Terrible, Horrible, No Good, Very Bad Day"
    " attend?"
)


def test_capitalised_tokens_align_with_the_normalised_query() -> None:
    assert capitalised_tokens("Who wrote Hello Love's B-side in 1998?") == [
        True, False, True, True, True, True, True, False, True,
    ]  # fmt: skip


def test_any_phrase_matches_by_default_names_only_keeps_the_named_title() -> None:
    every = {hit.name for hit in phrases_in_query(STORE, QUERY)}  # type: ignore[arg-type]
    # any phrase: generic nouns too, and spans of at most 8 words, so the 11-word title is cut to a piece
    assert every == {"alexander", "author", "university"}
    names = {hit.name for hit in phrases_in_query(STORE, QUERY, names_only=True)}  # type: ignore[arg-type]
    assert names == {"alexander and the terrible horrible no good very bad day"}


def test_names_only_never_starts_a_match_on_a_function_word() -> None:
    store = _Phrases({"the exies": 2, "exies": 2, "circus diablo": 2})
    found = {
        h.name
        for h in phrases_in_query(
            store, "Which band was formed first The Exies or Circus Diablo?", names_only=True
        )
    }  # type: ignore[arg-type]
    assert found == {"the exies", "circus diablo"} or found == {"exies", "circus diablo"}


def test_the_setting_takes_true_false_or_names(monkeypatch: pytest.MonkeyPatch) -> None:
    from hipporag_neo4j.errors import ConfigError
    from hipporag_neo4j.settings import load_settings

    for value, expected in (("names", "names"), ("true", True), ("0", False)):
        monkeypatch.setenv("HIPPORAG_RETRIEVAL__MATCH_QUERY_PHRASES", value)
        assert load_settings(env_file=None).retrieval.match_query_phrases == expected
    monkeypatch.setenv("HIPPORAG_RETRIEVAL__MATCH_QUERY_PHRASES", "titles")
    with pytest.raises(ConfigError, match="expected true, false or names"):
        load_settings(env_file=None)
