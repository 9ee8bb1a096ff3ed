"""A BERT sentence-transformers model as an ONNX graph, built from its files without torch.

The weights are read from ``model.safetensors`` with numpy (an 8-byte header length, a JSON header giving
each tensor's dtype, shape and byte range, then the raw little-endian data) and the graph is written with
``onnx.helper``: the embeddings, ``num_hidden_layers`` encoder layers, the pooling of the model's Pooling
module (mean or CLS) and the L2 normalisation; the computation of transformers' ``BertModel`` followed by
sentence-transformers' Pooling and Normalize (cosine >= 0.9999995 to sentence-transformers on 504 texts,
benchmarks/results/encoder_no_torch.md). Everything is read from ``config.json``, ``modules.json`` and the
Pooling config; what this builder does not build is refused with :class:`UnsupportedModel` naming it.

The graph is opset 12 and spelled the way ONNX Runtime's graph optimizations recognise: the LayerNorm
written out (fused back into LayerNormalization), GELU as ``x * (1 + erf(x / sqrt 2)) * 0.5`` (fused with
its bias into BiasGelu) and self-attention with the ``(1 - mask) * -10000`` additive mask (fused into one
Attention node per layer). The fused Attention reads the mask as a count of leading tokens, so the inputs
must be right-padded, as :mod:`~hipporag_neo4j.embedding.onnx_backend` pads them.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from hipporag_neo4j.errors import EmbeddingError

if TYPE_CHECKING:
    import onnx

#: bump when the graph built here changes: it is part of the cache key of a built model
GRAPH_VERSION = 1
OPSET = 12
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "embedding"
WEIGHTS_FILE = "model.safetensors"
#: the small files the graph is built from besides the weights (their bytes are in the cache key)
CONFIG_FILES = ("config.json", "modules.json", "sentence_bert_config.json", "tokenizer.json")

ACTIVATIONS = ("gelu", "gelu_new", "gelu_pytorch_tanh", "relu")
_POOLING = {"mean_tokens": "mean", "cls_token": "cls"}

Weights = dict[str, npt.NDArray[np.float32]]


class UnsupportedModel(EmbeddingError):
    """The model directory holds something this builder does not build (the message says what)."""


@dataclass(frozen=True)
class BertConfig:
    hidden_size: int
    num_layers: int
    num_heads: int
    intermediate_size: int
    layer_norm_eps: float
    hidden_act: str
    max_position_embeddings: int
    pooling: str  # "mean" or "cls"

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_heads


def read_json(path: Path) -> Any:
    """The JSON in ``path``; None when there is no such file."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UnsupportedModel(f"cannot read {path}: {exc}") from exc


def pooling_of(model_dir: Path) -> str:
    """``mean`` or ``cls``: the pooling of the sentence-transformers model in ``model_dir``."""
    modules = read_json(model_dir / "modules.json")
    if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
        raise UnsupportedModel(f"{model_dir} has no sentence-transformers modules.json")
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise UnsupportedModel(
            f"{model_dir}: modules {kinds}; built are Transformer, Pooling and an optional Normalize"
        )
    config = read_json(model_dir / str(modules[1].get("path", "")) / "config.json")
    modes = sorted(
        key.removeprefix("pooling_mode_")
        for key, on in (config.items() if isinstance(config, dict) else [])
        if key.startswith("pooling_mode_") and on
    )
    if len(modes) != 1 or modes[0] not in _POOLING:
        raise UnsupportedModel(
            f"{model_dir}: pooling {modes or 'unknown'}; built are mean and CLS pooling (one of them)"
        )
    return _POOLING[modes[0]]


def read_config(model_dir: Path) -> BertConfig:
    """The BERT configuration of a sentence-transformers model directory, or :class:`UnsupportedModel`."""
    config = read_json(model_dir / "config.json")
    if not isinstance(config, dict):
        raise UnsupportedModel(f"{model_dir} has no config.json")
    if config.get("model_type") != "bert":
        raise UnsupportedModel(f"{model_dir}: model_type {config.get('model_type')!r}; only 'bert' is built")
    position = config.get("position_embedding_type", "absolute")
    if position != "absolute":
        raise UnsupportedModel(f"{model_dir}: position_embedding_type {position!r}; only 'absolute' is built")
    act = config.get("hidden_act", "gelu")
    if act not in ACTIVATIONS:
        raise UnsupportedModel(f"{model_dir}: hidden_act {act!r}; built are {', '.join(ACTIVATIONS)}")
    try:
        built = BertConfig(
            hidden_size=int(config["hidden_size"]),
            num_layers=int(config["num_hidden_layers"]),
            num_heads=int(config["num_attention_heads"]),
            intermediate_size=int(config["intermediate_size"]),
            layer_norm_eps=float(config.get("layer_norm_eps", 1e-12)),
            hidden_act=str(act),
            max_position_embeddings=int(config.get("max_position_embeddings", 512)),
            pooling=pooling_of(model_dir),
        )
    except KeyError as exc:
        raise UnsupportedModel(f"{model_dir}/config.json has no {exc.args[0]!r}") from exc
    if built.hidden_size % built.num_heads:
        raise UnsupportedModel(f"{model_dir}: hidden_size is not a multiple of num_attention_heads")
    return built


