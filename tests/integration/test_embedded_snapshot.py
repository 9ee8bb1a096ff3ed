"""The persisted retrieval snapshot of the embedded store: reused on reopen, never stale, crash-safe.

Behaviour only (counters of builds and mappings, equality of every read), never times.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from hipporag_neo4j.common.text import make_phrase_id
from hipporag_neo4j.stores.base import WalkParams
from hipporag_neo4j.stores.embedded import EmbeddedStore, snapshot, snapshot_cache, snapshot_files
from hipporag_neo4j.stores.memory import graph as memory_graph
from hipporag_neo4j.stores.memory import rows, spare_rows, strings
from hipporag_neo4j.stores.memory.graph import GraphSnapshot
from hipporag_neo4j.stores.memory.recycled import Recycler
from hipporag_neo4j.stores.memory.strings import StringTable
from tests.support.embedded_writes import one_passage
from tests.support.store_corpus import CORPUS, EMB, _index, _records

FIRST = {"p1", "p2", "p3"}
ALL = {pid for pid, _, _ in CORPUS}


def _open(path: Path, persist: bool = True) -> EmbeddedStore:
    store = EmbeddedStore(path, persist_snapshot=persist)
    store.open(EMB.model_name, EMB.dimension)
    return store


def _reads(store: EmbeddedStore) -> dict[str, Any]:
    """Every retrieval read, to the bit."""
    names = sorted({n for _, _, triples in CORPUS for s, _, o in triples for n in (s, o)})
    seeds = {make_phrase_id(n): 1.0 for n in ("thomas", "harvard", "no such phrase")}
    query = EMB.encode(["who works at stanford"])
    return {
        "ppr": store.view().personalized_pagerank(seeds, WalkParams(0.5, 200, 1e-10)),
        "graph": store.view().graph_passage_scores(seeds, WalkParams(0.5, 200, 1e-10), 10, 3),
        "walk": store.view().passage_node_scores(
            seeds, {"p1": 0.5, "nope": 1.0}, WalkParams(0.5, 200, 1e-10), 10, 3
        ),
        "dense": store.view().dense_passage_scores(query[0], 10),
        "link": store.nearest_phrases(EMB.encode(names), 3, -1.0),
        "facts": store.view().nearest_facts(query[0], 4),
        "by_name": store.phrases_by_name(names),
    }


def _versions(path: Path) -> list[str]:
    root = path / snapshot_files.SNAPSHOT_DIR
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.name != snapshot_files.DATA_DIR)


def test_a_snapshot_is_persisted_and_mapped_on_reopen_without_a_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store"
    store = _open(path)
    _index(store, ALL)
    first = _reads(store)
    assert store.cache.snapshot_builds == 1
    version = store.stats().extra["graph_version"]
    assert _versions(path) == [f"v{version}"]
    store.close()

    def no_build(*args: Any) -> GraphSnapshot:
        raise AssertionError("the snapshot was rebuilt although a current one was persisted")

    monkeypatch.setattr(snapshot, "load_graph", no_build)
    monkeypatch.setattr(memory_graph, "walk_adjacency", no_build)  # HippoRAG 2's walk graph is mapped too
    again = _open(path)
    assert _reads(again) == first
    assert (again.cache.snapshot_builds, again.cache.snapshot_maps) == (0, 1)
    again.close()


def test_persisted_and_in_memory_snapshots_answer_identically(tmp_path: Path) -> None:
    plain = _open(tmp_path / "plain", persist=False)
    _index(plain, ALL)
    persisted = _open(tmp_path / "persisted")
    _index(persisted, ALL)
    _reads(persisted)
    persisted.close()
    reopened = _open(tmp_path / "persisted")
    assert _reads(reopened) == _reads(plain)
    assert (
        reopened.cache.snapshot_maps == 1 and not (tmp_path / "plain" / snapshot_files.SNAPSHOT_DIR).exists()
    )


def _carry(monkeypatch: pytest.MonkeyPatch, carry: bool) -> None:
    """carry=False: every version brought forward from the persisted one and written (the path of a
    process that opens the store after others wrote); True: carried forward in memory (the default)."""
    if not carry:
        monkeypatch.setattr(snapshot_cache, "CARRY_COMMITS", 0)


@pytest.mark.parametrize("carry", [True, False])
def test_a_write_makes_the_snapshot_stale_and_the_next_read_brings_it_forward(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, carry: bool
) -> None:
    _carry(monkeypatch, carry)
    path = tmp_path / "store"
    reader, writer = _open(path), _open(path)
    _index(writer, FIRST)
    before = _reads(reader)
    _index(writer, ALL - FIRST)  # another object (as another process): the reader's snapshot is stale
    after = _reads(reader)
    # appended rows only: carried forward in memory or brought forward from the persisted version
    counts = (reader.cache.snapshot_builds, reader.cache.snapshot_carries, reader.cache.snapshot_updates)
    assert counts == ((1, 1, 0) if carry else (1, 0, 1)) and after != before
    clean = _open(tmp_path / "clean", persist=False)
    _index(clean, ALL)
    assert after == _reads(clean)
    version = reader.stats().extra["graph_version"]
    # carried: nothing written, the persisted version stays; brought forward: the old version removed
    assert _versions(path) == [f"v{version - 1 if carry else version}"]
    # a third object opening now brings the persisted one forward or maps the current version
    third = _open(path)
    assert _reads(third) == after and third.cache.snapshot_builds == 0
    assert (third.cache.snapshot_updates, third.cache.snapshot_maps) == ((1, 0) if carry else (0, 1))


def test_a_snapshot_with_the_right_version_but_another_commit_token_is_not_used(tmp_path: Path) -> None:
    """A database that lost its last commits (power loss) and was written again reaches the same version
    number with other contents: the commit token tells them apart."""
    path = tmp_path / "store"
    store = _open(path)
    _index(store, ALL)
    _reads(store)
    store.close()
    manifest = path / snapshot_files.SNAPSHOT_DIR / _versions(path)[0] / snapshot_files.MANIFEST
    data = json.loads(manifest.read_text())
    data["graph_token"] = "another history"
    manifest.write_text(json.dumps(data))
    again = _open(path)
    _reads(again)
    assert (again.cache.snapshot_builds, again.cache.snapshot_maps) == (1, 0)


@pytest.mark.parametrize("damage", ["truncate", "manifest", "older format", "missing"])
def test_a_damaged_or_older_snapshot_is_rebuilt_not_served_then_replaced(tmp_path: Path, damage: str) -> None:
    """Never served: rebuilt. The rebuild is persisted in place of the unusable directory of the same
    version (a store from the release before holds a format-1 snapshot of its current version), so only
    one process rebuilds and no data file of a discarded rebuild is left behind."""
    path = tmp_path / "store"
    store = _open(path)
    _index(store, ALL)
    want = _reads(store)
    store.close()
    directory = path / snapshot_files.SNAPSHOT_DIR / _versions(path)[0]
    data = path / snapshot_files.SNAPSHOT_DIR / snapshot_files.DATA_DIR
    if damage == "truncate":
        target = directory / "adjacency_indices.npy"
        target.write_bytes(target.read_bytes()[:-4])
    elif damage == "manifest":
        (directory / snapshot_files.MANIFEST).write_text("{not json")
    elif damage == "older format":
        manifest = json.loads((directory / snapshot_files.MANIFEST).read_text())
        (directory / snapshot_files.MANIFEST).write_text(json.dumps({**manifest, "format": 1}))
    else:
        (directory / "mentions_indices.npy").unlink()
    rebuilt = _open(path)
    assert _reads(rebuilt) == want
    assert (rebuilt.cache.snapshot_builds, rebuilt.cache.snapshot_maps) == (1, 0)
    rebuilt.close()
    mapped = _open(path)
    assert _reads(mapped) == want
    assert (mapped.cache.snapshot_builds, mapped.cache.snapshot_maps) == (0, 1)
    mapped.close()
    assert _versions(path) == [directory.name]
    named = json.loads((directory / snapshot_files.MANIFEST).read_text())["files"]
    kept = {str(spec["data"]) for spec in named.values() if "data" in spec}
    files = {p.name for p in data.iterdir()}
    assert kept <= files
    # an unreadable manifest cannot say which data files it named: those go with the hourly orphan sweep
    assert len(files - kept) == (2 if damage == "manifest" else 0)


def test_rows_changed_outside_the_store_are_caught_by_the_row_counts(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "store"
    store = _open(path)
    _index(store, ALL)
    _reads(store)
    store.close()
    conn = sqlite3.connect(path / "graph.sqlite")
    with conn:  # an edit that bypasses the store (no version bump)
        conn.execute(
            "INSERT INTO phrases(id, name, embedding) VALUES ('x', 'x', ?)", (EMB.encode(["x"]).tobytes(),)
        )
    conn.close()
    again = _open(path)
    again.nearest_phrases(EMB.encode(["x"]), 1, -1.0)
    assert (again.cache.snapshot_builds, again.cache.snapshot_maps) == (
        0,
        0,
    )  # the phrase index came from SQL
    assert again.nearest_phrases(EMB.encode(["x"]), 1, 0.99)[0][0].id == "x"


def _write_then_die_while_persisting(path: str, files_before_death: int) -> None:
    """A process that commits a write, then is killed in the middle of writing the snapshot."""
    store = _open(Path(path))
    _index(store, ALL - FIRST)
    real_save = np.save
    saved = []

    def dying_save(*args: Any, **kwargs: Any) -> None:
        if len(saved) == files_before_death:
            os._exit(9)  # like kill -9: no cleanup, no rollback of what is on disk
        saved.append(1)
        real_save(*args, **kwargs)

    np.save = dying_save  # type: ignore[assignment]
    store.view().graph_passage_scores({make_phrase_id("thomas"): 1.0}, WalkParams(0.5, 200, 1e-10), 5, 1)


@pytest.mark.parametrize("files_before_death", [0, 3, 100])
def test_a_crash_between_the_commit_and_the_snapshot_write_leaves_a_store_that_opens_correctly(
    tmp_path: Path, files_before_death: int
) -> None:
    path = tmp_path / "store"
    store = _open(path)
    _index(store, FIRST)
    _reads(store)  # a persisted snapshot of the first version
    store.close()
    old = _versions(path)
    context = multiprocessing.get_context("fork")
    child = context.Process(target=_write_then_die_while_persisting, args=(str(path), files_before_death))
    child.start()
    child.join(timeout=120)
    if files_before_death < 100:
        assert child.exitcode == 9
        leftovers = [p for p in _versions(path) if p.startswith(".tmp-")]
        assert _versions(path) == sorted(old + leftovers)  # the torn write is only a temporary directory
    again = _open(path)
    clean = _open(tmp_path / "clean", persist=False)
    _index(clean, ALL)
    assert _reads(again) == _reads(clean)  # the commit is there; the stale or torn snapshot is not served
    assert again.cache.snapshot_maps == (1 if files_before_death == 100 else 0)


def test_an_unwritable_snapshot_directory_only_costs_a_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(snapshot_files, "write", refuse)
    store = _open(tmp_path / "store")
    _index(store, ALL)
    clean = _open(tmp_path / "clean", persist=False)
    _index(clean, ALL)
    assert _reads(store) == _reads(clean) and store.cache.snapshot_builds == 1


def test_a_writer_keeps_appending_to_a_mapped_phrase_index(tmp_path: Path) -> None:
    path = tmp_path / "store"
    store = _open(path)
    _index(store, FIRST)
    _reads(store)
    store.close()
    again = _open(path)
    index = again.cache.phrase_index()
    assert again.cache.snapshot_maps == 1 and not index.vectors.flags.writeable  # mapped, read-only
    phrases, records = _records(ALL - FIRST)
    again.write_passages(phrases, records)
    assert again.cache.phrase_index() is index  # appended in memory, not reloaded
    if spare_rows.reservable():  # grown over a copy-on-write mapping of the file, not copied
        assert index.copies == 0 and spare_rows.mapped_file(index.vectors) is None
    clean = _open(tmp_path / "clean", persist=False)
    _index(clean, ALL)
    assert again.nearest_phrases(EMB.encode(["lee", "harvard"]), 3, -1.0) == clean.nearest_phrases(
        EMB.encode(["lee", "harvard"]), 3, -1.0
    )


def test_a_query_reading_a_version_is_not_changed_by_a_write_of_the_same_store_object(
    tmp_path: Path,
) -> None:
    """The writer appends its new phrases to the phrase index it holds, which the version a query is
    still reading shares: that version's walks and rankings keep its own phrase count."""
    store = _open(tmp_path / "store", persist=False)
    _index(store, FIRST)
    seeds = {make_phrase_id(n): 1.0 for n in ("thomas", "harvard")}
    walk = WalkParams(0.5, 200, 1e-10)
    view = store.view()  # a query in flight on this version
    for _ in range(memory_graph.FACTORISE_AFTER_QUERIES + 1):  # past the switch to the exact solve
        before = (
            view.passage_node_scores(seeds, {"p1": 0.5}, walk, 10, 3),
            view.graph_passage_scores(seeds, walk, 10, 3),
            view.personalized_pagerank(seeds, walk),
        )
    phrases, records = _records(ALL - FIRST)
    store.write_passages(phrases, records)
    one_passage(store, 1)
    new_seed = {**seeds, "phrase-new-1": 1.0}  # a phrase of the write: unknown to this version
    after = (
        view.passage_node_scores(new_seed, {"p1": 0.5}, walk, 10, 3),
        view.graph_passage_scores(new_seed, walk, 10, 3),
        view.personalized_pagerank(seeds, walk),
    )
    assert after == before
    assert store.view().passage_node_scores(new_seed, {"p1": 0.5}, walk, 10, 3) != before[0]


