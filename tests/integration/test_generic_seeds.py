"""Issue 37: a query entity whose phrase is in a large share of the passages is no seed of the walk
(``retrieval.seed_max_passage_share``), in the modes that walk from the entities alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.pipeline_support import make_memory

pytestmark = pytest.mark.integration

N = 30  # passages; "acme pump" is in every one of them, "falcon f9" in one
TABLE = {f"Ticket {i}: the Acme pump of site {i} was serviced.": [["acme pump", "serviced at", f"site {i}"]]
         for i in range(N)}  # fmt: skip
TABLE["The Falcon F9 check valve sticks closed; fitted valve kit VK-0918."] = [
    ["falcon f9", "fitted", "valve kit vk 0918"],
    ["acme pump", "is", "falcon f9"],
]
QUERIES = {"acme?": ["acme pump"], "falcon?": ["falcon f9"]}


@pytest.mark.parametrize("mode", ["hipporag", "ensemble", "hybrid"])
def test_a_phrase_in_every_passage_is_no_seed_a_specific_one_is(tmp_path: Path, mode: str) -> None:
    memory = make_memory(tmp_path / "s", TABLE, QUERIES)
    memory.index(list(TABLE))
    generic = memory.retrieve("acme?", mode=mode)  # type: ignore[arg-type]
    assert generic.linked == []
    assert generic.note is not None and "no query entity linked to the graph" in generic.note
    specific = memory.retrieve("falcon?", mode=mode)  # type: ignore[arg-type]
    assert [item.phrase for item in specific.linked] == ["falcon f9"]


def test_unset_the_generic_phrase_is_seeded_as_before(tmp_path: Path) -> None:
    memory = make_memory(tmp_path / "s", TABLE, QUERIES, seed_max_passage_share=None)
    memory.index(list(TABLE))
    result = memory.retrieve("acme?", mode="hipporag")
    assert [item.phrase for item in result.linked] == ["acme pump"]


def test_a_small_store_keeps_every_seed(tmp_path: Path) -> None:
    """Up to 20 passages a phrase is a seed whatever its share (a share of a handful says nothing)."""
    small = dict(list(TABLE.items())[:10])
    memory = make_memory(tmp_path / "s", small, QUERIES)
    memory.index(list(small))
    assert [item.phrase for item in memory.retrieve("acme?", mode="hipporag").linked] == ["acme pump"]
