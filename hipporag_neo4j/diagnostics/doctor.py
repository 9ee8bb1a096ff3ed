"""``doctor``: what is configured, what is reachable, and what the store will do with it."""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Callable
from typing import Any

import click

from hipporag_neo4j.errors import EmbeddingError, ModelMismatchError
from hipporag_neo4j.settings import Settings
from hipporag_neo4j.stores.base import SCHEMA_VERSION, StoreMeta, check_meta

Check = dict[str, Any]

#: The widest line ``doctor`` prints; a longer check is broken after each "; " (and within a part
#: longer than this), its later lines indented by :data:`INDENT`.
WIDTH = 100
INDENT = " " * 8


def _check(name: str, fn: Callable[[], tuple[str, str, dict[str, Any]]]) -> Check:
    try:
        status, detail, data = fn()
    except Exception as exc:  # doctor reports every failure instead of stopping at the first
        return {"name": name, "status": "error", "detail": f"{type(exc).__name__}: {exc}"}
    return {"name": name, "status": status, "detail": detail, **({"data": data} if data else {})}


def _store(settings: Settings) -> tuple[str, str, dict[str, Any]]:
    if settings.backend == "neo4j":
        return _neo4j_store(settings)
    from hipporag_neo4j.stores.embedded import EmbeddedStore
    from hipporag_neo4j.stores.embedded.store import DB_FILE

    path = settings.embedded_store_path
    if not (path / DB_FILE).exists():
        return "info", f"embedded store at {path} (empty: created on first index)", {}
    embedded = EmbeddedStore(path)
    try:
        stats = embedded.stats()
    finally:
        embedded.close()
    return (
        "ok",
        f"embedded store at {path}: {stats.passages} passages, {stats.phrases} phrases, "
        f"model {stats.embedding_model} ({stats.embedding_dim}-d)",
        stats.model_dump(),
    )


def _neo4j_store(settings: Settings) -> tuple[str, str, dict[str, Any]]:
    """Server, plugins, the PPR engine and why (with ``auto`` on a server with GDS: the engine this
    namespace's size picks), and the GDS heap the namespace's projections hold."""
    from hipporag_neo4j.stores.neo4j.store import Neo4jStore

    store = Neo4jStore(settings.neo4j)
    try:
        caps = store.capabilities()
        projections = store.gds_projections()
        engine, by_size = store.engine_choice() if not caps.problems else (caps.ppr_engine, None)
    finally:
        store.close()
    data = dataclasses.asdict(caps)
    data["gds_projections"] = projections
    data["ppr_engine_runs"] = engine
    if by_size is not None:
        data["auto_reason"] = by_size
    gds = {
        "absent": "not installed",
        "restricted": f"{caps.gds_version or 'installed'} but its procedures may not run (sandboxed)",
        "too-old": f"{caps.gds_version} (too old: needs 2.4+)",
        "ok": str(caps.gds_version),
    }[caps.gds_status]
    if caps.gds_status == "ok":
        held = ", ".join(f"{p['graph_name']} {p['memory_usage']}" for p in projections)
        gds += f"; projections of this namespace: {held or 'none yet (made by the first query)'}"
    if caps.ppr_engine == "aura":
        aura = settings.neo4j.aura
        data["aura_session"] = {
            "name": store.aura_session_name(),
            "memory": aura.session_memory or "estimated for PageRank at the first query",
            "ttl_minutes": aura.session_ttl_minutes,
        }
        gds += (
            f"; Aura Graph Analytics session {store.aura_session_name()} "
            f"({aura.session_memory or 'memory estimated'}, expires {aura.session_ttl_minutes} min idle)"
        )
    why = "; ".join(n.removeprefix("PPR: ") for n in caps.ppr_notes)
    if by_size is not None:  # the size rule first, then the GDS engine (what runs above the size)
        above = "above that size: " if engine != caps.ppr_engine else ""
        why = f"{by_size.removeprefix('PPR: ')}; each process decides at its first query; {above}{why}"
    notes = "; ".join(n for n in caps.notes if n not in caps.ppr_notes)
    status = "error" if caps.problems else ("ok" if caps.ppr_engine != "local" else "warn")
    detail = (
        f"Neo4j {caps.neo4j_version} {caps.edition} at {settings.neo4j.uri}, "
        f"database {settings.neo4j.database}, namespace {settings.neo4j.namespace}; "
        f"GDS {gds}; APOC {caps.apoc_version or 'not installed'}; "
        f"PPR engine: {engine} (neo4j.ppr_engine={settings.neo4j.ppr_engine})"
        + (f": {why}" if why else "")
        + (f"; {notes}" if notes else "")
        + (f"; cannot open: {'; '.join(caps.problems)}" if caps.problems else "")
    )
    return status, detail, data


