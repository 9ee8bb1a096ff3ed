"""The worker process of the ``trees`` suite (``bench_trees.py``): run under one tree's ``PYTHONPATH``, so
``import hipporag_neo4j`` is that tree's code.

* ``build``: index MuSiQue (the published OpenIE, ``index_openie``) or HotpotQA (offline spaCy
  extraction) into an embedded store directory and/or a Neo4j namespace with the default encoder (the
  second store reuses the vectors the first one's encode gave); one JSON line on stdout with the wall
  times, stage timings and store counts.
* ``serve``: open one store (embedded, or Neo4j with ``neo4j.ppr_engine`` local or gds) through
  ``hipporag_neo4j.api.HippoRAG`` and answer JSON-line requests on stdin, ``{"query": ..., "mode": ...,
  "top_k": 10}``, with one JSON line: passage ids, ``repr()`` of each score, of each explanation's graph
  and dense score and its note, and the seconds of the ``retrieve`` call (``time.perf_counter`` here).
  ``{"quit": true}`` closes the store and exits.

It does not import ``harness`` (which puts the repository this file lives in first on ``sys.path``, and
that is not always the tree measured). The Neo4j password comes from ``TREES_NEO4J_PASSWORD``.

    PYTHONPATH=TREE python benchmarks/trees_worker.py build --dataset musique --data DIR --embedded DIR
    PYTHONPATH=TREE python benchmarks/trees_worker.py serve --store embedded --path DIR
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any, TextIO

#: the default encoder on ONNX Runtime (``auto`` would time torch against it when torch is installed)
ONNX = {"embedding": {"backend": "onnx"}}


def settings_for(args: argparse.Namespace, store: str, path: str | None, engine: str | None) -> Any:
    from hipporag_neo4j.settings import load_settings

    if store == "embedded":
        return load_settings({"store": {"backend": "embedded", "path": path}, **ONNX}, env_file=None)
    return load_settings(
        {
            "store": {"backend": "neo4j"},
            "neo4j": {
                "uri": args.uri,
                "password": os.environ.get("TREES_NEO4J_PASSWORD", ""),
                "namespace": args.namespace,
                "ppr_engine": engine or "local",
                "vector_search": "client",
            },
            **ONNX,
        },
        env_file=None,
    )


class RememberingEmbedder:
    """The encoder, each text's vector kept: the second store built reuses the first one's vectors rather
    than encoding the corpus again (the encode is most of an index run on 2 cores). Other attributes are
    the encoder's."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.vectors: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def encode(self, texts: Any) -> Any:
        import numpy as np

        texts = list(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if missing:
            self.vectors.update(zip(missing, self.inner.encode(missing), strict=True))
        if not texts:
            return self.inner.encode(texts)
        return np.stack([self.vectors[t] for t in texts])


def build(args: argparse.Namespace, out: TextIO) -> None:
    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.embedding.encoder import create_embedder
    from hipporag_neo4j.settings import load_settings

    data = Path(args.data)
    encoder = create_embedder(load_settings(ONNX, env_file=None).embedding)
    encoder.encode(["warm up the encoder"])
    embedder = RememberingEmbedder(encoder)
    targets = []
    if args.embedded:
        targets.append(("embedded", settings_for(args, "embedded", args.embedded, None)))
    if args.uri:
        targets.append(("neo4j", settings_for(args, "neo4j", None, "local")))
    found: dict[str, Any] = {
        "embedder": type(encoder).__name__,
        "model": encoder.model_name,
        "torch_loaded": "torch" in sys.modules,
    }
    for kind, settings in targets:
        memory = HippoRAG(settings, embedder=embedder)
        start = time.perf_counter()
        if args.dataset == "musique":
            report = memory.index_openie(
                data / "musique" / "openie_musique_corpus1890_gpt-3.5-turbo-1106.json"
            )
            failed = len(report.failed)
        else:
            from hipporag_neo4j.evaluation.loaders import load_corpus
            from hipporag_neo4j.evaluation.runner import index_corpus

            indexed = index_corpus(memory, load_corpus(data / "hotpotqa" / "hotpotqa_corpus994.json"), None)
            report, failed = indexed.report, len(indexed.missing)
        wall = time.perf_counter() - start
        stats = memory.stats().model_dump(mode="json", exclude={"extra"})
        memory.close()
        found[kind] = {
            "wall_s": round(wall, 2),
            "indexed": len(report.indexed),
            "failed": failed,
            "timings": {k: round(v, 3) for k, v in report.timings.items()},
            "stats": stats,
        }
        print(kind, found[kind]["wall_s"], found[kind]["timings"], file=sys.stderr, flush=True)
    out.write(json.dumps(found) + "\n")
    out.flush()


def answer(memory: Any, request: dict[str, Any]) -> dict[str, Any]:
    start = time.perf_counter()
    result = memory.retrieve(request["query"], mode=request["mode"], top_k=request.get("top_k", 10))
    seconds = time.perf_counter() - start
    return {
        "ids": [p.passage.id for p in result.passages],
        "scores": [repr(p.score) for p in result.passages],
        "graph": [repr(p.explanation.graph_score) for p in result.passages],
        "dense": [repr(p.explanation.dense_score) for p in result.passages],
        "notes": [p.explanation.note for p in result.passages],
        "note": result.note,
        "dense_fallback": result.used_dense_fallback,
        "seconds": seconds,
    }


def serve(args: argparse.Namespace, out: TextIO) -> None:
    import hipporag_neo4j
    from hipporag_neo4j.api import HippoRAG

    settings = settings_for(args, args.store, args.path, args.engine)
    memory = HippoRAG(settings, create=False)
    engine = "embedded"
    if args.store == "neo4j":
        engine = memory.store.capabilities().ppr_engine
    else:
        memory.store  # noqa: B018  (opens it)
    ready = {
        "ready": True,
        "module": str(Path(hipporag_neo4j.__file__).resolve()),
        "engine": engine,
        "embedder": type(memory.embedder).__name__,
        "model": memory.embedder.model_name,
        "torch_loaded": "torch" in sys.modules,
    }
    out.write(json.dumps(ready) + "\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("quit"):
            break
        try:
            reply = answer(memory, request)
        except Exception:
            reply = {"error": traceback.format_exc()}
        out.write(json.dumps(reply) + "\n")
        out.flush()
    memory.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("command", choices=("build", "serve"))
    parser.add_argument("--dataset", choices=("musique", "hotpotqa"), default="musique")
    parser.add_argument("--data", help="build: the shared data directory (musique/, hotpotqa/)")
    parser.add_argument("--embedded", help="build: index into this embedded store directory")
    parser.add_argument("--store", choices=("embedded", "neo4j"), default="embedded")
    parser.add_argument("--path", help="serve: the embedded store directory")
    parser.add_argument("--uri", help="the Neo4j server (build: index into --namespace there too)")
    parser.add_argument("--namespace")
    parser.add_argument("--engine", choices=("local", "gds"), default="local")
    args = parser.parse_args()
    # the replies go to the original stdout; anything a library prints goes to stderr
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    if args.command == "build":
        build(args, out)
    else:
        serve(args, out)


if __name__ == "__main__":
    main()
