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
"""

from __future__ import annotations

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
FORMAT = 1
MANIFEST = "manifest.json"
_STALE_TEMP_S = 3600.0  # a temporary directory this old belongs to a writer that died


@dataclass(frozen=True)
class Stamp:
    """What a snapshot reflects: the database's graph version and commit token, and its model."""

    graph_version: int
    graph_token: str
    embedding_model: str
    embedding_dim: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "graph_version": self.graph_version,
            "graph_token": self.graph_token,
            "embedding_model": self.embedding_model,
            "embedding_dim": self.embedding_dim,
        }


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def version_dir(store_dir: Path, graph_version: int) -> Path:
    return store_dir / SNAPSHOT_DIR / f"v{graph_version}"


def write(
    store_dir: Path, stamp: Stamp, arrays: dict[str, npt.NDArray[Any]], extra: dict[str, Any]
) -> Path | None:
    """Persist ``arrays`` as the snapshot of ``stamp``; returns its directory, or None when another
    process wrote the same version first. Older versions are removed afterwards."""
    root = store_dir / SNAPSHOT_DIR
    root.mkdir(exist_ok=True)
    temp = root / f".tmp-{os.getpid()}-{uuid.uuid4().hex}"
    temp.mkdir()
    try:
        files = {}
        for name, array in arrays.items():
            with open(temp / f"{name}.npy", "wb") as handle:
                np.save(handle, np.ascontiguousarray(array), allow_pickle=False)
                handle.flush()
                os.fsync(handle.fileno())
            files[name] = {"shape": list(array.shape), "dtype": np.dtype(array.dtype).str}
        manifest = {"format": FORMAT, **stamp.as_dict(), "files": files, **extra}
        with open(temp / MANIFEST, "w", encoding="utf-8") as handle:
            json.dump(manifest, handle)
            handle.flush()
            os.fsync(handle.fileno())
        _fsync_dir(temp)
        final = version_dir(store_dir, stamp.graph_version)
        try:
            os.rename(temp, final)
        except OSError:
            if (final / MANIFEST).is_file():  # the same version written by another process meanwhile
                shutil.rmtree(temp, ignore_errors=True)
                return None
            raise
        _fsync_dir(root)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    _remove_others(root, keep=final.name)
    return final


def _remove_others(root: Path, keep: str) -> None:
    """Older versions (a process still reading one keeps its mapping: unlinking does not unmap) and
    temporary directories left by writers that died."""
    now = time.time()
    for entry in root.iterdir():
        if entry.name == keep:
            continue
        try:
            if entry.name.startswith(".tmp-") and now - entry.stat().st_mtime < _STALE_TEMP_S:
                continue  # maybe another process writing right now
        except OSError:
            continue
        shutil.rmtree(entry, ignore_errors=True)


def read(store_dir: Path, stamp: Stamp) -> tuple[dict[str, npt.NDArray[Any]], dict[str, Any]] | None:
    """The arrays (memory-mapped, read-only) and manifest of the snapshot of exactly ``stamp``, or None
    when there is none or it does not match in every field and file."""
    directory = version_dir(store_dir, stamp.graph_version)
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if manifest.get("format") != FORMAT or any(manifest.get(k) != v for k, v in stamp.as_dict().items()):
        return None
    arrays: dict[str, npt.NDArray[Any]] = {}
    try:
        for name, spec in manifest["files"].items():
            path = directory / f"{name}.npy"
            shape = tuple(spec["shape"])
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
