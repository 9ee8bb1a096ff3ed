"""The retrieval snapshot persisted beside ``graph.sqlite``: flat ``.npy`` arrays, memory-mapped on open.

Layout: ``<store>/snapshot/v<graph_version>/`` holds one ``.npy`` file per array and ``manifest.json``,
which names the graph version and the commit token (a random value every write transaction sets in
``meta``) of the SQLite state the arrays were built from, the model, and every file's shape and dtype.

A snapshot is written into a temporary directory, every file fsynced, the manifest last, then renamed
into place (atomic) and the parent directory fsynced: a crash leaves either no directory or a complete
one, never a torn one under the final name. It is used only when its stamp equals the database's current
(version, token) read in the same read transaction, so a write committed after it was built (or a crash
between a commit and the snapshot's write) makes it stale, never served; the token also catches a
database rolled back past a version (power loss with ``synchronous=NORMAL``) and then written again,
which would otherwise reach the same version number with other contents.

Row-appendable arrays (the phrase and passage vectors, most of the bytes) live outside the version
directories, in ``snapshot/data/<name>-<random>.bin`` files that grow by appending: a version's manifest
names the file and its row count, so a version brought forward by a write batch appends the new rows
(``os.pwrite`` at the base version's row count, fsynced before its manifest) instead of copying the file.
Rows below a published count are never changed (a writer only writes at or past its base's count, and
two writers from one base write the same rows), and a file is never truncated: a crash leaves unread
bytes past the published rows, which the next append overwrites. A full rebuild starts a new file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

SNAPSHOT_DIR = "snapshot"
FORMAT = 3  # 3: the walk graph stored as its adjacency; no transition matrices
MANIFEST = "manifest.json"
DATA_DIR = "data"
_STALE_TEMP_S = 3600.0  # a temporary directory this old belongs to a writer that died


@dataclass(frozen=True)
class Stamp:
    """What a snapshot reflects: the database's graph version and commit token, and its model."""

    graph_version: int
    graph_token: str
    embedding_model: str
    embedding_dim: int


@dataclass(frozen=True)
class Appended:
    """A 2-D array stored in an append-only data file: ``base_rows`` rows already in ``file`` (None: a
    new file), then ``rows``."""

    rows: npt.NDArray[Any]
    file: str | None = None
    base_rows: int = 0