_DTYPES: dict[str, np.dtype[Any]] = {
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "F64": np.dtype("<f8"),
    "BF16": np.dtype("<u2"),  # the upper half of a float32: widened below
}


def read_safetensors(path: Path) -> Weights:
    """Every floating-point tensor of a ``.safetensors`` file, as float32 (BF16 widened exactly)."""
    data = path.read_bytes()
    size = int.from_bytes(data[:8], "little") if len(data) >= 8 else len(data)
    try:
        header = json.loads(data[8 : 8 + size])
        if not isinstance(header, dict):
            raise ValueError("the header is not a JSON object")
    except ValueError as exc:
        raise UnsupportedModel(f"{path} is not a safetensors file ({exc})") from exc
    out: Weights = {}
    for name, info in header.items():
        if name == "__metadata__" or info.get("dtype") not in _DTYPES:
            continue  # integer buffers such as position_ids are not weights
        dtype = _DTYPES[info["dtype"]]
        start, stop = info["data_offsets"]
        count = (stop - start) // dtype.itemsize
        raw = np.frombuffer(data, dtype=dtype, count=count, offset=8 + size + start)
        if info["dtype"] == "BF16":
            raw = (raw.astype(np.uint32) << 16).view(np.float32)
        out[name] = raw.astype(np.float32).reshape(info["shape"])
    return out


def read_weights(model_dir: Path) -> Weights:
    path = model_dir / WEIGHTS_FILE
    if not path.is_file():
        found = sorted(p.name for p in model_dir.iterdir() if p.suffix in (".bin", ".safetensors", ".pt"))
        raise UnsupportedModel(
            f"{model_dir} has no {WEIGHTS_FILE} (found: {', '.join(found) or 'no weights'}); "
            "without torch only one safetensors file is read"
        )
    tensors = read_safetensors(path)
    for prefix in ("bert.", "model."):  # a checkpoint saved from a task model carries its base's prefix
        bare = any(k.startswith("embeddings.") for k in tensors)
        if not bare and any(k.startswith(prefix) for k in tensors):
            tensors = {k.removeprefix(prefix): v for k, v in tensors.items()}
    return tensors


class _Graph:
    """Nodes and initializers of the graph being built, every name unique."""

    def __init__(self, weights: Weights) -> None:
        self.weights = weights
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._count = 0

    def _name(self, kind: str) -> str:
        self._count += 1
        return f"{kind}_{self._count}"

    def weight(self, name: str, *, transpose: bool = False) -> str:
        from onnx import numpy_helper

        try:
            array = self.weights[name]
        except KeyError as exc:
            raise UnsupportedModel(f"the weights have no tensor {name!r}") from exc
        array = np.ascontiguousarray(array.T if transpose else array, dtype=np.float32)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def const(self, value: Any, dtype: Any = np.float32) -> str:
        from onnx import numpy_helper

        name = self._name("const")
        self.initializers.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(self, kind: str, *inputs: str, output: str | None = None, **attrs: Any) -> str:
        from onnx import helper

        name = self._name(kind)
        out = output or name.lower()
        self.nodes.append(helper.make_node(kind, list(inputs), [out], name=name, **attrs))
        return out

    def layer_norm(self, x: str, prefix: str, eps: float) -> str:
        centred = self.op("Sub", x, self.op("ReduceMean", x, axes=[-1]))
        variance = self.op("ReduceMean", self.op("Pow", centred, self.const(2.0)), axes=[-1])
        normed = self.op("Div", centred, self.op("Sqrt", self.op("Add", variance, self.const(eps))))
        scaled = self.op("Mul", normed, self.weight(prefix + ".weight"))
        return self.op("Add", scaled, self.weight(prefix + ".bias"))

    def linear(self, x: str, prefix: str) -> str:
        product = self.op("MatMul", x, self.weight(prefix + ".weight", transpose=True))
        return self.op("Add", product, self.weight(prefix + ".bias"))

    def activation(self, x: str, kind: str) -> str:
        if kind == "relu":
            return self.op("Relu", x)
        if kind == "gelu":  # exact, as torch exports it
            erf = self.op("Erf", self.op("Div", x, self.const(math.sqrt(2.0))))
            return self.op("Mul", self.op("Mul", x, self.op("Add", erf, self.const(1.0))), self.const(0.5))
        # gelu_new, gelu_pytorch_tanh: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
        cube = self.op("Mul", self.op("Mul", x, x), x)
        inner = self.op("Add", x, self.op("Mul", cube, self.const(0.044715)))
        tanh = self.op("Tanh", self.op("Mul", inner, self.const(math.sqrt(2.0 / math.pi))))
        return self.op("Mul", self.op("Mul", x, self.op("Add", tanh, self.const(1.0))), self.const(0.5))


