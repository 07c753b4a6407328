"""Foundation verbs: add, ingest, search, explain, sessions, session, messages, memory, demo."""

from __future__ import annotations

from pathlib import Path

import click

from engine.clock import iso

from .cli_common import ID, UNIT, counts_text, emit, fail, json_option, pass_ctx, progress_bar, table

TIER_CHOICE = click.Choice(["core", "active", "archived", "all"])
KIND_CHOICE = click.Choice(["episodic", "semantic", "procedural"])


def register(cli: click.Group) -> None:
    for cmd in (add, ingest, search, explain, sessions, session, messages, memory, demo, backfill):
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
@json_option
@pass_ctx
def search(ctx, query, k, tier, kind, category, agent, user, mode, no_access, as_json):
    """Hybrid search with the score breakdown of every hit."""
    with ctx.engine() as eng:
        if mode != "keyword":
            eng.wait_for_embedder()
        r = eng.search(
            query,
            k=k,
            tier=tier,
            kind=kind,
            category=category,
            agent=agent,
            user=user,
            mode=mode,
            record_access=not no_access,
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


@click.command()
@click.option("--agent", default=None)
@click.option("--user", default=None)
@click.option("--source", default=None)
@click.option("--text", default=None, help="Match title, id, agent or user.")
@click.option("--limit", type=click.IntRange(1, 100000), default=200, show_default=True)
@json_option
@pass_ctx
def sessions(ctx, agent, user, source, text, limit, as_json):
    """List sessions, newest first."""
    with ctx.engine(embedder=None) as eng:
        rows = eng.sessions.list(agent=agent, user=user, source=source, text=text, limit=limit)
    emit(
        rows,
        as_json,
        lambda rs: table(
            [[s.id, iso(s.started_at), s.agent, s.user, s.source, s.message_count, s.title] for s in rs],
            ["id", "started", "agent", "user", "source", "msgs", "title"],
        ),
    )


@click.command()
@click.argument("session_id")
@json_option
@pass_ctx
def session(ctx, session_id, as_json):
    """One session's transcript and lineage."""
    with ctx.engine(embedder=None) as eng:
        d = eng.sessions.get(session_id)

    def human(d):
        s = d.session
        click.echo(
            f"{s.id}  {s.title or ''}\nagent={s.agent} user={s.user} source={s.source} "
            f"started={iso(s.started_at)} ended={iso(s.ended_at)}"
        )
        if d.parent:
            click.echo(f"parent: {d.parent.id} {d.parent.title or ''}")
        for c in d.children:
            click.echo(f"child:  {c.id} {c.title or ''}")
        for m in d.messages:
            tool = f" [{m.tool_name}]" if m.tool_name else ""
            click.echo(f"\n{iso(m.at)} {m.role}{tool} (#{m.id})\n{m.content}")

    emit(d, as_json, human)


@click.command()
@click.argument("query")
@click.option("--session", "session_id", default=None)
@click.option("--agent", default=None)
@click.option("--limit", type=click.IntRange(1, 10000), default=50, show_default=True)
@json_option
@pass_ctx
def messages(ctx, query, session_id, agent, limit, as_json):
    """Full-text search of session transcripts (CJK works)."""
    with ctx.engine(embedder=None) as eng:
        hits = eng.sessions.search_messages(query, limit=limit, session_id=session_id, agent=agent)
    emit(
        hits,
        as_json,
        lambda hs: table(
            [[h.message.id, h.message.session_id, iso(h.message.at), h.message.role, h.snippet] for h in hs],
            ["id", "session", "at", "role", "snippet"],
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
@click.option("--force", is_flag=True, help="Write even if the database already has data.")
@json_option
@pass_ctx
def demo(ctx, force, as_json):
    """Write a realistic demo database to --db."""
    from engine.demo.build import write_demo

    with ctx.engine(load="background") as eng:
        if not force and eng.counts().sessions:
            fail(f"{ctx.db} already holds data; use --force to add the demo anyway")
        summary = write_demo(eng)
    emit(
        summary,
        as_json,
        lambda s: click.echo(f"demo written to {ctx.db}:\n" + counts_text(s)),
    )


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
