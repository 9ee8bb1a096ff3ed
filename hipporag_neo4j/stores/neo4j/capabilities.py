"""What the server offers (Neo4j version and edition, GDS, APOC, vector indexes) and what the store
does with it. :func:`decide` is pure, so every version combination is unit-tested; :func:`detect` asks
the server once at ``open()``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from hipporag_neo4j.errors import StoreError
from hipporag_neo4j.stores.neo4j.engines.gds import LINEAR_MAX_SEEDS
from hipporag_neo4j.stores.neo4j.runner import CypherRunner

PprEngineName = Literal["gds-weighted", "gds-linear", "aura", "local"]
VectorQueryForm = Literal["procedure", "search"]
RequestedEngine = Literal["auto", "gds", "aura", "local"]

#: ``CREATE VECTOR INDEX`` (the Cypher command; 5.11-5.14 only had a procedure) came in 5.15; dynamic labels
#: (``SET n:$(...)``), with which nodes join their embedding dimension's vector index, in 5.26.
MIN_NEO4J_VECTOR_INDEX = (5, 15)
MIN_NEO4J_DYNAMIC_LABELS = (5, 26)
#: ``db.index.vector.queryNodes`` is deprecated from here on in favour of Cypher 25 ``SEARCH``.
SEARCH_CLAUSE_FROM = (2026, 4)
#: Cypher projection as an aggregation function, ``gds.graph.project(...)`` in a ``WITH``.
MIN_GDS_CYPHER_AGGREGATION = (2, 4)
#: ``sourceNodes: [[node, weight], ...]`` (Neo4j 2025.04+).
MIN_GDS_WEIGHTED_SOURCES = (2, 17)

#: The setting that lets GDS procedures leave the sandbox, and its Docker environment variable (the
#: image's entrypoint maps ``_`` to ``.`` and ``__`` to ``_``).
UNRESTRICTED_SETTING = "dbms.security.procedures.unrestricted"
UNRESTRICTED_ENV = "NEO4J_dbms_security_procedures_unrestricted"
ALLOWLIST_SETTING = "dbms.security.procedures.allowlist"

GdsStatus = Literal["absent", "restricted", "too-old", "ok"]

SCORES_NOTE = (
    "GDS scores are divided by their sum: they then equal the in-process engine's (GDS dampingFactor "
    "is igraph's damping; a phrase without edges keeps its mass in both up to that normalisation); seeds "
    "are normalised to sum 1 first, because GDS's tolerance is absolute"
)


#: ``neo4j.ppr_engine=auto`` on a server with usable GDS runs PPR in process (``local``) while the
#: namespace's phrase graph has at most this many RELATION + SYNONYM edges and its in-process copy fits the
#: client memory budget, and with GDS above. It is the largest namespace at which both engines were
#: measured and the in-process engine was the faster in every retrieval mode: the scale suite's M on
#: Neo4j 2026.01.4 + GDS 2.26.0 (366,710 edges; warm p50 ``hipporag2`` 149 ms
#: against 1,527 ms with ``gds-weighted``, ``hipporag`` 147 against 1,829 ms, load ~5;
#: ``benchmarks/results/scale_suite_M_neo4j_latest.md``). S (86,301 edges, Neo4j 5.26 + GDS 2.13) had
#: ``local`` faster too (13.8 against 15.6 ms, 19.3 against 218.8 ms); the 5.26 build of M (674,576 edges)
#: has ``local`` figures only. See :func:`auto_engine`.
AUTO_LOCAL_MAX_EDGES = 366_710
#: What the ``local`` engine's copy of a namespace takes in a client process (``docs/sizing.md``, "Which
#: PageRank engine"): a float32 vector of ``dim`` values for every phrase, fact and passage, plus
#: :data:`COPY_BYTES_PER_ROW` for each of them besides its vector (ids, names and texts, the index from ids
#: to rows, what the read over Bolt leaves held) and :data:`COPY_BYTES_PER_EDGE` per RELATION/SYNONYM
#: edge. Fitted by least squares on the RSS of the scale suite's new client processes that read a namespace
#: over Bolt and answered two queries (``local`` engine; XS and S on 5.26, S and M on both pairs: five
#: namespaces of 4,212 to 245,518 rows and 8,446 to 674,576 edges): RSS = 230 MiB (the process without a
#: namespace, not the copy, left out here) + rows x (384 x 4 + 3,621 B) + edges x 457 B, every namespace
#: within 5 MiB; the two figures are rounded up. One figure per edge alone cannot fit: the two M
#: namespaces have the same rows and 366,710 against 674,576 edges, and held 1,598 against 1,732 MiB.
COPY_BYTES_PER_VALUE = 4
COPY_BYTES_PER_ROW = 3_700
COPY_BYTES_PER_EDGE = 500


def copy_estimate_mb(phrases: int, edges: int, facts: int = 0, passages: int = 0, dim: int = 0) -> float:
    """The client memory (MiB) the ``local`` engine's copy of a namespace is estimated to take: for each
    phrase, fact and passage its ``dim``-dimensional float32 vector and :data:`COPY_BYTES_PER_ROW`, plus
    :data:`COPY_BYTES_PER_EDGE` per graph edge (``dim`` 0: no embedding model yet, so no vectors)."""
    rows = phrases + facts + passages
    return (rows * (dim * COPY_BYTES_PER_VALUE + COPY_BYTES_PER_ROW) + edges * COPY_BYTES_PER_EDGE) / 2**20


def auto_engine(
    gds_engine: PprEngineName,
    edges: int,
    phrases: int = 0,
    budget_mb: int | None = None,
    *,
    facts: int = 0,
    passages: int = 0,
    dim: int = 0,
) -> tuple[PprEngineName, str]:
    """The engine ``auto`` runs for a namespace of ``phrases`` phrases, ``facts`` facts, ``passages``
    passages with ``dim``-dimensional vectors and ``edges`` RELATION + SYNONYM edges when the server offers
    ``gds_engine``, and why. A copy estimated (:func:`copy_estimate_mb`) above the client memory budget
    ``budget_mb`` (``neo4j.client_memory_budget_mb``; None: no budget) goes to GDS whatever its speed:
    every client process (each CLI call, each ``serve`` worker) would hold it. Below that, by time: the
    scale suite measured the in-process engine faster than the server's GDS engine up to
    :data:`AUTO_LOCAL_MAX_EDGES` edges (no Bolt round trip; a push from the seeds touches what they reach,
    where GDS's PageRank passes over the whole projection); above it, where nothing was measured, the
    server's GDS engine runs."""
    if gds_engine not in ("gds-weighted", "gds-linear"):
        return gds_engine, f"PPR: {gds_engine} (no GDS engine to weigh)"
    need = copy_estimate_mb(phrases, edges, facts, passages, dim)
    if budget_mb is not None and need > budget_mb:
        return gds_engine, (
            f"PPR: auto runs {gds_engine}: the namespace has {edges:,} graph edges and {phrases:,} phrases, "
            f"{facts:,} facts and {passages:,} passages with vectors: its in-process copy would take about "
            f"{need:,.0f} MiB in every client process, more than neo4j.client_memory_budget_mb={budget_mb:,}"
        )
    if edges <= AUTO_LOCAL_MAX_EDGES:
        fits = (
            f"; its copy, about {need:,.0f} MiB, fits neo4j.client_memory_budget_mb={budget_mb:,}"
            if budget_mb
            else ""
        )
        return "local", (
            f"PPR: auto runs in process: the namespace has {edges:,} graph edges, at most "
            f"{AUTO_LOCAL_MAX_EDGES:,}, where the in-process engine measured faster than GDS{fits} "
            "(neo4j.ppr_engine=gds forces GDS)"
        )
    return gds_engine, (
        f"PPR: auto runs {gds_engine}: the namespace has {edges:,} graph edges, more than "
        f"{AUTO_LOCAL_MAX_EDGES:,} (the largest size at which the in-process engine was measured faster)"
    )


def gds_concurrency(setting: int | None, processors: int | None) -> int:
    """The threads of each GDS PageRank call: ``neo4j.gds_concurrency`` (unset: 1, measured fastest for
    per-query PageRank, ``benchmarks/results/gds_pagerank.md``), never more than the server's processors."""
    wanted = setting or 1
    return max(1, min(wanted, processors)) if processors else wanted


def parse_version(text: str) -> tuple[int, ...]:
    """``"5.26.0"`` -> (5, 26, 0); ``"2025.04.0"`` -> (2025, 4, 0); ``"5.27-aura"`` -> (5, 27)."""
    numbers = re.findall(r"\d+", text.split("-", 1)[0])
    if not numbers:
        raise ValueError(f"not a version: {text!r}")
    return tuple(int(n) for n in numbers)


@dataclass(frozen=True)
class Neo4jCapabilities:
    """What ``doctor`` shows for a Neo4j store."""

    neo4j_version: str
    edition: str
    gds_version: str | None
    apoc_version: str | None
    vector_index: bool
    ppr_engine: PprEngineName
    vector_query: VectorQueryForm
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # non-empty: open() raises CapabilityError
    gds_status: GdsStatus = "absent"
    #: The notes that say why ``ppr_engine`` runs (also in ``notes``, first).
    ppr_notes: list[str] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        return not self.problems


def gds_status_of(gds_version: str | None, restricted: bool) -> GdsStatus:
    if gds_version is None and not restricted:
        return "absent"
    if restricted:
        return "restricted"
    assert gds_version is not None
    return "ok" if parse_version(gds_version) >= MIN_GDS_CYPHER_AGGREGATION else "too-old"


def _choose_engine(
    gds_version: str | None,
    status: GdsStatus,
    requested: RequestedEngine,
    notes: list[str],
    problems: list[str],
    aura_problem: str | None = None,
    on_aura: bool = False,
) -> PprEngineName:
    if requested == "aura":
        if aura_problem:
            problems.append(aura_problem)
        notes.append(
            "PPR: an Aura Graph Analytics session (neo4j.ppr_engine=aura), one per database and namespace, "
            "billed while it runs: sized by neo4j.aura.session_memory or estimated for PageRank, expires "
            "after neo4j.aura.session_ttl_minutes idle; the graph is read from Neo4j once per graph version "
            "and constructed in the session"
        )
        return "aura"
    if requested == "local":
        notes.append("PPR: in process over the graph read from Neo4j (neo4j.ppr_engine=local)")
        return "local"
    if status == "absent":
        if on_aura:
            message = (
                "this Aura instance has no GDS plugin (AuraDB Free has none; Professional only with the "
                "Graph Analytics plugin enabled; Business Critical and Virtual Dedicated Cloud serve GDS "
                "through Aura Graph Analytics sessions instead)"
            )
        else:
            message = (
                "the Graph Data Science plugin is not installed (or not loaded: when "
                f"{ALLOWLIST_SETTING} is set it must include gds.*; Community needs NEO4J_PLUGINS="
                "'[\"graph-data-science\"]' in Docker)"
            )
        if requested == "gds":
            problems.append(f"neo4j.ppr_engine=gds but {message}")
        notes.append(
            f"PPR: no GDS ({message}): runs in process over the graph read from Neo4j, cached per graph "
            "version"
        )
        if on_aura:
            notes.append(
                "Aura Graph Analytics sessions (AuraDB Professional, Business Critical, Virtual Dedicated "
                "Cloud; not Free) can run PPR instead with neo4j.ppr_engine=aura, the [aura] extra and Aura "
                "API credentials; auto never starts one, as sessions are billed while they run"
            )
        return "local"
    if status == "restricted":
        message = (
            f"GDS {gds_version or '(version unknown)'} is installed but its procedures may not run: add "
            f"gds.* to {UNRESTRICTED_SETTING} in neo4j.conf (Docker: {UNRESTRICTED_ENV}=gds.*) and restart"
        )
        if requested == "gds":
            problems.append(message)
        notes.append(f"PPR: {message}; runs in process over the graph read from Neo4j meanwhile")
        return "local"
    assert gds_version is not None
    gds = parse_version(gds_version)
    if status == "too-old":
        message = f"GDS {gds_version} predates Cypher aggregation projections (needs 2.4+)"
        if requested == "gds":
            problems.append(message)
        notes.append(f"PPR: {message}; runs in process over the graph read from Neo4j")
        return "local"
    if gds >= MIN_GDS_WEIGHTED_SOURCES:
        notes.append(
            f"PPR: GDS {gds_version} gds.pageRank.stream with weighted sourceNodes, one run per query "
            "(phrase and passage seeds together for HippoRAG 2)"
        )
        engine: PprEngineName = "gds-weighted"
    else:
        notes.append(
            f"PPR: GDS {gds_version} takes only unweighted sourceNodes (weights need 2.17+): one run per "
            "seed, summed by seed weight (PPR is linear in its reset vector, so this is exact); a query "
            f"with more than {LINEAR_MAX_SEEDS} seeds (HippoRAG 2's passage seeds) runs in process "
            "instead, same scores"
        )
        engine = "gds-linear"
    notes.append("PPR: " + SCORES_NOTE)
    notes.append(
        "GDS projections (phrase graph; with Passage nodes for HippoRAG 2): versioned per namespace and "
        "graph version, kept warm, re-projected after writes, dropped on close by the process that made them"
    )
    return engine


def is_aura(neo4j_version: str, uri: str | None = None) -> bool:
    """An Aura instance: its version carries ``-aura``, or its URI is on ``databases.neo4j.io``."""
    host = (uri or "").split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0].lower()
    return "aura" in neo4j_version.lower() or host.endswith(".databases.neo4j.io")


