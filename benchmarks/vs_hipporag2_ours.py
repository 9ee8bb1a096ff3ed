"""Worker of ``bench_vs_hipporag2.py`` for this package (our interpreter, the repository on ``sys.path``).

python vs_hipporag2_ours.py index --store DIR --backend auto|torch|onnx|int8 [--threads 2] [--openie FILE]
    loads the embedder (timed apart), then times ``HippoRAG.index_openie`` of the published OpenIE into
    the fresh embedded store DIR (embed passages, phrases, facts; graph; synonym edges) and the CSR
    snapshot the first query would build (HippoRAG 2 builds its igraph inside ``index``). One JSON line.
python vs_hipporag2_ours.py serve --store DIR --backend auto|torch|onnx [--threads 1] [--top-k 10]
    opens DIR, prints ``READY {json}``, then answers one JSON line per stdin line ``{"q": question}`` with
    ``{"s": seconds of HippoRAG.retrieve(q), "ranked": [corpus index, ...]}`` in the default mode
    (``hipporag2``; no LLM configured, so no recognition filter), or in ``"mode"`` if the request names
    one. ``{"encode": [texts]}`` returns the vectors (to compare backends).
python vs_hipporag2_ours.py ort-encode-index [--threads N] [--openie FILE]
    the floor without torch: one ``encode`` of the default ONNX Runtime encoder over the same texts.
python vs_hipporag2_ours.py ort-encode-serve [--threads N]
    served, one such encode of each question (``{"q": question}`` -> ``{"s": seconds}``).
python vs_hipporag2_ours.py encode-index|encode-serve [--threads N] [--openie FILE]
    the reference "plain encode" (issue 19): sentence-transformers ``encode`` (torch, batch 64, input
    order) of every text an index build embeds (passages, phrases, facts of the OpenIE file), timed as
    ``index_wall_s``; served, one such encode of each question (``s``; ``ranked`` is empty).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

MUSIQUE = REPO.parent / "shared" / "data" / "musique"
OPENIE_FILE = MUSIQUE / "openie_musique_corpus1890_gpt-3.5-turbo-1106.json"
CORPUS_FILE = MUSIQUE / "musique_corpus1890.json"


def _memory(store: Path, backend: str, threads: int, query_threads: int | None) -> Any:
    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.settings import load_settings

    settings = load_settings(
        {
            "store": {"path": str(store), "backend": "embedded"},
            # HippoRAG 2 keeps no walk results: passes over the same questions time the walk each time
            "retrieval": {"ppr_cache_mib": 0},
            "embedding": {
                "model": "all-MiniLM-L6-v2",
                "backend": "auto" if backend == "int8" else backend,  # int8: ONNX Runtime, quantized
                "quantize": "int8" if backend == "int8" else "none",
                "threads": threads,
                "query_threads": query_threads or threads,
            },
        },
        env_file=None,
    )
    return HippoRAG(settings)


def index(store: Path, backend: str, threads: int, openie: Path) -> dict[str, Any]:
    memory = _memory(store, backend, threads, None)
    start = time.perf_counter()
    _ = memory.embedder.dimension  # loads the model (and the ONNX export from its cache)
    model_load = time.perf_counter() - start
    wall0, cpu0 = time.perf_counter(), time.process_time()
    report = memory.index_openie(openie)
    index_wall = time.perf_counter() - wall0
    snap0 = time.perf_counter()
    memory.store.cache.graph()  # the CSR graph retrieval builds lazily (HippoRAG 2 builds igraph in index)
    snapshot = time.perf_counter() - snap0
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    stats = memory.stats()
    runs_on = getattr(memory.embedder, "backend", backend)
    memory.close()
    return {
        "system": f"ours-{backend}",
        "runs_on": runs_on,
        "index_wall_s": wall,
        "index_cpu_s": cpu,
        "model_load_s": model_load,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "stages_s": {**report.timings, "index_openie": index_wall, "snapshot": snapshot},
        "counts": {
            "passages": stats.passages,
            "phrases": stats.phrases,
            "facts": stats.facts,
            "synonym_edges": report.new_synonym_edges,
            "failed": len(report.failed),
        },
    }


def corpus_index_of_ids(openie: Path) -> dict[str, int]:
    """Stored passage id -> position in the corpus file (matched by content, as the evaluation does)."""
    from hipporag_neo4j.extraction.recorded import content_key, load_recorded_extraction

    recorded = load_recorded_extraction(openie)
    out: dict[str, int] = {}
    for i, item in enumerate(json.loads(CORPUS_FILE.read_text())):
        found = recorded.by_content.get(content_key(item["text"], item["title"]))
        if found is not None:
            out[found] = i
    return out


def serve(store: Path, backend: str, threads: int, top_k: int, openie: Path) -> None:
    from hipporag_neo4j.models import RETRIEVAL_MODES

    start = time.perf_counter()
    memory = _memory(store, backend, threads, threads)
    position = corpus_index_of_ids(openie)
    _ = memory.embedder.dimension
    memory.retriever  # noqa: B018  (opens the store, loads spaCy)
    for warm in ("warm up question about nothing", "Who founded the company that made the first car?"):
        for mode in RETRIEVAL_MODES:
            memory.retrieve(warm, mode=mode, top_k=top_k)
    load = time.perf_counter() - start
    out = sys.stdout
    out.write("READY " + json.dumps({"load_s": load, "mode": memory.settings.retrieval.mode}) + "\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        if "encode" in request:
            vectors = memory.embedder.encode(request["encode"])
            out.write(json.dumps({"vectors": vectors.tolist()}) + "\n")
        elif "q" in request:
            s = time.perf_counter()
            result = memory.retrieve(request["q"], mode=request.get("mode"), top_k=top_k)
            seconds = time.perf_counter() - s
            ranked = [position.get(p.passage.id, -1) for p in result.passages]
            out.write(json.dumps({"s": seconds, "ranked": ranked, "timings": result.timings}) + "\n")
        else:
            break
        out.flush()
    memory.close()


def _plain_model(threads: int) -> Any:
    import torch
    from sentence_transformers import SentenceTransformer

    from hipporag_neo4j.embedding.encoder import SentenceTransformerEmbedder

    torch.set_num_threads(threads)
    return SentenceTransformer(SentenceTransformerEmbedder("all-MiniLM-L6-v2")._resolve(), device="cpu")


def plain_texts(openie: Path) -> list[str]:
    """What an index build embeds, as the indexer makes them: each passage's content (title + text), each
    distinct phrase (normalised) and fact text, each once."""
    from hipporag_neo4j.common.text import passage_content
    from hipporag_neo4j.extraction.recorded import load_recorded_extraction
    from hipporag_neo4j.indexing.pipeline import _build_graph

    recorded = load_recorded_extraction(openie)
    pairs = [(p, recorded.by_passage_id[p.id]) for p in recorded.passages]
    graph = _build_graph(pairs)
    texts = [passage_content(p.text, p.title) for p, _ in pairs]
    texts += list(graph.phrase_names.values())
    texts += list({f.id: f.text for r in graph.records for f in r.facts}.values())
    return list(dict.fromkeys(texts))


def ort_encode_index(threads: int, openie: Path) -> dict[str, Any]:
    """The floor with the best encoder installed without torch: one ``encode`` call of the default
    ONNX Runtime encoder (length-sorted batches) over every text the index build embeds."""
    from hipporag_neo4j.embedding.encoder import create_embedder
    from hipporag_neo4j.settings import EmbeddingSettings

    start = time.perf_counter()
    embedder = create_embedder(EmbeddingSettings(threads=threads))
    embedder.encode(["warm up"])
    model_load = time.perf_counter() - start
    texts = plain_texts(openie)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    embedder.encode(texts)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return {
        "system": "ort-encode",
        "runs_on": getattr(embedder, "backend", "onnx"),
        "index_wall_s": wall,
        "index_cpu_s": cpu,
        "model_load_s": model_load,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "counts": {"texts": len(texts)},
    }


def encode_index(threads: int, openie: Path) -> dict[str, Any]:
    start = time.perf_counter()
    model = _plain_model(threads)
    model.encode(["warm up"])
    model_load = time.perf_counter() - start
    texts = plain_texts(openie)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return {
        "system": "plain-encode",
        "index_wall_s": wall,
        "index_cpu_s": cpu,
        "model_load_s": model_load,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "counts": {"texts": len(texts)},
    }


def ort_encode_serve(threads: int) -> None:
    """One encode of each question with the default install's encoder (ONNX Runtime), as a retrieve
    call encodes it (``query_threads`` = ``threads``)."""
    from hipporag_neo4j.embedding.encoder import create_embedder
    from hipporag_neo4j.settings import EmbeddingSettings

    embedder = create_embedder(
        EmbeddingSettings(model="all-MiniLM-L6-v2", threads=threads, query_threads=threads)
    )
    _serve_encodes(lambda q: embedder.encode([q]))


def encode_serve(threads: int) -> None:
    model = _plain_model(threads)
    _serve_encodes(lambda q: model.encode([q], normalize_embeddings=True, show_progress_bar=False))


def _serve_encodes(encode: Any) -> None:
    encode("warm up question about nothing")
    out = sys.stdout
    out.write("READY " + json.dumps({"load_s": 0.0, "mode": "one encode"}) + "\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        if "q" not in request:
            break
        s = time.perf_counter()
        encode(request["q"])
        out.write(json.dumps({"s": time.perf_counter() - s, "ranked": []}) + "\n")
        out.flush()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "command",
        choices=["index", "serve", "encode-index", "encode-serve", "ort-encode-index", "ort-encode-serve"],
    )
    parser.add_argument("--store", type=Path)
    parser.add_argument("--backend", choices=["auto", "torch", "onnx", "int8"], default="torch")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--openie", type=Path, default=OPENIE_FILE)
    args = parser.parse_args()
    if args.command == "encode-index":
        print(json.dumps(encode_index(args.threads, args.openie)), flush=True)
        return
    if args.command == "ort-encode-index":
        print(json.dumps(ort_encode_index(args.threads, args.openie)), flush=True)
        return
    if args.command == "encode-serve":
        encode_serve(args.threads)
        return
    if args.command == "ort-encode-serve":
        ort_encode_serve(args.threads)
        return
    if args.store is None:
        parser.error("index and serve need --store")
    if args.command == "index":
        print(json.dumps(index(args.store, args.backend, args.threads, args.openie)), flush=True)
    else:
        serve(args.store, args.backend, args.threads, args.top_k, args.openie)


if __name__ == "__main__":
    main()
