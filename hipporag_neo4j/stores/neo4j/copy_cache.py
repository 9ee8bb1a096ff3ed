"""The in-process copy (client_copy.py) kept on local disk, so a new process starts from it.

A new process's first query reads the whole namespace over Bolt (Neo4j S: 21.4 s against 1.05 s for the
embedded store, benchmarks/results/scale_suite_S_neo4j_lts.md), most of it the vectors as lists of
floats. The parts a process held when it closed (phrases, their vectors, the graph, the passage vectors,
the facts) are written to one ``.npz`` file per database and namespace, stamped with the database's id
(``db.info()``), the namespace, its graph version and its embedding model and dimension. A process whose
namespace is at that stamp when it first reads the copy loads the file instead (:meth:`ClientCopy.restore`);
any other stamp (a newer graph version: every write transaction bumps it; another database; another
model) is not used, and the copy is read from the server as before. So a file can only ever be served for
the graph it was read from: a graph version names one committed state of the namespace. The vectors are
memory-mapped from the file (read-only), so the processes that load one file share them in the page cache.

Written atomically (a temporary file, then ``os.replace``); a file that cannot be read is ignored (and
the copy read from the server). Setting ``neo4j.copy_cache_dir`` (default
``$XDG_CACHE_HOME/hipporag-neo4j/client-copy``); ``neo4j.copy_cache = false`` turns it off.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import struct
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from hipporag_neo4j.stores.memory.graph import FactIndex, GraphSnapshot, PhraseIndex
from hipporag_neo4j.stores.memory.strings import StringTable
from hipporag_neo4j.stores.neo4j.client_copy import Dense, State, View

log = logging.getLogger(__name__)

#: The file layout; a file of another format is not used.
FORMAT = 3  # 2: the sparse matrices' canonical-format flags; 3: the walk graph as its adjacency
_PARTS = ("phrases", "phrase_vectors", "graph", "dense", "facts", "passage_total")


def default_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hipporag-neo4j" / "client-copy"


def cache_file(root: Path, database_id: str, database: str, namespace: str) -> Path:
    """One file per database (its id and name) and namespace (a digest: the id is the server's)."""
    digest = hashlib.sha256(f"{database_id}\0{database}\0{namespace}".encode()).hexdigest()[:32]
    return root / f"{namespace}-{digest}.npz"


def stamp(database_id: str, database: str, namespace: str, state: State, created_at: str) -> dict[str, Any]:
    """What a file holds: the graph ``state`` of the namespace made at ``created_at`` (a namespace
    dropped and made again starts its versions anew) in the database of that id and name."""
    return {
        "format": FORMAT,
        "database_id": database_id,
        "database": database,
        "namespace": namespace,
        "created_at": created_at,
        "graph_version": state.version,
        "embedding_model": state.model,
        "embedding_dim": state.dim,
    }


def _strings(name: str, table: StringTable | list[str], out: dict[str, npt.NDArray[Any]]) -> None:
    found = table if isinstance(table, StringTable) else StringTable.of(table)
    data, offsets, order = found.arrays()
    out[f"{name}_data"], out[f"{name}_offsets"] = data, offsets
    if order is not None:
        out[f"{name}_order"] = order


def _table(name: str, a: dict[str, npt.NDArray[Any]]) -> StringTable:
    return StringTable(a[f"{name}_data"], a[f"{name}_offsets"], a.get(f"{name}_order"))


def _csr(name: str, m: sp.csr_matrix, out: dict[str, npt.NDArray[Any]]) -> None:
    out[f"{name}_data"], out[f"{name}_indices"], out[f"{name}_indptr"] = m.data, m.indices, m.indptr
    out[f"{name}_shape"] = np.asarray(m.shape, dtype=np.int64)
    out[f"{name}_canonical"] = np.asarray([m.has_canonical_format], dtype=np.bool_)


def _matrix(name: str, a: dict[str, npt.NDArray[Any]]) -> sp.csr_matrix:
    """The matrix as written, with its canonical-format flag (scipy would otherwise check, or sort, the
    indices again where an operation needs them sorted)."""
    shape = tuple(int(x) for x in a[f"{name}_shape"])
    m = sp.csr_matrix((a[f"{name}_data"], a[f"{name}_indices"], a[f"{name}_indptr"]), shape=shape, copy=False)
    if bool(a[f"{name}_canonical"][0]):
        m.has_canonical_format = True
    return m


def arrays_of(view: View) -> dict[str, npt.NDArray[Any]]:
    """The parts ``view`` holds as flat arrays (the parts it does not hold are left out)."""
    out: dict[str, npt.NDArray[Any]] = {}
    if view.phrases is None or view.passage_counts is None:
        return out
    _strings("phrase_ids", view.phrases.ids, out)
    _strings("phrase_names", view.phrases.names, out)
    out["phrase_passage_counts"] = np.asarray(
        [view.passage_counts.get(i, 0) for i in view.phrases.ids], dtype=np.int64
    )
    if view.phrase_vectors is not None:
        out["phrase_vectors"] = np.asarray(view.phrase_vectors, dtype=np.float32)
    if view.graph is not None:
        g = view.graph
        _strings("passage_ids", g.passage_ids, out)
        _csr("mentions", g.mentions, out)
        _csr("adjacency", g.adjacency, out)
        out["edge_counts"] = np.asarray([g.n_relation_edges, g.n_synonym_edges], dtype=np.int64)
    if view.dense is not None:
        _strings("dense_ids", view.dense.ids, out)
        out["dense_vectors"] = np.asarray(view.dense.vectors, dtype=np.float32)
    if view.facts is not None:
        f = view.facts
        for column in ("ids", "subject_ids", "predicates", "object_ids"):
            _strings(f"fact_{column}", list(getattr(f, column)), out)
        out["fact_vectors"] = np.asarray(f.vectors, dtype=np.float32)
    if view.passage_total is not None:
        out["passage_total"] = np.asarray([view.passage_total], dtype=np.int64)
    return out


def view_of(version: int, a: dict[str, npt.NDArray[Any]]) -> View:
    """The :class:`View` of ``version`` that :func:`arrays_of` wrote (as ``ClientCopy`` reads it)."""
    view = View(version)
    ids, names = _table("phrase_ids", a), _table("phrase_names", a)
    view.phrases = PhraseIndex(ids, names, np.zeros((len(ids), 0), dtype=np.float32))
    counts = a["phrase_passage_counts"].tolist()
    view.passage_counts = {phrase_id: int(counts[k]) for k, phrase_id in enumerate(ids)}
    view.by_name = {name: k for k, name in enumerate(names)}
    if "phrase_vectors" in a:
        view.phrase_vectors = a["phrase_vectors"]
    if "mentions_data" in a:
        mentions, adjacency = _matrix("mentions", a), _matrix("adjacency", a)
        n_relation, n_synonym = (int(x) for x in a["edge_counts"])
        view.graph = GraphSnapshot.derived(
            view.phrases,
            _table("passage_ids", a),
            mentions,
            np.bincount(mentions.indices, minlength=len(ids)).astype(np.int32),
            adjacency,
            n_relation,
            n_synonym,
        )
    if "dense_vectors" in a:
        view.dense = Dense(_table("dense_ids", a), a["dense_vectors"])
    if "fact_vectors" in a:
        view.facts = FactIndex(
            ids=list(_table("fact_ids", a)),
            subject_ids=list(_table("fact_subject_ids", a)),
            predicates=list(_table("fact_predicates", a)),
            object_ids=list(_table("fact_object_ids", a)),
            vectors=a["fact_vectors"],
        )
    if "passage_total" in a:
        view.passage_total = int(a["passage_total"][0])
    return view


def held_parts(view: View) -> list[str]:
    return [name for name in _PARTS if getattr(view, name) is not None]


def save(path: Path, stamped: dict[str, Any], view: View) -> bool:
    """Write ``view`` (of the graph ``stamped``) to ``path`` atomically; False when there was nothing to
    write."""
    arrays = arrays_of(view)
    if not arrays:
        return False
    written = {**stamped, "parts": held_parts(view)}
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".npz")
    try:
        with os.fdopen(fd, "wb") as out:
            arrays["stamp"] = np.frombuffer(json.dumps(written).encode(), dtype=np.uint8)
            np.savez(out, allow_pickle=False, **arrays)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return True


