"""A process that writes or reads an embedded store through the store API only, so that the code of an
earlier release (on PYTHONPATH) can run it too (tests/integration/test_embedded_migration.py).

    python tests/support/migration_worker.py build STORE        # the synthetic store, printed reads as JSON
    python tests/support/migration_worker.py read STORE         # the reads as JSON
    python tests/support/migration_worker.py upgrade STORE --kill-at copy:states|indexes
    python tests/support/migration_worker.py append STORE       # more passages (some already stored)

``--kill-at`` sends SIGKILL to the process inside the schema upgrade: ``copy:<table>`` before that
table's rows are copied, ``indexes`` after every copy and drop, before the indexes and the commit.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from typing import Any

import numpy as np

from hipporag_neo4j.models import Passage
from hipporag_neo4j.stores.base import FactRecord, PassageRecord, PhraseRecord, SynonymEdge
from hipporag_neo4j.stores.embedded import EmbeddedStore

DIM = 8
MODEL = "test-model"


def vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def phrase(i: int) -> PhraseRecord:
    return PhraseRecord(f"phrase-{i * 7919 % 1000:03d}-{i}", f"name {i}", vec(i))


def records(first: int, n: int) -> tuple[list[PhraseRecord], list[PassageRecord]]:
    """Passages first..first+n-1; passage i mentions phrases i..i+3 (so they recur across passages) and
    states facts between them (some facts recur)."""
    phrases: dict[str, PhraseRecord] = {}
    passages = []
    for i in range(first, first + n):
        names = [phrase(j) for j in range(i, i + 4)]
        for p in names:
            phrases[p.id] = p
        facts = [
            FactRecord(
                f"fact-{(j * 31) % 97:02d}-{j}",
                names[k].id,
                "near",
                names[k + 1].id,
                f"{names[k].name} near {names[k + 1].name}",
                vec(10_000 + j),
            )
            for k, j in ((0, i), (1, i + 1), (2, i + 2))
        ]
        passage = Passage(
            id=f"p-{(i * 13) % 50:02d}-{i}", title=f"T{i}", text=f"passage {i}", metadata={"n": i}
        )
        passages.append(
            PassageRecord(
                passage, vec(20_000 + i), {p.id: 1 + (i + k) % 3 for k, p in enumerate(names)}, facts
            )
        )
    return list(phrases.values()), passages


def build(path: str) -> None:
    store = EmbeddedStore(path)
    store.open(MODEL, DIM)
    for start in range(0, 40, 8):
        phrases, passages = records(start, 8)
        store.write_passages(phrases, passages)
    ids = [phrase(i).id for i in range(0, 43)]  # every phrase written
    edges = [SynonymEdge(ids[i], ids[(i * 5 + 3) % 43], 0.8 + (i % 7) / 50) for i in range(0, 43, 2)]
    store.write_synonyms(edges, done=ids[:30])  # the rest stay pending
    store.delete_passages([records(5, 1)[1][0].passage.id, records(6, 1)[1][0].passage.id, "absent"])
    store.close()


def append(path: str) -> None:
    store = EmbeddedStore(path)
    store.open(MODEL, DIM)
    phrases, passages = records(36, 10)  # 36..39 are stored already
    written = store.write_passages(phrases, passages)
    ids = written if isinstance(written, list) else written.passages  # a list of ids before issue 34
    print(json.dumps({"written": ids}))
    store.close()


def _fields_of_every_release(found: Any) -> str:
    """A neighbourhood as the fields both releases have (a later one added ``totals``)."""
    return repr((found.center, found.nodes, found.edges, found.truncated))


def reads(path: str) -> dict[str, Any]:
    store = EmbeddedStore(path, persist_snapshot=False)
    store.open(MODEL, DIM)
    seeds = {phrase(i).id: 1.0 / (1 + i) for i in (3, 11, 27)}
    # this worker also runs on the package of an older release: its reads as that release made them
    if hasattr(store, "view"):  # issue 34 on: a view of one graph version, walks with WalkParams
        from hipporag_neo4j.stores.base import WalkParams

        reader, walk = store.view(), (WalkParams(0.5, 100, 1e-10),)
    else:
        reader, walk = store, (0.5, 100, 1e-10)
    out: dict[str, Any] = {
        "stats": {k: v for k, v in store.stats().model_dump().items() if k not in ("location", "extra")},
        "graph": [
            [s.passage_id, s.score, s.top_phrases] for s in reader.graph_passage_scores(seeds, *walk, 20, 3)
        ],
        "walk": [
            [s.passage_id, s.score, s.top_phrases]
            for s in reader.passage_node_scores(seeds, {records(8, 1)[1][0].passage.id: 0.5}, *walk, 20, 3)
        ],
        "ppr": sorted(reader.personalized_pagerank(seeds, *walk).items()),
        "facts": [
            [f.id, f.subject_id, f.object_id, f.similarity] for f in reader.nearest_facts(vec(10_005), 5)
        ],
        "near": [
            [[h.id, h.similarity, h.passage_count] for h in hits]
            for hits in store.nearest_phrases(np.stack([vec(4), vec(9)]), 4, -1.0)
        ],
        "by_name": sorted(
            (k, v.id, v.passage_count) for k, v in store.phrases_by_name(["name 3", "name 40", "x"]).items()
        ),
        "pending": [p.id for p in store.pending_synonym_phrases(100)],
        "passages": [p.id for p in store.list_passages("", 100)],
    }
    out["neighbourhood"] = [
        _fields_of_every_release(store.neighbourhood(kind, node, 10))
        for kind, node in (
            ("phrase", phrase(12).id),
            ("phrase", phrase(1).id),
            ("passage", records(9, 1)[1][0].passage.id),
        )
    ]
    out["edges_among"] = repr(
        store.edges_among(
            [phrase(i).id for i in range(8, 20)], [records(i, 1)[1][0].passage.id for i in range(8, 14)]
        )
    )
    out["delete"] = repr(
        store.delete_passages([records(20, 1)[1][0].passage.id, records(21, 1)[1][0].passage.id])
    )
    out["after_delete"] = {
        k: v for k, v in store.stats().model_dump().items() if k not in ("location", "extra")
    }
    store.close()
    return out


def upgrade_and_die(path: str, point: str) -> None:
    from hipporag_neo4j.stores.embedded import migrate

    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    if point.startswith("copy:"):
        table = point.split(":", 1)[1]

        class Dying(dict[str, str]):
            def __getitem__(self, key: str) -> str:
                if key == table:
                    die()
                return super().__getitem__(key)

        migrate._COPY = Dying(migrate._COPY)  # type: ignore[attr-defined]
    else:
        real = migrate.statements

        def statements(script: str) -> list[str]:
            if script == migrate.INDEXES:
                die()
            return real(script)

        migrate.statements = statements  # type: ignore[assignment]
    EmbeddedStore(path).open(MODEL, DIM)
    raise SystemExit("the upgrade finished without reaching the kill point")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("action", choices=("build", "read", "upgrade", "append"))
    parser.add_argument("store")
    parser.add_argument("--kill-at", default="")
    args = parser.parse_args()
    if args.action == "build":
        build(args.store)
    elif args.action == "append":
        append(args.store)
    elif args.action == "upgrade":
        upgrade_and_die(args.store, args.kill_at)
    else:
        json.dump(reads(args.store), sys.stdout)


if __name__ == "__main__":
    main()