def decide(
    neo4j_version: str,
    edition: str,
    gds_version: str | None,
    apoc_version: str | None,
    requested: RequestedEngine = "auto",
    gds_restricted: bool = False,
    aura_problem: str | None = None,
    uri: str | None = None,
) -> Neo4jCapabilities:
    """The store's plan for this server. ``gds_restricted``: GDS is installed but its procedures fail
    to run (sandboxed: not in dbms.security.procedures.unrestricted). ``uri`` only tells Aura apart."""
    notes: list[str] = []
    problems: list[str] = []
    server = parse_version(neo4j_version)
    vector_index = server >= MIN_NEO4J_VECTOR_INDEX
    if not vector_index:
        problems.append(f"Neo4j {neo4j_version} has no CREATE VECTOR INDEX (needs 5.15+; this store 5.26+)")
    elif server < MIN_NEO4J_DYNAMIC_LABELS:
        problems.append(
            f"Neo4j {neo4j_version} has no dynamic labels (SET n:$(...)), with which nodes join their "
            "embedding dimension's vector index: this store needs Neo4j 5.26+"
        )
    vector_query: VectorQueryForm = "search" if server >= SEARCH_CLAUSE_FROM else "procedure"
    if vector_query == "search":
        notes.append("vector search: Cypher 25 SEARCH clause (db.index.vector.queryNodes is deprecated here)")
    else:
        notes.append("vector search: db.index.vector.queryNodes, over-fetched and filtered on namespace")
    if edition.lower() == "community":
        notes.append("Community Edition: embeddings stored as LIST<FLOAT> properties")
    status = gds_status_of(gds_version, gds_restricted)
    ppr_notes: list[str] = []
    on_aura = is_aura(neo4j_version, uri)
    engine = _choose_engine(gds_version, status, requested, ppr_notes, problems, aura_problem, on_aura)
    notes[:0] = ppr_notes  # why the engine runs comes first
    notes.append(
        f"APOC {apoc_version} installed (not needed)" if apoc_version else "APOC not installed (not needed)"
    )
    return Neo4jCapabilities(
        neo4j_version=neo4j_version,
        edition=edition,
        gds_version=gds_version,
        apoc_version=apoc_version,
        vector_index=vector_index,
        ppr_engine=engine,
        vector_query=vector_query,
        notes=notes,
        problems=problems,
        gds_status=status,
        ppr_notes=ppr_notes,
    )


