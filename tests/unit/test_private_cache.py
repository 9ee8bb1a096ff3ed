"""The test session keeps the Neo4j store's client copies out of the user's cache (tests/conftest.py,
``_private_cache``), while sharing the heavy caches (ONNX exports, jars, the JDK) with it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hipporag_neo4j.stores.neo4j.copy_cache import default_dir

pytestmark = pytest.mark.unit


def test_client_copies_go_to_a_folder_of_the_session_and_the_model_cache_is_shared() -> None:
    home_cache = Path.home() / ".cache"
    copies = default_dir()
    assert not copies.resolve().is_relative_to(home_cache.resolve())
    assert Path(os.environ["XDG_CACHE_HOME"]).name.startswith("hipporag-tests-cache-")
    onnx = Path(os.environ["XDG_CACHE_HOME"]) / "hipporag-neo4j" / "onnx"
    assert onnx.is_symlink() and onnx.resolve().is_dir()  # the user's exports, not made again
