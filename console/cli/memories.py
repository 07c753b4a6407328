"""Memory verbs: add, ingest, memory (show, pin, archive, edit, ...), backfill."""

from __future__ import annotations

from pathlib import Path

import click

from .common import ID, KIND_CHOICE, UNIT, emit, fail, json_option, pass_ctx, progress_bar


def register(cli: click.Group) -> None:
    for cmd in (add, ingest, memory, backfill):
        cli.add_command(cmd)


@click.command()
@click.argument("text")
@click.option("--kind", type=KIND_CHOICE, default="semantic", show_default=True)
@click.option("--category", default="general", show_default=True)
@click.option(
    "--tier", type=click.Choice(["core", "active", "archived"]), default="active", show_default=True
)
@click.option("--agent", default="")
@click.option("--user", default="")
@click.option("--importance", type=UNIT, default=0.5, show_default=True)
@click.option("--no-dedup", is_flag=True, help="Insert even if a near-duplicate exists.")
@json_option
@pass_ctx
def add(ctx, text, kind, category, tier, agent, user, importance, no_dedup, as_json):
    """Add a memory (a near-duplicate reinforces the existing one instead)."""
    with ctx.engine() as eng:
        r = eng.memories.add_ex(
            text,
            kind=kind,
            category=category,
            tier=tier,
            agent=agent,
            user=user,
            importance=importance,
            dedup=not no_dedup,
        )
    emit(
        {"id": r.id, "deduplicated": r.deduplicated},
        as_json,
        lambda o: click.echo(f"{'reinforced existing' if o['deduplicated'] else 'added'} memory {o['id']}"),
    )


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--no-dedup", is_flag=True)
@json_option
@pass_ctx
def ingest(ctx, file, no_dedup, as_json):
    """Ingest a JSONL file of sessions, messages and memories (format: README)."""
    from engine.importers.ingest import count_lines

    total = count_lines(file)
    advance, close = progress_bar(total, f"ingest {file.name}")
    with ctx.engine() as eng:
        try:
            summary = eng.importers.ingest(file, dedup=not no_dedup, progress=advance)
        finally:
            close()
    emit(
        summary,
        as_json,
        lambda s: click.echo(
            "ingested "
            + ", ".join(f"{v} {k}" for k, v in s["added"].items())
            + (f"; {s['deduplicated']} near-duplicates reinforced" if s.get("deduplicated") else "")
            + (
                f"; {s['skipped_forgotten']} forgotten here, not brought back"
                if s.get("skipped_forgotten")
                else ""
            )
        ),
    )


@click.group()
def memory():
    """Inspect or change one memory."""


@memory.command("show")
@click.argument("memory_id", type=ID)
@json_option
@pass_ctx
def memory_show(ctx, memory_id, as_json):
    with ctx.engine(embedder=None) as eng:
        m = eng.memories.get(memory_id)
    emit(m, as_json, None)


def _memory_op(
    name: str, method: str, takes_value: bool = False, many: str | None = None, help: str | None = None
):
    """`memory NAME ID`; with `many` (an engine bulk call) also `memory NAME ID ID...`: one
    transaction, per-id outcomes, exit 1 if any id is missing."""

    def op(ctx, memory_id, reason, as_json, value=None):
        ids = memory_id if many else (memory_id,)
        if not ids:
            fail(f"name at least one memory id: memory {name} ID... [--reason R]")
        with ctx.engine(embedder=None) as eng:
            if many and len(ids) > 1:
                _report_many(getattr(eng.memories, many)(list(ids), reason=reason), name, as_json)
                return
            fn = getattr(eng.memories, method)
            m = fn(ids[0], value, reason=reason) if takes_value else fn(ids[0], reason=reason)
        emit(
            m,
            as_json,
            lambda m: click.echo(
                f"memory {m.id}: {name} done (tier={m.tier}, pinned={m.pinned}, importance={m.importance})"
            ),
        )

    # click applies decorators bottom-up: the last applied argument comes first on the line.
    op = json_option(op)
    op = click.option("--reason", default="")(op)
    if takes_value:
        op = click.argument("value", type=UNIT)(op)
    op = click.argument("memory_id", type=ID, nargs=-1 if many else 1, required=True)(op)
    return memory.command(name, help=help)(pass_ctx(op))


def _report_many(outcomes, name: str, as_json: bool) -> None:
    def human(rows):
        for o in rows:
            state = f"tier={o.tier}, pinned={o.pinned}"
            click.echo(f"memory {o.id}: " + {"done": f"{name} done ({state})"}.get(o.outcome, o.note))
        click.echo(f"{sum(o.outcome == 'done' for o in rows)} of {len(rows)} changed")

    emit(outcomes, as_json, human)
    missing = [o for o in outcomes if o.outcome == "missing"]
    if missing:
        fail(
            f"{len(missing)} of {len(outcomes)} id(s) not found: " + ", ".join(str(o.id) for o in missing), 1
        )
    if refused := [o for o in outcomes if o.outcome == "refused"]:
        fail(f"{len(refused)} of {len(outcomes)} refused: {refused[0].note}", 1)


_memory_op(
    "pin", "pin", many="pin_many",
    help="Pin memories (ID... : several in one transaction, per-id outcomes): they never decay.",
)  # fmt: skip
_memory_op("unpin", "unpin")
_memory_op(
    "archive", "archive", many="archive_many",
    help="Archive memories (ID... : several in one transaction, per-id outcomes); restorable.",
)  # fmt: skip
_memory_op("restore", "restore")  # archived -> active; refused otherwise (exit 2)
_memory_op("reinforce", "reinforce")
_memory_op("importance", "set_importance", takes_value=True)


@memory.command("edit")
@click.argument("memory_id", type=ID)
@click.argument("text")
@click.option("--reason", default="")
@json_option
@pass_ctx
def memory_edit(ctx, memory_id, text, reason, as_json):
    """Replace a memory's text (audited, re-embedded; curator proposals on it refuse approval)."""
    with ctx.engine() as eng:
        m = eng.memories.edit(memory_id, text, reason=reason)
    emit(m, as_json, lambda m: click.echo(f"memory {m.id}: edited"))


@click.command()
@json_option
@pass_ctx
def backfill(ctx, as_json):
    """Embed memories that were written while no model was loaded."""
    with ctx.engine(load="now", auto_backfill=False) as eng:
        total = eng.memories.pending_vectors()
        advance, close = progress_bar(total, "embedding")
        try:
            n = eng.memories.backfill_vectors(progress=advance)
        finally:
            close()
    emit({"embedded": n}, as_json, lambda o: click.echo(f"embedded {o['embedded']} memories"))