def test_string_table_lookup_and_append() -> None:
    words = ["b", "ä", "a", "", "ab", "phrase-ff", "phrase-0"]
    table = StringTable.of(words, searchable=True)
    assert list(table) == words and [table[i] for i in range(len(words))] == words
    assert [table.find(w) for w in words] == list(range(len(words)))
    assert table.find("zz") is None and table.find("a\x00") is None
    table.append(["new", "b2"])
    assert table.find("b2") == len(words) + 1 and table[-1] == "b2" and len(table) == len(words) + 2
    assert table.take([0, len(words)]) == ["b", "new"]
    merged = StringTable(*table.arrays())
    assert list(merged) == [*words, "new", "b2"] and merged.find("new") == len(words)
    with pytest.raises(IndexError):
        table[len(table)]


def test_string_table_bulk_lookups_agree_with_single_ones() -> None:
    words = [f"passage-{i * 7919 % 1000:04d}" for i in range(1000)]
    table = StringTable.of(words, searchable=True)
    asked = [*words[::-3], "absent", words[0]]
    assert table.find_many(asked) == [table.find(w) for w in asked]  # the bulk path builds a dict
    assert table.find_many(asked)[-2] is None and table.find(words[5]) == 5
    assert table.take(list(range(999, -1, -1))) == words[::-1]


