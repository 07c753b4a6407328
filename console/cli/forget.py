"""Forget verbs: forget, forget-requests, forget-request."""

from __future__ import annotations

import time

import click

from console.shared.text_safety import visible
from engine.clock import iso
from engine.forget.levels import readable, why_not
from engine.forget.match import MATCH_MODES
from engine.forget.workflow import approved_by, due

from .common import emit, fail, json_option, pass_ctx, table

STATUSES = click.Choice(["open", "previewed", "executed", "verified", "withdrawn"])
MATCH = click.Choice(list(MATCH_MODES))


def register(cli: click.Group) -> None:
    cli.add_command(forget)
    cli.add_command(forget_requests)
    cli.add_command(forget_request)


def _case(res, req=None, now: float | None = None) -> dict:
    """The one JSON shape of a forget answer (a ForgetResult or a ForgetRequest): its state, what
    it removed, every verification level with what it checked, and why it is not `verified`."""
    rid = getattr(res, "request_id", None) or res.id
    ver = getattr(res, "verification", None)
    levels = readable(res.counts, ver.levels if ver is not None else None)
    doc = {"request_id": rid, "status": res.status, "counts": res.counts, "residue": res.residue,
           "verified": res.status == "verified", "levels": levels,
           "why_not_verified": why_not(res.status, levels, ver.wal_truncated if ver else None)}  # fmt: skip
    if req is not None:
        doc.update(_people(req, time.time() if now is None else now))
    return doc


def _people(r, now: float) -> dict:
    """Who requested, approved and executed a case; its match mode, deadline and withdrawal."""
    wf = r.workflow
    d = due(r, now)
    out = {"requested_by": r.requested_by, "approved_by": approved_by(r),
           "executed_by": (wf.get("executed_by") or {}).get("by"), "match": wf.get("match"),
           "deadline": r.deadline, "due": d.text, "overdue": d.overdue, "days_left": d.days_left,
           "excluded": wf.get("excluded") or {}}  # fmt: skip
    for key in ("withdrawn", "residue_accepted"):
        if wf.get(key):
            out[key] = wf[key]
    return out


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
    if o.get("match"):
        click.echo(f"  match: {o['match']} · {_per_kind(o.get('items', []))}")
    for it in o.get("items", []):
        # The matched words in [brackets] (the console highlights them); stored text made visible.
        shown = _marked(it["preview"], it.get("marks") or [])
        click.echo(f"  {it['kind']} {it['id']} ({it['why']}): {visible(shown, one_line=True)}")
    if o.get("why_not_verified") and o["status"] == "executed":
        click.echo(f"  not verified: {o['why_not_verified']}")
        for h in o["counts"].get("residue_at") or []:
            click.echo(f"  residue at {where(h)}")
        if o["counts"].get("residue_at"):
            click.echo(f"  widen the case, or: forget-request {o['request_id']} --accept-residue --reason R")


def _marked(text: str, marks: list) -> str:
    out, i = [], 0
    for a, b in sorted(tuple(m) for m in marks):
        if a < i:
            continue
        out += [text[i:a], "[", text[a:b], "]"]
        i = b
    return "".join(out) + text[i:]


def _per_kind(items: list) -> str:
    n: dict[str, int] = {}
    for it in items:
        n[it["kind"]] = n.get(it["kind"], 0) + 1
    plural = {"memory": "memories"}
    return (
        ", ".join(f"{v} {plural.get(k, k + 's') if v != 1 else k}" for k, v in n.items()) or "nothing matches"
    )


