"""Text embedders: a local sentence-transformers model (ONNX Runtime by default, or torch) or an API.

Vectors are float32 and L2-normalised, so a dot product is the cosine similarity. The default backend,
auto, runs the model on ONNX Runtime with no torch (:mod:`.onnx_backend`); torch and sentence-transformers
(:mod:`.torch_backend`, the ``[torch]`` extra) serve what ONNX Runtime cannot run here, and, where they
are installed, whatever they measured faster on this machine (:mod:`.backend_choice`).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from hipporag_neo4j.common.model_names import PACKAGED_MODELS
from hipporag_neo4j.embedding.backend_choice import (
    CHOICE_FILE,
    BackendChoice,
    choice_key,
    load_choice,
    measure,
    sample_texts,
    store_choice,
)
from hipporag_neo4j.embedding.batching import (
    CHARS_PER_BATCH_SLOT,
    MAX_BATCH_FACTOR,
    QUERY_BATCH,
    length_batches,
    normalise,
)
from hipporag_neo4j.embedding.local_model import TORCH_INSTALL, ModelNotFound, resolve_model
from hipporag_neo4j.embedding.onnx_backend import OnnxSentenceEmbedder, model_path
from hipporag_neo4j.embedding.torch_backend import SentenceTransformerEmbedder, torch_installed
from hipporag_neo4j.errors import ConfigError, EmbeddingError
from hipporag_neo4j.settings import EmbeddingSettings
from hipporag_neo4j.stores.base import Matrix

__all__ = [
    "CHARS_PER_BATCH_SLOT",
    "MAX_BATCH_FACTOR",
    "PACKAGED_MODELS",
    "QUERY_BATCH",
    "AutoSentenceEmbedder",
    "Embedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "create_embedder",
    "length_batches",
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
        return normalise(np.array(rows))


class AutoSentenceEmbedder:
    """``embedding.backend = "auto"`` (the default): ONNX Runtime when the model can run there, else torch;
    with both installed, the one measured faster on this machine.

    The choice is made on first use (loading the model is lazy everywhere): the ONNX session is prepared
    (built once into the cache folder if needed, without torch); when that cannot be done (a model name
    that is not a local directory, a model the builder refuses and torch cannot export, onnxruntime
    missing) one warning names the reason and the torch path serves instead, or, when the ``[torch]``
    extra is not installed, an :class:`EmbeddingError` names both the reason and the extra. When ONNX
    Runtime can run the model and the ``[torch]`` extra is installed too (and ``quantize`` is ``none``),
    both are timed once on this machine and the faster serves (:mod:`.backend_choice`; the decision is
    kept in the cache folder and reused, :attr:`choice`). Same vectors either way (cosine >= 0.9999).
    """

    def __init__(self, settings: EmbeddingSettings) -> None:
        self.model_name = settings.model
        self._settings = settings
        self._chosen: Embedder | None = None
        self._lock = threading.Lock()
        self.fallback_reason: str | None = None
        #: ONNX Runtime against torch on this machine, when both can run the model (else None)
        self.choice: BackendChoice | None = None

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
                    if self._settings.quantize == "none" and torch_installed():
                        self._chosen = self._faster(onnx)
                    if self._chosen is onnx:
                        log.info("Loaded embedding model %r on ONNX Runtime", self.model_name)
                except ModelNotFound:
                    raise  # torch would not find it either: the message says what to do
                except (ConfigError, EmbeddingError) as exc:
                    if self._settings.quantize != "none":
                        raise EmbeddingError(
                            f"embedding.quantize={self._settings.quantize!r} needs ONNX Runtime, which "
                            f"cannot run {self.model_name!r}: {exc}"
                        ) from exc
                    if not torch_installed():
                        raise EmbeddingError(
                            "embedding.model (HIPPORAG_EMBEDDING_MODEL): cannot load embedding model "
                            f"{self.model_name!r}: {exc}. ONNX Runtime cannot run it, and the torch backend "
                            f"is not installed ({TORCH_INSTALL})"
                        ) from exc
                    self.fallback_reason = str(exc)
                    log.warning(
                        "embedding.backend=auto: ONNX Runtime cannot run %r, using torch instead "
                        "(same vectors, slower; set embedding.backend=torch to silence this): %s",
                        self.model_name,
                        exc,
                    )
                    self._chosen = _torch_embedder(self._settings)
            return self._chosen

    def _faster(self, onnx: OnnxSentenceEmbedder) -> Embedder:
        """ONNX Runtime or torch, whichever :mod:`.backend_choice` measured faster here (measured now if
        no decision is kept for this model, machine, settings and packages); ONNX Runtime when torch
        fails to run the model."""
        settings = self._settings
        path = onnx.cache_dir / CHOICE_FILE
        key = choice_key(
            model_path(onnx.model_dir, onnx.cache_dir).name, settings.threads, settings.batch_size
        )
        choice = load_choice(path, key)
        torch: SentenceTransformerEmbedder | None = None
        if choice is None:
            log.info(
                "embedding.backend=auto: timing ONNX Runtime against torch once on this machine for %r "
                "(the decision is kept in %s)",
                self.model_name,
                path,
            )
            torch = _torch_embedder(settings)
            texts = sample_texts()
            try:
                seconds = measure({"onnx": onnx.encode, "torch": torch.encode}, texts)
            except Exception as exc:  # the [torch] extra is installed but cannot run the model here
                log.warning(
                    "embedding.backend=auto: torch could not be timed, ONNX Runtime serves %r: %s",
                    self.model_name,
                    exc,
                )
                return onnx
            choice = BackendChoice.made(seconds, len(texts), key, path)
            try:
                store_choice(path, choice)
            except OSError as exc:  # a read-only cache: measured again next time
                log.warning("embedding.backend=auto: cannot keep the backend decision in %s: %s", path, exc)
        self.choice = choice
        log.info(
            "embedding.backend=auto: %r runs on %s (%s)", self.model_name, choice.backend, choice.summary()
        )
        if choice.backend == "torch":
            return torch or _torch_embedder(settings)
        return onnx

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
        if settings.quantize != "none" and (settings.backend == "torch" or settings.device != "cpu"):
            raise ConfigError(
                f"embedding.quantize={settings.quantize!r} runs on ONNX Runtime on the CPU: set "
                "embedding.backend to auto or onnx and embedding.device to cpu, or quantize to none"
            )
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
    model_dir = Path(resolve_model(name)).expanduser()  # ModelNotFound where nothing is
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
        quantize=settings.quantize,
    )