def _aura(settings: Settings) -> tuple[str, str, dict[str, Any]]:
    """neo4j.ppr_engine=aura: the Aura API answers these credentials, and this namespace's session's state
    (doctor lists sessions, never starts one)."""
    from hipporag_neo4j.stores.neo4j.store import Neo4jStore

    store = Neo4jStore(settings.neo4j)
    mine = store.aura_session_name()
    sessions = store.aura_sessions().list()
    found = next((s for s in sessions if s.name == mine), None)
    running = dataclasses.asdict(found) if found else None
    data = {"session": mine, "running": running, "visible": len(sessions)}
    if found is None:
        return (
            "ok",
            f"Aura API answers ({len(sessions)} sessions visible); session {mine} is not running: the first "
            "query starts it, billed from then on",
            data,
        )
    return (
        "ok",
        f"Aura API answers; session {mine} is {found.status} ({found.memory}, expires "
        f"{found.expiry or '-'}): delete it with `hipporag-neo4j aura sessions delete`",
        data,
    )


def _embedding(settings: Settings) -> tuple[str, str, dict[str, Any]]:
    from hipporag_neo4j.embedding.encoder import AutoSentenceEmbedder, create_embedder

    embedder = create_embedder(settings.embedding)
    dim = embedder.dimension
    details: dict[str, Any] = {"dimension": dim}
    runs_on = ""
    if isinstance(embedder, AutoSentenceEmbedder):
        details["runs_on"] = embedder.backend
        runs_on = f", runs on {embedder.backend}"
        if embedder.fallback_reason:
            details["onnx_unavailable"] = embedder.fallback_reason
            runs_on += f" (ONNX Runtime cannot run it: {embedder.fallback_reason})"
        if embedder.choice:  # both backends installed: the one measured faster here
            details["backend_choice"] = embedder.choice.as_dict()
            runs_on += f", {embedder.choice.summary()}"
    return (
        "ok",
        f"{settings.embedding.provider} model {settings.embedding.model!r} loads ({dim}-d{runs_on})",
        details,
    )


def _store_meta(settings: Settings) -> StoreMeta | None:
    if settings.backend == "neo4j":
        from hipporag_neo4j.stores.neo4j.store import Neo4jStore

        neo4j_store = Neo4jStore(settings.neo4j)
        try:
            return neo4j_store.meta()
        finally:
            neo4j_store.close()
    from hipporag_neo4j.stores.embedded import EmbeddedStore
    from hipporag_neo4j.stores.embedded.store import DB_FILE

    if not (settings.embedded_store_path / DB_FILE).exists():
        return None
    embedded = EmbeddedStore(settings.embedded_store_path)
    try:
        return embedded.meta()
    finally:
        embedded.close()


def _model_match(settings: Settings, dimension: Callable[[], int]) -> tuple[str, str, dict[str, Any]]:
    """The store answers queries only with the model it was built with: say so before a command fails."""
    meta = _store_meta(settings)
    if meta is None:
        return "info", "the store records no embedding model yet (the first index sets it)", {}
    if settings.backend == "neo4j":
        expected = SCHEMA_VERSION
    else:
        from hipporag_neo4j.stores.embedded.schema import SCHEMA_VERSION as expected
    try:
        check_meta(meta, "the store", settings.embedding.model, dimension(), expected)
    except ModelMismatchError as exc:
        return "error", str(exc), {"store_model": meta.embedding_model, "store_dim": meta.embedding_dim}
    return "ok", f"the store was built with the configured model ({meta.embedding_model})", {}


def _spacy(settings: Settings) -> tuple[str, str, dict[str, Any]]:
    from hipporag_neo4j.extraction.spacy_extractor import load_spacy_model

    load_spacy_model(settings.extraction.spacy_model)
    return "ok", f"spaCy pipeline {settings.extraction.spacy_model!r} loads", {}


