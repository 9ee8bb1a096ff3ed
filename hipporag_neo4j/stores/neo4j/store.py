"""The Neo4j implementation of :class:`hipporag_neo4j.stores.base.GraphStore`.

Graph model and semantics are those of ``stores/base.py``; every node carries ``namespace`` and every
statement filters on it, so several knowledge bases share one database without touching each other or
the user's own nodes. All Cypher is in ``cypher/*.cypher``; this class only sequences it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import shutil
from collections.abc import Iterable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import neo4j
import numpy as np
from neo4j.exceptions import DriverError, Neo4jError

from hipporag_neo4j.common.text import passage_content
from hipporag_neo4j.errors import CapabilityError, ConfigError, StoreError
from hipporag_neo4j.models import Passage, PassageInfo, StoreStats
from hipporag_neo4j.settings import Neo4jSettings
from hipporag_neo4j.stores.base import (
    SCHEMA_VERSION,
    DeleteReport,
    DropReport,
    EmbeddedKind,
    FactHit,
    GraphEdge,
    GraphJoin,
    GraphNode,
    GraphNodeKind,
    Matrix,
    Neighbourhood,
    PassageRecord,
    PassageScore,
    PhraseHit,
    PhraseRecord,
    ReembedState,
    StoreMeta,
    SynonymEdge,
    Vector,
    WriteResult,
    check_no_reembed,
    chunks_of_parents,
)
from hipporag_neo4j.stores.memory.vector_index import VectorSearch
from hipporag_neo4j.stores.neo4j import copy_cache, explore, ingest, schema, vector_search
from hipporag_neo4j.stores.neo4j.aura import AuraSessions, SessionManager, aura_problem, session_name
from hipporag_neo4j.stores.neo4j.capabilities import (
    Neo4jCapabilities,
    auto_engine,
    detect,
    gds_concurrency,
    server_processors,
)
from hipporag_neo4j.stores.neo4j.captions import backfill_captions
from hipporag_neo4j.stores.neo4j.client_copy import ClientCopy, State
from hipporag_neo4j.stores.neo4j.cypher import safe_identifier
from hipporag_neo4j.stores.neo4j.driver import open_driver
from hipporag_neo4j.stores.neo4j.engines import AuraPpr, PprEngine, make_engine, read_graph_version
from hipporag_neo4j.stores.neo4j.projection import ProjectionCatalog, ProjectionKind, namespace_prefix
from hipporag_neo4j.stores.neo4j.runner import CypherRunner, CypherTransaction, Record
from hipporag_neo4j.stores.neo4j.view import Neo4jView

log = logging.getLogger(__name__)

#: Nodes deleted per transaction when a namespace is dropped.
DROP_BATCH = 10_000
#: Relationships per transaction of ``drop_namespace``, deleted before the nodes: 10,000 nodes of an M
#: namespace with all their relationships passed the server's 512 MiB of transaction memory; 50,000
#: relationships took 0.7-0.9 s a transaction there.
DROP_RELATIONSHIP_BATCH = 50_000
#: Tries of stats() for counts no writer's commit straddled (then it gives the last counts it read).
STATS_ATTEMPTS = 20


def _run_statement(name: str, tx: CypherTransaction, **params: Any) -> list[Record]:
    """One statement in ``tx`` (``functools.partial`` of it is a transaction function of the runner)."""
    return tx.run(name, **params)


class Neo4jStore:
    """A HippoRAG knowledge graph in one namespace of a Neo4j database. The constructor does no I/O."""

    backend = "neo4j"

    def __init__(
        self,
        settings: Neo4jSettings,
        *,
        driver: neo4j.Driver | None = None,
        aura_sessions: SessionManager | None = None,
        vector_search: VectorSearch | None = None,
    ) -> None:
        self.settings = settings
        #: exact scans or the IVF index for the copy's large matrices (``store.vector_search``)
        self.vector_search = vector_search or VectorSearch()
        self.namespace = safe_identifier(settings.namespace, "neo4j.namespace")
        self.database = safe_identifier(settings.database, "neo4j.database")
        self._driver = driver
        self._owns_driver = driver is None
        self._runner: CypherRunner | None = None
        self._caps: Neo4jCapabilities | None = None
        self._engine: PprEngine | None = None
        self._catalogs: dict[tuple[ProjectionKind, GraphJoin | None], ProjectionCatalog] = {}
        self._meta: StoreMeta | None = None
        self._aura_sessions = aura_sessions
        self._indexed_dims: set[int] = set()
        self._copy: ClientCopy | None = None
        #: why neo4j.ppr_engine=auto runs the engine it runs (set on the first PPR, with GDS usable)
        self.auto_reason: str | None = None
        self._database_id: str | None = None  # db.info() id, to tell a restart from another database
        self._outages_seen = 0  # the runner's count of unreachable-server failures last looked at
        #: the stamp and parts of the copy last loaded from or written to the on-disk cache
        self._cached: tuple[dict[str, Any], tuple[str, ...]] | None = None
        self._copy_created: str | None = None

    # --- connection ---------------------------------------------------------------------------
    @property
    def runner(self) -> CypherRunner:
        if self._runner is None:
            if self._driver is None:
                if not self.settings.uri:
                    raise ConfigError("neo4j.uri (HIPPORAG_NEO4J_URI) is not set")
                auth = (self.settings.user, self.settings.password.get_secret_value())
                try:
                    self._driver = open_driver(
                        self.settings.uri, auth, warn_notifications=self.settings.warn_notifications
                    )
                    self._driver.verify_connectivity()
                except (Neo4jError, DriverError, ValueError) as exc:
                    self._driver = None
                    raise StoreError(f"cannot connect to Neo4j at {self.settings.uri}: {exc}") from exc
            self._runner = CypherRunner(
                self._driver,
                self.database,
                batch_size=self.settings.batch_size,
                max_retries=self.settings.max_retries,
                server=self.settings.uri,
            )
        return self._runner

    @property
    def copy(self) -> ClientCopy:
        """The namespace held in process per graph version (client_copy.py): the local engine's graph,
        and the vectors when ``vector_search`` is ``client``."""
        if self._copy is None:
            self._database_id = self._read_database_id()  # what the copy is valid for (_after_outage)
            self._copy = ClientCopy(self.runner, self.namespace, self.vector_search)
            if self.settings.copy_cache:
                self._copy.index_dir = self._copy_index_dir()  # trained once, not per process
                self._restore_copy(self._copy)
        return self._copy

    # --- the copy on local disk (copy_cache.py) ---------------------------------------------------------
    def _copy_file(self) -> Path:
        root = (
            Path(self.settings.copy_cache_dir) if self.settings.copy_cache_dir else copy_cache.default_dir()
        )
        return copy_cache.cache_file(root, self._database_id or "", self.database, self.namespace)

    def _copy_index_dir(self) -> Path:
        """Where the copy's IVF indexes (large namespaces) persist: beside its file, in the owner-only
        folder of the copies (the centroids are means of your vectors)."""
        path = self._copy_file().with_suffix(".ivf")
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        return path

    def _copy_stamp(self) -> dict[str, Any] | None:
        """The namespace's stamp now (its current graph version); None without metadata or without the
        time it was made (which tells a namespace made again from the one a file was written for)."""
        rows = self.runner.read("meta_read", namespace=self.namespace)
        if not rows or not rows[0].get("created_at"):
            return None
        row = rows[0]
        state = State(
            int(row["graph_version"]),
            str(row["embedding_model"]),
            int(row["embedding_dim"]),
        )
        created = str(row["created_at"])
        return copy_cache.stamp(self._database_id or "", self.database, self.namespace, state, created)

    def _restore_copy(self, copy: ClientCopy) -> None:
        """Load the copy from the on-disk cache when its stamp is the namespace's current one."""
        stamped = self._copy_stamp()
        if stamped is None:
            return
        self._copy_created = stamped["created_at"]  # the namespace the copy reads (save_copy checks it)
        view = copy_cache.load(self._copy_file(), stamped)
        if view is not None:
            state = State(view.version, str(stamped["embedding_model"]), int(stamped["embedding_dim"]))
            if copy.restore(state, view):
                self._cached = (stamped, tuple(copy_cache.held_parts(view)))

    def save_copy(self) -> bool:
        """Write the copy held to the on-disk cache (``close`` does, with ``neo4j.copy_cache``) when it is
        of the namespace's current graph version (an older one would replace a file another process may
        have written at the current one) and that version with those parts is not written already; True
        when written."""
        held = self._copy.held() if self._copy is not None else None
        if held is None:
            return False
        state, view = held
        stamped = self._copy_stamp()
        if (
            stamped is None
            or stamped["graph_version"] != state.version  # written since: a file nobody could use
            or stamped["created_at"] != self._copy_created  # dropped and made again since
            or (stamped["embedding_model"], stamped["embedding_dim"]) != (state.model, state.dim)
        ):
            return False
        parts = tuple(copy_cache.held_parts(view))
        if self._cached is not None and self._cached[0] == stamped and set(parts) <= set(self._cached[1]):
            return False
        if not copy_cache.save(self._copy_file(), stamped, view):
            return False
        self._cached = (stamped, parts)
        return True

    def view(self) -> Neo4jView:
        """One query's reads at one graph version: the version and model are read on its first read
        (``client_state``, one round trip) and every later read of the view uses them (see
        :class:`~.view.Neo4jView`)."""
        self._ready()
        return Neo4jView(self, self.copy.reading())

    def _client_vectors(self) -> bool:
        return self.settings.vector_search == "client"

    def capabilities(self) -> Neo4jCapabilities:
        """Server version and edition, GDS, APOC, vector indexes, and the store's plan (for ``doctor``).
        Checked again after the server was unreachable (:meth:`_after_outage`)."""
        if self._runner is not None and self._runner.outages != self._outages_seen:
            self._after_outage()
        if self._caps is None:
            requested = self.settings.ppr_engine
            problem = None
            if requested == "aura" and self._aura_sessions is None:
                problem = aura_problem(self.settings)
            self._caps = detect(self.runner, requested, aura_problem=problem, uri=self.settings.uri)
        return self._caps

    def _read_database_id(self) -> str:
        rows = self.runner.read("server_database_id")
        return str(rows[0]["id"]) if rows else ""

    def _after_outage(self) -> None:
        """The server could not be reached since the last look: it may have restarted (its GDS projections
        died with its memory; its plugins may differ) or be another database now. Re-check instead of
        trusting this process's memory: projections are looked up in GDS's catalog again (made anew when
        gone), the capabilities detected again (a new engine when they changed), and the in-process copy
        kept only when the database's id is the one seen before (the same data at the same graph
        version: committed writes survive a restart, uncommitted ones never bumped the version)."""
        database_id = self._read_database_id() if self._copy is not None else None
        assert self._runner is not None  # still unreachable: the read above raised; checked next time
        self._outages_seen = self._runner.outages
        for catalog in self._catalogs.values():
            catalog.forget()  # the next use asks GDS's catalog, and projects again if it is gone
        before, self._caps = self._caps, None
        if database_id is not None and database_id != self._database_id:
            self._copy = None  # another database: read it anew (the next `copy` records its id)
            self._engine = None
            self._catalogs = {}
            self._indexed_dims.clear()
        after = self.capabilities()
        if before is not None and after.ppr_engine != before.ppr_engine:
            self._engine = None

    def _ready_meta(self) -> StoreMeta:
        self._ready()
        assert self._meta is not None
        return self._meta

    def _ready(self) -> Neo4jCapabilities:
        if self._meta is None:
            raise StoreError("the Neo4j store is not open: call open() first")
        return self.capabilities()

    # --- lifecycle and metadata ---------------------------------------------------------------
    def open(self, embedding_model: str, embedding_dim: int) -> StoreMeta:
        caps = self.capabilities()
        if caps.problems:
            raise CapabilityError("Neo4j cannot host this store: " + "; ".join(caps.problems))
        # with vector_search = client the namespace's nodes stay out of the vector indexes (no query uses
        # them, and inserting into them is most of a write's cost); index puts them in (schema.py)
        meta = schema.ensure_schema(
            self.runner,
            self.namespace,
            embedding_model,
            embedding_dim,
            index_vectors=not self._client_vectors(),
        )
        check_no_reembed(self.reembed_state(), f"namespace {self.namespace!r}")
        backfill_captions(self.runner, self.namespace)  # passages and facts written before captions
        self._meta = meta
        return meta

    def meta(self) -> StoreMeta | None:
        return schema.read_meta(self.runner, self.namespace)

    def for_readers(self) -> Neo4jStore:
        return self  # every read is a server transaction at one graph version per query

    def close(self) -> None:
        """Drop the GDS projections this process made (they would hold GDS heap until a restart), then
        close the driver if the store opened it. Never raises for a projection that cannot be dropped."""
        if isinstance(self._engine, AuraPpr):
            with contextlib.suppress(StoreError):
                self._engine.close()
        if self._runner is not None and self._copy is not None and self.settings.copy_cache:
            try:
                self.save_copy()
            except (OSError, StoreError) as exc:  # a cache is never worth failing a close for
                log.warning("could not write the client copy cache: %s", exc)
        if self._runner is not None:
            for catalog in self._catalogs.values():
                # unreachable server or GDS gone: the projection dies with the server
                with contextlib.suppress(StoreError):
                    catalog.close()
        if self._driver is not None and self._owns_driver:
            self._driver.close()
            self._driver = None
        self._runner = None
        self._outages_seen = 0
        self._copy = None
        self._cached = None
        self._copy_created = None
        self._engine = None
        self._catalogs = {}
        self._meta = None

    # --- indexing -----------------------------------------------------------------------------
    def _existing(self, query: str, ids: Sequence[str]) -> set[str]:
        if not ids:
            return set()
        rows = self.runner.read_batched(query, "ids", list(dict.fromkeys(ids)), namespace=self.namespace)
        return {str(row["id"]) for row in rows}

    def existing_passages(self, ids: Sequence[str]) -> set[str]:
        return self._existing("read_existing_passages", ids)

    def missing_phrases(self, ids: Sequence[str]) -> set[str]:
        return set(ids) - self._existing("read_existing_phrases", ids)

    def missing_facts(self, ids: Sequence[str]) -> set[str]:
        return set(ids) - self._existing("read_existing_facts", ids)

    def write_passages(
        self, phrases: Sequence[PhraseRecord], passages: Sequence[PassageRecord]
    ) -> WriteResult:
        """One write transaction, or several when the rows would not fit one (``ingest.transaction_groups``:
        each whole, so a re-run after an interruption writes the passages not written and nothing twice)."""
        meta = self._ready_meta()
        written: list[str] = []
        phrase_count = fact_count = 0
        for group_phrases, group_passages in ingest.transaction_groups(
            phrases, passages, meta.embedding_dim, ingest.TRANSACTION_ROWS
        ):
            group = self._write_group(meta, group_phrases, group_passages)
            written += group.passages
            phrase_count += group.phrases
            fact_count += group.facts
        return WriteResult(written, phrase_count, fact_count)

    def _write_group(
        self, meta: StoreMeta, phrases: Sequence[PhraseRecord], passages: Sequence[PassageRecord]
    ) -> WriteResult:
        outcome = ingest.WriteOutcome()

        def work(tx: CypherTransaction) -> list[str]:
            # the nodes get their dimension's label (unless the namespace's nodes stay out of the vector
            # indexes) and the phrases their "synonyms pending" mark in the statements that write them
            # (write_phrases, write_passages, write_facts)
            return ingest.write_passages(
                tx, self.namespace, phrases, passages, outcome, dim=meta.embedding_dim
            )

        written = self.runner.write(work)
        # counts from the attempt that committed (a retried transaction runs ``work`` again from the start)
        result = WriteResult(written, outcome.phrases, outcome.facts)
        if outcome.version is not None and (self._copy is not None or self._client_vectors()):
            # the in-process copy brought forward by the rows written, instead of read again; the
            # vectors written are kept even when it is not at the version before (the first write of
            # this process): the synonym step and the first query do not read them back
            self.copy.advance(
                outcome.version,
                phrases,
                passages,
                written,
                relation_edges=outcome.relation_edges,
                synonyms=[],
                model=(meta.embedding_model, meta.embedding_dim),
            )
        return result

    def pending_synonym_phrases(self, limit: int) -> list[PhraseRecord]:
        """The phrases marked "synonyms pending" (ids and names from the server), with their vectors from
        the in-process copy: those this process wrote are held (``write_passages``), the others are read
        (``client_vectors_phrase``) and, with ``vector_search = client``, held from then on."""
        rows = self.runner.read("synonyms_pending_read", namespace=self.namespace, limit=limit)
        if not rows:
            return []
        vectors = self.copy.phrase_vectors([str(r["id"]) for r in rows], keep=self._client_vectors())
        # a phrase deleted since the first read has no vector: nothing to do for it
        return [
            PhraseRecord(str(r["id"]), str(r["name"]), vectors[str(r["id"])])
            for r in rows
            if str(r["id"]) in vectors
        ]

    def nearest_phrases(
        self, vectors: Matrix, top_k: int, min_similarity: float, exclude_ids: Sequence[str] | None = None
    ) -> list[list[PhraseHit]]:
        caps = self._ready()
        if self._client_vectors():
            return self.view().nearest_phrases(vectors, top_k, min_similarity, exclude_ids)
        return vector_search.nearest_phrases(
            self.runner, self.namespace, caps.vector_query, vectors, top_k, min_similarity, exclude_ids
        )

    def write_synonyms(self, edges: Sequence[SynonymEdge], done: Sequence[str] = ()) -> int:
        """The edges in transactions of at most ``ingest.SYNONYM_ROWS``; the "synonyms pending" marks of
        ``done`` are cleared in the last one, so an interruption leaves them set and the next run writes
        the edges again (MERGE: the ones stored stay as they are, the others are added)."""
        self._ready()
        chunks: list[list[SynonymEdge]] = ingest.synonym_chunks(edges, ingest.SYNONYM_ROWS) or [[]]
        created = 0
        for number, chunk in enumerate(chunks):
            clear = list(dict.fromkeys(done)) if number == len(chunks) - 1 else []
            created += self._write_synonym_chunk(chunk, clear)
        return created

    def _write_synonym_chunk(self, edges: Sequence[SynonymEdge], done: Sequence[str]) -> int:
        outcome = ingest.WriteOutcome()

        def work(tx: CypherTransaction) -> int:
            created = ingest.write_synonyms(tx, self.namespace, edges, outcome)
            tx.run_batched("synonyms_pending_clear", "ids", list(done), namespace=self.namespace)
            return created

        created = self.runner.write(work)
        if self._copy is not None and outcome.version is not None:
            self._copy.advance(outcome.version, synonyms=outcome.synonyms)
        return created

    def delete_passages(self, ids: Sequence[str]) -> DeleteReport:
        self._ready()
        return self.runner.write(lambda tx: ingest.delete_passages(tx, self.namespace, ids))

    def drop_namespace(self) -> DropReport:
        """Delete the namespace: its GDS projections (and Aura session), the relationships of its nodes in
        batches of ``DROP_RELATIONSHIP_BATCH`` (SAME_AS links included; your nodes stay), then its nodes in
        batches of ``DROP_BATCH`` with whatever relationship is left (one of yours into them), its
        metadata node last (an interrupted drop is finished by running it again), then the vector indexes
        of its dimension when no other namespace records that dimension. Closes the store."""
        counts = self.stats()  # with the metadata: schema version and dimension are None without it
        recorded = counts.schema_version is not None
        if not recorded and not (counts.passages or counts.phrases or counts.facts):
            self.close()
            return DropReport()
        state = self.reembed_state() if recorded else None
        caps = self.capabilities()
        report = DropReport(removed=counts)
        if caps.gds_version is not None:
            prefix = namespace_prefix(self.database, self.namespace)
            rows = self.runner.read("gds_drop_namespace_graphs", leader=True, prefix=prefix)
            report.projections_dropped = [str(r["dropped"]) for r in rows]
        if self.settings.ppr_engine == "aura":
            with contextlib.suppress(StoreError, CapabilityError):
                self.delete_aura_session()
        # relationships first, then the nodes: each transaction bounded by what it deletes, not by degree
        for statement, limit in (
            ("drop_namespace_relationships", DROP_RELATIONSHIP_BATCH),
            ("drop_namespace_nodes", DROP_BATCH),
        ):
            batch = functools.partial(_run_statement, statement, namespace=self.namespace, limit=limit)
            while True:
                rows = self.runner.write(batch)
                if not rows or not int(rows[0]["deleted"]):
                    break
        self.runner.write(lambda tx: tx.run("drop_namespace_meta", namespace=self.namespace))
        if self.settings.copy_cache:  # its copy on disk goes too (no process could use it any more)
            self._database_id = self._database_id or self._read_database_id()
            self._copy_file().unlink(missing_ok=True)
            shutil.rmtree(self._copy_index_dir(), ignore_errors=True)
        dims = {counts.embedding_dim} if counts.embedding_dim is not None else set()
        if state is not None:
            dims.add(state.embedding_dim)
        report.vector_index_dims_dropped = sorted(
            dim for dim in dims if schema.drop_unused_vector_indexes(self.runner, dim)
        )
        self._indexed_dims.clear()
        self.close()
        return report

    # --- retrieval ----------------------------------------------------------------------------
    def phrases_by_name(self, names: Iterable[str]) -> dict[str, PhraseHit]:
        wanted = list(dict.fromkeys(names))
        if not wanted:
            return {}
        if self._client_vectors():
            return self.view().phrases_by_name(wanted)
        rows = self.runner.read_batched("read_phrases_by_name", "names", wanted, namespace=self.namespace)
        return {
            str(r["name"]): PhraseHit(str(r["id"]), str(r["name"]), 1.0, int(r["passage_count"] or 0))
            for r in rows
        }

    def engine_choice(self) -> tuple[str, str | None]:
        """The PPR engine this namespace's queries run and, when ``neo4j.ppr_engine=auto`` chose it by the
        namespace's size (a server with usable GDS), why (:func:`~.capabilities.auto_engine`). Reads the
        size now; :meth:`ppr_engine` decides once per store object, at its first PPR."""
        caps = self.capabilities()
        if self.settings.ppr_engine == "auto" and caps.ppr_engine in ("gds-weighted", "gds-linear"):
            size = self.runner.read("read_graph_size", namespace=self.namespace)
            row = size[0] if size else {}
            count = {k: int(row.get(k) or 0) for k in ("edges", "phrases", "facts", "passages")}
            meta = self._meta or self.meta()
            return auto_engine(
                caps.ppr_engine,
                count["edges"],
                count["phrases"],
                self.settings.client_memory_budget_mb,
                facts=count["facts"],
                passages=count["passages"],
                dim=meta.embedding_dim if meta else 0,
            )
        return caps.ppr_engine, None

    def ppr_engine(self) -> PprEngine:
        if self._engine is None:
            self._ready()
            name, reason = self.engine_choice()
            if reason is not None:
                self.auto_reason = reason
            self._engine = make_engine(
                name,
                self.runner,
                self.projections,
                self.namespace,
                self.copy,
                aura=self._aura_engine,
                concurrency=(
                    gds_concurrency(self.settings.gds_concurrency, server_processors(self.runner))
                    if name.startswith("gds")
                    else 1
                ),
                top_nodes=self.settings.gds_top_nodes,
            )
        return self._engine

    # --- Aura Graph Analytics ---------------------------------------------------------------------
    def aura_sessions(self) -> SessionManager:
        """The session manager of neo4j.ppr_engine=aura (the graphdatascience client unless injected)."""
        if self._aura_sessions is None:
            self._aura_sessions = AuraSessions(self.settings)
        return self._aura_sessions

    def aura_session_name(self) -> str:
        return session_name(self.database, self.namespace)

    def delete_aura_session(self, name: str | None = None) -> bool:
        """Delete this namespace's session (or the session ``name``) now, instead of leaving it to expire
        by its TTL. False when no such session exists."""
        target = name or self.aura_session_name()
        if target == self.aura_session_name() and isinstance(self._engine, AuraPpr):
            self._engine.session = None
            self._engine.constructed.clear()
        return self.aura_sessions().delete(target)

    def _aura_engine(self) -> AuraPpr:
        aura = self.settings.aura
        return AuraPpr(
            self.copy,
            self.aura_sessions(),
            session=self.aura_session_name(),
            memory=aura.session_memory,
            ttl=timedelta(minutes=aura.session_ttl_minutes),
            fallback_local=aura.fallback_local,
        )

    def projections(
        self, kind: ProjectionKind = "phrases", join: GraphJoin | None = None
    ) -> ProjectionCatalog:
        """The GDS projection catalog of one kind (the phrase graph, or with Passage nodes), plain or
        joined with your graph."""
        if (kind, join) not in self._catalogs:
            self._catalogs[kind, join] = ProjectionCatalog(
                self.runner, self.database, self.namespace, kind, join
            )
        return self._catalogs[kind, join]

    def gds_projections(self) -> list[dict[str, Any]]:
        """The namespace's projections in the GDS catalog with their heap use (``doctor``); empty
        without usable GDS."""
        if self.capabilities().gds_status != "ok":
            return []
        return self.runner.read(
            "gds_graph_memory", leader=True, prefix=namespace_prefix(self.database, self.namespace)
        )

    def index_dense_passage_scores(self, vector: Vector, limit: int) -> list[PassageScore]:
        """Passages by cosine from the server's vector index (``neo4j.vector_search = index``)."""
        caps = self._ready()
        return vector_search.dense_passages(self.runner, self.namespace, caps.vector_query, vector, limit)

    def index_nearest_facts(self, vector: Vector, top_k: int) -> list[FactHit]:
        """Facts by cosine from the server's vector index (``neo4j.vector_search = index``)."""
        caps = self._ready()
        return vector_search.nearest_facts(self.runner, self.namespace, caps.vector_query, vector, top_k)

    def get_passages(self, ids: Sequence[str]) -> dict[str, Passage]:
        return self.copy.read_passages(list(dict.fromkeys(ids))) if ids else {}

    def list_passages(self, after: str, limit: int) -> list[PassageInfo]:
        rows = self.runner.read("list_passages", namespace=self.namespace, after=after, limit=limit)
        return [
            PassageInfo.of(
                str(r["id"]),
                r["title"],
                json.loads(r["metadata_json"]) if r["metadata_json"] else {},
                int(r["chars"] or 0),
            )
            for r in rows
        ]

    def passages_by_parent(self, parent_ids: Sequence[str]) -> dict[str, list[str]]:
        if not parent_ids:
            return {}
        rows = self.runner.read_batched(
            "read_passages_by_parent", "ids", list(dict.fromkeys(parent_ids)), namespace=self.namespace
        )
        return chunks_of_parents(
            (str(r["parent"]), str(r["id"]), json.loads(r["metadata_json"]) if r["metadata_json"] else {})
            for r in rows
        )

    # --- graph explorer (GraphExplorer; the statements are in explore.py) -------------------------
    def search_nodes(self, text: str, limit: int) -> list[GraphNode]:
        return explore.search_nodes(self.runner, self.namespace, text, limit)

    def neighbourhood(self, kind: GraphNodeKind, node_id: str, limit: int) -> Neighbourhood:
        return explore.neighbourhood(self.runner, self.namespace, kind, node_id, limit)

    def edges_among(self, phrase_ids: Sequence[str], passage_ids: Sequence[str]) -> list[GraphEdge]:
        return explore.edges_among(self.runner, self.namespace, phrase_ids, passage_ids)

    def namespaces(self) -> list[str]:
        return explore.namespaces(self.runner)

    def passage_count(self) -> int:
        if self._client_vectors():
            return self.view().passage_count()
        return int(self.runner.read("read_passage_count", namespace=self.namespace)[0]["passages"])

    def _consistent_counts(self) -> Record:
        """``read_stats`` between two reads of the graph version, again until they agree. Neo4j reads are
        READ COMMITTED, so the counts of one statement can straddle a writer's commit (seen live on
        2026.01: a batch's passages not yet counted, its mentions already); every write transaction bumps
        the version first, so equal versions before and after mean no commit in between."""
        counts = None
        for _ in range(STATS_ATTEMPTS):
            before = self.runner.read("meta_graph_version", namespace=self.namespace)
            counts = self.runner.read("read_stats", namespace=self.namespace)[0]
            after = self.runner.read("meta_graph_version", namespace=self.namespace)
            if [r["graph_version"] for r in before] == [r["graph_version"] for r in after]:
                break
        assert counts is not None
        return counts

    def stats(self) -> StoreStats:
        counts = self._consistent_counts()
        meta = self.meta()
        caps = self.capabilities()
        extra: dict[str, Any] = {
            "database": self.database,
            "namespace": self.namespace,
            "neo4j_version": caps.neo4j_version,
            "edition": caps.edition,
            "gds_version": caps.gds_version,
            "ppr_engine": caps.ppr_engine,
            "transient_retries": self.runner.retries,
        }
        if meta is not None:
            extra["graph_version"] = read_graph_version(self.runner, self.namespace)
            # whether the namespace's nodes are in the vector indexes (schema.py: unlabelled with
            # vector_search=client, labelled once opened with index)
            extra["vector_labels"] = schema.read_vector_labels(self.runner, self.namespace)
        return StoreStats(
            backend=self.backend,
            location=f"{self.settings.uri} database={self.database} namespace={self.namespace}",
            passages=int(counts["passages"]),
            phrases=int(counts["phrases"]),
            facts=int(counts["facts"]),
            relation_edges=int(counts["relation_edges"]),
            synonym_edges=int(counts["synonym_edges"]),
            mentions=int(counts["mentions"]),
            embedding_model=meta.embedding_model if meta else None,
            embedding_dim=meta.embedding_dim if meta else None,
            schema_version=meta.schema_version if meta else None,
            extra=extra,
        )

    # --- maintenance --------------------------------------------------------------------------
    def iter_texts(
        self, kind: EmbeddedKind, batch_size: int, after: str = ""
    ) -> Iterator[list[tuple[str, str]]]:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        while True:
            rows = self.runner.read(
                f"read_texts_{kind}", namespace=self.namespace, after=after, limit=batch_size
            )
            if not rows:
                return
            if kind == "passage":
                yield [(str(r["id"]), passage_content(str(r["text"]), r["title"])) for r in rows]
            else:
                yield [(str(r["id"]), str(r["text"])) for r in rows]
            if len(rows) < batch_size:
                return
            after = str(rows[-1]["id"])

    def set_embeddings(self, kind: EmbeddedKind, ids: Sequence[str], vectors: Matrix) -> None:
        """New embeddings (a re-embed); the nodes move to the label, and so the vector indexes, of the
        new dimension (created when this is its first use in the database), unless the namespace's nodes
        stay out of the vector indexes (``vector_labels`` unlabelled)."""
        self._ready()
        dim = int(np.asarray(vectors).shape[1]) if len(ids) else 0
        if dim and dim not in self._indexed_dims:
            schema.ensure_vector_indexes(self.runner, dim)
            self._indexed_dims.add(dim)

        def work(tx: CypherTransaction) -> None:
            labelled = ingest.set_embeddings(tx, self.namespace, kind, ids, vectors)
            if dim and labelled:
                schema.label_embeddings(tx, self.namespace, kind, ids, dim)

        self.runner.write(work)
        if self._copy is not None:
            self._copy.forget_vectors()

    def set_embedding_model(self, embedding_model: str, embedding_dim: int) -> None:
        """Record the new model. Every dimension has its own vector indexes, so other namespaces of the
        database keep theirs; the old dimension's indexes are dropped once no namespace records it."""
        self._ready()
        current = self.meta()
        schema.ensure_vector_indexes(self.runner, embedding_dim)
        self.runner.write(
            lambda tx: tx.run(
                "meta_set_model",
                namespace=self.namespace,
                embedding_model=embedding_model,
                embedding_dim=embedding_dim,
            )
        )
        self._meta = StoreMeta(SCHEMA_VERSION, embedding_model, embedding_dim)
        if current is not None and current.embedding_dim != embedding_dim:
            schema.drop_unused_vector_indexes(self.runner, current.embedding_dim)

    def open_for_reembed(self) -> StoreMeta | None:
        self._meta = self.meta()
        return self._meta

    def reembed_state(self) -> ReembedState | None:
        rows = self.runner.read("meta_reembed_read", namespace=self.namespace)
        text = rows[0]["reembed_state"] if rows else None
        return ReembedState.from_json(str(text)) if text else None

    def set_reembed_state(self, state: ReembedState | None) -> None:
        text = state.to_json() if state is not None else None
        self.runner.write(lambda tx: tx.run("meta_reembed_set", namespace=self.namespace, reembed_state=text))

    def finish_reembed(self, embedding_model: str, embedding_dim: int) -> None:
        """Not one transaction here (the vector indexes are schema); each step is safe to run again."""
        self.set_embedding_model(embedding_model, embedding_dim)

        def work(tx: CypherTransaction) -> None:
            ingest.bump_version(tx, self.namespace)
            tx.run_script("synonyms_reset", namespace=self.namespace)
            tx.run("meta_reembed_set", namespace=self.namespace, reembed_state=None)

        self.runner.write(work)
