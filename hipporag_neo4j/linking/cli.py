"""``hipporag-neo4j link``, ``unlink`` and ``about``: a thin layer over :mod:`hipporag_neo4j.linking`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import click

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.cli_support import Context, emit, exit_on_error
from hipporag_neo4j.errors import InputError
from hipporag_neo4j.linking.model import EnterpriseGraph

T = TypeVar("T")


@contextmanager
def _linked(ctx: Context) -> Iterator[tuple[HippoRAG, EnterpriseGraph]]:
    memory = HippoRAG(ctx.settings())
    try:
        if memory.settings.backend == "neo4j":
            from hipporag_neo4j.linking.neo4j import Neo4jEnterpriseGraph
            from hipporag_neo4j.stores.neo4j.store import Neo4jStore

            store = memory.store
            assert isinstance(store, Neo4jStore)
            yield memory, Neo4jEnterpriseGraph(store)
        else:
            from hipporag_neo4j.linking.embedded import EmbeddedEnterpriseGraph

            with EmbeddedEnterpriseGraph(memory.settings.store.path) as graph:
                yield memory, graph
    finally:
        memory.close()


def _run(ctx: Context, action: Callable[[HippoRAG, EnterpriseGraph], T]) -> T:
    with exit_on_error(), _linked(ctx) as (memory, graph):
        return action(memory, graph)


@click.command("link")
@click.option("--label", required=True, help="Label of your nodes to link phrases to, e.g. Customer.")
@click.option(
    "--property", "prop", default="name", show_default=True, help="The node property holding the name."
)
@click.option(
    "--min-similarity",
    type=click.FloatRange(0.0, 1.0),
    default=0.9,
    show_default=True,
    help="Cosine needed for an embedding link (exact normalised names always link).",
)
@click.option(
    "--graph",
    "graph_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Embedded store: first import this JSONL entity graph (nodes and relationships).",
)
@click.pass_obj
def link_cmd(ctx: Context, label: str, prop: str, min_similarity: float, graph_file: Path | None) -> None:
    """Create (:Phrase)-[:SAME_AS {score, method}]->(node) links to your nodes with LABEL.

    Exact normalised names first, then embedding similarity. Idempotent; your nodes are only read;
    `unlink` removes the links.
    """
    from hipporag_neo4j.linking.linker import LinkReport, link_nodes

    def action(memory: HippoRAG, graph: EnterpriseGraph) -> tuple[dict[str, int] | None, LinkReport]:
        imported = None
        if graph_file is not None:
            from hipporag_neo4j.linking.embedded import EmbeddedEnterpriseGraph
            from hipporag_neo4j.linking.graph_file import load_entity_graph

            if not isinstance(graph, EmbeddedEnterpriseGraph):
                raise InputError("--graph is for the embedded store; on Neo4j, link to nodes in the database")
            imported = graph.import_graph(load_entity_graph(graph_file))
        report = link_nodes(memory.store, memory.embedder, graph, label, prop, min_similarity=min_similarity)
        return imported, report

    imported, report = _run(ctx, action)

    def human() -> None:
        if imported is not None:
            click.echo(
                f"imported {imported['nodes']} nodes, {imported['relationships_added']} new relationships"
            )
        click.echo(
            f"{report.nodes} {label} nodes: {report.exact} linked by name, {report.embedding} by embedding, "
            f"{report.unmatched} unmatched; {report.new_links} new links"
        )

    emit(ctx, {"imported": imported, **report.model_dump()}, human)


@click.command("unlink")
@click.option("--label", help="Only the links to nodes with this label (default: all links).")
@click.pass_obj
def unlink_cmd(ctx: Context, label: str | None) -> None:
    """Remove SAME_AS links made by `link` (your nodes are untouched)."""
    from hipporag_neo4j.linking.linker import unlink_nodes

    removed = _run(ctx, lambda _memory, graph: unlink_nodes(graph, label))
    emit(ctx, {"removed": removed}, lambda: click.echo(f"removed {removed} links"))


@click.command("about")
@click.argument("node_ids", nargs=-1, required=True)
@click.option("--via", "rel_types", multiple=True, help="Also start from nodes one such relationship away.")
@click.option("--top-k", type=click.IntRange(1, 1000), help="Passages to return.")
@click.pass_obj
def about_cmd(ctx: Context, node_ids: tuple[str, ...], rel_types: tuple[str, ...], top_k: int | None) -> None:
    """What the passages say about NODE_IDS of your graph (PPR from the phrases linked to them)."""
    from hipporag_neo4j.linking.seeded import retrieve_from_nodes

    result = _run(
        ctx,
        lambda memory, graph: retrieve_from_nodes(memory, graph, node_ids, rel_types=rel_types, top_k=top_k),
    )

    def human() -> None:
        if result.note:
            click.echo(result.note)
        for item in result.passages:
            nodes = ", ".join(f"{n.name or n.node_id} ({n.via_phrase})" for n in item.linked_nodes)
            click.secho(f"{item.rank}. [{item.score:.4f}] {item.passage_id}", bold=True)
            click.echo(f"   {item.text[:297] + '...' if len(item.text) > 300 else item.text}")
            if nodes:
                click.echo(f"   linked: {nodes}")

    emit(ctx, result.model_dump(mode="json"), human)