def test_a_graph_version_that_serves_several_queries_switches_to_exact_factorised_ppr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hipporag_neo4j.stores.memory import graph as snapshot_module  # where the solver is made

    built: list[float] = []
    real = snapshot_module.FactorisedPpr
    monkeypatch.setattr(snapshot_module, "FactorisedPpr", lambda a, d: built.append(d) or real(a, d))
    store = _open(tmp_path / "store")
    _index(store, ALL)
    seeds = {make_phrase_id(n): w for n, w in (("thomas", 1.0), ("harvard", 0.5))}
    pushed = [store.view().personalized_pagerank(seeds, WalkParams(0.5, 200, 1e-12)) for _ in range(3)]
    assert built == []  # the first queries of a version use forward push
    exact = store.view().personalized_pagerank(seeds, WalkParams(0.5, 200, 1e-12))
    assert built == [0.5]
    assert set(exact) >= set(pushed[0])
    assert max(abs(exact[k] - pushed[0].get(k, 0.0)) for k in exact) < 1e-9  # push: within its bound
    graph = store.view().graph_passage_scores(seeds, WalkParams(0.5, 200, 1e-12), 10, 3)
    assert built == [0.5]  # factorised once per version and damping
    assert [p.passage_id for p in graph] == [
        p.passage_id for p in sorted(graph, key=lambda p: (-p.score, p.passage_id))
    ]
    one_passage(store, 1)  # a write: a new version starts with push again
    store.view().personalized_pagerank(seeds, WalkParams(0.5, 200, 1e-12))
    assert built == [0.5]


