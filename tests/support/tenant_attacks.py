"""Two namespaces in one store (one embedded store root, or one Neo4j database) and a tenant, A, that
tries to reach the other, B, with crafted input: passage ids, titles, texts, metadata keys and values,
extracted entity names, and labels and property names for ``link``. The same scenario runs on both stores
(tests/integration/test_tenants_adversarial.py, tests/neo4j/test_neo4j_tenants.py).

What must hold: B reads back exactly as before; A stores every crafted value as data (it round-trips
unchanged: nothing was spliced into a statement); A's reads and deletes see only A; bad labels and
property names are refused with an error naming them, and refusing them changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.errors import InputError
from hipporag_neo4j.models import Passage

#: Strings that break out of a Cypher or SQL literal, a label, a path or a JSON document if spliced in,
#: look like another tenant's names, or are just very long.
CRAFTED = [
    "}) MATCH (n) DETACH DELETE n //",
    "x' OR '1'='1",
    '"; DROP TABLE passages; --',
    "`) DETACH DELETE n WITH 1 AS x MATCH (`",
    "$namespace",
    "{namespace: 'B'}",
    "р1",  # a Cyrillic 'р': looks like B's "p1"
    "ｐ１",  # full-width look-alike of "p1"
    "../../namespaces/B/graph.sqlite",
    "line\nbreak\u2028and\ttab",
    "emoji 🧨 and \u202eright-to-left",
    "x" * 20_000,
]

#: Labels and property names that must never reach a statement (each refused by name).
BAD_IDENTIFIERS = [
    "Customer`) DETACH DELETE n //",
    "Customer\n",  # a trailing newline passes a regex ending in '$'
    "Customer:Phrase",
    "Cüstomer",
    "Ｃustomer",  # full-width look-alike
    "1Customer",
    "",
    "C" * 64,
]

#: hipporag-neo4j's own labels: linking to them would join namespaces (PhraseEmbedding16 holds every
#: namespace's 16-dimensional phrases).
OWN_LABELS = ["Phrase", "Passage", "Fact", "HippoRAGMeta", "SynonymsPending", "PhraseEmbedding16"]


def b_passages() -> list[dict[str, Any]]:
    return [
        {"id": "p1", "text": "Bob's boat Marlin sails from Hawby.", "metadata": {"owner": "bob"}},
        {"id": "shared-id", "text": "Bob keeps the Marlin key at Hawby.", "metadata": {"owner": "bob"}},
    ]


def a_passages() -> list[dict[str, Any]]:
    out = []
    for i, value in enumerate(CRAFTED):
        out.append(
            {
                "id": value,
                "title": value,
                "text": f"Passage {i} of tenant A mentions Marlin and says: {value}",
                "metadata": {
                    value: value,
                    "namespace": "B",  # a metadata field must not set the node's namespace
                    "id": "p1",
                    "parent_id": "p1",
                    "owner": "mallory",
                },
            }
        )
    out.append({"id": "shared-id", "text": "Mallory also uses the id shared-id, and mentions Marlin."})
    return out


def table() -> dict[str, list[list[str]]]:
    """Extraction for every passage: the crafted values become entity names too."""
    rows: dict[str, list[list[str]]] = {}
    for p in b_passages():
        rows[p["text"]] = [["marlin", "sails from", "hawby"]]
    for i, p in enumerate(a_passages()):
        crafted = CRAFTED[i % len(CRAFTED)][:200].replace("\n", " ")
        # and an entity name too long to be one (an index key on Neo4j): dropped, the passage kept
        rows[p["text"]] = [["marlin", "is mentioned with", crafted or "x"], ["marlin", "is", "y" * 10_000]]
    return rows


LONG_ID = "x" * 20_000


def view(memory: HippoRAG) -> dict[str, Any]:
    """What a namespace holds, through the store's own reads: counts, and every passage as stored."""
    stats = memory.stats()
    ids = [info.id for info in memory.list_passages()]
    stored = memory.store.get_passages(ids)
    return {
        "counts": (stats.passages, stats.phrases, stats.facts, stats.mentions),
        "passages": {pid: stored[pid].model_dump() for pid in sorted(stored)},
    }


def run(open_memory: Callable[[str], HippoRAG], a: str, b: str, raw: Callable[[str], Any]) -> None:
    """The scenario. ``open_memory(namespace)`` opens a HippoRAG on it; ``raw(namespace)`` is a dump of
    the namespace read beside the library (SQLite tables, or Cypher over the namespace's nodes)."""
    with open_memory(b) as memory_b:
        report = memory_b.index(b_passages())
        assert sorted(report.indexed) == ["p1", "shared-id"] and not report.failed
        b_before, b_raw = view(memory_b), raw(b)

    with open_memory(a) as memory_a:
        report = memory_a.index(a_passages())
        # the one id too long to be a key is refused by name, and only it
        assert [(f.passage_id, f.reason) for f in report.failed] == [
            (LONG_ID[:80], "passage id of 20000 bytes (UTF-8); ids are at most 2048 bytes")
        ]
        kept = [p for p in a_passages() if p["id"] != LONG_ID]
        assert sorted(report.indexed) == sorted(p["id"] for p in kept)
        stored = memory_a.store.get_passages([p["id"] for p in kept])
        for p in kept:  # every crafted value came back as it went in: data, never syntax
            got: Passage = stored[p["id"]]
            assert (got.id, got.text, got.title) == (p["id"], p["text"], p.get("title")), p["id"][:40]
            for key, value in p.get("metadata", {}).items():
                assert got.metadata[key] == value
        assert "p1" not in memory_a.store.get_passages(["p1"])  # B's id, looked up from A: absent
        hits = memory_a.retrieve("Marlin", mode="dense", top_k=50)
        assert hits.passages and {h.passage.id for h in hits.passages} <= {p["id"] for p in kept}
        assert not [p for p in memory_a.store.phrases_by_name(["y" * 10_000])]
        a_before = view(memory_a)

        for label in BAD_IDENTIFIERS:
            with pytest.raises(InputError, match="label") as caught:
                memory_a.link(label, "name")
            assert repr(label) in str(caught.value)
        for prop in BAD_IDENTIFIERS:
            with pytest.raises(InputError, match="property") as caught:
                memory_a.link("Customer", prop)
            assert repr(prop) in str(caught.value)
        for label in OWN_LABELS:
            with pytest.raises(InputError, match="own labels"):
                memory_a.link(label, "name")
        with pytest.raises(InputError, match="label"):
            memory_a.unlink("Customer`) DETACH DELETE n //")
        assert view(memory_a) == a_before  # refusing them changed nothing

        gone = memory_a.delete(["shared-id", "p1", "}) MATCH (n) DETACH DELETE n //"])
        assert sorted(gone.passages) == ["shared-id", "}) MATCH (n) DETACH DELETE n //"]
        assert gone.missing == ["p1"]

    with open_memory(b) as memory_b:
        assert view(memory_b) == b_before
    assert raw(b) == b_raw