def _mapped(path: Path, member: zipfile.ZipInfo) -> npt.NDArray[Any]:
    """The array stored (uncompressed, as ``np.savez`` writes) in ``member`` of the file, memory-mapped
    read-only: the processes that load one cache file (``serve`` workers, CLI calls) share its pages in the
    page cache instead of each holding a copy of the vectors (at M: 370 MB)."""
    if member.compress_type != zipfile.ZIP_STORED:
        raise ValueError(f"{member.filename} is compressed")
    with open(path, "rb") as f:
        f.seek(member.header_offset)
        local = f.read(30)
        if len(local) != 30 or local[:4] != b"PK\x03\x04":
            raise ValueError(f"{member.filename}: no local file header")
        name_length, extra_length = struct.unpack("<HH", local[26:30])
        f.seek(member.header_offset + 30 + name_length + extra_length)
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f"{member.filename}: .npy format {version}")
        offset = f.tell()
    if dtype.hasobject or fortran:
        raise ValueError(f"{member.filename}: not a plain C-ordered array")
    if not math.prod(shape):
        return np.zeros(shape, dtype=dtype)
    # a plain view of the map: rows of a np.memmap would each carry the map's attributes (the copy holds
    # one row per phrase and fact: ~80 MB more at M)
    return np.asarray(np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape))


def load(path: Path, stamped: dict[str, Any]) -> View | None:
    """The view written to ``path`` when its stamp is ``stamped``, else None (also for a missing or
    unreadable file)."""
    try:
        with np.load(path, allow_pickle=False) as found:
            written = json.loads(bytes(found["stamp"]).decode())
            written.pop("parts", None)
            if written != stamped:
                return None
            arrays = {
                k: _mapped(path, found.zip.getinfo(f"{k}.npy")) if k.endswith("_vectors") else found[k]
                for k in found.files
                if k != "stamp"
            }
        return view_of(int(stamped["graph_version"]), arrays)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, IndexError, zipfile.BadZipFile) as exc:
        # a torn or foreign file is a miss, never an error: the namespace is read from the server
        log.warning("ignoring the client copy cache %s: %s", path, exc)
        return None
