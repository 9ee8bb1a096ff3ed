"""``hipporag-neo4j link``, ``unlink`` and ``about``: thin, over the HippoRAG methods of the same names."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.cli.support import Context, emit, exit_on_error, print_retrieval

T = TypeVar("T")


def _run(ctx: Context, action: Callable[[HippoRAG], T]) -> T:
    """``action`` over an existing store: linking to, or asking about, a store never indexed is refused."""
    with exit_on_error():
        memory = HippoRAG(ctx.settings(), create=False)
        try:
            memory.require_store()
            return action(memory)
        finally:
            memory.close()


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
    from hipporag_neo4j.linking.linker import LinkReport

    def action(memory: HippoRAG) -> tuple[dict[str, int] | None, LinkReport]:
        imported = memory.import_graph(graph_file) if graph_file is not None else None
        return imported, memory.link(label, prop, min_similarity=min_similarity)

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
    removed = _run(ctx, lambda memory: memory.unlink(label))
    emit(ctx, {"removed": removed}, lambda: click.echo(f"removed {removed} links"))


@click.command("about")
@click.argument("node_ids", nargs=-1, required=True)
@click.option(
    "--via", "rel_types", multiple=True, help="Walk through these relationship types of your graph."
)
@click.option("--top-k", type=click.IntRange(1, 1000), help="Passages to return.")
@click.pass_obj
def about_cmd(ctx: Context, node_ids: tuple[str, ...], rel_types: tuple[str, ...], top_k: int | None) -> None:
    """What the passages say about NODE_IDS of your graph: `query --seed-node ID ...` with no question
    (and with --via, over the joined graph)."""
    result = _run(ctx, lambda memory: memory.about(node_ids, via=rel_types, top_k=top_k))
    emit(ctx, result.model_dump(mode="json"), lambda: print_retrieval(result, explain=True))