@click.command()
@click.option("--memory", "memory_ids", type=int, multiple=True, help="A memory id (repeatable).")
@click.option(
    "--session", "session_id", default=None, help="A session: its messages and the memories derived from it."
)
@click.option("--agent", default=None, help="Everything of this agent.")
@click.option("--user", default=None, help="Everything of this user.")
@click.option("--query", default=None, help="Memories, messages, rules and titles matching this text.")
@click.option(
    "--match",
    "match",
    type=MATCH,
    default="word",
    show_default=True,
    help="How --query matches: whole words in any order (word), the words in order (phrase), or "
    "anywhere inside words (substring: 'Sam' also matches 'sample').",
)
@click.option("--preview", is_flag=True, help="Only show what would be removed (the case stays open).")
@click.option("--reason", required=True)
@click.option("--deadline", default=None, help="ISO date the case must be closed by (default: 30 days).")
@json_option
@pass_ctx
def forget(ctx, memory_ids, session_id, agent, user, query, match, preview, reason, deadline, as_json):
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
        res = eng.forget.run(kind, value, reason, preview=preview, deadline=deadline, match=match)
        req = res.request if preview else eng.forget.get(res.request_id)
        now = eng.clock.now()
    if preview:
        from engine.types import to_json

        doc = {
            "request_id": res.request.id,
            "status": res.request.status,
            "counts": res.counts,
            "residue": None,
            "items": to_json(res.items),
            **_people(req, now),
        }
    else:
        doc = _case(res, req, now)
    emit(doc, as_json, _human)


@click.command("forget-requests")
@click.option("--status", type=STATUSES, default=None)
@json_option
@pass_ctx
def forget_requests(ctx, status, as_json):
    """Forget cases, newest first."""
    with ctx.engine(embedder=None) as eng:
        rows = eng.forget.list(status=status)
        now = eng.clock.now()
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
                    _due_cell(r, now),
                    r.requested_by,
                    r.reason[:40],
                ]
                for r in rs
            ],
            ["id", "scope", "value", "status", "residue", "requested", "deadline", "due", "by", "reason"],
        ),
    )


def _due_cell(r, now: float) -> str:
    d = due(r, now)
    return f"OVERDUE {d.text[len('overdue ') :]}" if d.overdue else d.text


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
@click.option("--preview", "preview", is_flag=True, help="Preview the case again (what it would remove).")
@click.option(
    "--exclude",
    "exclude",
    multiple=True,
    metavar="KIND:ID",
    help="Drop a record from the case's scope (memory:12, rule:3, message:40, session:S, flow:2), "
    "then preview again (repeatable).",
)
@click.option("--include", "include", multiple=True, metavar="KIND:ID", help="Put a dropped record back.")
@click.option(
    "--withdraw", is_flag=True, help="Close an open case without removing anything (needs --reason)."
)
@click.option(
    "--approve", is_flag=True, help="Approve the previewed scope (a second operator; two-person rule)."
)
@click.option(
    "--accept-residue",
    "accept_residue",
    is_flag=True,
    help="Record that an executed case's residue was looked at and accepted (needs --reason).",
)
@click.option("--reason", default=None, help="Why (with --withdraw or --accept-residue).")
@json_option
@pass_ctx
def forget_request(
    ctx, request_id, execute, verify, memory_ids, preview, exclude, include, withdraw, approve,
    accept_residue, reason, as_json,
):  # fmt: skip
    """One forget case; with --execute, carry it out (or finish it); with --verify, re-check it;
    --exclude/--include narrow it, --withdraw closes it, --approve signs it off, --accept-residue
    records residue as accepted."""
    acts = [n for n, on in (("--execute", execute), ("--verify", verify), ("--preview", preview),
                            ("--exclude/--include", exclude or include), ("--withdraw", withdraw),
                            ("--approve", approve), ("--accept-residue", accept_residue)) if on]  # fmt: skip
    if len(acts) > 1:
        fail(f"use one of {', '.join(acts)} at a time (--execute verifies too)")
    if (withdraw or accept_residue) and not (reason or "").strip():
        fail(f"{acts[0]} needs --reason")
    with ctx.engine(embedder=None) as eng:
        now = eng.clock.now()
        if execute:
            res = eng.forget.execute(request_id, memory_ids=list(memory_ids) or None)
            emit(_case(res, eng.forget.get(request_id), now), as_json, _human)
            return
        if verify:
            ver = eng.forget.verify(request_id)
            r = eng.forget.get(request_id)
            levels = readable(r.counts, ver.levels)
            doc = {
                **_case(r),
                "checked_texts": ver.checked_texts,
                "files": ver.files,
                "wal_truncated": ver.wal_truncated,
                "levels": levels,
                "why_not_verified": why_not(r.status, levels, ver.wal_truncated),
            }
            emit(doc, as_json, _verified)
            return
        if preview or exclude or include:
            items = [_kind_id(x) for x in (exclude or include)]
            pv = (
                eng.forget.exclude(request_id, items, keep=bool(include))
                if items
                else eng.forget.preview(request_id)
            )
            from engine.types import to_json

            doc = {"request_id": pv.request.id, "status": pv.request.status, "counts": pv.counts,
                   "residue": None, "items": to_json(pv.items), **_people(pv.request, now)}  # fmt: skip
            emit(doc, as_json, _human)
            return
        if withdraw:
            r = eng.forget.withdraw(request_id, reason)
        elif approve:
            r = eng.forget.approve(request_id)
        elif accept_residue:
            r = eng.forget.accept_residue(request_id, reason)
        else:
            r = eng.forget.get(request_id)
    doc = {**vars(r), **_case(r), **_people(r, now)}
    emit(doc, as_json, _show)


