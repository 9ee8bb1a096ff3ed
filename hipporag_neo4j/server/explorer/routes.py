"""Routes of the graph explorer.

``GET /explorer`` serves the page (no key needed: it holds no data; it asks for the key and sends it
with every call). ``/explorer/api/*`` are reads for the page, behind the API key like the rest of the
API; the page writes through the existing ``POST``/``DELETE /passages`` and ``GET /jobs/{id}``.
Neighbourhoods are bounded (``limit``, at most :data:`MAX_NODES`) and say when they were cut. For a
Neo4j store each answer carries the Cypher that shows the same subgraph in Neo4j Browser.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from hipporag_neo4j.common.text import make_phrase_id
from hipporag_neo4j.models import Passage, PassageInfo, StoreStats
from hipporag_neo4j.service import KnowledgeService
from hipporag_neo4j.stores.base import GraphEdge, GraphExplorer, GraphNode, Neighbourhood

MAX_NODES = 300
#: neighbours of one kind drawn around a node before the rest are grouped into one "+N more" node
GROUP_CAP = 25
#: what the neighbours through each kind of edge are called in a "+N more" node
NEIGHBOURS = {
    "RELATION": "related phrases",
    "SYNONYM": "synonyms",
    "SAME_AS": "linked nodes",
    "MENTIONS": "passages",  # around a passage: the phrases it mentions
    "LINKED": "related nodes",
}
STATIC = resources.files("hipporag_neo4j.server.explorer").joinpath("static")
STATIC_FILES = {"app.js": "text/javascript", "app.css": "text/css"}
#: vis-network as the pyvis wheel ships it in ``pyvis/lib/vis-<version>/`` (pyvis is BSD-3, vis-network
#: Apache-2.0 or MIT); the newest version there is served.
VIS_PACKAGE = "pyvis"
VIS_FILES = {"vis-network.min.js": "text/javascript", "vis-network.css": "text/css"}


def vis_file(name: str) -> bytes:
    """A vis-network file from the installed pyvis package; OSError or ModuleNotFoundError if absent."""
    lib = resources.files(VIS_PACKAGE).joinpath("lib")
    versions = [
        entry for entry in lib.iterdir() if entry.name.startswith("vis-") and entry.joinpath(name).is_file()
    ]
    if not versions:
        raise FileNotFoundError(f"no lib/vis-*/{name} in the {VIS_PACKAGE} package")

    def version(entry: Any) -> tuple[int, ...]:
        return tuple(int(x) if x.isdigit() else 0 for x in entry.name.removeprefix("vis-").split("."))

    return max(versions, key=version).joinpath(name).read_bytes()


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NodeOut(_Out):
    key: str = Field(description="'<kind>:<id>', unique in a drawing.")
    kind: Literal["phrase", "passage", "entity", "more"]
    id: str
    label: str
    passage_count: int | None = None
    labels: list[str] = Field(default_factory=list)


class EdgeOut(_Out):
    kind: str
    source: str
    target: str
    weight: float
    label: str = ""


class BrowserCypher(_Out):
    """A statement to paste into Neo4j Browser, with its ``:param`` lines."""

    file: str
    text: str


class GroupOut(_Out):
    """The neighbours of one kind: how many there are and how many are drawn."""

    edge: str = Field(description="The kind of edge to the center: RELATION, SYNONYM, MENTIONS, ...")
    name: str = Field(description="What these neighbours are, e.g. 'passages'.")
    total: int
    shown: int
    more: str | None = Field(None, description="Key of the '+N more' node standing for the rest.")


class GraphOut(_Out):
    center: NodeOut | None = None
    nodes: list[NodeOut] = Field(default_factory=list)
    edges: list[EdgeOut] = Field(default_factory=list)
    truncated: bool = False
    groups: list[GroupOut] = Field(default_factory=list)
    cypher: BrowserCypher | None = None


class PassageOut(_Out):
    passage: Passage
    graph: GraphOut


class Overview(_Out):
    backend: str
    namespace: str
    namespaces: list[str]
    stats: StoreStats
    max_nodes: int = MAX_NODES
    cypher: BrowserCypher | None = None


class AnswerGraphRequest(_Out):
    phrases: list[str] = Field(default_factory=list, max_length=2000, description="Phrase names drawn.")
    passage_ids: list[str] = Field(default_factory=list, max_length=1000)


class AnswerGraph(_Out):
    phrase_ids: dict[str, str] = Field(description="Phrase name -> phrase id (node key 'phrase:<id>').")
    edges: list[EdgeOut]
    cypher: BrowserCypher | None = None


class PassagePage(_Out):
    passages: list[PassageInfo]
    next_after: str | None = Field(description="Pass as `after` for the next page; null at the end.")


def _key(ref: tuple[str, str]) -> str:
    return f"{ref[0]}:{ref[1]}"


def _node(node: GraphNode) -> NodeOut:
    return NodeOut(
        key=_key((node.kind, node.id)),
        kind=node.kind,
        id=node.id,
        label=node.label,
        passage_count=node.passage_count,
        labels=list(node.labels),
    )


def _edge(edge: GraphEdge) -> EdgeOut:
    return EdgeOut(
        kind=edge.kind,
        source=_key(edge.source),
        target=_key(edge.target),
        weight=edge.weight,
        label=edge.label,
    )


def _graph(found: Neighbourhood, cypher: BrowserCypher | None) -> GraphOut:
    return GraphOut(
        center=_node(found.center) if found.center else None,
        nodes=[_node(n) for n in found.nodes],
        edges=[_edge(e) for e in found.edges],
        truncated=found.truncated,
        cypher=cypher,
    )


def grouped(found: Neighbourhood, cap: int, cypher: BrowserCypher | None) -> GraphOut:
    """``found`` with at most ``cap`` neighbours of each kind of edge to the center (strongest first, as
    the store ordered them); the rest of a kind, and those the store left out, are one "+N more" node
    (kind ``more``, N counted from the store's totals) with an edge from the center. ``groups`` says,
    per kind, how many there are and how many are drawn."""
    graph = _graph(found, cypher)
    if graph.center is None:
        return graph
    center = graph.center.key
    kinds: dict[str, str] = {}  # neighbour key -> the first kind of edge joining it to the center
    for edge in graph.edges:
        other = edge.target if edge.source == center else edge.source if edge.target == center else None
        if other is not None:
            kinds.setdefault(other, edge.kind)
    taken: dict[str, int] = {}
    kept: set[str] = set()
    for node in graph.nodes:  # in the store's order: strongest first within each kind
        kind = kinds.get(node.key)
        if kind is None or taken.get(kind, 0) < cap:
            kept.add(node.key)
            if kind is not None:
                taken[kind] = taken.get(kind, 0) + 1
    graph.nodes = [n for n in graph.nodes if n.key in kept]
    ends = kept | {center}
    graph.edges = [e for e in graph.edges if e.source in ends and e.target in ends]
    for kind, total in found.totals.items():
        shown = len(
            {
                e.target if e.source == center else e.source
                for e in graph.edges
                if e.kind == kind and center in (e.source, e.target)
            }
        )
        name = "phrases" if kind == "MENTIONS" and graph.center.kind == "passage" else NEIGHBOURS[kind]
        group = GroupOut(edge=kind, name=name, total=total, shown=shown)
        if total > shown:
            more = f"{center}|{kind}"
            group.more = key = f"more:{more}"
            graph.nodes.append(
                NodeOut(key=key, kind="more", id=more, label=f"+{total - shown:,} more {group.name}")
            )
            graph.edges.append(EdgeOut(kind="MORE", source=center, target=key, weight=float(total - shown)))
            graph.truncated = True
        if total:
            graph.groups.append(group)
    return graph


def browser_cypher(file: str, **params: Any) -> BrowserCypher:
    """The named ``cypher/`` statement with ``:param`` lines that set its parameters (JSON literals are
    Cypher literals for strings, numbers and lists)."""
    from hipporag_neo4j.stores.neo4j.cypher import load_query

    query = load_query(file)
    lines = [f":param {name} => {json.dumps(params[name], ensure_ascii=False)}" for name in sorted(params)]
    return BrowserCypher(file=f"cypher/{file}.cypher", text="\n".join([*lines, "", query.text]))


class _Explorer:
    """The service reader's store as a :class:`GraphExplorer` (the last committed graph version)."""

    def __init__(self, service: KnowledgeService) -> None:
        self.service = service
        self.settings = service.settings

    @property
    def on_neo4j(self) -> bool:
        return self.settings.backend == "neo4j"

    @property
    def namespace(self) -> str:
        return self.settings.neo4j.namespace

    @contextmanager
    def store(self) -> Iterator[GraphExplorer]:
        store = self.service.reader.store
        if not isinstance(store, GraphExplorer):
            raise HTTPException(
                501, f"the {self.settings.backend} store cannot be explored (no GraphExplorer)"
            )
        yield store

    def cypher(self, file: str, **params: Any) -> BrowserCypher | None:
        return browser_cypher(file, namespace=self.namespace, **params) if self.on_neo4j else None


def _explorer(request: Request) -> _Explorer:
    return _Explorer(request.app.state.service)


Explorer = Annotated[_Explorer, Depends(_explorer)]


def explorer_router(protected: Sequence[Any]) -> APIRouter:
    """The page and its API, and ``/`` redirecting to the page; ``protected`` are the dependencies that
    check the API key."""
    router = APIRouter(prefix="/explorer", tags=["explorer"])
    api = APIRouter(prefix="/api", dependencies=list(protected))

    @router.get("", include_in_schema=False)
    def page_redirect() -> RedirectResponse:
        return RedirectResponse("/explorer/")

    @router.get("/", include_in_schema=False)
    def page() -> HTMLResponse:
        """The explorer page (it asks for the API key and keeps it in the tab's session storage)."""
        return HTMLResponse(
            STATIC.joinpath("index.html").read_text(encoding="utf-8"),
            headers={"Content-Security-Policy": CSP, "Cache-Control": "no-store"},
        )

    @router.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> Response:
        if name not in STATIC_FILES:
            raise HTTPException(404, f"no explorer file {name!r}")
        return Response(STATIC.joinpath(name).read_bytes(), media_type=STATIC_FILES[name])

    @router.get("/lib/{name}", include_in_schema=False)
    def library(name: str) -> Response:
        """vis-network, read from the installed pyvis package (503 with the fix when it is missing)."""
        if name not in VIS_FILES:
            raise HTTPException(404, f"no explorer library file {name!r}")
        try:
            data = vis_file(name)
        except (ModuleNotFoundError, OSError) as exc:
            raise HTTPException(
                503,
                f"the graph drawing library (vis-network, shipped by the {VIS_PACKAGE!r} package) is not "
                f"installed ({exc}): pip install 'hipporag-neo4j[server]'",
            ) from exc
        return Response(data, media_type=VIS_FILES[name], headers={"Cache-Control": "max-age=3600"})

    @api.get("/overview")
    def overview(explorer: Explorer, request: Request) -> Overview:
        """Backend, namespace, the namespaces beside it that the API key opens, and the store's counts."""
        with explorer.store() as store:
            stats = explorer.service.reader.store.stats()
            names = store.namespaces()
        return Overview(
            backend=explorer.settings.backend,
            namespace=explorer.namespace,
            namespaces=request.state.key_scope.visible(names),
            stats=stats,
            cypher=explorer.cypher("explore_overview"),
        )

    @api.get("/search")
    def search(
        explorer: Explorer,
        q: Annotated[str, Query(min_length=1, max_length=200, description="Text in a phrase or title.")],
        limit: Annotated[int, Query(ge=1, le=100)] = 20,
    ) -> list[NodeOut]:
        """Phrases whose name, then passages whose title or id, contain ``q`` (case-insensitive)."""
        with explorer.store() as store:
            return [_node(n) for n in store.search_nodes(q, limit)]

    @api.get("/neighbourhood", responses={404: {}})
    def neighbourhood(
        explorer: Explorer,
        kind: Literal["phrase", "passage", "entity"],
        id: Annotated[str, Query(min_length=1, max_length=2000)],
        limit: Annotated[int, Query(ge=1, le=MAX_NODES)] = 100,
        cap: Annotated[
            int, Query(ge=1, le=MAX_NODES, description="Neighbours of one kind drawn; the rest: '+N more'.")
        ] = GROUP_CAP,
    ) -> GraphOut:
        """A node and at most ``limit`` neighbours, at most ``cap`` of each kind (relations, synonyms,
        passages...); the rest of each kind is one "+N more" node, and ``groups`` gives each kind's
        total and how many are drawn (``truncated`` when some were left out)."""
        with explorer.store() as store:
            found = store.neighbourhood(kind, id, limit)
        if found.center is None:
            raise HTTPException(404, f"no {kind} {id!r} in namespace {explorer.namespace!r}")
        if kind == "phrase":
            cypher = explorer.cypher("explore_phrase", name=found.center.label)
        elif kind == "passage":
            cypher = explorer.cypher("explore_passage", passage_id=id)
        else:
            cypher = explorer.cypher("explore_node", node_id=id)
        return grouped(found, cap, cypher)

    @api.get("/passage", responses={404: {}})
    def passage(
        explorer: Explorer,
        id: Annotated[str, Query(min_length=1, max_length=2000)],
        limit: Annotated[int, Query(ge=1, le=MAX_NODES)] = 100,
    ) -> PassageOut:
        """A passage's text and the phrases it mentions."""
        with explorer.store() as store:
            found = explorer.service.reader.store.get_passages([id]).get(id)
            around = store.neighbourhood("passage", id, limit)
        if found is None:
            raise HTTPException(404, f"no passage {id!r} in namespace {explorer.namespace!r}")
        return PassageOut(
            passage=found, graph=_graph(around, explorer.cypher("explore_passage", passage_id=id))
        )

    @api.get("/passages")
    def passages(
        explorer: Explorer,
        after: Annotated[str, Query(max_length=2000)] = "",
        limit: Annotated[int, Query(ge=1, le=500)] = 50,
    ) -> PassagePage:
        """A page of stored passages by id (``after`` the last id of the previous page)."""
        with explorer.store():
            page = explorer.service.reader.store.list_passages(after, limit + 1)
        more = len(page) > limit
        return PassagePage(passages=page[:limit], next_after=page[limit - 1].id if more else None)

    @api.post("/answer-graph")
    def answer_graph(body: AnswerGraphRequest, explorer: Explorer) -> AnswerGraph:
        """For a retrieval result drawn by the page: the ids of its phrases and the RELATION, SYNONYM and
        MENTIONS edges among its phrases and passages (a look-up; nothing is retrieved again)."""
        ids = {name: make_phrase_id(name) for name in dict.fromkeys(body.phrases)}
        with explorer.store() as store:
            edges = store.edges_among(sorted(set(ids.values())), body.passage_ids)
        cypher = explorer.cypher("explore_answer", names=sorted(ids), ids=list(body.passage_ids))
        return AnswerGraph(phrase_ids=ids, edges=[_edge(e) for e in edges], cypher=cypher)

    router.include_router(api)
    outer = APIRouter()

    @outer.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        """The address ``serve`` prints opens the explorer (the API is under its own paths, docs at /docs)."""
        return RedirectResponse("/explorer/")

    outer.include_router(router)
    return outer


#: The page loads only its own scripts and styles; data is never inserted as HTML.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
