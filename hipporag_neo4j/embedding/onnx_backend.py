"""A sentence-transformers model run by ONNX Runtime (``embedding.backend`` auto, the default, or onnx).

sentence-transformers' own ``backend="onnx"`` needs optimum-onnx, which pins transformers < 4.58; so the
model is exported here, once, with ``torch.onnx`` from the same local model directory (never downloaded),
with the mean pooling and L2 normalisation inside the graph, and cached under ``cache_dir``. Measured on
the MuSiQue passages (2 cores, interleaved): 1.6x the texts/s of the torch path, cosine to its vectors
>= 0.9999995 (benchmarks/results/embedding.md). Only BERT-style mean-pooling models are supported (such
as all-MiniLM-L6-v2); others get a clear error naming backend="torch".
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hipporag_neo4j.errors import EmbeddingError
from hipporag_neo4j.stores.base import Matrix

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
#: up to this many texts in one call count as a query (encoded on ``query_threads``)
QUERY_BATCH = 8


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _check_mean_pooling(model_dir: Path) -> None:
    modules = _read_json(model_dir / "modules.json")
    pooling = (
        [m["path"] for m in modules if "Pooling" in m.get("type", "")] if isinstance(modules, list) else []
    )
    config = _read_json(model_dir / pooling[0] / "config.json") if pooling else {}
    if not (isinstance(config, dict) and config.get("pooling_mode_mean_tokens")):
        raise EmbeddingError(
            f"embedding.backend='onnx' supports mean-pooling sentence-transformers models; {model_dir} "
            "is not one (no mean pooling in its modules.json / Pooling config): use backend='torch'"
        )


def export_path(model_dir: Path, cache_dir: Path) -> Path:
    """Where the export of this model directory lives: keyed by its path and its weights' size/mtime."""
    weights = sorted(p for p in model_dir.iterdir() if p.suffix in (".safetensors", ".bin"))
    key = str(model_dir.resolve()) + "".join(
        f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in weights
    )
    return cache_dir / f"{model_dir.name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.onnx"


def export_model(model_dir: Path, target: Path) -> None:
    """Export the transformer + mean pooling + L2 normalisation to ONNX (offline, from local files)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    _check_mean_pooling(model_dir)
    try:  # torch.onnx.export writes the model with the onnx package, which torch does not install
        import onnx  # noqa: F401
    except ImportError as exc:
        raise EmbeddingError(
            "the ONNX export needs the onnx package (a dependency of hipporag-neo4j: pip install onnx)"
        ) from exc
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModel.from_pretrained(str(model_dir)).eval()

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    sample = tokenizer(["an example", "a second, longer example text"], padding=True, return_tensors="pt")
    target.parent.mkdir(parents=True, exist_ok=True)
    # a name of its own per process: two processes exporting at once never write into one file
    partial = target.with_suffix(f".{os.getpid()}.{threading.get_ident()}.partial")
    axes = {name: {0: "batch", 1: "tokens"} for name in _INPUTS}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer notes on branches that are constant for an encoder
        torch.onnx.export(
            Pooled(),
            tuple(sample[name] for name in _INPUTS),
            str(partial),
            input_names=list(_INPUTS),
            output_names=["embedding"],
            dynamic_axes={**axes, "embedding": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )
    partial.replace(target)  # atomic: a crash mid-export never leaves a truncated model behind


class OnnxSentenceEmbedder:
    """Same vectors as :class:`~hipporag_neo4j.embedding.encoder.SentenceTransformerEmbedder`, run by
    ONNX Runtime."""

    def __init__(
        self,
        model_name: str,
        model_dir: Path,
        cache_dir: Path,
        *,
        batch_size: int = 64,
        threads: int | None = None,
        query_threads: int | None = 1,
    ) -> None:
        self.model_name = model_name
        self.model_dir = model_dir
        self.cache_dir = cache_dir
        self.batch_size = batch_size
        self.threads = threads
        self.query_threads = query_threads
        self._lock = threading.Lock()
        self._tokenize_lock = threading.Lock()  # a fast tokenizer is not safe across threads
        self._tokenizer: Any = None
        self._sessions: dict[int | None, Any] = {}
        self._max_tokens: int | None = None

    def _session(self, threads: int | None) -> Any:
        with self._lock:
            if threads not in self._sessions:
                try:
                    import onnxruntime as ort  # type: ignore[import-untyped]
                except ImportError as exc:
                    raise EmbeddingError(
                        "the ONNX backend needs onnxruntime (pip install onnxruntime onnx)"
                    ) from exc
                from transformers import AutoTokenizer

                path = export_path(self.model_dir, self.cache_dir)
                try:
                    if not path.exists():
                        export_model(self.model_dir, path)
                    options = ort.SessionOptions()
                    options.inter_op_num_threads = 1
                    if threads:
                        options.intra_op_num_threads = threads
                    self._sessions[threads] = ort.InferenceSession(
                        str(path), options, providers=["CPUExecutionProvider"]
                    )
                    if self._tokenizer is None:
                        self._tokenizer = AutoTokenizer.from_pretrained(str(self.model_dir))
                        config = _read_json(self.model_dir / "sentence_bert_config.json")
                        self._max_tokens = int(config.get("max_seq_length") or 0) or None
                except EmbeddingError:
                    raise
                except Exception as exc:  # torch.onnx / onnxruntime / transformers errors
                    raise EmbeddingError(
                        f"cannot prepare the ONNX model for {self.model_name!r} from {self.model_dir}: {exc}"
                    ) from exc
            return self._sessions[threads]

    def prepare(self) -> None:
        """Export (once, into the cache) and open the model now; :class:`EmbeddingError` when it cannot."""
        self._session(self.threads)

    @property
    def dimension(self) -> int:
        return int(self.encode(["dimension probe"]).shape[1])

    @property
    def max_tokens(self) -> int | None:
        self._session(self.threads)
        return self._max_tokens

    def token_count(self, text: str) -> int:
        self._session(self.threads)
        with self._tokenize_lock:
            # verbose=False as on the torch path: counting a long text is how it is chunked, and the
            # tokenizer would warn that the count is longer than the model's window
            tokens = self._tokenizer(text, add_special_tokens=True, truncation=False, verbose=False)
            return len(tokens["input_ids"])

    def encode(self, texts: Sequence[str]) -> Matrix:
        session = self._session(self.query_threads if len(texts) <= QUERY_BATCH else self.threads)
        if not texts:
            return np.zeros((0, int(session.get_outputs()[0].shape[1] or 0)), dtype=np.float32)
        order = np.argsort([len(t) for t in texts], kind="stable")  # length-sorted: little padding
        out: Matrix | None = None
        for start in range(0, len(texts), self.batch_size):
            rows = order[start : start + self.batch_size]
            with self._tokenize_lock:
                batch = self._tokenizer(
                    [texts[i] for i in rows],
                    padding=True,
                    truncation=True,
                    max_length=self._max_tokens,
                    return_tensors="np",
                )
            feed = {name: batch[name].astype(np.int64) for name in _INPUTS if name in batch}
            if "token_type_ids" not in feed:
                feed["token_type_ids"] = np.zeros_like(feed["input_ids"])
            vectors = np.asarray(session.run(None, feed)[0], dtype=np.float32)
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
        assert out is not None
        return out