def _write_appended(root: Path, name: str, spec: Appended) -> dict[str, Any]:
    data = root / DATA_DIR
    data.mkdir(exist_ok=True)
    rows = np.ascontiguousarray(spec.rows)
    file = spec.file or f"{name}-{uuid.uuid4().hex}.bin"
    row_bytes = rows.dtype.itemsize * int(np.prod(rows.shape[1:]))
    fd = os.open(data / file, os.O_RDWR | (os.O_CREAT if spec.file is None else 0), 0o644)
    try:
        step = max(1, (1 << 26) // max(row_bytes, 1))  # rows per write: 64 MiB, no copy of the whole
        for start in range(0, len(rows), step):
            view = memoryview(rows[start : start + step].tobytes())
            offset, done = (spec.base_rows + start) * row_bytes, 0
            while done < len(view):
                done += os.pwrite(fd, view[done:], offset + done)
        os.fsync(fd)
    finally:
        os.close(fd)
    if spec.file is None:
        _fsync_dir(data)
    return {
        "shape": [spec.base_rows + len(rows), *rows.shape[1:]],
        "dtype": rows.dtype.str,
        "data": file,
    }


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    with contextlib.suppress(OSError):
        os.fsync(fd)
    os.close(fd)


def version_dir(store_dir: Path, graph_version: int) -> Path:
    return store_dir / SNAPSHOT_DIR / f"v{graph_version}"


def write(
    store_dir: Path,
    stamp: Stamp,
    arrays: dict[str, npt.NDArray[Any]],
    extra: dict[str, Any],
    appended: dict[str, Appended] | None = None,
) -> Path | None:
    """Persist ``arrays`` (and the ``appended`` arrays, see :class:`Appended`) as the snapshot of
    ``stamp``; returns its directory, or None when another process wrote the same version first. Older
    versions are removed afterwards."""
    root = store_dir / SNAPSHOT_DIR
    root.mkdir(exist_ok=True)
    temp = root / f".tmp-{os.getpid()}-{uuid.uuid4().hex}"
    temp.mkdir()
    try:
        files = {name: _write_appended(root, name, spec) for name, spec in (appended or {}).items()}
        for name, array in arrays.items():
            with open(temp / f"{name}.npy", "wb") as handle:
                np.save(handle, np.ascontiguousarray(array), allow_pickle=False)
                handle.flush()
                os.fsync(handle.fileno())
            files[name] = {"shape": list(array.shape), "dtype": np.dtype(array.dtype).str}
        manifest = {"format": FORMAT, **dataclasses.asdict(stamp), "files": files, **extra}
        with open(temp / MANIFEST, "w", encoding="utf-8") as handle:
            json.dump(manifest, handle)
            handle.flush()
            os.fsync(handle.fileno())
        _fsync_dir(temp)
        final = version_dir(store_dir, stamp.graph_version)
        if not _publish(store_dir, stamp, temp, final):
            # the same version written by another process meanwhile: ours is not needed, nor the data
            # files this call created (appending past another file's count changes nothing it names)
            shutil.rmtree(temp, ignore_errors=True)
            for name, spec in (appended or {}).items():
                if spec.file is None:
                    (root / DATA_DIR / str(files[name]["data"])).unlink(missing_ok=True)
            return None
        _fsync_dir(root)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    _remove_others(root, keep=final.name)
    return final


def _publish(store_dir: Path, stamp: Stamp, temp: Path, final: Path) -> bool:
    """Rename ``temp`` to ``final``; False when ``final`` already holds a usable snapshot of ``stamp``
    (another process's). A directory of the same version that is not usable (an older format, a torn
    or damaged one) is put aside and replaced, else every later process would rebuild and never
    persist. A process still mapping the old files keeps them: unlinking does not unmap."""
    replaced: set[str] = set()  # data files only the replaced directory named
    for _ in range(3):
        try:
            os.rename(temp, final)
        except OSError:
            if read(store_dir, stamp) is not None:
                return False
            aside = final.parent / f".tmp-{os.getpid()}-{uuid.uuid4().hex}-replaced"
            try:
                os.rename(final, aside)
            except FileNotFoundError:
                continue  # another process put it aside first: try ours again
            replaced |= _data_files(aside)
            shutil.rmtree(aside, ignore_errors=True)
            continue
        for name in replaced - _data_files(final):
            (final.parent / DATA_DIR / name).unlink(missing_ok=True)
        return True
    raise OSError(f"cannot publish the snapshot at {final}")


def _data_files(directory: Path) -> set[str]:
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        return {str(spec["data"]) for spec in manifest["files"].values() if "data" in spec}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return set()


def _remove_others(root: Path, keep: str) -> None:
    """Older versions (a process still reading one keeps its mapping: unlinking does not unmap), the data
    files only they named, and temporary directories left by writers that died."""
    now = time.time()
    kept = _data_files(root / keep)
    superseded: set[str] = set()
    for entry in root.iterdir():
        if entry.name in (keep, DATA_DIR):
            continue
        superseded |= _data_files(entry)
        try:
            if entry.name.startswith(".tmp-") and now - entry.stat().st_mtime < _STALE_TEMP_S:
                continue  # maybe another process writing right now
        except OSError:
            continue
        shutil.rmtree(entry, ignore_errors=True)
    for name in superseded - kept:
        (root / DATA_DIR / name).unlink(missing_ok=True)
    _remove_orphan_data(root, kept, now)


def _remove_orphan_data(root: Path, kept: set[str], now: float) -> None:
    """Data files no version names, left by writers that died before publishing (after an hour: a
    writer may be filling one right now)."""
    data = root / DATA_DIR
    if not data.is_dir():
        return
    named = set(kept)
    for entry in root.iterdir():
        if entry.name != DATA_DIR and not entry.name.startswith(".tmp-"):
            named |= _data_files(entry)
    for entry in data.iterdir():
        try:
            if entry.name not in named and now - entry.stat().st_mtime >= _STALE_TEMP_S:
                entry.unlink(missing_ok=True)
        except OSError:
            continue


def read(store_dir: Path, stamp: Stamp) -> tuple[dict[str, npt.NDArray[Any]], dict[str, Any]] | None:
    """The arrays (memory-mapped, read-only) and manifest of the snapshot of exactly ``stamp``, or None
    when there is none or it does not match in every field and file."""
    directory = version_dir(store_dir, stamp.graph_version)
    manifest = _manifest(directory)
    if manifest is None or any(manifest.get(k) != v for k, v in dataclasses.asdict(stamp).items()):
        return None
    return _load(directory, manifest)


def newest_before(
    store_dir: Path, graph_version: int, embedding_model: str, embedding_dim: int
) -> tuple[dict[str, npt.NDArray[Any]], dict[str, Any]] | None:
    """The newest complete snapshot of a version below ``graph_version`` for this model (its stamp is
    for the caller to check against the database's log), or None."""
    for version in sorted(_versions(store_dir), reverse=True):
        if version >= graph_version:
            continue
        directory = version_dir(store_dir, version)
        manifest = _manifest(directory)
        wanted = {
            "graph_version": version,
            "embedding_model": embedding_model,
            "embedding_dim": embedding_dim,
        }
        if manifest is None or any(manifest.get(k) != v for k, v in wanted.items()):
            continue
        found = _load(directory, manifest)
        if found is not None:
            return found
    return None


def _manifest(directory: Path) -> dict[str, Any] | None:
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        return None
    return manifest


def _load(
    directory: Path, manifest: dict[str, Any]
) -> tuple[dict[str, npt.NDArray[Any]], dict[str, Any]] | None:
    arrays: dict[str, npt.NDArray[Any]] = {}
    try:
        for name, spec in manifest["files"].items():
            shape = tuple(spec["shape"])
            if "data" in spec:
                mapped = _map_data(
                    directory.parent / DATA_DIR / str(spec["data"]), np.dtype(spec["dtype"]), shape
                )
                if mapped is None:
                    return None
                array = mapped
            else:
                path = directory / f"{name}.npy"
                if int(np.prod(shape)) == 0:
                    array = np.load(path, allow_pickle=False)
                else:
                    # a plain ndarray view of the map (numpy's memmap subclass adds ~2 us per slice)
                    array = np.load(path, mmap_mode="r", allow_pickle=False).view(np.ndarray)
            if array.shape != shape or array.dtype.str != spec["dtype"]:
                return None
            arrays[name] = array
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("ignoring the snapshot in %s: %s", directory, exc)
        return None
    return arrays, manifest


def _map_data(path: Path, dtype: np.dtype[Any], shape: tuple[int, ...]) -> npt.NDArray[Any] | None:
    """The first rows of an append-only data file, mapped read-only; None when the file is shorter."""
    size = int(np.prod(shape)) * dtype.itemsize
    if path.stat().st_size < size:
        log.warning("ignoring the snapshot data file %s: shorter than its manifest says", path)
        return None
    if size == 0:
        return np.zeros(shape, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r", shape=shape).view(np.ndarray)


def _versions(store_dir: Path) -> list[int]:
    """The versions with a directory under ``snapshot/`` (complete or not)."""
    try:
        return [int(e.name[1:]) for e in (store_dir / SNAPSHOT_DIR).iterdir() if e.name[1:].isdigit()]
    except OSError:
        return []


def newest_version(store_dir: Path) -> int | None:
    """The highest version with a directory under ``snapshot/`` (complete or not), or None."""
    return max(_versions(store_dir), default=None)
