"""``embedding.backend = "auto"`` with both backends installed: the faster one here, measured once.

Which runs a model faster, ONNX Runtime or torch, depends on the processor: on an AMD EPYC ONNX Runtime
encoded 1.6x to 7x the texts/s of torch, on an Intel Xeon it was slower (386 against 510 texts/s, issue
29). So where the ``[torch]`` extra is installed beside ONNX Runtime, ``auto`` times both once on this
machine: the same model, the same ``threads`` and ``batch_size``, the same :func:`sample_texts` (passages,
facts and phrases in the proportions of an index build) through each backend's own ``encode``, the best
of :data:`ROUNDS` alternated rounds each. torch is chosen only when it took less than ONNX Runtime's time
divided by :data:`MARGIN` (ONNX Runtime starts faster and needs no torch in memory). The decision and its
figures are kept in :data:`CHOICE_FILE` beside the ONNX models (``embedding.onnx_cache_dir``), keyed by
the model (its ONNX file's name: its files' sizes, dates and configuration), the CPU model, the CPU
count, ``threads``, ``batch_size`` and the versions of the packages that run it; a later run with the
same key reuses it without importing torch when ONNX Runtime won. Without torch nothing is measured.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from time import perf_counter
from typing import Any

#: the file of decisions, in the ONNX cache folder
CHOICE_FILE = "backend-choice.json"
#: alternated timing rounds per backend; the best of each backend's rounds counts
ROUNDS = 2
#: torch serves only when it took less than ONNX Runtime's time divided by this (noise, and torch's cost)
MARGIN = 1.1
#: changes when the measurement changes: older decisions are measured again
MEASURE_VERSION = 1
#: the distributions whose versions key a decision (the first of each group that is installed)
PACKAGES = (
    ("hipporag-neo4j",),
    ("onnxruntime", "onnxruntime-gpu", "onnxruntime-openvino", "onnxruntime-directml"),
    ("torch",),
    ("sentence-transformers",),
    ("transformers",),
    ("numpy",),
)
#: the measurement's texts per kind (words each): about 20 facts and phrases per passage, as MuSiQue's
#: index (1,890 passages, 38,025 texts)
MIX = (("passage", 12, 110), ("fact", 80, 10), ("phrase", 160, 2))

_TEXT = (
    "The river town grew around a stone bridge built by merchants who carried wool and salt between the "
    "hill farms and the coast. In the spring floods the lower streets filled with water, so the first "
    "council moved the market to a square beside the church, where a clock tower was later raised by a "
    "family of engineers from the north. Their workshop also made pumps for the mines, and one of the "
    "daughters wrote a history of the valley that was printed in three volumes. A railway reached the "
    "town after a long dispute about the route, which had to cross marshland owned by an old abbey. "
    "Travellers came to see the gardens, the painted ceiling of the library and the annual boat race, "
    "and a small university opened with chairs in medicine, law and natural philosophy. During the war "
    "the bridge was damaged and rebuilt with steel, and the museum now keeps the original keystone with "
    "the carved names of its builders beside maps, letters and a model of the harbour as it was."
)
_WORDS = _TEXT.split()


def sample_texts() -> list[str]:
    """The texts the backends are timed on: distinct windows of an ordinary English text, :data:`MIX`."""
    texts: list[str] = []
    n = len(_WORDS)
    for _kind, count, words in MIX:
        for i in range(count):
            start = (i * 7 + words) % n  # distinct windows: ONNX Runtime encodes a repeated text once
            texts.append(" ".join(_WORDS[(start + j) % n] for j in range(words + i % 3)))
    return list(dict.fromkeys(texts))  # a few short windows repeat a phrase ("of the"): once each


def decide(seconds: Mapping[str, float], margin: float = MARGIN) -> str:
    """``torch`` when it took less than ONNX Runtime's time divided by ``margin``, else ``onnx``."""
    return "torch" if seconds["torch"] * margin < seconds["onnx"] else "onnx"


