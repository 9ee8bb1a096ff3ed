"""The torch backend (the ``[torch]`` extra): sentence-transformers, and the torch.onnx export.

Neither is needed for the default model, which :mod:`~hipporag_neo4j.embedding.onnx_graph` builds for
ONNX Runtime without torch. They serve the models that builder refuses (not BERT, weights only in a
pytorch ``.bin``, another pooling, ...): ``embedding.backend=torch`` runs sentence-transformers, and
``auto``/``onnx`` export such a model once with ``torch.onnx`` when torch is installed.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from hipporag_neo4j.embedding.batching import QUERY_BATCH, length_batches, normalise
from hipporag_neo4j.embedding.local_model import TORCH_INSTALL, resolve_model
from hipporag_neo4j.embedding.onnx_graph import INPUTS, OUTPUT, pooling_of
from hipporag_neo4j.errors import EmbeddingError
from hipporag_neo4j.stores.base import Matrix

log = logging.getLogger(__name__)


def torch_installed() -> bool:
    """Whether the ``[torch]`` extra (sentence-transformers, and so torch) is importable here."""
    import importlib.util

    return importlib.util.find_spec("sentence_transformers") is not None


def _missing_torch(what: str, exc: ImportError) -> EmbeddingError:
    return EmbeddingError(f"{what} needs the [torch] extra ({TORCH_INSTALL}): {exc}")


@contextmanager
def _torch_threads(threads: int | None) -> Iterator[None]:
    """torch's intra-op thread count for the block (process-wide in torch, hence the caller's lock)."""
    if threads is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class SentenceTransformerEmbedder:
    """sentence-transformers model, loaded on first use, never downloaded at run time.

    ``model`` is a local path, a name listed in :data:`~hipporag_neo4j.common.model_names.PACKAGED_MODELS`,
    or a name already in the local Hugging Face cache (``HF_HUB_OFFLINE=1`` is set while loading, so a
    missing model fails fast). Needs the ``[torch]`` extra.
    """

    def __init__(
        self,
        model: str,
        *,
        batch_size: int = 64,
        device: str = "cpu",
        threads: int | None = None,
        query_threads: int | None = None,
    ) -> None:
        self.model_name = model
        self.batch_size = batch_size
        self.device = device
        self.threads = threads
        self.query_threads = query_threads
        self._model: Any = None
        self._lock = threading.Lock()
        self._encode_lock = threading.Lock()

    def _resolve(self) -> str:
        return resolve_model(self.model_name)

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                target = self._resolve()
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                try:
                    from sentence_transformers import SentenceTransformer
                    from transformers.utils import logging as transformers_logging
                except ImportError as exc:
                    raise _missing_torch("embedding.backend='torch'", exc) from exc

                # quiet CLI output
                transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call,unused-ignore]

                try:
                    self._model = SentenceTransformer(target, device=self.device)
                except Exception as exc:  # sentence-transformers raises OSError, ValueError, HF errors...
                    raise EmbeddingError(
                        "embedding.model (HIPPORAG_EMBEDDING_MODEL): cannot load embedding model "
                        f"{self.model_name!r} ({target}): {exc}. Give a local sentence-transformers "
                        "model directory or an installed model's name; nothing is downloaded."
                    ) from exc
            return self._model

    @property
    def dimension(self) -> int:
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    @property
    def max_tokens(self) -> int | None:
        value = getattr(self._load(), "max_seq_length", None)
        return int(value) if value else None

    def token_count(self, text: str) -> int:
        tokenizer = self._load().tokenizer
        # verbose=False: counting a long text is how we decide to chunk it; transformers would warn that
        # the sequence is too long for the model, which is the point of counting
        return len(tokenizer(text, add_special_tokens=True, truncation=False, verbose=False)["input_ids"])

    def encode(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self._load()
        # sorting by length keeps padding waste low inside each batch, and lets short texts share
        # larger batches (fewer forward passes: each costs a fixed overhead, large under contention)
        order = np.argsort([len(t) for t in texts], kind="stable")
        ordered = [texts[i] for i in order]
        threads = (self.query_threads or self.threads) if len(texts) <= QUERY_BATCH else self.threads
        pieces = []
        with self._encode_lock, _torch_threads(threads):
            for start, stop in length_batches([len(t) for t in ordered], self.batch_size):
                pieces.append(
                    model.encode(
                        ordered[start:stop],
                        batch_size=stop - start,
                        normalize_embeddings=True,
                        convert_to_numpy=True,
                        show_progress_bar=False,
                    )
                )
        encoded = np.concatenate(pieces)
        out = np.empty_like(encoded)
        out[order] = encoded
        return normalise(out)


def export_model(model_dir: Path, target: Path) -> None:
    """Export a mean-pooling model (transformer + mean pooling + L2 normalisation) with torch.onnx.

    For the models :func:`~hipporag_neo4j.embedding.onnx_graph.build_graph` refuses (other architectures
    than BERT, weights only in a pytorch ``.bin``); needs the ``[torch]`` extra. Offline, from local files.
    """
    if pooling_of(model_dir) != "mean":
        raise EmbeddingError(f"{model_dir}: the torch.onnx export is made for mean-pooling models only")
    try:
        import torch
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        raise _missing_torch(f"exporting {model_dir} to ONNX (torch.onnx)", exc) from exc
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModel.from_pretrained(str(model_dir)).eval()

    class Pooled(torch.nn.Module):  # type: ignore[misc,unused-ignore]  # Any where torch is absent
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
    if "token_type_ids" not in sample:
        sample["token_type_ids"] = torch.zeros_like(sample["input_ids"])
    target.parent.mkdir(parents=True, exist_ok=True)
    # a name of its own per process: two processes exporting at once never write into one file
    partial = target.with_suffix(f".{os.getpid()}.{threading.get_ident()}.partial")
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer notes on branches that are constant for an encoder
        torch.onnx.export(
            Pooled(),
            tuple(sample[name] for name in INPUTS),
            str(partial),
            input_names=list(INPUTS),
            output_names=[OUTPUT],
            dynamic_axes={**axes, OUTPUT: {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )
    partial.replace(target)  # atomic: a crash mid-export never leaves a truncated model behind
