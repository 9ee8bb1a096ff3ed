"""The ONNX Runtime backend gives the torch path's vectors, exports once, and refuses what it cannot run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from hipporag_neo4j.embedding import SentenceTransformerEmbedder, create_embedder
from hipporag_neo4j.embedding_onnx import OnnxSentenceEmbedder
from hipporag_neo4j.errors import ConfigError, EmbeddingError
from hipporag_neo4j.settings import EmbeddingSettings

pytestmark = pytest.mark.integration
pytest.importorskip("onnxruntime")

TEXTS = [
    "Lionel Messi",
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France.",
    "x",
    "Who founded the company that makes the iPhone, and in which year was it founded?",
    "Barcelona",
    "A very long passage " * 60,  # beyond the model's 256-token window: truncated alike
]


def test_onnx_backend_matches_torch_and_exports_once(tmp_path: Path) -> None:
    settings = EmbeddingSettings(backend="onnx", onnx_cache_dir=str(tmp_path), batch_size=4)
    onnx = create_embedder(settings)
    assert isinstance(onnx, OnnxSentenceEmbedder)
    torch_embedder = SentenceTransformerEmbedder("all-MiniLM-L6-v2", query_threads=1)
    ours, reference = onnx.encode(TEXTS), torch_embedder.encode(TEXTS)  # 6 texts > batch 4: two batches
    assert ours.shape == reference.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert (ours * reference).sum(axis=1).min() > 0.9999  # same vector for the same text, in order
    assert onnx.max_tokens == torch_embedder.max_tokens == 256
    assert onnx.token_count(TEXTS[1]) == torch_embedder.token_count(TEXTS[1])
    assert onnx.dimension == 384
    (exported,) = tmp_path.glob("*.onnx")
    stamp = exported.stat().st_mtime_ns
    again = create_embedder(settings)
    assert np.allclose(again.encode(TEXTS[:2]), ours[:2], atol=1e-6)  # one query-sized call
    assert exported.stat().st_mtime_ns == stamp  # reused, not exported again
    assert onnx.encode([]).shape == (0, 384)


def test_query_threads_leave_torch_as_it_was() -> None:
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    SentenceTransformerEmbedder("all-MiniLM-L6-v2", query_threads=1, threads=2).encode(["one query"])
    assert torch.get_num_threads() == before


def test_onnx_backend_refuses_a_model_without_mean_pooling(tmp_path: Path) -> None:
    model = tmp_path / "cls-model"
    (model / "1_Pooling").mkdir(parents=True)
    (model / "modules.json").write_text(
        json.dumps([{"idx": 1, "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])
    )
    (model / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    embedder = create_embedder(
        EmbeddingSettings(model=str(model), backend="onnx", onnx_cache_dir=str(tmp_path / "cache"))
    )
    with pytest.raises(EmbeddingError, match="backend='torch'"):
        embedder.encode(["a query"])
    assert not list(tmp_path.rglob("*.onnx"))


def test_onnx_backend_needs_a_local_model_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="local model directory"):
        create_embedder(EmbeddingSettings(model=str(tmp_path / "missing"), backend="onnx"))


def test_export_without_the_onnx_package_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """torch.onnx.export needs the onnx package: its absence is named with the extra that installs it."""
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx now raises ImportError
    embedder = create_embedder(EmbeddingSettings(backend="onnx", onnx_cache_dir=str(tmp_path)))
    with pytest.raises(
        EmbeddingError, match=r"needs the onnx package \(pip install 'hipporag-neo4j\[onnx\]'\)"
    ):
        embedder.encode(["a query"])
    assert not list(tmp_path.rglob("*.onnx"))