def measure(
    encoders: Mapping[str, Callable[[Sequence[str]], object]], texts: Sequence[str], rounds: int = ROUNDS
) -> dict[str, float]:
    """The best wall seconds of ``rounds`` encodes of ``texts`` per backend, the order alternated each round.

    Each backend first encodes a few texts of each kind untimed (model loading, first allocations).
    """
    warm = [texts[0], texts[1], *texts[-40:]]
    for encode in encoders.values():
        encode(warm)
    best = {name: float("inf") for name in encoders}
    names = list(encoders)
    for round_no in range(rounds):
        for name in names if round_no % 2 == 0 else names[::-1]:
            start = perf_counter()
            encoders[name](texts)
            best[name] = min(best[name], perf_counter() - start)
    return best


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo`` on Linux), else what :mod:`platform` says."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown"


def package_versions() -> str:
    """``name version`` of each of :data:`PACKAGES` installed, read from their metadata (nothing imported)."""
    found = []
    for names in PACKAGES:
        for name in names:
            with contextlib.suppress(metadata.PackageNotFoundError):
                found.append(f"{name} {metadata.version(name)}")
                break
    return ", ".join(found)


def choice_key(model: str, threads: int | None, batch_size: int) -> dict[str, str]:
    """What a decision holds for: the model, this machine's CPU, the settings and package versions."""
    return {
        "model": model,
        "cpu": cpu_model(),
        "cpus": str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()),
        "threads": str(threads) if threads else "default",
        "batch_size": str(batch_size),
        "packages": package_versions(),
        "measure": str(MEASURE_VERSION),
    }


def _digest(key: Mapping[str, str]) -> str:
    return hashlib.sha256(json.dumps(dict(key), sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class BackendChoice:
    """A decision of ``auto`` between ONNX Runtime and torch, and the timings it was made from."""

    backend: str
    seconds: dict[str, float]
    texts: int
    key: dict[str, str]
    measured_at: str
    path: str = ""
    #: read from :data:`CHOICE_FILE` (measured by an earlier run) rather than measured by this process
    cached: bool = field(default=False, compare=False)

    @classmethod
    def made(
        cls, seconds: Mapping[str, float], texts: int, key: Mapping[str, str], path: Path
    ) -> BackendChoice:
        return cls(
            backend=decide(seconds),
            seconds=dict(seconds),
            texts=texts,
            key=dict(key),
            measured_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            path=str(path),
        )

    def texts_per_s(self, backend: str) -> float:
        return self.texts / self.seconds[backend] if self.seconds[backend] > 0 else float("inf")

    def summary(self) -> str:
        """``measured faster here: onnx N texts/s, torch M texts/s on T texts, ...`` (the backend apart)."""
        rates = ", ".join(f"{b} {self.texts_per_s(b):,.0f} texts/s" for b in ("onnx", "torch"))
        how = "kept from" if self.cached else "measured"
        return (
            f"measured faster here: {rates} on {self.texts} texts, threads {self.key['threads']}; "
            f"{how} {self.measured_at}, {self.path}"
        )

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["texts_per_s"] = {b: round(self.texts_per_s(b), 1) for b in self.seconds}
        return data


def load_choice(path: Path, key: Mapping[str, str]) -> BackendChoice | None:
    """The decision kept for ``key`` in ``path``, or None (none kept, another key, an unreadable file)."""
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))["entries"][_digest(key)]
        choice = BackendChoice(
            backend=str(entry["backend"]),
            seconds={str(b): float(s) for b, s in entry["seconds"].items()},
            texts=int(entry["texts"]),
            key={str(k): str(v) for k, v in entry["key"].items()},
            measured_at=str(entry["measured_at"]),
            path=str(path),
            cached=True,
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    backends = {"onnx", "torch"}
    if choice.key != dict(key) or choice.backend not in backends or set(choice.seconds) != backends:
        return None
    return choice


def store_choice(path: Path, choice: BackendChoice) -> None:
    """Add ``choice`` to ``path`` (other keys' decisions kept), written atomically."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["entries"]
        if not isinstance(entries, dict):
            entries = {}
    except (OSError, ValueError, KeyError, TypeError):
        entries = {}
    entry = {k: v for k, v in asdict(choice).items() if k not in ("path", "cached")}
    entries[_digest(choice.key)] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.partial")
    try:
        partial.write_text(
            json.dumps({"entries": entries}, indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
