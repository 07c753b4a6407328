"""Search verbs: search (hybrid, with the score breakdown of every hit) and explain."""

from __future__ import annotations

import click

from .common import ID, KIND_CHOICE, emit, json_option, pass_ctx, table
from .filter_option import filter_option, merged, parsed

TIER_CHOICE = click.Choice(["core", "active", "archived", "all"])


def register(cli: click.Group) -> None:
    for cmd in (search, explain):
        cli.add_command(cmd)


def _filters(f):
    f = click.option("--tier", type=TIER_CHOICE, default=None, help="Default: core and active.")(f)
    f = click.option("--kind", type=KIND_CHOICE, default=None)(f)
    f = click.option("--category", default=None)(f)
    f = click.option("--agent", default=None)(f)
    f = click.option("--user", default=None)(f)
    return f


MODE_OPTION = click.option(
    "--mode",
    type=click.Choice(["hybrid", "keyword", "vector"]),
    default=None,
    help="Default: hybrid when the model is available.",
)


@click.command()
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(1, 1000), default=10, show_default=True)
@_filters
@MODE_OPTION
@click.option("--no-access", is_flag=True, help="Audit only: do not count the hits as accessed.")
@filter_option
@json_option
@pass_ctx
def search(ctx, query, k, tier, kind, category, agent, user, mode, no_access, filter_text, as_json):
    """Hybrid search with the score breakdown of every hit (`--filter`: keys filter, words join
    the query)."""
    f = parsed(filter_text, "search", None)  # before the model loads: a bad filter fails at once
    given = merged({"tier": tier, "kind": kind, "category": category, "agent": agent, "user": user}, f)
    query = " ".join(q for q in (query, f.query) if q)
    with ctx.engine() as eng:
        if mode != "keyword":
            eng.wait_for_embedder()
        r = eng.search(
            query,
            k=k,
            **given,
            mode=mode,
            record_access=not no_access,
            door="" if no_access else "cli",  # a search that records access is a recall: logged
        )
        weights = eng.settings.search
    if as_json:
        from engine.types import to_json

        doc = to_json(r)
        doc.pop("message", None) if doc.get("message") is None else None
        emit(doc, True)
        return

    from engine.retrieval.fusion import weight_formula, weight_numbers

    def human(r):
        if r.message:
            click.echo(f"({r.message})")
        for note in r.keyword_scope:
            click.echo(f"(keyword search: {note})")
        rows = [
            [
                i + 1,
                h.id,
                f"{h.score:.4f}",
                h.breakdown.bm25_rank or "-",
                h.breakdown.vector_rank or "-",
                "-" if h.breakdown.vector_similarity is None else f"{h.breakdown.vector_similarity:.3f}",
                h.tier,
                ("(weak) " if h.weak else "") + h.content[:70],
            ]
            for i, h in enumerate(r.hits)
        ]
        table(rows, ["#", "id", "final", "bm25", "vec", "cos", "tier", "content"])
        if any(h.weak for h in r.hits) and not all(h.weak for h in r.hits):
            click.echo("(weak: no keyword match and a low cosine, below search.weak_below)")
        if r.hits:
            click.echo(f"\n{weight_formula(weights)}")
            for i, h in enumerate(r.hits):
                click.echo(f"{i + 1:>3} #{h.id}: {weight_numbers(h.breakdown, weights)}")
        if r.elsewhere:
            click.echo(f"elsewhere: {r.elsewhere}")

    emit(r, False, human)


@click.command()
@click.argument("query")
@click.argument("memory_id", type=ID)
@click.option("-k", "k", type=click.IntRange(1, 1000), default=10, show_default=True)
@_filters
@MODE_OPTION
@json_option
@pass_ctx
def explain(ctx, query, memory_id, k, tier, kind, category, agent, user, mode, as_json):
    """Why a memory did or did not make the top k for a query: the same search `search` runs with
    these options (mode and filters), then that memory's place in it. Exit 2 for an unknown id."""
    with ctx.engine() as eng:
        eng.memories.get(memory_id)  # an unknown id: exit 2 before the model loads
        if mode != "keyword":
            eng.wait_for_embedder()  # as `search` does: hybrid when the model is available
        ex = eng.explain(
            query, memory_id, k=k, tier=tier, kind=kind, category=category, agent=agent, user=user, mode=mode
        )
    emit(ex, as_json, lambda e: click.echo(e.summary))
