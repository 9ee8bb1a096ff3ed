"""Property tests: indexing is idempotent and delete is exact (A+B-B == A), on the embedded store."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hipporag_neo4j.common.text import make_passage_id
from tests.support.pipeline_support import dump_embedded, make_memory

pytestmark = pytest.mark.integration

# A small vocabulary with near-duplicates ("<x> variant") so synonym edges appear and must be handled.
VOCAB = [
    "stanford",
    "stanford variant",
    "thomas",
    "alzheimer",
    "alzheimer variant",
    "maria",
    "robots",
    "harvard",
    "cambridge",
    "lee",
    "ab",
    "münchen",
    "北京",
]
PREDICATES = ["works at", "studies", "is in", "likes"]

triple = st.tuples(st.sampled_from(VOCAB), st.sampled_from(PREDICATES), st.sampled_from(VOCAB)).filter(
    lambda t: t[0] != t[2]
)
passage = st.lists(triple, min_size=0, max_size=4)
corpus = st.dictionaries(
    st.integers(0, 10_000).map(lambda i: f"Passage {i}."), passage, min_size=1, max_size=6
)


def _table(*parts: dict[str, list[tuple[str, str, str]]]) -> dict[str, list[list[str]]]:
    return {text: [list(t) for t in triples] for part in parts for text, triples in part.items()}


SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(a=corpus)
def test_indexing_twice_equals_indexing_once(a: dict[str, list[tuple[str, str, str]]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        once, twice = Path(tmp) / "once", Path(tmp) / "twice"
        make_memory(once, _table(a)).index(list(a))
        memory = make_memory(twice, _table(a))
        memory.index(list(a))
        report = memory.index(list(a))
        assert report.indexed == []
        assert dump_embedded(once) == dump_embedded(twice)


@SETTINGS
@given(a=corpus, b=corpus, interleave=st.booleans())
def test_index_a_and_b_then_delete_b_equals_index_a(
    a: dict[str, list[tuple[str, str, str]]], b: dict[str, list[tuple[str, str, str]]], interleave: bool
) -> None:
    b = {k: v for k, v in b.items() if k not in a}
    with tempfile.TemporaryDirectory() as tmp:
        only_a, both = Path(tmp) / "a", Path(tmp) / "ab"
        make_memory(only_a, _table(a)).index(list(a))
        memory = make_memory(both, _table(a, b))
        if interleave:
            memory.index(sorted([*a, *b]))
        else:
            memory.index(list(a))
            memory.index(list(b))
        memory.delete([make_passage_id(text) for text in b])
        assert dump_embedded(both) == dump_embedded(only_a)
