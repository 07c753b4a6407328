"""Forget verbs: forget, forget-requests, forget-request."""

from __future__ import annotations

import click

from engine.clock import iso

from .common import emit, fail, json_option, pass_ctx, table

STATUSES = click.Choice(["open", "previewed", "executed", "verified"])


def register(cli: click.Group) -> None:
    cli.add_command(forget)
    cli.add_command(forget_requests)
    cli.add_command(forget_request)


def _case(res) -> dict:
    """The one JSON shape of a forget answer (a ForgetResult or a ForgetRequest)."""
    rid = getattr(res, "request_id", None) or res.id
    return {"request_id": rid, "status": res.status, "counts": res.counts, "residue": res.residue}


def _counts(counts: dict) -> str:
    """Removed records per kind (the audit head and other bookkeeping stay in --json)."""
    return ", ".join(f"{k} {v}" for k, v in counts.items() if isinstance(v, int) and v)


def _verified(o: dict) -> None:
    levels = [lv if isinstance(lv, dict) else vars(lv) for lv in o.get("levels") or []]
    again = [lv for lv in levels if lv.get("name") == "recurrence"]
    if not o["checked_texts"] and again:
        click.echo(
            f"forget request {o['request_id']}: {o['status']}; the sealed texts are gone, re-checked by "
            f"keyed fingerprints over every live row: recurrence {again[0]['residue']} (must be 0)"
        )
        return
    if not o["checked_texts"]:
        click.echo(
            f"forget request {o['request_id']}: {o['status']}; nothing to check against here (the "
            "case's sealed texts are gone: verified already, or sealed by another installation)"
        )
        return
    _human(o)
    if not o["wal_truncated"] and not o.get("levels"):
        click.echo("  the WAL could not be truncated (another process holds a read open); run --verify later")


def _human(o: dict) -> None:
    click.echo(
        f"forget request {o['request_id']}: {o['status']}"
        + ("" if o["residue"] is None else f"; residue {o['residue']} (must be 0)")
    )
    click.echo("  " + _counts(o["counts"]))
    # On a server, what the verification covered, level by level (engine/forget/levels.py).
    for name, line in (o["counts"].get("levels") or {}).items():
        click.echo(f"  {name}: {line}")
    for it in o.get("items", []):
        click.echo(f"  {it['kind']} {it['id']} ({it['why']}): {it['preview'][:90]}")


@click.command()
@click.option("--memory", "memory_ids", type=int, multiple=True, help="A memory id (repeatable).")
@click.option(
    "--session", "session_id", default=None, help="A session: its messages and the memories derived from it."
)
@click.option("--agent", default=None, help="Everything of this agent.")
@click.option("--user", default=None, help="Everything of this user.")
@click.option("--query", default=None, help="Memories, messages, rules and titles containing this text.")
@click.option("--preview", is_flag=True, help="Only show what would be removed (the case stays open).")
@click.option("--reason", required=True)
@click.option("--deadline", default=None, help="ISO date the case must be closed by (default: 30 days).")
@json_option
@pass_ctx
def forget(ctx, memory_ids, session_id, agent, user, query, preview, reason, deadline, as_json):
    """Remove content everywhere it lives and verify that its bytes are gone."""
    scopes = [
        (k, v)
        for k, v in (
            ("memory", list(memory_ids) or None),
            ("session", session_id),
            ("agent", agent),
            ("user", user),
            ("query", query),
        )
        if v
    ]
    if len(scopes) != 1:
        fail("name exactly one scope: --memory ID..., --session, --agent, --user or --query")
    kind, value = scopes[0]
    with ctx.engine(embedder=None) as eng:
        res = eng.forget.run(kind, value, reason, preview=preview, deadline=deadline)
    if preview:
        from engine.types import to_json

        doc = {
            "request_id": res.request.id,
            "status": res.request.status,
            "counts": res.counts,
            "residue": None,
            "items": to_json(res.items),
        }
    else:
        doc = _case(res)
    emit(doc, as_json, _human)


@click.command("forget-requests")
@click.option("--status", type=STATUSES, default=None)
@json_option
@pass_ctx
def forget_requests(ctx, status, as_json):
    """Forget cases, newest first."""
    with ctx.engine(embedder=None) as eng:
        rows = eng.forget.list(status=status)
    emit(
        rows,
        as_json,
        lambda rs: table(
            [
                [
                    r.id,
                    r.scope_kind,
                    r.scope_value[:40],
                    r.status,
                    r.residue,
                    iso(r.requested_at),
                    iso(r.deadline),
                    r.requested_by,
                    r.reason[:40],
                ]
                for r in rs
            ],
            ["id", "scope", "value", "status", "residue", "requested", "deadline", "by", "reason"],
        ),
    )


@click.command("forget-request")
@click.argument("request_id", type=int)
@click.option(
    "--execute", is_flag=True, help="Execute a previewed case, or finish an interrupted one (then verify it)."
)
@click.option("--verify", "verify", is_flag=True, help="Re-scan an executed case's files for the text.")
@click.option(
    "--memory",
    "memory_ids",
    type=int,
    multiple=True,
    help="With --execute: only these memories of the preview (repeatable).",
)
@json_option
@pass_ctx
def forget_request(ctx, request_id, execute, verify, memory_ids, as_json):
    """One forget case; with --execute, carry it out (or finish it); with --verify, re-check it."""
    if execute and verify:
        fail("use --execute or --verify, not both (--execute verifies too)")
    with ctx.engine(embedder=None) as eng:
        if execute:
            res = eng.forget.execute(request_id, memory_ids=list(memory_ids) or None)
            emit(_case(res), as_json, _human)
            return
        if verify:
            ver = eng.forget.verify(request_id)
            r = eng.forget.get(request_id)
            doc = {
                **_case(r),
                "checked_texts": ver.checked_texts,
                "files": ver.files,
                "wal_truncated": ver.wal_truncated,
                "levels": ver.levels,
            }
            emit(doc, as_json, _verified)
            return
        r = eng.forget.get(request_id)
    emit(
        r,
        as_json,
        lambda r: click.echo(
            f"forget request {r.id}: {r.status}\n  scope {r.scope_kind} {r.scope_value}\n"
            f"  reason {r.reason}\n"
            f"  requested {iso(r.requested_at)} by {r.requested_by}; deadline {iso(r.deadline)}\n"
            f"  executed {iso(r.executed_at)}; verified {iso(r.verified_at)}; residue {r.residue}\n"
            f"  counts " + _counts(r.counts)
        ),
    )
