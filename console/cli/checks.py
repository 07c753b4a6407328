"""`check`: retrieval checks ("for this query, memory M is in the top k"). `check add`, `check list`,
`check run` (exit 1 when any fails: CI for a memory store), `check remove`."""

from __future__ import annotations

import click

from engine.clock import iso

from .common import ID, KIND_CHOICE, emit, json_option, pass_ctx, table


def register(cli: click.Group) -> None:
    cli.add_command(check)


def _rows(checks) -> None:
    table(
        [
            [
                c.id,
                c.status,
                c.memory_id,
                c.k,
                c.last_rank or "-",
                c.query[:40],
                iso(c.last_run_at) if c.last_run_at else "-",
                c.last_why[:60],
            ]
            for c in checks
        ],  # fmt: skip
        ["id", "status", "memory", "k", "rank", "query", "run", "why not"],
    )


@click.group()
def check() -> None:
    """Retrieval checks operators pin."""


@check.command("add")
@click.option("--query", "-q", default=None, help="The query (or --from-recall).")
@click.option("--memory", "-m", "memory_id", type=ID, required=True, help="The memory that must be returned.")
@click.option(
    "-k", "--k", "k", type=click.IntRange(1, 200), default=None, help="Top k (default 10, or the recall's)."
)
@click.option("--from-recall", type=ID, default=None, help="Use a logged recall's query, filters and mode.")
@click.option("--tier", default=None)
@click.option("--kind", type=KIND_CHOICE, default=None)
@click.option("--category", default=None)
@click.option("--agent", default=None)
@click.option("--user", default=None)
@click.option("--mode", type=click.Choice(["hybrid", "keyword", "vector"]), default=None)
@json_option
@pass_ctx
def add(ctx, query, memory_id, k, from_recall, tier, kind, category, agent, user, mode, as_json):
    """Pin "for this query (and filters), memory M is in the top k"; runs it once."""
    if (query is None) == (from_recall is None):
        raise click.UsageError("give --query or --from-recall (one of them)")
    with ctx.engine() as eng:
        eng.wait_for_embedder()
        if from_recall is not None:
            c = eng.checks.add_from_recall(from_recall, memory_id, k)
        else:
            c = eng.checks.add(query, memory_id, k or 10, tier, kind, category, agent, user, mode)
    emit(c, as_json, lambda c: _rows([c]))


@check.command("list")
@json_option
@pass_ctx
def list_(ctx, as_json):
    """Every check with its last outcome (not run again: see `check run`)."""
    with ctx.engine(embedder=None) as eng:
        checks = eng.checks.list()
    emit(checks, as_json, _rows)


@check.command("run")
@click.argument("ids", type=ID, nargs=-1)
@json_option
@pass_ctx
def run(ctx, ids, as_json):
    """Run the checks (all, or IDS) now; exit 1 when any fails."""
    with ctx.engine() as eng:
        eng.wait_for_embedder()
        res = eng.checks.run(list(ids) or None)
    doc = {"ok": res.ok, "failed": [c.id for c in res.failed], "checks": res.checks}

    def human(_d) -> None:
        _rows(res.checks)
        click.echo(f"{len(res.failed)} of {len(res.checks)} failing")

    emit(doc, as_json, human)
    if not res.ok:
        raise click.exceptions.Exit(1)


@check.command("remove")
@click.argument("check_id", type=ID)
@json_option
@pass_ctx
def remove(ctx, check_id, as_json):
    """Remove a check (audited)."""
    with ctx.engine(embedder=None) as eng:
        eng.checks.remove(check_id)
    emit({"removed": check_id}, as_json, lambda d: click.echo(f"check {check_id} removed"))