# --- a snapshot brought forward by the rows written since (snapshot_delta) ---------------------------


def _random_history(path: Path, rounds: int, seed: int) -> Any:
    """Write ``rounds`` batches (passages reaching old and new phrases, facts repeated across batches,
    self-loops) each followed by synonym edges (non-integer scores, on pairs with and without relation
    edges, old and new phrases, some already stored), yielding the store after each."""
    from hipporag_neo4j.models import Passage
    from hipporag_neo4j.stores.base import FactRecord, PassageRecord, PhraseRecord, SynonymEdge

    rng = np.random.default_rng(seed)
    dim = 8
    store = EmbeddedStore(path)
    store.open("random-model", dim)
    vectors: dict[str, np.ndarray] = {}

    def phrase(i: int) -> PhraseRecord:
        pid = f"ph-{i:04d}"
        if pid not in vectors:
            vectors[pid] = rng.standard_normal(dim).astype(np.float32)
        return PhraseRecord(pid, f"name {i}", vectors[pid])

    n_passages = 0
    for r in range(rounds):
        top = 30 + 25 * r  # later batches reach new phrases and old ones
        records, phrases = [], {}
        for _ in range(12):
            # a few hub phrases in every passage: their pairs gather relation counts of 3 and more, where
            # adding a count before or after the synonym score rounds differently
            hubs = [phrase(int(i)) for i in rng.integers(0, 3, size=2)]
            chosen = hubs + [phrase(int(i)) for i in rng.integers(0, top, size=int(rng.integers(1, 6)))]
            hub, other = hubs
            facts = [
                FactRecord(f"f-{hub.id}-{other.id}", hub.id, "is", other.id, "hub fact", vectors[hub.id])
            ]
            for _ in range(int(rng.integers(0, 5))):
                s = chosen[int(rng.integers(len(chosen)))]
                o = phrase(int(rng.integers(0, 6 if rng.random() < 0.5 else top)))
                p = f"rel{int(rng.integers(0, 2))}"  # few predicates: the same fact recurs in later batches
                fid = f"f-{s.id}-{p}-{o.id}"
                facts.append(FactRecord(fid, s.id, p, o.id, f"{s.name} {p} {o.name}", vectors[s.id] + 1))
                chosen.append(o)
            for ph in chosen:
                phrases[ph.id] = ph
            mentions = {ph.id: int(rng.integers(1, 3)) for ph in chosen}
            passage = Passage(id=f"pa-{n_passages:05d}", text=f"passage {n_passages}")
            records.append(
                PassageRecord(passage, rng.standard_normal(dim).astype(np.float32), mentions, facts)
            )
            n_passages += 1
        store.write_passages(list(phrases.values()), records)
        yield store
        ids = sorted(vectors)
        # most among the first phrases, which later batches keep reaching with new relation edges
        ends = np.where(
            rng.random((60, 2)) < 0.8, rng.integers(0, 6, (60, 2)), rng.integers(0, len(ids), (60, 2))
        )
        edges = [SynonymEdge(ids[int(a)], ids[int(b)], float(rng.uniform(0.8, 1.0))) for a, b in ends]
        store.write_synonyms(edges, [])
        yield store


