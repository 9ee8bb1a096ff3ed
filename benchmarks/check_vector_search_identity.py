"""Byte-identity check of the query-time vector searches between two code versions (issue 19).

Run once with each version on the same store; the printed hashes must be equal. It reads ``qvecs.npy``
(query vectors) beside the store: 40 stored phrase vectors plus noise and 30 random vectors.

    PYTHONPATH=/work/main python benchmarks/check_vector_search_identity.py STORE
    PYTHONPATH=$PWD python benchmarks/check_vector_search_identity.py STORE
"""

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

import hipporag_neo4j
from hipporag_neo4j.stores.embedded import EmbeddedStore

root = Path(sys.argv[1])
store = EmbeddedStore(root)
meta = store.meta()
assert meta is not None
store.open(meta.embedding_model, meta.embedding_dim)
queries = root.parent / "qvecs.npy"
if not queries.exists():
    rng = np.random.default_rng(0)
    snapshot = sorted((root / "snapshot").iterdir())[-1]
    phrases = np.load(snapshot / "phrase_vectors.npy")
    q = (
        phrases[rng.choice(len(phrases), 40)]
        + 0.3 * rng.standard_normal((40, 384)).astype(np.float32) / 384**0.5
    )
    q = np.vstack([q, rng.standard_normal((30, 384)).astype(np.float32)])
    np.save(queries, (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32))
vecs = np.load(queries)
out: list[object] = []
for v in vecs:
    out.append([[(p.passage_id, p.score) for p in store.dense_passage_scores(v, n)] for n in (5, 200, 5000)])
    out.append([(f.id, f.similarity) for f in store.nearest_facts(v, 20)])
out.append(
    [[(h.id, h.similarity, h.passage_count) for h in row] for row in store.nearest_phrases(vecs, 10, -1.0)]
)
out.append(
    [
        [(h.id, h.similarity) for h in row]
        for row in store.nearest_phrases(vecs[:20], 50, 0.5, exclude_ids=["x"] * 20)
    ]
)
print(hipporag_neo4j.__file__, hashlib.sha256(json.dumps(out).encode()).hexdigest())
