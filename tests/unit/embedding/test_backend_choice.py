"""``embedding.backend=auto`` with both backends installed: the faster one, timed once and kept.

Unit tests on fake backends and a fake clock (each fake encode advances it by a cost per text): the
decision rule, the alternated rounds, the decision kept beside the ONNX models and reused, measured again
when its key changes, and no measurement at all where only one backend can serve. The real measurement
with both backends is in tests/integration/test_embedding_onnx.py.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hipporag_neo4j.diagnostics.doctor import _embedding
from hipporag_neo4j.embedding import backend_choice
from hipporag_neo4j.embedding import encoder as encoder_module
from hipporag_neo4j.embedding.backend_choice import (
    CHOICE_FILE,
    MARGIN,
    ROUNDS,
    decide,
    load_choice,
    measure,
    sample_texts,
)
from hipporag_neo4j.embedding.encoder import AutoSentenceEmbedder, create_embedder
from hipporag_neo4j.embedding.onnx_backend import OnnxSentenceEmbedder
from hipporag_neo4j.settings import EmbeddingSettings, load_settings

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class FakeBackend:
    """An encoder whose every call costs ``cost`` clock seconds per text; it records what it encoded."""

    def __init__(self, clock: Clock, cost: float, fill: float) -> None:
        self.clock, self.cost, self.fill = clock, cost, fill
        self.calls: list[int] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        self.clock.now += self.cost * len(texts)
        return np.full((len(texts), 4), self.fill, dtype=np.float32)

    @property
    def dimension(self) -> int:
        return 4


class FakeOnnx(OnnxSentenceEmbedder, FakeBackend):
    def __init__(self, clock: Clock, cost: float, model_dir: Path, cache_dir: Path) -> None:
        FakeBackend.__init__(self, clock, cost, 0.5)
        self.model_name, self.model_dir, self.cache_dir = "fake", model_dir, cache_dir
        self.threads = self.query_threads = None

    def prepare(self) -> None:
        pass

    encode = FakeBackend.encode  # type: ignore[assignment]
    dimension = FakeBackend.dimension  # type: ignore[assignment]


class Machine:
    """Fake ONNX Runtime and torch backends for create_embedder, with their costs per text."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.clock = Clock()
        monkeypatch.setattr(backend_choice, "perf_counter", self.clock)
        self.model_dir = tmp_path / "model"
        self.model_dir.mkdir()
        (self.model_dir / "config.json").write_text('{"hidden_size": 4}')
        self.cache_dir = tmp_path / "cache"
        self.onnx_cost, self.torch_cost = 2.0, 1.0
        self.torch_installed = True
        self.torch_error: Exception | None = None
        self.onnx: list[FakeOnnx] = []
        self.torch: list[FakeBackend] = []
        monkeypatch.setattr(encoder_module, "_onnx_embedder", self._make_onnx)
        monkeypatch.setattr(encoder_module, "_torch_embedder", self._make_torch)
        monkeypatch.setattr(encoder_module, "torch_installed", lambda: self.torch_installed)

    def _make_onnx(self, settings: EmbeddingSettings) -> FakeOnnx:
        self.onnx.append(FakeOnnx(self.clock, self.onnx_cost, self.model_dir, self.cache_dir))
        return self.onnx[-1]

    def _make_torch(self, settings: EmbeddingSettings) -> FakeBackend:
        backend = FakeBackend(self.clock, self.torch_cost, 1.0)
        if self.torch_error:
            error = self.torch_error

            def fail(texts: Sequence[str]) -> np.ndarray:
                raise error

            backend.encode = fail  # type: ignore[method-assign]
        self.torch.append(backend)
        return backend

    def timed(self) -> int:
        """How many backends have encoded the measurement's texts so far."""
        n = len(sample_texts())
        return sum(n in b.calls for b in [*self.onnx, *self.torch])

    def auto(self, **settings: Any) -> AutoSentenceEmbedder:
        embedder = create_embedder(EmbeddingSettings(**settings))
        assert isinstance(embedder, AutoSentenceEmbedder)
        embedder.encode(["a query"])
        return embedder


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Machine:
    return Machine(tmp_path, monkeypatch)