def build_graph(model_dir: Path) -> onnx.ModelProto:
    """The ONNX model of the sentence-transformers BERT model in ``model_dir``.

    Inputs :data:`INPUTS` (int64, batch x tokens, right-padded), output :data:`OUTPUT` (float32, batch x
    hidden size, L2-normalised). :class:`UnsupportedModel` for what is not built.
    """
    import onnx
    from onnx import TensorProto, helper

    config = read_config(model_dir)
    g = _Graph(read_weights(model_dir))
    eps, hidden = config.layer_norm_eps, config.hidden_size
    ids, mask, types = INPUTS

    # embeddings: word + position (0 .. tokens - 1) + token type, then LayerNorm
    tokens = g.op("Gather", g.op("Shape", ids), g.const([1], np.int64), axis=0)
    zero = g.const([0], np.int64)
    positions = g.op("Slice", g.weight("embeddings.position_embeddings.weight"), zero, tokens, zero)
    x = g.op("Add", g.op("Gather", g.weight("embeddings.word_embeddings.weight"), ids), positions)
    x = g.op("Add", x, g.op("Gather", g.weight("embeddings.token_type_embeddings.weight"), types))
    x = g.layer_norm(x, "embeddings.LayerNorm", eps)

    # the additive attention mask, batch x 1 x 1 x tokens: 0 where attended, -10000 on padding
    wide = g.op("Unsqueeze", g.op("Unsqueeze", mask, axes=[1]), axes=[2])
    masked = g.op("Sub", g.const(1.0), g.op("Cast", wide, to=TensorProto.FLOAT))
    bias = g.op("Mul", masked, g.const(-10000.0))

    split = g.const([0, 0, config.num_heads, config.head_size], np.int64)
    merge = g.const([0, 0, hidden], np.int64)
    scale = g.const(math.sqrt(config.head_size))
    for i in range(config.num_layers):
        p = f"encoder.layer.{i}"
        heads = {
            part: g.op("Reshape", g.linear(x, f"{p}.attention.self.{part}"), split)
            for part in ("query", "key", "value")
        }
        q = g.op("Transpose", heads["query"], perm=[0, 2, 1, 3])
        k = g.op("Transpose", heads["key"], perm=[0, 2, 3, 1])
        v = g.op("Transpose", heads["value"], perm=[0, 2, 1, 3])
        scores = g.op("Add", g.op("Div", g.op("MatMul", q, k), scale), bias)
        context = g.op("MatMul", g.op("Softmax", scores, axis=3), v)
        context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merge)
        attended = g.op("Add", g.linear(context, f"{p}.attention.output.dense"), x)
        x = g.layer_norm(attended, f"{p}.attention.output.LayerNorm", eps)
        inner = g.activation(g.linear(x, f"{p}.intermediate.dense"), config.hidden_act)
        x = g.layer_norm(g.op("Add", g.linear(inner, f"{p}.output.dense"), x), f"{p}.output.LayerNorm", eps)

    if config.pooling == "cls":
        pooled = g.op("Gather", x, g.const(0, np.int64), axis=1)
    else:  # the mean over the attended tokens (the count clamped at 1e-9, as sentence-transformers does)
        weights = g.op("Unsqueeze", g.op("Cast", mask, to=TensorProto.FLOAT), axes=[2])
        total = g.op("ReduceSum", g.op("Mul", x, weights), axes=[1], keepdims=0)
        count = g.op("Clip", g.op("ReduceSum", weights, axes=[1], keepdims=0), g.const(1e-9))
        pooled = g.op("Div", total, count)
    # x / max(||x||, 1e-12), as torch.nn.functional.normalize
    norm = g.op("Clip", g.op("ReduceL2", pooled, axes=[1], keepdims=1), g.const(1e-12))
    g.op("Div", pooled, norm, output=OUTPUT)

    graph = helper.make_graph(
        g.nodes,
        "sentence_embedding",
        [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"]) for name in INPUTS],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", hidden])],
        g.initializers,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="hipporag-neo4j"
    )
    model.ir_version = 7  # the IR of opset 12
    onnx.checker.check_model(model, full_check=True)
    return model
