"""A sentence-transformers model run by ONNX Runtime (``embedding.backend`` auto, the default, or onnx).

No torch at run time: the graph is built once from the model's own files by
:mod:`~hipporag_neo4j.embedding.onnx_graph` (BERT models with mean or CLS pooling, such as the default
all-MiniLM-L6-v2) and cached under ``cache_dir``, and the texts are tokenized with the ``tokenizers``
package from the model's ``tokenizer.json``, truncated and padded as sentence-transformers does. A model
that builder refuses is exported once with ``torch.onnx`` instead when the ``[torch]`` extra is installed
(:func:`~hipporag_neo4j.embedding.torch_backend.export_model`), else refused with an error naming the
extra. Measured: cosine >= 0.9999995 to sentence-transformers' vectors on 504 texts
(benchmarks/results/encoder_no_torch.md).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hipporag_neo4j.embedding.batching import QUERY_BATCH, token_batches
from hipporag_neo4j.embedding.local_model import TORCH_INSTALL
from hipporag_neo4j.embedding.onnx_graph import (
    CONFIG_FILES,
    GRAPH_VERSION,
    INPUTS,
    UnsupportedModel,
    build_graph,
    read_json,
)
from hipporag_neo4j.errors import EmbeddingError
from hipporag_neo4j.stores.base import Matrix

__all__ = ["QUANTIZE", "QUERY_BATCH", "OnnxSentenceEmbedder", "model_path", "prepare_model", "quantized_path"]

#: ``session.intra_op.allow_spinning`` of every session ("0": idle pool threads sleep)
SPINNING = "0"
#: the values of ``embedding.quantize``: ``none`` (the float model) or ``int8`` (dynamic quantization)
QUANTIZE = ("none", "int8")


def model_path(model_dir: Path, cache_dir: Path) -> Path:
    """Where the ONNX model of this model directory is cached: keyed by the directory's path, its weights'
    names, sizes and mtimes, the bytes of its configuration files and :data:`GRAPH_VERSION`."""
    weights = sorted(p for p in model_dir.iterdir() if p.suffix in (".safetensors", ".bin"))
    key = hashlib.sha256(f"{model_dir.resolve()}|graph {GRAPH_VERSION}".encode())
    for p in weights:
        key.update(f"|{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}".encode())
    for name in CONFIG_FILES:
        path = model_dir / name
        key.update(f"|{name}:".encode() + (path.read_bytes() if path.is_file() else b"-"))
    return cache_dir / f"{model_dir.name}-{key.hexdigest()[:16]}.onnx"


def quantized_path(float_path: Path) -> Path:
    """Where the int8 model made from the float model at ``float_path`` is cached."""
    return float_path.with_name(float_path.stem + "-int8.onnx")


def quantize_model(source: Path, target: Path) -> None:
    """Write the int8 dynamic quantization of the float ONNX model ``source`` to ``target``.

    ONNX Runtime's own ``quantize_dynamic``: the weights of every MatMul (and of the word embeddings'
    Gather) stored as int8 with one scale per output channel, activations quantized at run time. Nothing
    is downloaded. Measured on 300 MuSiQue texts: cosine to the float vectors mean 0.9926, min 0.974 per
    channel, against mean 0.962, min 0.894 with one scale per tensor (benchmarks/results/index_speed.md).
    """
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic  # type: ignore[import-untyped]
    except ImportError as exc:
        raise EmbeddingError(f"embedding.quantize='int8' needs onnxruntime.quantization: {exc}") from exc
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.{threading.get_ident()}.partial")
    try:
        quantize_dynamic(str(source), str(partial), weight_type=QuantType.QInt8, per_channel=True)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)


def prepare_model(model_dir: Path, target: Path) -> str:
    """Write the ONNX model of ``model_dir`` to ``target``: ``built`` without torch, or ``exported`` with
    torch.onnx (the ``[torch]`` extra) for a model the builder refuses; :class:`EmbeddingError` if neither."""
    try:
        model = build_graph(model_dir)
        how = "built"
    except UnsupportedModel as refused:
        from hipporag_neo4j.embedding.torch_backend import export_model, torch_installed

        if not torch_installed():
            raise EmbeddingError(
                f"ONNX Runtime cannot run {model_dir} without torch: {refused}. Use a BERT model with "
                f"mean or CLS pooling, or install the [torch] extra ({TORCH_INSTALL}) to export it with "
                "torch.onnx or to run it with backend='torch'"
            ) from refused
        try:
            export_model(model_dir, target)
        except EmbeddingError as exc:
            raise EmbeddingError(f"ONNX Runtime cannot run {model_dir}: {refused}; {exc}") from exc
        return "exported"
    import onnx

    target.parent.mkdir(parents=True, exist_ok=True)
    # a name of its own per process and thread: two writers never share a file
    partial = target.with_suffix(f".{os.getpid()}.{threading.get_ident()}.partial")
    onnx.save_model(model, str(partial))
    partial.replace(target)  # atomic: a crash mid-write never leaves a truncated model behind
    return how


class OnnxSentenceEmbedder:
    """Same vectors as :class:`~hipporag_neo4j.embedding.torch_backend.SentenceTransformerEmbedder`, run by
    ONNX Runtime with no torch (for the models :mod:`~hipporag_neo4j.embedding.onnx_graph` builds)."""

    def __init__(
        self,
        model_name: str,
        model_dir: Path,
        cache_dir: Path,
        *,
        batch_size: int = 64,
        threads: int | None = None,
        query_threads: int | None = 1,
        quantize: str = "none",
    ) -> None:
        if quantize not in QUANTIZE:
            raise EmbeddingError(f"embedding.quantize: {quantize!r}; one of {', '.join(QUANTIZE)}")
        self.model_name = model_name
        self.quantize = quantize
        self.model_dir = model_dir
        self.cache_dir = cache_dir
        self.batch_size = batch_size
        self.threads = threads
        self.query_threads = query_threads
        #: ``built`` (no torch), ``exported`` (torch.onnx) or ``cached`` once prepared
        self.prepared: str | None = None
        self._lock = threading.Lock()
        self._tokenize_lock = threading.Lock()
        self._counter: Any = None  # the tokenizer without truncation or padding: token_count
        self._batcher: Any = None  # truncated to max_tokens, not padded (encode pads each batch)
        self._pad_id = 0
        self._lower = False
        self._sessions: dict[int | None, Any] = {}
        self._max_tokens: int | None = None

    def _max_length(self) -> int | None:
        """sentence-transformers' max_seq_length, else the tokenizer's, never past the position table."""
        st_config = read_json(self.model_dir / "sentence_bert_config.json") or {}
        tokenizer_config = read_json(self.model_dir / "tokenizer_config.json") or {}
        config = read_json(self.model_dir / "config.json") or {}
        self._lower = bool(st_config.get("do_lower_case"))
        limits = [
            int(st_config.get("max_seq_length") or 0) or int(tokenizer_config.get("model_max_length") or 0),
            int(config.get("max_position_embeddings") or 0),
        ]
        found = [n for n in limits if 0 < n < 1_000_000]
        return min(found) if found else None

    def _load_tokenizer(self) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingError(
                "the ONNX backend needs the tokenizers package (pip install tokenizers)"
            ) from exc
        path = self.model_dir / "tokenizer.json"
        if not path.is_file():
            raise UnsupportedModel(
                f"{self.model_dir} has no tokenizer.json (a fast tokenizer's file); the ONNX backend reads "
                f"only that: use backend='torch' ({TORCH_INSTALL})"
            )
        self._max_tokens = self._max_length()
        counter = Tokenizer.from_file(str(path))
        padding = counter.padding or {}  # the file's own settings (often fixed-length): replaced below
        counter.no_padding()
        counter.no_truncation()
        batcher = Tokenizer.from_file(str(path))
        batcher.no_truncation()
        if self._max_tokens:
            batcher.enable_truncation(max_length=self._max_tokens)
        config = read_json(self.model_dir / "tokenizer_config.json") or {}
        pad_token = str(padding.get("pad_token") or config.get("pad_token") or "[PAD]")
        pad_id = batcher.token_to_id(pad_token)
        if pad_id is None:
            raise UnsupportedModel(f"{self.model_dir}: the pad token {pad_token!r} is not in the vocabulary")
        batcher.no_padding()  # encode pads each batch itself, on the right: the fused Attention reads
        self._pad_id = int(pad_id)  # the mask as the count of leading tokens
        self._counter, self._batcher = counter, batcher

    def _session(self, threads: int | None) -> Any:
        with self._lock:
            if threads not in self._sessions:
                try:
                    import onnxruntime as ort  # type: ignore[import-untyped]
                except ImportError as exc:
                    raise EmbeddingError(
                        "the ONNX backend needs onnxruntime (pip install onnxruntime onnx)"
                    ) from exc
                try:
                    path = model_path(self.model_dir, self.cache_dir)
                    if path.exists():
                        self.prepared = self.prepared or "cached"
                    else:
                        self.prepared = prepare_model(self.model_dir, path)
                    if self.quantize == "int8":
                        float_path, path = path, quantized_path(path)
                        if not path.exists():
                            quantize_model(float_path, path)
                    if self._batcher is None:
                        self._load_tokenizer()
                    options = ort.SessionOptions()
                    options.inter_op_num_threads = 1
                    if threads:
                        options.intra_op_num_threads = threads
                    # idle pool threads sleep instead of spinning: on shared cores a spinning thread takes
                    # the time another process (or this one's tokenizer) needs (index_speed.md)
                    options.add_session_config_entry("session.intra_op.allow_spinning", SPINNING)
                    self._sessions[threads] = ort.InferenceSession(
                        str(path), options, providers=["CPUExecutionProvider"]
                    )
                except EmbeddingError:
                    raise
                except ImportError as exc:  # onnx missing: the graph cannot be written
                    raise EmbeddingError(
                        f"building the ONNX model of {self.model_name!r} needs the onnx package "
                        f"(pip install onnx): {exc}"
                    ) from exc
                except Exception as exc:  # onnx / onnxruntime / tokenizers errors
                    raise EmbeddingError(
                        f"cannot prepare the ONNX model for {self.model_name!r} from {self.model_dir}: {exc}"
                    ) from exc
            return self._sessions[threads]

    def prepare(self) -> None:
        """Build (once, into the cache) and open the model now; :class:`EmbeddingError` when it cannot."""
        self._session(self.threads)

    @property
    def dimension(self) -> int:
        return int(self.encode(["dimension probe"]).shape[1])

    @property
    def max_tokens(self) -> int | None:
        self._session(self.threads)
        return self._max_tokens

    def _texts(self, texts: Sequence[str]) -> list[str]:
        """As sentence-transformers feeds its tokenizer: stripped, lower-cased when the model says so."""
        return [t.strip().lower() if self._lower else t.strip() for t in texts]

    def token_count(self, text: str) -> int:
        self._session(self.threads)
        with self._tokenize_lock:
            return len(self._counter.encode(self._texts([text])[0], add_special_tokens=True).ids)

    def encode(self, texts: Sequence[str]) -> Matrix:
        """Vectors of ``texts`` in their order; a text given twice is encoded once.

        The distinct texts are tokenized in one call (truncated at ``max_tokens``), sorted by token count
        and run in batches of at most ``batch_size * TOKENS_PER_BATCH_SLOT`` (2,048) padded tokens
        (:func:`~hipporag_neo4j.embedding.batching.token_batches`), each padded on the right to its
        longest text only.
        """
        session = self._session(self.query_threads if len(texts) <= QUERY_BATCH else self.threads)
        if not texts:
            return np.zeros((0, int(session.get_outputs()[0].shape[1] or 0)), dtype=np.float32)
        slot: dict[str, int] = {}
        where = [slot.setdefault(t, len(slot)) for t in texts]
        distinct = list(slot)
        with self._tokenize_lock:
            encoded = self._batcher.encode_batch(self._texts(distinct))
        ids = [e.ids for e in encoded]
        types = [e.type_ids for e in encoded]
        lengths = np.fromiter((len(i) for i in ids), dtype=np.int64, count=len(ids))
        order = np.argsort(lengths, kind="stable")
        wanted = {i.name for i in session.get_inputs()}
        out: Matrix | None = None
        for start, stop in token_batches(lengths[order].tolist(), self.batch_size):
            rows = order[start:stop]
            width = int(lengths[rows[-1]])  # sorted: the last is the longest
            input_ids = np.full((len(rows), width), self._pad_id, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            type_ids = np.zeros((len(rows), width), dtype=np.int64)
            for j, r in enumerate(rows.tolist()):
                n = len(ids[r])
                input_ids[j, :n] = ids[r]
                mask[j, :n] = 1
                type_ids[j, :n] = types[r]
            columns = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": type_ids}
            feed = {name: columns[name] for name in INPUTS if name in wanted}
            vectors = np.asarray(session.run(None, feed)[0], dtype=np.float32)
            if out is None:
                out = np.empty((len(distinct), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
        assert out is not None
        if len(distinct) == len(texts):
            return out
        result: Matrix = out[np.asarray(where, dtype=np.int64)]
        return result