def _rebuilt(store: EmbeddedStore) -> dict[str, np.ndarray]:
    with store.read() as conn:
        phrases = snapshot.load_phrases(conn, store._dim)
        graph = snapshot.load_graph(conn, store._dim, phrases)
    arrays, extra = graph.arrays()
    return {**arrays, **{f"extra:{k}": np.asarray(v) for k, v in extra.items()}}


def _served(store: EmbeddedStore) -> dict[str, np.ndarray]:
    graph = store.cache.graph()
    arrays, extra = graph.arrays()
    return {**arrays, **{f"extra:{k}": np.asarray(v) for k, v in extra.items()}}


@pytest.mark.parametrize("carry", [True, False])
@pytest.mark.parametrize("seed", [1, 2])
def test_a_snapshot_brought_forward_equals_a_rebuild_bit_for_bit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, carry: bool
) -> None:
    _carry(monkeypatch, carry)
    # after the first build, a version's HippoRAG 2 walk graph is the base's with the changed rows made
    # again, never rebuilt whole
    built: list[tuple[int, int]] = []
    real = memory_graph.walk_adjacency
    monkeypatch.setattr(memory_graph, "walk_adjacency", lambda a, m: built.append(a.shape) or real(a, m))
    for i, store in enumerate(_random_history(tmp_path / "store", rounds=5, seed=seed)):
        before = len(built)
        served = _served(store)
        assert i == 0 or len(built) == before
        rebuilt = _rebuilt(store)
        assert served.keys() == rebuilt.keys()
        for name in served:
            assert served[name].dtype == rebuilt[name].dtype, name
            assert np.array_equal(served[name], rebuilt[name]), name
    # built once, then carried or brought forward by every batch
    counts = (store.cache.snapshot_builds, store.cache.snapshot_carries, store.cache.snapshot_updates)
    assert counts == ((1, 9, 0) if carry else (1, 0, 9))
    # every adjacency entry that holds both relation counts and a synonym score went through R + S
    graph = store.cache.graph()
    assert np.any(graph.adjacency.data != np.round(graph.adjacency.data)) and graph.n_synonym_edges > 0