def _kind_id(text: str) -> tuple[str, str]:
    kind, sep, tid = text.partition(":")
    if not sep or not kind or not tid:
        fail(f"name a record as KIND:ID (memory:12, rule:3), not {text!r}")
    return kind, tid


def _show(o: dict) -> None:
    who = f"requested {iso(o['requested_at'])} by {o['requested_by']}"
    if o.get("approved_by"):
        who += f"; approved by {', '.join(o['approved_by'])}"
    if o.get("executed_by"):
        who += f"; executed by {o['executed_by']}"
    lines = [
        f"forget request {o['id']}: {o['status']}"
        + ("" if not o.get("overdue") else f" — OVERDUE ({o['due']})"),
        f"  scope {o['scope_kind']} {visible(o['scope_value'], one_line=True)}"
        + (f" (match: {o['match']})" if o.get("match") else ""),
        f"  reason {visible(o['reason'], one_line=True)}",
        f"  {who}",
        f"  deadline {iso(o['deadline'])} ({o['due']})",
        f"  executed {iso(o['executed_at'])}; verified {iso(o['verified_at'])}; residue {o['residue']}",
        "  counts " + _counts(o["counts"]),
    ]
    if o.get("excluded"):
        lines.append(
            "  dropped from the scope: " + ", ".join(f"{k} {', '.join(v)}" for k, v in o["excluded"].items())
        )
    if o.get("withdrawn"):
        w = o["withdrawn"]
        lines.append(
            f"  withdrawn {iso(w['at'])} by {w['by']}: {visible(w.get('reason', ''), one_line=True)}"
        )
    if o.get("residue_accepted"):
        a = o["residue_accepted"]
        lines.append(
            f"  residue accepted {iso(a['at'])} by {a['by']}: {visible(a.get('reason', ''), one_line=True)}"
        )
    for lv in o.get("levels") or []:
        lines.append(f"  {lv['name']}: {lv['line']}")
    if o.get("why_not_verified") and o["status"] == "executed":
        lines.append(f"  not verified: {o['why_not_verified']}")
    lines += [f"  residue at {where(h)}" for h in o["counts"].get("residue_at") or []]
    click.echo("\n".join(lines))


def where(h: dict) -> str:
    """One located residue hit: "demo.db offset 36789 (12 bytes), page 9 of rules: piece shared
    with live rule #37"."""
    out = f"{h.get('file')} offset {h.get('offset')} ({h.get('length', '?')} bytes)"
    if h.get("page"):
        out += f", page {h['page']}" + (f" of {h['table']}" if h.get("table") else "")
    return out + (f": {h['shared_with']}" if h.get("shared_with") else "")
