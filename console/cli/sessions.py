"""Session verbs: sessions, session, messages (the transcripts agents logged)."""

from __future__ import annotations

import click

from engine.clock import iso

from .common import emit, json_option, pass_ctx, table
from .filter_option import filter_option, merged, parsed


def register(cli: click.Group) -> None:
    for cmd in (sessions, session, messages):
        cli.add_command(cmd)


@click.command()
@click.option("--agent", default=None)
@click.option("--user", default=None)
@click.option("--source", default=None)
@click.option("--text", default=None, help="Match title, id, agent or user.")
@click.option("--limit", type=click.IntRange(1, 100000), default=200, show_default=True)
@filter_option
@json_option
@pass_ctx
def sessions(ctx, agent, user, source, text, limit, filter_text, as_json):
    """List sessions, newest first."""
    with ctx.engine(embedder=None) as eng:
        f = parsed(filter_text, "sessions", eng.clock.now())
        given = merged({"agent": agent, "user": user, "source": source, "text": text}, f)
        rows = eng.sessions.list(**given, limit=limit)
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
