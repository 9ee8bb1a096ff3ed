"""The ONNX Runtime backend gives the torch path's vectors, exports once, and refuses what it cannot run."""

from __future__ import annotations

import json
import logging
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from hipporag_neo4j.embedding.encoder import (
    AutoSentenceEmbedder,
    SentenceTransformerEmbedder,
    create_embedder,
)
from hipporag_neo4j.embedding.onnx_backend import OnnxSentenceEmbedder
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


def test_the_default_backend_is_onnx_runtime_with_the_torch_vectors(tmp_path: Path) -> None:
    settings = EmbeddingSettings(onnx_cache_dir=str(tmp_path))
    assert settings.backend == "auto"
    embedder = create_embedder(settings)
    assert isinstance(embedder, AutoSentenceEmbedder)
    vectors = embedder.encode(TEXTS)
    assert embedder.backend == "onnx" and embedder.fallback_reason is None
    assert len(list(tmp_path.glob("*.onnx"))) == 1  # exported once into the cache folder
    reference = SentenceTransformerEmbedder("all-MiniLM-L6-v2").encode(TEXTS)
    assert (vectors * reference).sum(axis=1).min() > 0.9999
    assert embedder.dimension == 384 and embedder.max_tokens == 256


def test_auto_falls_back_to_torch_with_a_warning_when_onnx_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # `import onnx` raises ImportError
    with caplog.at_level(logging.WARNING, logger="hipporag_neo4j.embedding.encoder"):
        embedder = create_embedder(EmbeddingSettings(onnx_cache_dir=str(tmp_path)))
        vectors = embedder.encode(TEXTS[:2])
    assert isinstance(embedder, AutoSentenceEmbedder) and embedder.backend == "torch"
    assert "pip install onnx" in caplog.text and "using torch" in caplog.text
    assert not list(tmp_path.glob("*.onnx"))
    reference = SentenceTransformerEmbedder("all-MiniLM-L6-v2").encode(TEXTS[:2])
    assert np.allclose(vectors, reference, atol=1e-6)
    with pytest.raises(EmbeddingError, match="pip install onnx"):  # asked for explicitly: an error
        create_embedder(EmbeddingSettings(backend="onnx", onnx_cache_dir=str(tmp_path))).encode(["q"])


def test_auto_runs_a_model_without_mean_pooling_on_torch(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = Path(SentenceTransformerEmbedder("all-MiniLM-L6-v2")._resolve())
    model = tmp_path / "cls-model"
    shutil.copytree(source, model, ignore=shutil.ignore_patterns("*.safetensors", "*.bin"))
    for weights in [*source.glob("*.safetensors"), *source.glob("*.bin")]:
        (model / weights.name).symlink_to(weights)
    pooling = json.loads((source / "1_Pooling" / "config.json").read_text())
    pooling.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    (model / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    with caplog.at_level(logging.WARNING, logger="hipporag_neo4j.embedding.encoder"):
        embedder = create_embedder(EmbeddingSettings(model=str(model), onnx_cache_dir=str(tmp_path / "c")))
        vectors = embedder.encode(["a query"])
    assert isinstance(embedder, AutoSentenceEmbedder) and embedder.backend == "torch"
    assert "mean-pooling" in caplog.text
    assert vectors.shape == (1, 384)
