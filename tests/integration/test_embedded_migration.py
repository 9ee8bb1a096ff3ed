"""The upgrade of embedded stores written by an earlier release (schema version 1: text ids in the link
tables) to version 2 (integer keys in insertion order), on open.

The version-1 store is written by the release before the change itself: its package, taken from git
(``git archive``), runs ``tests/support/migration_worker.py`` in a subprocess. The same worker, run by this
code,
reads the upgraded store and a store it wrote itself: every read must give the same answer.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hipporag_neo4j.errors import SchemaVersionError
from hipporag_neo4j.stores.embedded import EmbeddedStore
from hipporag_neo4j.stores.embedded.migrate import layout_version
from hipporag_neo4j.stores.embedded.schema import SCHEMA_VERSION, TEXT_ROWS

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).resolve().parents[1] / "support" / "migration_worker.py"
OLD_COMMIT = "6d8919a"  # the last commit with schema version 1
TABLES = tuple(TEXT_ROWS)

pytestmark = pytest.mark.timeout(600)


def run(pythonpath: Path, *args: str, expect_kill: bool = False) -> str:
    proc = subprocess.run(
        [sys.executable, str(WORKER), *args],
        env={**os.environ, "PYTHONPATH": str(pythonpath)},
        cwd=str(pythonpath),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if expect_kill:
        assert proc.returncode == -9, f"not killed (exit {proc.returncode}): {proc.stderr}"
    else:
        assert proc.returncode == 0, f"{args} failed (exit {proc.returncode}):\n{proc.stderr}"
    return proc.stdout


def reads(pythonpath: Path, store: Path, tmp: Path) -> dict[str, Any]:
    """The worker's reads (which end with a delete) on a copy of ``store``."""
    copy = tmp / f"reads-{len(list(tmp.iterdir()))}"
    shutil.copytree(store, copy)
    out: dict[str, Any] = json.loads(run(pythonpath, "read", str(copy)))
    for key in ("stats", "after_delete"):
        out[key].pop("schema_version")
    return out


def dump_v1(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    conn = sqlite3.connect(path / "graph.sqlite")
    try:
        assert layout_version(conn) == 1
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall()) for t in TABLES}
    finally:
        conn.close()


