"""The FastAPI app: each route a few lines over :class:`~hipporag_neo4j.service.KnowledgeService`.

Writes (POST and DELETE /passages) go to the service's single writer; reads (/query, /answer, /stats)
run concurrently. Batches larger than ``server.sync_limit`` become jobs (202, ``GET /jobs/{id}``).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict
from typing import Annotated

import anyio.to_thread
from fastapi import Depends, FastAPI, HTTPException, Request, Response, Security
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from hipporag_neo4j import __version__
from hipporag_neo4j.errors import ConfigError, HippoRAGError, InputError, StoreError
from hipporag_neo4j.models import Answer, Explanation, IndexReport, RetrievalResult, StoreStats
from hipporag_neo4j.server.auth import UNAUTHORIZED, ApiKeyAuth, forbidden_message
from hipporag_neo4j.server.explorer.routes import explorer_router
from hipporag_neo4j.server.limits import BodySizeLimit
from hipporag_neo4j.server.schemas import (
    AnswerRequest,
    DeleteRequest,
    DeleteResult,
    Health,
    IndexRequest,
    QueryRequest,
    Readiness,
)
from hipporag_neo4j.service import Job, KnowledgeService, NotReadyError, ServiceStoppedError
from hipporag_neo4j.settings import Settings

log = logging.getLogger(__name__)

_bearer = HTTPBearer(auto_error=False, description="The API key as a Bearer token.")
_api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="The API key.")

DESCRIPTION = """HippoRAG long-term memory with its knowledge graph in Neo4j or an embedded store.

Send the API key as `Authorization: Bearer <key>` or `X-API-Key: <key>` (not needed for `/health`,
`/ready` and these docs). A key scoped to other namespaces than the one this server serves gets 403.
Every passage of a query result carries its explanation: the query entities,
the phrases they linked to, and the phrases that brought the passage up.
"""

_STATUS: list[tuple[type[HippoRAGError], int]] = [
    (InputError, 422),
    (NotReadyError, 503),
    (ServiceStoppedError, 503),
    (StoreError, 503),
    (ConfigError, 501),  # e.g. /answer on a server with no LLM configured
]


def _status_of(exc: HippoRAGError) -> int:
    return next((code for kind, code in _STATUS if isinstance(exc, kind)), 500)


def _service(request: Request) -> KnowledgeService:
    service: KnowledgeService = request.app.state.service
    return service


def _require_key(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
    api_key: Annotated[str | None, Security(_api_key_header)],
) -> None:
    """401 without a known key, 403 when the key does not open the namespace this server serves; the
    key's scope is kept in ``request.state.key_scope`` (listings show only what it opens)."""
    auth: ApiKeyAuth = request.app.state.auth
    namespace: str = request.app.state.namespace
    scope = auth.scope(bearer.credentials if bearer else api_key)
    if scope is None:
        raise HTTPException(401, detail=UNAUTHORIZED, headers={"WWW-Authenticate": "Bearer"})
    if not scope.allows(namespace):
        raise HTTPException(403, detail=forbidden_message(namespace))
    request.state.key_scope = scope


Service = Annotated[KnowledgeService, Depends(_service)]


