"""Passage identity: the ids users know, and the stored passages they stand for.

* A passage read from a ``.txt``/``.md`` file has the file's path as its id; a JSON/JSONL record has its
  own ``id``, else ``<path>[<n>]`` (JSON, n from 0) or ``<path>:<line>`` (JSONL). Paths are written
  relative to the working directory when under it, else absolute, so ``index docs/``, ``index ./docs``
  and ``index $PWD/docs`` name the same passages.
* A passage longer than the embedder's window is stored as chunks ``<id>#<n>`` with ``metadata.parent_id``
  = ``<id>``; the original id still names all of them (update, delete).
* Passages given as plain strings through the Python API have no source: their id is a hash of the text.
"""

from __future__ import annotations

import os
from pathlib import Path

from hipporag_neo4j.stores.base import GraphStore

_LIST_PAGE = 1000


def source_key(path: str | Path) -> str:
    """The stable name of a file: relative to the working directory when under it, else absolute."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return absolute.as_posix()


def stored_versions(store: GraphStore, ids: list[str]) -> dict[str, list[str]]:
    """For each id: the stored passages it names, i.e. itself and/or the chunks cut from it."""
    found: dict[str, list[str]] = {i: [] for i in dict.fromkeys(ids)}
    for passage_id in store.existing_passages(list(found)):
        found[passage_id].append(passage_id)
    for parent, chunks in store.passages_by_parent(list(found)).items():
        found[parent].extend(chunks)
    return found


def resolve(store: GraphStore, keys: list[str]) -> tuple[list[str], list[str]]:
    """The stored passage ids that ``keys`` name, and the keys that name nothing.

    A key is a passage id, the id of a chunked passage (all its chunks), a file path (every passage
    read from that file; the path may be written any way that resolves to the same file), or an existing
    folder (every passage read from a file under it).
    """
    direct = stored_versions(store, keys)
    by_path: dict[str, str] = {}
    for key in keys:
        if not direct[key]:
            path_key = source_key(key)
            if path_key != key:
                by_path[key] = path_key
    if by_path:
        again = stored_versions(store, list(set(by_path.values())))
        for key, path_key in by_path.items():
            direct[key] = again[path_key]
    unresolved = [k for k in keys if not direct[k]]
    if unresolved:  # records of a JSON file, files of a folder: by their recorded source, one pass
        files = {source_key(k): k for k in unresolved} | {k: k for k in unresolved}
        folders = {source_key(k).rstrip("/") + "/": k for k in unresolved if Path(k).is_dir()}
        after = ""
        while page := store.list_passages(after, _LIST_PAGE):
            for info in page:
                if info.source is None:
                    continue
                if info.source in files:
                    direct[files[info.source]].append(info.id)
                for folder, key in folders.items():
                    under_cwd = folder == "./" and not info.source.startswith("/")
                    if under_cwd or info.source.startswith(folder):
                        direct[key].append(info.id)
            after = page[-1].id
    ids = list(dict.fromkeys(pid for key in keys for pid in direct[key]))
    return ids, [k for k in keys if not direct[k]]