def dump_v2(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    conn = sqlite3.connect(path / "graph.sqlite")
    try:
        assert layout_version(conn) == 2
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        return {t: sorted(conn.execute(TEXT_ROWS[t]).fetchall()) for t in TABLES}
    finally:
        conn.close()


def meta(path: Path) -> dict[str, str]:
    conn = sqlite3.connect(path / "graph.sqlite")
    try:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    finally:
        conn.close()


@pytest.fixture(scope="module")
def old_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package of the release before schema version 2, from git."""
    folder = tmp_path_factory.mktemp("old-package")
    archive = subprocess.run(
        ["git", "archive", OLD_COMMIT, "hipporag_neo4j"], cwd=ROOT, capture_output=True, check=False
    )
    if archive.returncode != 0:
        pytest.skip(f"commit {OLD_COMMIT} is not in this checkout's git history: {archive.stderr.decode()}")
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


@pytest.fixture(scope="module")
def old_store(tmp_path_factory: pytest.TempPathFactory, old_package: Path) -> Path:
    """A store written by that release (never touched by this code: tests copy it)."""
    path = tmp_path_factory.mktemp("v1") / "store"
    run(old_package, "build", str(path))
    assert meta(path)["schema_version"] == "1"
    return path


@pytest.fixture(scope="module")
def old_reads(old_package: Path, old_store: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return reads(old_package, old_store, tmp_path_factory.mktemp("old-reads"))


def test_a_version_1_store_is_upgraded_on_open_with_the_same_rows(old_store: Path, tmp_path: Path) -> None:
    path = tmp_path / "store"
    shutil.copytree(old_store, path)
    before, stamp = dump_v1(path), meta(path)
    assert before["synonyms"] and before["synonyms_pending"] and before["states"]
    store = EmbeddedStore(path)
    assert store.open("test-model", 8).schema_version == SCHEMA_VERSION
    store.close()
    assert dump_v2(path) == before
    after = meta(path)
    assert after.pop("schema_version") == str(SCHEMA_VERSION)
    # the content is unchanged: same graph version and token, so a persisted snapshot stays valid
    assert after == {k: v for k, v in stamp.items() if k != "schema_version"}


def test_the_upgraded_store_answers_as_the_old_code_did_and_as_a_new_store(
    old_store: Path, old_reads: dict[str, Any], tmp_path: Path
) -> None:
    upgraded = tmp_path / "upgraded"
    shutil.copytree(old_store, upgraded)
    EmbeddedStore(upgraded).open("test-model", 8)
    new = tmp_path / "new"
    run(ROOT, "build", str(new))
    assert dump_v2(new) == dump_v2(upgraded)
    from_upgraded = reads(ROOT, upgraded, tmp_path)
    from_new = reads(ROOT, new, tmp_path)
    assert from_upgraded == from_new  # this code: the same answers, bit for bit
    for key in old_reads:
        assert same_reads(key, from_upgraded[key], old_reads[key]), f"{key} differs after the upgrade"


#: Reads whose scores come from a walk: forward push walks the adjacency since 2026-11-29 (no transition
#: matrix), so its sums are rounded in another order than the old release's, in the last bits only.
WALK_READS = ("graph", "walk", "ppr")


def same_reads(key: str, ours: Any, theirs: Any) -> bool:
    """``ours`` equals ``theirs``; a walk's read: the same ids in the same order, each score (and each
    explaining phrase's) within 1e-12 relative."""
    if key not in WALK_READS:
        return bool(ours == theirs)

    def close(a: Any, b: Any) -> bool:
        if isinstance(a, float) and isinstance(b, float):
            return a == pytest.approx(b, rel=1e-12, abs=1e-300)
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
        return bool(a == b)

    return close(ours, theirs)


@pytest.mark.parametrize("point", ["copy:phrases", "copy:states", "indexes"])
def test_a_kill_during_the_upgrade_leaves_version_1_and_the_next_open_completes_it(
    old_package: Path, old_store: Path, old_reads: dict[str, Any], tmp_path: Path, point: str
) -> None:
    path = tmp_path / "store"
    shutil.copytree(old_store, path)
    before = dump_v1(path)
    run(ROOT, "upgrade", str(path), "--kill-at", point, expect_kill=True)
    assert dump_v1(path) == before  # rolled back: version 1 as it was, usable by the old release
    assert meta(path)["schema_version"] == "1"
    assert reads(old_package, path, tmp_path) == old_reads
    EmbeddedStore(path).open("test-model", 8)  # upgrades it now
    assert dump_v2(path) == before
    upgraded = reads(ROOT, path, tmp_path)
    assert all(same_reads(key, upgraded[key], old_reads[key]) for key in old_reads)


def test_the_upgrade_runs_once_and_a_rerun_never_duplicates(old_store: Path, tmp_path: Path) -> None:
    path = tmp_path / "store"
    shutil.copytree(old_store, path)
    EmbeddedStore(path).open("test-model", 8)
    upgraded = dump_v2(path)
    for _ in range(2):  # opened again: nothing to upgrade, nothing changes
        assert EmbeddedStore(path).open("test-model", 8).schema_version == SCHEMA_VERSION
        assert dump_v2(path) == upgraded
    # writing after the upgrade: new keys follow the old rows', passages already stored are skipped
    first = json.loads(run(ROOT, "append", str(path)))["written"]
    again = json.loads(run(ROOT, "append", str(path)))["written"]
    assert len(first) == 6 and again == []
    rows = dump_v2(path)
    assert len(rows["passages"]) == len(upgraded["passages"]) + 6
    assert set(upgraded["mentions"]) <= set(rows["mentions"])
    conn = sqlite3.connect(path / "graph.sqlite")
    try:
        keys = [k for (k,) in conn.execute("SELECT key FROM passages ORDER BY key")]
        assert len(set(keys)) == len(keys)
    finally:
        conn.close()


def test_an_older_release_refuses_the_upgraded_store_naming_the_versions(
    old_package: Path, old_store: Path, tmp_path: Path
) -> None:
    path = tmp_path / "store"
    shutil.copytree(old_store, path)
    EmbeddedStore(path).open("test-model", 8)
    before = dump_v2(path)
    proc = subprocess.run(
        [sys.executable, str(WORKER), "read", str(path)],
        env={**os.environ, "PYTHONPATH": str(old_package)},
        cwd=str(old_package),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    assert "SchemaVersionError" in proc.stderr
    assert f"has schema version {SCHEMA_VERSION}; this release reads version 1" in proc.stderr
    assert dump_v2(path) == before


def _make_read_only(path: Path) -> bool:
    """Read-only for this process (chmod; as root, the immutable attribute); False when impossible."""
    db = path / "graph.sqlite"
    db.chmod(0o444)
    try:
        with open(db, "r+b"):
            pass
    except PermissionError:
        return True
    db.chmod(0o644)
    done = subprocess.run(["chattr", "+i", str(db)], capture_output=True, check=False).returncode == 0
    return done


def test_a_read_only_version_1_store_gets_a_clear_error(old_store: Path, tmp_path: Path) -> None:
    path = tmp_path / "store"
    shutil.copytree(old_store, path)
    if not _make_read_only(path):
        pytest.skip("cannot make a file read-only here")
    try:
        with pytest.raises(SchemaVersionError, match=r"has schema version 1;.*upgrades.*write access"):
            EmbeddedStore(path).open("test-model", 8)
    finally:
        subprocess.run(["chattr", "-i", str(path / "graph.sqlite")], capture_output=True, check=False)
        (path / "graph.sqlite").chmod(0o644)
    assert dump_v1(path) == dump_v1(old_store)


def test_an_upgrade_without_room_for_its_copy_names_the_space_and_leaves_version_1(
    old_store: Path, tmp_path: Path
) -> None:
    """The copy goes to the WAL until it commits (about the store's size again): out of room, the user
    is told how much is needed and the store stays as it was, for the next open to upgrade."""
    from hipporag_neo4j.stores.embedded.migrate import upgrade

    path = tmp_path / "store"
    shutil.copytree(old_store, path)
    conn = sqlite3.connect(path / "graph.sqlite", isolation_level=None)
    try:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages + 2}")  # a disk with no room for the copy
        with pytest.raises(SchemaVersionError, match=r"schema version 2 needs about .* free disk"):
            upgrade(conn, str(path))
    finally:
        conn.close()
    assert dump_v1(path) == dump_v1(old_store)
    store = EmbeddedStore(path)
    assert store.open("test-model", 8).schema_version == SCHEMA_VERSION
    store.close()
