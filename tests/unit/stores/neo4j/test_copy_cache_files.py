"""A client-copy file that cannot be used (another layout, cut short, not a file of ours) is a cache miss:
the namespace is read from the server, never an error (hipporag_neo4j/stores/neo4j/copy_cache.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hipporag_neo4j.stores.neo4j import copy_cache

pytestmark = pytest.mark.unit

STAMP = {"format": copy_cache.FORMAT, "namespace": "ns", "graph_version": 7}


def _write(path: Path, stamp: dict[str, object], **arrays: np.ndarray) -> None:
    raw = np.frombuffer(json.dumps(stamp).encode(), dtype=np.uint8)
    with path.open("wb") as out:
        np.savez(out, allow_pickle=False, stamp=raw, **arrays)


def test_a_file_of_another_layout_with_the_same_stamp_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "copy.npz"  # the stamp matches, the arrays are not the ones this version reads
    _write(path, STAMP, mentions_data=np.zeros(3), phrase_ids_data=np.zeros(1, dtype=np.uint8))
    assert copy_cache.load(path, STAMP) is None


def test_a_cut_short_or_foreign_file_is_a_miss(tmp_path: Path) -> None:
    whole = tmp_path / "whole.npz"
    _write(whole, STAMP, phrase_ids_data=np.zeros(4, dtype=np.uint8))
    cut = tmp_path / "cut.npz"
    cut.write_bytes(whole.read_bytes()[:40])
    foreign = tmp_path / "foreign.npz"
    foreign.write_text("not a copy", encoding="utf-8")
    assert copy_cache.load(cut, STAMP) is None
    assert copy_cache.load(foreign, STAMP) is None
    assert copy_cache.load(tmp_path / "missing.npz", STAMP) is None


def test_another_stamp_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "copy.npz"
    _write(path, {**STAMP, "graph_version": 6}, phrase_ids_data=np.zeros(1, dtype=np.uint8))
    assert copy_cache.load(path, STAMP) is None


def test_the_vectors_are_mapped_from_the_file_read_only_and_a_process_s_write_appends_to_a_copy(
    tmp_path: Path,
) -> None:
    """Processes that load one file share its vectors in the page cache (mapped, not read into each);
    a writer that appends phrases to a loaded copy copies the mapped rows once and never writes the file."""
    from hipporag_neo4j.stores.memory.graph import PhraseIndex
    from hipporag_neo4j.stores.memory.spare_rows import grown
    from hipporag_neo4j.stores.memory.strings import StringTable
    from hipporag_neo4j.stores.neo4j.client_copy import View

    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((300, 8)).astype(np.float32)
    ids = [f"ph{k:03d}" for k in range(300)]
    view = View(7)
    view.phrases = PhraseIndex(StringTable.of(ids, searchable=True), StringTable.of(ids), np.zeros((300, 0)))
    view.passage_counts = {i: 1 for i in ids}
    view.phrase_vectors = vectors
    path = tmp_path / "copy.npz"
    assert copy_cache.save(path, STAMP, view)
    before = path.read_bytes()
    loaded = copy_cache.load(path, STAMP)
    assert loaded is not None and loaded.phrase_vectors is not None
    assert isinstance(loaded.phrase_vectors.base, np.memmap) or isinstance(loaded.phrase_vectors, np.memmap)
    assert not loaded.phrase_vectors.flags.writeable
    assert np.array_equal(loaded.phrase_vectors, vectors)
    more, _, copied = grown(loaded.phrase_vectors, None, rng.standard_normal((5, 8)).astype(np.float32))
    assert copied and len(more) == 305 and np.array_equal(more[:300], vectors)
    assert path.read_bytes() == before