def _is_sandboxed(error: StoreError) -> bool:
    text = str(error)
    return any(m in text for m in ("sandboxed", "ProcedureRegistrationFailed", UNRESTRICTED_SETTING))


def detect(
    runner: CypherRunner,
    requested: RequestedEngine = "auto",
    aura_problem: str | None = None,
    uri: str | None = None,
) -> Neo4jCapabilities:
    """Ask the server for its version, edition and plugins, then :func:`decide`.

    GDS counts as installed when ``gds.version`` is a listed function; it is usable when a GDS procedure
    runs (``server_gds_probe``). A GDS left out of dbms.security.procedures.unrestricted is listed but
    fails with ProcedureRegistrationFailed ("... is unavailable because it is sandboxed")."""
    components = runner.read("server_components")
    kernels = [c for c in components if c["name"] == "Neo4j Kernel"] or components
    if not kernels or not kernels[0]["versions"]:
        raise StoreError("dbms.components() returned no Neo4j version")
    kernel = kernels[0]
    plugins = {row["name"] for row in runner.read("server_plugins")}
    gds_version: str | None = None
    restricted = False
    if "gds.version" in plugins:
        try:
            gds_version = str(runner.read("server_gds_version")[0]["version"])
            runner.read("server_gds_probe")
        except StoreError as exc:
            if not _is_sandboxed(exc):
                raise
            restricted = True
    apoc_version = runner.read("server_apoc_version")[0]["version"] if "apoc.version" in plugins else None
    return decide(
        str(kernel["versions"][0]),
        str(kernel["edition"]),
        gds_version,
        apoc_version,
        requested,
        gds_restricted=restricted,
        aura_problem=aura_problem,
        uri=uri,
    )


def server_processors(runner: CypherRunner) -> int | None:
    """The processors GDS sees on the server (read when a GDS engine is made); None when GDS does not say
    (or the call is not allowed)."""
    try:
        rows = runner.read("server_gds_processors")
    except StoreError:
        return None
    return int(rows[0]["processors"]) if rows and rows[0]["processors"] is not None else None
