"""`recalls`: what agents asked (the recall log), filtered; `recall show ID` (its hits as returned),
`recall replay ID` (run it now: which hits left or entered and why), `recall why ID MEMORY`
("why not memory N?" for that recall's query and filters)."""

from __future__ import annotations

import click

from engine.clock import iso

from .common import ID, emit, json_option, pass_ctx, table


def register(cli: click.Group) -> None:
    cli.add_command(recalls)
    cli.add_command(recall)


def _filters(f: dict) -> str:
    parts = [f"{k}={','.join(v) if isinstance(v, list) else v}" for k, v in sorted(f.items())]
    return " ".join(parts)


@click.command()
@click.option("--agent", default=None, help="The agent (or the caller) that recalled.")
@click.option("--since", default=None, help="ISO date or time (UTC unless it says otherwise).")
@click.option("--text", default=None, help="Words the query holds (any case).")
@click.option("--limit", type=click.IntRange(1, 10_000), default=200, show_default=True)
@json_option
@pass_ctx
def recalls(ctx, agent, since, text, limit, as_json):
    """Agents' recalls, newest first: when, who, the query and what came back."""
    with ctx.engine(embedder=None) as eng:
        rows = eng.recalls.list(agent=agent, since=since, text=text, limit=limit)
    emit(
        rows,
        as_json,
        lambda rs: table(
            [
                [
                    r.id,
                    iso(r.at),
                    r.door,
                    r.agent or r.actor,
                    r.query[:50],
                    r.k,
                    len(r.hits),
                    " ".join(str(i) for i in r.hit_ids[:6]),
                    f"{r.latency_ms or 0:.1f}",
                ]
                for r in rs
            ],  # fmt: skip
            ["id", "at", "door", "agent", "query", "k", "hits", "ids", "ms"],
        ),
    )


@click.group()
def recall() -> None:
    """One logged recall: show, replay, why not."""


@recall.command("show")
@click.argument("recall_id", type=ID)
@json_option
@pass_ctx
def show(ctx, recall_id, as_json):
    """A logged recall with its hits as they were returned (scores and breakdown)."""
    with ctx.engine(embedder=None) as eng:
        r = eng.recalls.get(recall_id)

    def human(r) -> None:
        click.echo(f"recall {r.id} at {iso(r.at)} via {r.door}: agent {r.agent or '-'} (caller {r.actor})")
        click.echo(f"query: {r.query}")
        click.echo(f"filters: {_filters(r.filters)}  mode: {r.mode}  k: {r.k}  model: {r.model or '-'}")
        click.echo(f"latency: {r.latency_ms or 0:.1f} ms" + (f"  keyword scope: {'; '.join(r.keyword_scope)}"
                                                             if r.keyword_scope else ""))  # fmt: skip
        table(
            [
                [
                    i + 1,
                    h.id,
                    f"{h.score:.4f}",
                    h.parts.get("bm25_rank"),
                    h.parts.get("vector_rank"),
                    h.parts.get("strength"),
                    h.parts.get("recency"),
                ]
                for i, h in enumerate(r.hits)
            ],  # fmt: skip
            ["#", "memory", "score", "bm25", "vector", "strength", "recency"],
        )

    emit(r, as_json, human)


@recall.command("replay")
@click.argument("recall_id", type=ID)
@json_option
@pass_ctx
def replay(ctx, recall_id, as_json):
    """Run a logged recall now (no access recorded) and show which hits left or entered, and why."""
    with ctx.engine() as eng:
        rec = eng.recalls.get(recall_id)
        if rec.mode != "keyword":
            eng.wait_for_embedder()
        d = eng.recalls.replay(recall_id)

    def human(d) -> None:
        what = "the same hits" if d.same else f"{len(d.left)} left, {len(d.entered)} entered"
        click.echo(f"recall {d.recall_id} replayed ({d.mode}, {d.latency_ms:.1f} ms): {what}")
        for c in d.left:
            click.echo(f"  - #{c.memory_id} (was {c.was_rank}): {c.cause}")
        for c in d.entered:
            click.echo(f"  + #{c.memory_id} (now {c.now_rank}): {c.cause}")

    emit(d, as_json, human)


@recall.command("why")
@click.argument("recall_id", type=ID)
@click.argument("memory_id", type=ID)
@json_option
@pass_ctx
def why(ctx, recall_id, memory_id, as_json):
    """Why memory MEMORY_ID is not (or is) in that recall's answer, for its query and filters, now."""
    with ctx.engine() as eng:
        eng.wait_for_embedder()
        ex = eng.recalls.why_not(recall_id, memory_id)
    emit(ex, as_json, lambda e: click.echo(e.summary))
