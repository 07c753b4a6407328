"""`audit`: the trail of every mutation, filtered; `--verify` checks its keyed hash chain and the
head anchored outside the database (exit 1 on a break or a truncated tail); `--rekey` keys an old chain."""

from __future__ import annotations

import json

import click

from engine.clock import iso
from engine.identity import parse_actor
from engine.types import to_json

from .common import emit, json_option, pass_ctx, table
from .filter_option import filter_option, merged, parsed


def register(cli: click.Group) -> None:
    cli.add_command(audit)


@click.command()
@click.option("--target", default=None, help="A target id, or kind:id (memory:12, proposal:3).")
@click.option("--actor", default=None)
@click.option(
    "--action",
    default=None,
    help="add, edit, forget, proposal-applied, ... (a trailing * is a prefix: forg*)",
)
@click.option("--text", default=None, help="Words that must appear in the reason or the summary (any case).")
@click.option("--since", default=None, help="ISO date or time (UTC unless it says otherwise).")
@click.option("--limit", type=click.IntRange(1, 1_000_000), default=200, show_default=True)
@click.option(
    "--verify", is_flag=True, help="Check the keyed hash chain and its head anchor instead of listing rows."
)
@click.option(
    "--rekey",
    is_flag=True,
    help="Key an unkeyed chain from an older version now (the next write does it anyway).",
)
@filter_option
@json_option
@pass_ctx
def audit(ctx, target, actor, action, text, since, limit, verify, rekey, filter_text, as_json):
    """Who changed what, when and why (newest first)."""
    with ctx.engine(embedder=None) as eng:
        if rekey:
            emit({"result": eng.audit.rekey()}, as_json, lambda d: click.echo(d["result"]))
            return
        if verify:
            chk = eng.audit.verify()
            emit(chk, as_json, lambda c: click.echo(c.message + "".join(f"\n  {p}" for p in c.problems)))
            if not chk.ok:
                raise click.exceptions.Exit(1)
            return
        f = parsed(filter_text, "audit", eng.clock.now())
        given = {"target": target, "actor": actor, "action": action, "since": since, "text": text}
        rows = eng.audit.log(**merged(given, f), limit=limit)

    def summary(s) -> str:
        return s if isinstance(s, str) else json.dumps(s, ensure_ascii=False, separators=(",", ":"))

    if as_json:  # the actor text split into the verified identity and the label (engine/identity.py)
        emit([{**to_json(r), **parse_actor(r.actor).__dict__} for r in rows], True)
        return
    emit(
        rows,
        as_json,
        lambda rs: table(
            [
                [
                    r.id,
                    iso(r.at),
                    parse_actor(r.actor).verified,
                    parse_actor(r.actor).label or "",
                    r.action,
                    f"{r.target_kind}:{r.target_id}",
                    r.reason[:30],
                    summary(r.summary)[:80],
                ]
                for r in rs
            ],
            ["id", "at", "who", "as", "action", "target", "reason", "summary"],
        ),
    )