def _llm(settings: Settings) -> tuple[str, str, dict[str, Any]]:
    llm = settings.llm
    if not llm.configured:
        method = settings.extraction.method
        return (
            "info",
            "no LLM configured (HIPPORAG_LLM_MODEL): extraction uses spaCy (weaker), "
            "query entities use spaCy, "
            f"answers are unavailable (extraction.method={method})",
            {},
        )
    import openai

    key = llm.api_key.get_secret_value() if llm.api_key else None
    client = openai.OpenAI(base_url=llm.base_url, api_key=key or "not-needed", timeout=10.0, max_retries=0)
    try:
        models = [m.id for m in client.models.list()]
    except openai.APIError as exc:
        return "warn", f"LLM {llm.model!r} at {llm.base_url or 'api.openai.com'}: /models failed ({exc})", {}
    found = llm.model in models
    return (
        "ok" if found else "warn",
        f"LLM endpoint {llm.base_url or 'OpenAI'} answers; model {llm.model!r} "
        + ("listed" if found else "not listed by /models"),
        {},
    )


def _settings(settings: Settings) -> tuple[str, str, dict[str, Any]]:
    """Which file and which variables set what (everything else is at its default)."""
    sources = settings.sources()
    if not sources:
        return "info", "every setting at its default (no hipporag.toml, .env or HIPPORAG_* variable)", {}
    listed = "; ".join(f"{name} = {how}" for name, how in sources.items())
    return "info", f"set: {listed}; everything else at its default", {"sources": sources}


def run_doctor(settings: Settings) -> dict[str, Any]:
    embedding = _check("embedding", lambda: _embedding(settings))

    def dimension() -> int:
        if "data" not in embedding:
            raise EmbeddingError(f"the embedding model does not load: {embedding['detail']}")
        return int(embedding["data"]["dimension"])

    aura = settings.backend == "neo4j" and settings.neo4j.ppr_engine == "aura"
    checks = [
        _check("settings", lambda: _settings(settings)),
        _check("store", lambda: _store(settings)),
        *([_check("aura", lambda: _aura(settings))] if aura else []),
        embedding,
        _check("store model", lambda: _model_match(settings, dimension)),
        _check("spacy", lambda: _spacy(settings)),
        _check("llm", lambda: _llm(settings)),
    ]
    return {"backend": settings.backend, "settings": settings.redacted(), "checks": checks}


def _top_level_parts(detail: str) -> list[str]:
    """``detail`` split at each "; " outside parentheses (a parenthesis's own "; " stays in its part)."""
    parts, depth, start = [], 0, 0
    for at, char in enumerate(detail):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth <= 0 and detail.startswith("; ", at):
            parts.append(detail[start:at])
            start = at + 2
    return [*parts, detail[start:]]


def check_lines(label: str, detail: str, width: int = WIDTH) -> list[str]:
    """A check as lines of at most ``width`` characters (a word longer than that stays whole): one line
    when it fits, else one line per "; "-separated part of ``detail`` (not inside parentheses; the ";"
    kept at the line's end), each wrapped, the first after ``label``. Joined with single spaces, the
    lines give the one line."""
    if len(label) + len(detail) <= width:
        return [label + detail]
    parts = _top_level_parts(detail)
    lines: list[str] = []
    for number, part in enumerate(parts):
        text = part + (";" if number < len(parts) - 1 else "")
        first = label if number == 0 else INDENT
        lines.extend(
            textwrap.wrap(
                text,
                width,
                initial_indent=first,
                subsequent_indent=INDENT,
                break_long_words=False,
                break_on_hyphens=False,
            )
            or [first.rstrip()]
        )
    return lines


def print_doctor(report: dict[str, Any]) -> None:
    colours = {"ok": "green", "info": "blue", "warn": "yellow", "error": "red"}
    click.echo(f"backend: {report['backend']}")
    for check in report["checks"]:
        status = check["status"]
        tag = f"[{status:>5}] "
        first, *rest = check_lines(f"{tag}{check['name']}: ", str(check["detail"]))
        click.echo(click.style(tag, fg=colours.get(status)) + first.removeprefix(tag))
        for line in rest:
            click.echo(line)