def create_app(settings: Settings, service_factory: Callable[[], KnowledgeService] | None = None) -> FastAPI:
    """The REST app. The service (model, store, writer thread) is built when the app starts, not here.

    ``service_factory`` builds it (default: ``KnowledgeService(settings)``); raises ConfigError when the
    API-key settings are unsafe.
    """
    auth = ApiKeyAuth(settings.server)
    limits = settings.server
    build = service_factory or (lambda: KnowledgeService(settings))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        service = await anyio.to_thread.run_sync(build)
        app.state.service = service
        try:
            await anyio.to_thread.run_sync(service.warm_up)
        except NotReadyError as exc:
            log.error("%s (GET /ready reports it; retried on each /ready)", exc)
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(service.close)

    app = FastAPI(
        title="hipporag-neo4j",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
    )
    app.add_middleware(BodySizeLimit, max_bytes=limits.max_body_bytes)
    app.state.auth = auth
    app.state.namespace = settings.neo4j.namespace  # the one namespace this server serves
    protected = [Depends(_require_key)]

    @app.exception_handler(HippoRAGError)
    async def _hipporag_error(request: Request, exc: HippoRAGError) -> JSONResponse:
        status = _status_of(exc)
        if status >= 500:  # the server's side failed: its log says why, with the stack
            log.error("%s %s answered %d: %s", request.method, request.url.path, status, exc, exc_info=exc)
        return JSONResponse({"detail": str(exc)}, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors()
        ]  # the offending input is not echoed back (it may be large or private)
        return JSONResponse({"detail": errors}, status_code=422)

    @app.get("/health", tags=["status"])
    def health() -> Health:
        """Liveness: the process answers."""
        return Health()

    @app.get("/ready", tags=["status"], responses={503: {"model": Readiness}})
    def ready(service: Service, response: Response) -> Readiness:
        """Readiness: the embedding model is loaded and the store answers."""
        status = Readiness(**service.readiness())
        if not status.ready:
            response.status_code = 503
        return status

    @app.post(
        "/passages",
        tags=["write"],
        dependencies=protected,
        response_model=IndexReport | Job,
        responses={202: {"model": Job, "description": "A job was started (large batch)."}},
    )
    def index(
        body: IndexRequest, service: Service, response: Response, as_job: bool = False
    ) -> IndexReport | Job:
        """Index passages. Up to `server.sync_limit` passages are indexed before answering (200 and the
        report); more, or `as_job=true`, start a job (202, its URL in `Location`)."""
        _check_batch(len(body.passages), limits.max_batch)
        if not as_job and len(body.passages) <= limits.sync_limit:
            return service.index(body.passages)
        job = service.submit_index(body.passages)
        response.status_code = 202
        response.headers["Location"] = f"/jobs/{job.id}"
        return job

    @app.get("/jobs/{job_id}", tags=["write"], dependencies=protected, responses={404: {}})
    def get_job(job_id: str, service: Service) -> Job:
        """An index job: status, progress (`done` of `total`) and the report so far, failures included."""
        job = service.job(job_id)
        if job is None:
            raise HTTPException(
                404, f"no job {job_id!r} (the last {limits.keep_jobs} finished jobs are kept)"
            )
        return job

    @app.get("/jobs", tags=["write"], dependencies=protected)
    def list_jobs(service: Service) -> list[Job]:
        return service.jobs.all()

    @app.delete("/passages", tags=["write"], dependencies=protected)
    def delete(body: DeleteRequest, service: Service) -> DeleteResult:
        """Delete passages and everything only they supported (phrases, facts, synonym edges)."""
        _check_batch(len(body.ids), limits.max_batch)
        return DeleteResult(**asdict(service.delete(body.ids)))

    @app.post("/query", tags=["read"], dependencies=protected)
    def query(body: QueryRequest, service: Service) -> RetrievalResult:
        """Retrieve the passages that answer the question, each with its explanation."""
        result = service.retrieve(
            body.query,
            mode=body.mode,
            top_k=body.top_k,
            strategy=body.strategy,
            seed_nodes=body.seed_nodes,
            joined=body.joined,
            via=body.via,
        )
        if not body.explain:
            for item in result.passages:
                item.explanation = Explanation()
        return result

    @app.post("/answer", tags=["read"], dependencies=protected, responses={501: {}})
    def answer(body: AnswerRequest, service: Service) -> Answer:
        """Retrieve, then answer with the reader LLM (501 when the server has no LLM configured)."""
        return service.answer(body.query, mode=body.mode, top_k=body.top_k, strategy=body.strategy)

    @app.get("/stats", tags=["read"], dependencies=protected)
    def stats(service: Service) -> StoreStats:
        """Counts of passages, phrases, facts and edges."""
        return service.stats()

    app.include_router(explorer_router(protected))
    return app


def _check_batch(size: int, limit: int) -> None:
    if size > limit:
        raise HTTPException(
            422, f"{size} items in one request; the limit is {limit} (server.max_batch): split the batch"
        )