def test_carries_reuse_the_arrays_of_versions_nobody_reads_and_never_those_of_one_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every array of the carry from the pool (``recycled``; at this size it would use none): each version
    still equals a rebuild, buffers are reused once no version reads them, and a snapshot a reader still
    holds keeps its arrays while the writer carries on."""
    pool = Recycler(min_bytes=0)
    monkeypatch.setattr(rows, "ARRAYS", pool)
    held: GraphSnapshot | None = None
    kept: dict[str, np.ndarray] = {}
    for i, store in enumerate(_random_history(tmp_path / "store", rounds=5, seed=3)):
        served = _served(store)
        rebuilt = _rebuilt(store)
        for name in served:
            assert np.array_equal(served[name], rebuilt[name]), name
        del served, rebuilt
        if i == 3:  # a query still reading this version while later writes are carried
            held = store.cache.graph()
            kept = _graph_arrays(held)
    assert store.cache.snapshot_carries == 9 and pool.reused > 0
    assert held is not None and held is not store.cache.graph()
    for name, array in _graph_arrays(held).items():
        assert np.array_equal(array, kept[name]), name


def _graph_arrays(graph: GraphSnapshot) -> dict[str, np.ndarray]:
    """Copies of a version's graph arrays (not its phrase table: the writer's index, which grows)."""
    return {k: v.copy() for k, v in graph.arrays()[0].items() if not k.startswith("phrase_")}


def test_a_delete_or_a_gap_in_the_log_means_a_rebuild_not_a_delta(tmp_path: Path) -> None:
    path = tmp_path / "store"
    store = _open(path)
    _index(store, FIRST)
    _reads(store)
    store.delete_passages(["p1"])
    _index(store, ALL - FIRST)  # append-only, but after a delete: the persisted version cannot be used
    after_delete = _reads(store)
    assert (store.cache.snapshot_builds, store.cache.snapshot_updates) == (2, 0)
    clean = _open(tmp_path / "clean", persist=False)
    _index(clean, ALL - {"p1"})
    assert after_delete == _reads(clean)
    # a writer that does not log (the code before this table existed) leaves a gap: rebuild
    import sqlite3

    store.write_synonyms([], ["no-such"])
    conn = sqlite3.connect(path / "graph.sqlite")
    with conn:
        conn.execute("DELETE FROM snapshot_log WHERE version = (SELECT MAX(version) FROM snapshot_log)")
    conn.close()
    _reads(store)
    assert (store.cache.snapshot_builds, store.cache.snapshot_updates) == (3, 0)


def _append_then_die_while_bringing_forward(path: str, point: str) -> None:
    """A process that commits a write, then is killed while bringing the snapshot forward: in the middle
    of appending vectors to a data file, or after the data and before the manifest."""
    store = _open(Path(path))
    _index(store, ALL - FIRST)
    if point == "data":
        real = os.pwrite

        def dying_pwrite(fd: int, data: Any, offset: int) -> int:
            real(fd, bytes(data)[: max(1, len(data) // 2)], offset)
            os._exit(9)

        os.pwrite = dying_pwrite  # type: ignore[assignment]
    else:
        real_write = json.dump

        def dying_dump(*args: Any, **kwargs: Any) -> None:
            os._exit(9)

        json.dump = dying_dump  # type: ignore[assignment]
    store.view().graph_passage_scores({make_phrase_id("thomas"): 1.0}, WalkParams(0.5, 200, 1e-10), 5, 1)
    del real_write


@pytest.mark.parametrize("point", ["data", "manifest"])
def test_a_crash_inside_bringing_the_snapshot_forward_never_serves_a_torn_one(
    tmp_path: Path, point: str
) -> None:
    path = tmp_path / "store"
    store = _open(path)
    _index(store, FIRST)
    want_first = _reads(store)  # a persisted snapshot of the first version
    store.close()
    old = _versions(path)
    context = multiprocessing.get_context("fork")
    child = context.Process(target=_append_then_die_while_bringing_forward, args=(str(path), point))
    child.start()
    child.join(timeout=120)
    assert child.exitcode == 9
    assert [v for v in _versions(path) if not v.startswith(".tmp-")] == old  # nothing new published
    again = _open(path)
    clean = _open(tmp_path / "clean", persist=False)
    _index(clean, ALL)
    assert _reads(again) == _reads(clean)  # brought forward again over the torn bytes, never served them
    assert (again.cache.snapshot_builds, again.cache.snapshot_updates) == (0, 1)
    # the base version's rows were not disturbed: a store at the first version reads as before
    first = _open(tmp_path / "first", persist=False)
    _index(first, FIRST)
    assert want_first == _reads(first)


@pytest.mark.parametrize("pooled", [True, False])
@pytest.mark.parametrize("fixed", [True, False])
def test_string_table_find_all_and_extended_agree_with_a_table_built_whole(
    fixed: bool, pooled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = Recycler(min_bytes=0 if pooled else 1 << 30)
    monkeypatch.setattr(strings, "ARRAYS", pool)
    rng = np.random.default_rng(3)
    make = (lambda i: f"phrase-{i:08x}") if fixed else (lambda i: f"p{i}" + "x" * (i % 3))
    values = [make(int(i)) for i in rng.permutation(300)]
    base = StringTable.of(values[:200], searchable=True)
    for cut in (298, 299, 300):  # extended again and again: the buffers of dropped tables come back
        grown = base.extended(values[200:cut])
    assert pool.reused == (3 if pooled else 0)
    whole = StringTable.of(values, searchable=True)
    assert list(grown) == values and np.array_equal(grown.order, whole.order)
    assert all(np.array_equal(a, b) for a, b in zip(grown.arrays(), whole.arrays(), strict=True))
    asked = [*values[::7], "absent", make(999), "", "phrase-0000000", "phrase-000000000"]
    assert grown.find_all(asked) == [whole.find(v) for v in asked]
    assert base.find_all(values[250:260]) == [None] * 10
    # one value asked of 300 strings: searched by itself, with the same answers
    for one in (values[5], values[250], "absent", make(999)):
        assert grown.find_all([one]) == [whole.find(one)]


def test_the_log_keeps_only_the_rows_from_the_newest_persisted_snapshot_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    _carry(monkeypatch, False)

    versions = []
    for store in _random_history(tmp_path / "store", rounds=3, seed=7):
        _served(store)  # each version persisted (brought forward)
        versions.append(store.stats().extra["graph_version"])
    conn = sqlite3.connect(tmp_path / "store" / "graph.sqlite")
    logged = [r[0] for r in conn.execute("SELECT version FROM snapshot_log ORDER BY version")]
    conn.close()
    # pruned by each commit below the newest persisted version (the one before it)
    assert logged == [versions[-2], versions[-1]]
    assert store.cache.snapshot_updates == len(versions) - 1


@pytest.mark.parametrize("seed", [1, 2])
def test_the_fact_index_is_extended_by_appended_facts_and_equals_a_fresh_read(
    tmp_path: Path, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    for store in _random_history(tmp_path / "store", rounds=4, seed=seed):
        queries = rng.standard_normal((3, 8)).astype(np.float32)
        served = [store.view().nearest_facts(q, 6) for q in queries]
        with store.read() as conn:
            fresh = snapshot.load_facts(conn, store._dim)
        facts = store.cache.graph().facts
        assert facts is not None
        assert (facts.ids, facts.subject_ids, facts.predicates, facts.object_ids) == (
            fresh.ids,
            fresh.subject_ids,
            fresh.predicates,
            fresh.object_ids,
        )
        assert np.array_equal(facts.vectors, fresh.vectors) and facts.last_key == fresh.last_key
        other = EmbeddedStore(store.path, persist_snapshot=False)
        other.open("random-model", 8)
        assert served == [other.view().nearest_facts(q, 6) for q in queries]
        other.close()
    assert store.cache.fact_loads == 1  # read whole once, then extended by every append-only commit
    store.delete_passages(["pa-00000"])  # not append-only: read whole again
    store.view().nearest_facts(queries[0], 6)
    assert store.cache.fact_loads == 2


def test_a_carried_snapshot_is_written_every_carry_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot_cache, "CARRY_COMMITS", 4)
    path = tmp_path / "store"
    written = []
    for store in _random_history(path, rounds=4, seed=3):
        _served(store)
        store.cache.wait_for_snapshot_writer()
        written.append(max(int(v[1:]) for v in _versions(path)))
    # 1 build, then 7 commits all carried in memory; the query of the 4th commit since the persisted
    # version had that version brought forward and written by a thread of its own (no update here)
    assert (store.cache.snapshot_builds, store.cache.snapshot_carries, store.cache.snapshot_updates) == (
        1,
        7,
        0,
    )
    assert written == [written[0]] * 4 + [written[0] + 4] * 4
    assert store.stats().extra["graph_version"] - written[-1] < 4
    reopened = EmbeddedStore(path)
    reopened.open("random-model", 8)
    served, rebuilt = _served(reopened), _rebuilt(reopened)  # brought forward from the written one
    assert served.keys() == rebuilt.keys() and all(np.array_equal(a, rebuilt[k]) for k, a in served.items())
    assert (reopened.cache.snapshot_builds, reopened.cache.snapshot_updates) == (0, 1)


def test_a_mapped_matrix_grows_over_its_file_without_copying_or_writing_it(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    rows = rng.standard_normal((1000, 24)).astype(np.float32)  # not a whole number of pages
    path = tmp_path / "rows.bin"
    rows.tofile(path)
    on_disk = path.read_bytes()
    mapped = np.memmap(path, dtype=np.float32, mode="r", shape=(1000, 24)).view(np.ndarray)
    assert spare_rows.mapped_file(mapped[:999]) == str(path) and spare_rows.mapped_file(mapped[1:]) is None
    new = rng.standard_normal((7, 24)).astype(np.float32)
    matrix, buffer, copied = spare_rows.grown(mapped[:999], mapped, new)  # row 999 of the file is not ours
    assert np.array_equal(matrix, np.vstack([rows[:999], new])) and matrix.flags.writeable
    assert copied is not spare_rows.reservable() and len(buffer) > len(matrix)
    again, same, copied = spare_rows.grown(matrix, buffer, new[:2])  # into the spare rows
    assert same is buffer and not copied and np.array_equal(again[:1006], matrix)
    assert np.array_equal(again[1006:], new[:2]) and path.read_bytes() == on_disk  # the file untouched
    full, other, copied = spare_rows.grown(again, again, new)  # no spare rows: a new buffer
    assert other is not buffer and copied and np.array_equal(full[:1008], again)
    del matrix, buffer, again, same, full, other
    heap, room, copied = spare_rows.grown(rows[:10], None, new)  # a heap matrix: copied
    assert copied and np.array_equal(heap, np.vstack([rows[:10], new])) and len(room) >= 17


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_walk_graph_is_laid_out_as_a_block_matrix_of_scipy(seed: int) -> None:
    """HippoRAG 2's phrase + passage graph, assembled row block by row block, equals ``sp.bmat`` of the
    phrase graph and the mentions' pattern to the bit (data, indices, indptr)."""
    rng = np.random.default_rng(seed)
    for n, n_passages in ((60, 9), (5, 0), (1, 1), (40, 25)):
        upper = sp.random(n, n, density=0.1, random_state=rng, format="csr")
        adjacency = sp.csr_matrix(upper + upper.T)
        mentions = sp.random(n_passages, n, density=0.2, random_state=rng, format="csr")
        mentions.data[:] = rng.integers(1, 4, mentions.nnz)
        links = mentions.copy()
        links.data[:] = 1.0
        expected = sp.bmat([[adjacency, links.T], [links, None]], format="csr") if n_passages else adjacency
        got = memory_graph.walk_adjacency(adjacency, mentions)
        assert got.shape == expected.shape
        for name in ("data", "indices", "indptr"):
            want, have = getattr(expected, name), getattr(got, name)
            assert have.dtype == want.dtype and np.array_equal(have, want), name
