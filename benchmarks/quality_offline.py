"""Offline retrieval quality: hipporag2 against dense when the graph comes from spaCy, not an LLM.

Data sets (all read from ``../shared/data``):

* ``musique-offline``: MuSiQue dev70 over its 1,890 passages, extracted with the offline spaCy extractor;
* ``hotpotqa``: HotpotQA dev50 over 994 passages, extracted with the offline spaCy extractor;
* ``musique-openie``: MuSiQue dev70 indexed from the published GPT-3.5 OpenIE (the LLM-extraction check:
  offline changes must not cost it anything).

Each extractor variant (``--extractor NAME``: ``default`` or the default with one feature of
:class:`~hipporag_neo4j.extraction.spacy_extractor.SpacyFeatures` switched off, ``no-<feature>``) gets
its own store under ``--cache`` (key: data set, variant and a hash of the extractor's source), built once
and reused; embeddings are cached there by text, so a new variant only embeds the texts it adds. Each
retrieval variant (``--retrieval NAME``, see :data:`RETRIEVAL_VARIANTS`) is then scored with dense on the
same store: R@2 / R@5 / AR@5 and paired bootstrap 95% CIs of the difference to dense.

    python benchmarks/quality_offline.py --cache /work/oq-cache \\
        [--dataset musique-offline hotpotqa musique-openie] [--extractor default no-title_subject ...] \\
        [--retrieval default ...] [--out quality_offline_dev]

Writes ``benchmarks/results/<out>.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
RESULTS = REPO / "benchmarks" / "results"
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

MUSIQUE = DATA / "musique"
#: data set -> (corpus, questions, OpenIE file or None for the offline spaCy extractor)
DATASETS: dict[str, tuple[Path, Path, Path | None]] = {
    "musique-offline": (MUSIQUE / "musique_corpus1890.json", MUSIQUE / "musique_dev70.json", None),
    "hotpotqa": (
        DATA / "hotpotqa" / "hotpotqa_corpus994.json",
        DATA / "hotpotqa" / "hotpotqa_dev50.json",
        None,
    ),
    "musique-openie": (
        MUSIQUE / "musique_corpus1890.json",
        MUSIQUE / "musique_dev70.json",
        MUSIQUE / "openie_musique_corpus1890_gpt-3.5-turbo-1106.json",
    ),
}
#: retrieval variant -> settings overrides on top of the defaults
RETRIEVAL_VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "no query-entity seeds": {"entity_seeds": False},
    "+ graph phrases found in the query": {"match_query_phrases": True},
    "+ names of the query found as graph phrases": {"match_query_phrases": "names"},
}
METRICS = ("R@2", "R@5", "AR@5")


class CachingEmbedder:
    """An embedder that remembers every text it encoded: in memory, and in ``path`` (one .npz of texts
    and vectors, merged with what another run saved meanwhile) on :meth:`save`."""

    def __init__(self, inner: Any, path: Path) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.path = path.with_suffix(".npz")
        self._rows: dict[str, int] = {}
        self._vectors: list[np.ndarray[Any, Any]] = []
        self._new: list[str] = []
        self._merge()

    def _merge(self) -> None:
        legacy = self.path.with_suffix(".npy")  # the first format: vectors .npy, texts .json
        if legacy.is_file() and legacy.with_suffix(".json").is_file():
            texts = json.loads(legacy.with_suffix(".json").read_text(encoding="utf-8"))
            for text, vector in zip(texts, np.load(legacy), strict=True):
                if text not in self._rows:
                    self._rows[text] = len(self._vectors)
                    self._vectors.append(vector)
        if not self.path.is_file():
            return
        with np.load(self.path, allow_pickle=False) as saved:
            for text, vector in zip(saved["texts"].tolist(), saved["vectors"], strict=True):
                if text not in self._rows:
                    self._rows[text] = len(self._vectors)
                    self._vectors.append(vector)

    @property
    def dimension(self) -> int:
        return int(self.inner.dimension)

    @property
    def max_tokens(self) -> int | None:
        return self.inner.max_tokens  # type: ignore[no-any-return]

    def token_count(self, text: str) -> int:
        return int(self.inner.token_count(text))

    def encode(self, texts: Sequence[str]) -> Any:
        missing = list(dict.fromkeys(t for t in texts if t not in self._rows))
        if missing:
            new = self.inner.encode(missing)
            for text, vector in zip(missing, new, strict=True):
                self._rows[text] = len(self._vectors)
                self._vectors.append(np.asarray(vector, dtype=np.float32))
            self._new.extend(missing)
        return np.stack([self._vectors[self._rows[t]] for t in texts]).astype(np.float32)

    def save(self) -> None:
        if not self._new:
            return
        self._merge()
        texts = sorted(self._rows, key=self._rows.__getitem__)
        tmp = self.path.with_name(f"{self.path.stem}.{os.getpid()}.tmp.npz")
        np.savez(tmp, texts=np.array(texts), vectors=np.stack(self._vectors))
        tmp.replace(self.path)
        self._new = []


class CachedParses:
    """A spaCy pipeline whose ``pipe`` reuses the parses saved in ``path`` (a DocBin), so an extractor
    variant only re-runs the triple building, not the parser. Extraction speed is measured apart."""

    def __init__(self, nlp: Any, path: Path) -> None:
        from spacy.tokens import DocBin

        self.nlp = nlp
        self.path = path
        self._docs: dict[str, Any] = {}
        self._new = False
        if path.is_file():
            for doc in DocBin().from_bytes(path.read_bytes()).get_docs(nlp.vocab):
                self._docs[doc.text] = doc

    def pipe(self, texts: Sequence[str], batch_size: int = 64) -> list[Any]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._docs))
        if missing:
            for text, doc in zip(missing, self.nlp.pipe(missing, batch_size=batch_size), strict=True):
                self._docs[text] = doc
            self._new = True
        return [self._docs[t] for t in texts]

    def save(self) -> None:
        from spacy.tokens import DocBin

        if self._new:
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(DocBin(store_user_data=False, docs=self._docs.values()).to_bytes())
            tmp.replace(self.path)
            self._new = False


def extractor_key(variant: str) -> str:
    source = (REPO / "hipporag_neo4j" / "extraction" / "spacy_extractor.py").read_bytes()
    return f"{variant}-{hashlib.sha1(source).hexdigest()[:10]}"


def make_extractor(variant: str, model: str, parses: CachedParses) -> Any:
    from hipporag_neo4j.extraction.spacy_extractor import SpacyExtractor, SpacyFeatures

    if variant == "default":
        features = SpacyFeatures()
    elif variant == "baseline":  # every feature of issue 21 off: the extractor as it was
        features = SpacyFeatures.none()
    elif variant.startswith("no-") and variant[3:].replace("-", "_") in SpacyFeatures.model_fields:
        features = SpacyFeatures(**{variant[3:].replace("-", "_"): False})
    elif variant.startswith("with-") and variant[5:].replace("-", "_") in SpacyFeatures.model_fields:
        features = SpacyFeatures(**{variant[5:].replace("-", "_"): True})
    else:
        raise SystemExit(
            f"unknown extractor variant {variant!r}: default, baseline, no-<feature> or with-<feature>, of"
            f" {', '.join(SpacyFeatures.model_fields)}"
        )

    class CachedExtractor(SpacyExtractor):
        nlp: Any = None  # the pipeline, as an attribute (shadows the property)

    extractor = CachedExtractor(model, features=features)
    extractor.nlp = parses
    return extractor


def measure_speed(n: int) -> dict[str, Any]:
    """Seconds per passage of the extractor with every feature off and with the defaults (parse included),
    interleaved A B A B on the first ``n`` MuSiQue passages; the parser is warmed up first."""
    from hipporag_neo4j.evaluation.loaders import load_corpus
    from hipporag_neo4j.extraction.spacy_extractor import SpacyExtractor, SpacyFeatures
    from hipporag_neo4j.models import Passage

    corpus = load_corpus(DATASETS["musique-offline"][0])[:n]
    passages = [Passage(id=str(i), text=p.text, title=p.title) for i, p in enumerate(corpus)]
    variants = {"baseline": SpacyExtractor(features=SpacyFeatures.none()), "default": SpacyExtractor()}
    variants["default"].extract(passages[:10])
    times: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(2):
        for name, extractor in variants.items():
            started = time.perf_counter()
            extractor.extract(passages)
            times[name].append((time.perf_counter() - started) / len(passages))
    best = {k: min(v) for k, v in times.items()}
    # the part the features change, without the parse: triple building over the same parsed docs
    nlp = variants["default"].nlp
    docs = list(nlp.pipe([t for p in passages for t in (p.title or "", p.text)]))
    after_parse: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(3):
        for name, extractor in variants.items():
            started = time.perf_counter()
            for i, passage in enumerate(passages):
                extractor._extract_one(passage, docs[2 * i], docs[2 * i + 1])
            after_parse[name].append((time.perf_counter() - started) / len(passages))
    return {
        "passages": len(passages),
        "seconds_per_passage": {k: [round(x, 4) for x in v] for k, v in times.items()},
        "ratio_default_to_baseline": round(best["default"] / best["baseline"], 3),
        "after_parse_seconds_per_passage": {k: [round(x, 5) for x in v] for k, v in after_parse.items()},
    }


def _percent(means: dict[str, float]) -> dict[str, float]:
    return {k: round(100 * means[k], 1) for k in METRICS}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cache", type=Path, required=True, help="Stores and embeddings, kept between runs.")
    parser.add_argument(
        "--dataset", nargs="*", choices=sorted(DATASETS), default=["musique-offline", "hotpotqa"]
    )
    parser.add_argument("--extractor", nargs="+", default=["default"])
    parser.add_argument("--retrieval", nargs="+", default=["default"], choices=sorted(RETRIEVAL_VARIANTS))
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--out", help="Result file stem in benchmarks/results (nothing written without it).")
    parser.add_argument(
        "--speed",
        type=int,
        default=0,
        metavar="N",
        help="Also time the extractor (no cache) on the first N MuSiQue passages: baseline and default"
        " features interleaved, 2 rounds each.",
    )
    args = parser.parse_args(argv)
    load_before = [round(x, 2) for x in os.getloadavg()]

    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.embedding.encoder import SentenceTransformerEmbedder
    from hipporag_neo4j.evaluation.loaders import load_corpus, load_questions
    from hipporag_neo4j.evaluation.report import git_info, machine_info
    from hipporag_neo4j.evaluation.runner import index_corpus, run_evaluation
    from hipporag_neo4j.extraction.spacy_extractor import SpacyQueryNER
    from hipporag_neo4j.settings import load_settings

    git = git_info()
    args.cache.mkdir(parents=True, exist_ok=True)
    embedder = CachingEmbedder(SentenceTransformerEmbedder("all-MiniLM-L6-v2"), args.cache / "minilm-cache")
    rows: list[dict[str, Any]] = []
    extraction_seconds: dict[str, dict[str, float]] = {}
    for dataset in args.dataset:
        corpus_file, questions_file, openie_file = DATASETS[dataset]
        extractors = ["openie"] if openie_file else args.extractor
        corpus, questions = load_corpus(corpus_file), load_questions(questions_file)
        parses: CachedParses | None = None
        for ext in extractors:
            key = "openie" if openie_file else extractor_key(ext)
            store_dir = args.cache / "stores" / f"{dataset}-{key}"
            settings = load_settings({"store": {"path": str(store_dir)}}, env_file=None)
            if openie_file is None and parses is None:
                from hipporag_neo4j.extraction.spacy_extractor import load_spacy_model

                parses = CachedParses(
                    load_spacy_model(settings.extraction.spacy_model), args.cache / f"parses-{dataset}.spacy"
                )
            extractor = (
                None if parses is None else make_extractor(ext, settings.extraction.spacy_model, parses)
            )
            memory = HippoRAG(
                settings,
                embedder=embedder,  # type: ignore[arg-type]
                extractor=extractor,
                query_ner=SpacyQueryNER(settings.extraction.spacy_model),
            )
            try:
                started = time.perf_counter()
                indexed = index_corpus(memory, corpus, openie_file)
                if indexed.report.indexed:
                    extraction_seconds[f"{dataset}/{ext}"] = {
                        k: round(v, 1) for k, v in indexed.report.timings.items()
                    }
                print(
                    f"{dataset}/{ext}: store ready in {time.perf_counter() - started:.0f} s", file=sys.stderr
                )
                embedder.save()
                if parses is not None:
                    parses.save()
                stats = memory.store.stats()
                for variant in args.retrieval:
                    overrides = RETRIEVAL_VARIANTS[variant]
                    retrieval = memory.settings.retrieval
                    saved = {k: getattr(retrieval, k) for k in overrides}
                    try:
                        for k, v in overrides.items():
                            setattr(retrieval, k, v)
                        memory.retriever.match_graph_phrases = retrieval.match_query_phrases
                        report = run_evaluation(
                            memory,
                            questions,
                            corpus,
                            ["dense", "hipporag2"],
                            passage_ids=indexed.passage_ids,
                            graph_reach=False,
                            n_resamples=args.resamples,
                        )
                    finally:
                        for k, v in saved.items():
                            setattr(retrieval, k, v)
                    ci = {c.metric: c.bootstrap for c in report.comparisons if c.mode == "hipporag2"}
                    row = {
                        "dataset": dataset,
                        "extractor": ext,
                        "retrieval": variant,
                        "dense": _percent(report.tables["dense"].means),
                        "hipporag2": _percent(report.tables["hipporag2"].means),
                        "diff_ci": {
                            m: [round(100 * b.mean_diff, 1), round(100 * b.low, 1), round(100 * b.high, 1)]
                            for m, b in ci.items()
                        },
                        "store": {"phrases": stats.phrases, "facts": stats.facts},
                        "per_question": {
                            q.question_id: {
                                m: {k: q.modes[m].metrics[k] for k in METRICS} for m in ("dense", "hipporag2")
                            }
                            for q in report.questions
                        },
                    }
                    rows.append(row)
                    d = row["diff_ci"]
                    print(
                        f"{dataset:16} {ext:22} {variant:24} dense {row['dense']}"
                        f" hipporag2 {row['hipporag2']} diff "
                        + " ".join(f"{m} {d[m][0]:+.1f} [{d[m][1]:+.1f},{d[m][2]:+.1f}]" for m in METRICS),
                        file=sys.stderr,
                    )
            finally:
                memory.close()
    speed = measure_speed(args.speed) if args.speed else None
    payload = {
        "speed": speed,
        "command": " ".join(["python benchmarks/quality_offline.py", shlex.join(sys.argv[1:])]).strip(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "git": git,
        "machine": machine_info(),
        "load_before": load_before,
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "extraction_seconds": extraction_seconds,
        "rows": rows,
    }
    if args.out:
        write(payload, args.out)


def _triple(values: dict[str, float]) -> str:
    return " / ".join(f"{values[m]:.1f}" for m in METRICS)


def write(payload: dict[str, Any], out: str) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    slim = {**payload, "rows": [{k: v for k, v in r.items() if k != "per_question"} for r in payload["rows"]]}
    (RESULTS / f"{out}.json").write_text(json.dumps(slim, indent=2) + "\n", encoding="utf-8")
    git, machine = payload["git"] or {}, payload["machine"]
    lines = [
        "# Offline retrieval quality: hipporag2 against dense",
        "",
        f"- command: `{payload['command']}`",
        f"- date: {payload['created']}; commit: {git.get('commit', 'unknown')}"
        + (
            f" plus uncommitted {', '.join(git['uncommitted_package_files'])}"
            if git.get("uncommitted_package_files")
            else ""
        ),
        f"- machine: {machine['platform']}, {machine['cpu_count']} CPUs, Python {machine['python']},"
        f" torch {machine['torch']}; load average before/after {payload['load_before']}"
        f" / {payload['load_after']}",
        "- all-MiniLM-L6-v2, spaCy query NER, no LLM at query time; percent; the difference to dense with its"
        " 95% CI (paired bootstrap, seed 0). `openie`: the published GPT-3.5 OpenIE; otherwise the spaCy"
        " extractor, `no-X` = the default with feature X off, `baseline` = every feature of issue 21 off.",
        "",
        "| data set | extractor | retrieval | phrases / facts | dense R@2 / R@5 / AR@5"
        " | hipporag2 R@2 / R@5 / AR@5 | R@2 − dense | R@5 − dense | AR@5 − dense |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in payload["rows"]:
        cells = [
            f"{r['diff_ci'][m][0]:+.1f} [{r['diff_ci'][m][1]:+.1f}, {r['diff_ci'][m][2]:+.1f}]"
            for m in METRICS
        ]
        lines.append(
            f"| {r['dataset']} | {r['extractor']} | {r['retrieval']}"
            f" | {r['store']['phrases']} / {r['store']['facts']}"
            f" | {_triple(r['dense'])} | {_triple(r['hipporag2'])} | {' | '.join(cells)} |"
        )
    if payload.get("speed"):
        sp = payload["speed"]
        lines += [
            "",
            f"Extractor speed on the first {sp['passages']} MuSiQue passages (parse included, s per passage,"
            f" 2 interleaved rounds): {sp['seconds_per_passage']}; default / baseline ="
            f" {sp['ratio_default_to_baseline']}. Triple building alone on the same parsed docs (s per"
            f" passage, 3 interleaved rounds): {sp.get('after_parse_seconds_per_passage')}",
        ]
    if payload["extraction_seconds"]:
        lines += [
            "",
            "Indexing stages of the stores built in this run (s; the spaCy parses come from the cache, so"
            " extraction is the triple building only): "
            + ", ".join(f"{k} {v}" for k, v in payload["extraction_seconds"].items()),
        ]
    (RESULTS / f"{out}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