def test_torch_is_chosen_only_when_faster_by_the_margin() -> None:
    assert decide({"onnx": 1.0, "torch": 2.0}) == "onnx"
    assert decide({"onnx": 2.0, "torch": 1.0}) == "torch"
    assert decide({"onnx": 1.0, "torch": 1.0}) == "onnx"
    assert decide({"onnx": MARGIN * 1.01, "torch": 1.0}) == "torch"
    assert decide({"onnx": MARGIN * 0.99, "torch": 1.0}) == "onnx"  # faster, but within the noise


def test_the_sample_holds_distinct_passages_facts_and_phrases() -> None:
    texts = sample_texts()
    assert len(texts) == len(set(texts)) > 200
    words = sorted(len(t.split()) for t in texts)
    assert words[0] <= 4 and words[-1] >= 100  # phrases to passages
    assert sum(n >= 100 for n in words) == 12  # about 20 short texts a passage, as an index build


def test_measure_warms_up_alternates_and_keeps_each_backends_best_round(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock()
    monkeypatch.setattr(backend_choice, "perf_counter", clock)
    order: list[str] = []
    costs = {"onnx": [50.0, 3.0, 2.0], "torch": [50.0, 1.0, 5.0]}  # the first call: the warm-up

    def backend(name: str) -> Any:
        def encode(texts: Sequence[str]) -> None:
            order.append(name)
            clock.now += costs[name].pop(0)

        return encode

    best = measure({"onnx": backend("onnx"), "torch": backend("torch")}, sample_texts())
    assert best == {"onnx": 2.0, "torch": 1.0}  # the warm-up (50 s) not counted
    assert ROUNDS == 2 and order == ["onnx", "torch", "onnx", "torch", "torch", "onnx"]


def test_auto_times_both_once_and_a_later_run_reuses_the_decision(
    machine: Machine, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="hipporag_neo4j.embedding.encoder"):
        first = machine.auto(onnx_cache_dir=str(machine.cache_dir), threads=2)
    assert machine.timed() == 2 and first.backend == "torch"
    assert float(first.encode(["a query"])[0, 0]) == 1.0  # the torch fake's vectors
    assert first.choice is not None and not first.choice.cached
    n = len(sample_texts())
    assert first.choice.seconds == {"onnx": 2.0 * n, "torch": 1.0 * n}
    assert first.choice.key["threads"] == "2" and first.choice.key["cpu"] == backend_choice.cpu_model()
    assert first.choice.key["packages"] == backend_choice.package_versions()
    assert "runs on torch (measured faster here: onnx 0 texts/s, torch 1 texts/s" in caplog.text
    kept = json.loads((machine.cache_dir / CHOICE_FILE).read_text())["entries"]
    assert [e["backend"] for e in kept.values()] == ["torch"]

    again = machine.auto(onnx_cache_dir=str(machine.cache_dir), threads=2)
    assert machine.timed() == 2  # nothing measured again
    assert again.backend == "torch" and again.choice == first.choice and again.choice.cached


def test_onnx_runtime_serves_when_torch_is_faster_by_less_than_the_margin(machine: Machine) -> None:
    machine.onnx_cost, machine.torch_cost = 1.05, 1.0
    embedder = machine.auto(onnx_cache_dir=str(machine.cache_dir))
    assert embedder.backend == "onnx" and embedder.choice and embedder.choice.backend == "onnx"
    assert float(embedder.encode(["a query"])[0, 0]) == 0.5
    again = machine.auto(onnx_cache_dir=str(machine.cache_dir))
    assert again.backend == "onnx" and len(machine.torch) == 1  # reused: no torch embedder made at all


@pytest.mark.parametrize(
    "change", ["threads", "batch_size", "cpu", "packages", "model files", "corrupt file"]
)
def test_a_decision_is_measured_again_when_what_it_holds_for_changes(
    machine: Machine, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    settings: dict[str, Any] = {"onnx_cache_dir": str(machine.cache_dir), "threads": 2, "batch_size": 64}
    assert machine.auto(**settings).backend == "torch" and machine.timed() == 2
    machine.onnx_cost, machine.torch_cost = 1.0, 2.0  # the new conditions favour ONNX Runtime
    changed = dict(settings)
    if change == "threads":
        changed["threads"] = 1
    elif change == "batch_size":
        changed["batch_size"] = 32
    elif change == "cpu":
        monkeypatch.setattr(backend_choice, "cpu_model", lambda: "Intel(R) Xeon(R) Fake CPU")
    elif change == "packages":
        before = backend_choice.package_versions()
        monkeypatch.setattr(backend_choice, "package_versions", lambda: before.replace("numpy", "numpy 0+"))
    elif change == "model files":
        (machine.model_dir / "config.json").write_text('{"hidden_size": 4, "layers": 1}')
    else:
        (machine.cache_dir / CHOICE_FILE).write_text('{"entries": {"truncated')
    again = machine.auto(**changed)
    assert machine.timed() == 4 and again.backend == "onnx" and again.choice and not again.choice.cached
    if change in ("threads", "batch_size"):  # both decisions kept: going back measures nothing
        assert len(json.loads((machine.cache_dir / CHOICE_FILE).read_text())["entries"]) == 2
        assert machine.auto(**settings).backend == "torch" and machine.timed() == 4


def test_a_kept_decision_is_read_for_its_own_key_only(machine: Machine) -> None:
    embedder = machine.auto(onnx_cache_dir=str(machine.cache_dir))
    assert embedder.choice is not None
    path, key = machine.cache_dir / CHOICE_FILE, embedder.choice.key
    assert load_choice(path, key) == embedder.choice
    assert load_choice(path, {**key, "cpus": "64"}) is None
    assert load_choice(machine.cache_dir / "missing.json", key) is None


def test_nothing_is_measured_where_only_one_backend_can_serve(machine: Machine) -> None:
    machine.torch_installed = False  # the default install
    assert machine.auto(onnx_cache_dir=str(machine.cache_dir)).backend == "onnx"
    machine.torch_installed = True
    int8 = machine.auto(onnx_cache_dir=str(machine.cache_dir), quantize="int8")  # ONNX Runtime only
    assert int8.backend == "onnx" and int8.choice is None
    assert machine.timed() == 0 and not machine.torch and not (machine.cache_dir / CHOICE_FILE).exists()


def test_a_torch_that_cannot_run_the_model_leaves_onnx_runtime_and_keeps_no_decision(
    machine: Machine, caplog: pytest.LogCaptureFixture
) -> None:
    machine.torch_error = RuntimeError("no kernel for this CPU")
    with caplog.at_level(logging.WARNING, logger="hipporag_neo4j.embedding.encoder"):
        embedder = machine.auto(onnx_cache_dir=str(machine.cache_dir))
    assert embedder.backend == "onnx" and embedder.choice is None
    assert "torch could not be timed" in caplog.text and "no kernel for this CPU" in caplog.text
    assert not (machine.cache_dir / CHOICE_FILE).exists()


def test_doctor_names_the_backend_and_the_figures_it_was_chosen_by(machine: Machine) -> None:
    settings = load_settings({"embedding": {"onnx_cache_dir": str(machine.cache_dir)}}, env_file=None)
    status, message, details = _embedding(settings)
    assert (
        status == "ok" and "runs on torch, measured faster here: onnx 0 texts/s, torch 1 texts/s" in message
    )
    assert str(machine.cache_dir / CHOICE_FILE) in message
    assert details["runs_on"] == "torch" and details["backend_choice"]["backend"] == "torch"
    assert details["backend_choice"]["texts_per_s"]["torch"] == pytest.approx(1.0)
