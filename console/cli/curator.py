"""Curator verbs: curate run, proposals, proposal show/approve/reject/undo."""

from __future__ import annotations

import dataclasses

import click

from engine.clock import iso
from engine.curator.impact import NEW_RECORD, ImpactQuery
from engine.curator.risky import risk_of
from engine.errors import InvalidInput

from .common import ID, emit, fail, json_option, pass_ctx, table
from .filter_option import filter_option, merged, parsed

KINDS = click.Choice(["merge", "archive", "promote", "retire"])
STATUSES = click.Choice(["pending", "approved", "rejected", "applied", "undone"])


def register(cli: click.Group) -> None:
    cli.add_command(curate)
    cli.add_command(proposals)
    cli.add_command(proposal)


def _short(text: str | None, n: int = 60) -> str:
    t = " ".join((text or "").split())
    return t if len(t) <= n else t[: n - 1] + "…"


@click.group()
def curate():
    """The curator: a deterministic pass that proposes merges, archiving, promotions, retirements."""


@curate.command("run")
@click.option("--dry-run", is_flag=True, help="Show what would be proposed; write nothing.")
@click.option(
    "--no-model", is_flag=True, help="Compare rules by their leading characters only (do not load the model)."
)
@json_option
@pass_ctx
def curate_run(ctx, dry_run, no_model, as_json):
    """Queue proposals (nothing changes until an operator approves). Writes run.json and REPORT.md
    under curator/<YYYYMMDD-HHMMSS>/ beside the database."""
    with ctx.engine(embedder=None if no_model else "default", load="lazy") as eng:
        run = eng.curator.run(dry_run=dry_run, use_model=not no_model)

    def human(r):
        p = r.counts.get("proposed", {})
        click.echo(
            ("dry run: would propose " if r.dry_run else f"run {r.id}: proposed ")
            + ", ".join(f"{p.get(k, 0)} {k}" for k in ("merge", "archive", "promote", "retire"))
            + f"; skipped {r.counts.get('skipped', 0)} already decided; "
            f"compared {r.counts.get('compared', 0)} in {r.timings.get('total', 0)} s"
        )
        if r.report_dir:
            click.echo(f"report: {r.report_dir}/REPORT.md")
        if r.auto_applied:
            click.echo(f"auto-applied by policy: {', '.join(map(str, r.auto_applied))}")
        if r.counts.get("malformed"):
            click.echo(
                f"skipped {r.counts['malformed']} malformed row(s) (run `memconsole doctor`): "
                + "; ".join(r.counts.get("malformed_rows", [])[:5])
            )

    emit(run, as_json, human)


@click.command()
@click.option("--status", type=STATUSES, default=None)
@click.option("--kind", type=KINDS, default=None)
@click.option("--agent", default=None, help="Only proposals with a member of this agent.")
@click.option("--limit", type=click.IntRange(1, 100000), default=500, show_default=True)
@click.option(
    "--stale", "only_stale", is_flag=True, help="Only pending proposals approval would refuse as stale."
)
@filter_option
@json_option
@pass_ctx
def proposals(ctx, status, kind, agent, limit, only_stale, filter_text, as_json):
    """The approval queue, newest first (the text column: the proposed text, or for archive and
    retire the member's own text). `--stale`: only the pending proposals whose members changed
    since they were proposed."""
    with ctx.engine(embedder=None) as eng:
        f = parsed(filter_text, "curator", eng.clock.now())
        given = {"status": "pending" if only_stale else status, "kind": kind, "agent": agent}
        rows = eng.curator.rows(**merged(given, f), limit=limit)
        if only_stale:
            stale = eng.curator.stale([r.proposal.id for r in rows])
            rows = [r for r in rows if r.proposal.id in stale]
    emit(
        [r.proposal for r in rows],
        as_json,
        lambda _: table(
            [
                [
                    r.proposal.id,
                    r.proposal.kind,
                    r.proposal.target_kind,
                    r.proposal.status,
                    ",".join(r.agents),
                    ",".join(map(str, r.proposal.members)),
                    iso(r.proposal.created_at),
                    _short(r.text),
                ]
                for r in rows
            ],
            ["id", "kind", "target", "status", "agent", "members", "created", "text"],
        ),
    )


@click.group()
def proposal():
    """Look at, approve, reject or undo one proposal."""


@proposal.command("show")
@click.argument("proposal_id", type=ID)
@click.option(
    "--query", "queries", multiple=True, help="A search whose top k the impact preview checks (repeatable)."
)
@click.option("--k", "k", type=click.IntRange(1, 1000), default=10, show_default=True, help="For --query.")
@click.option("--no-impact", is_flag=True, help="Skip the impact preview (it loads the model).")
@json_option
@pass_ctx
def proposal_show(ctx, proposal_id, queries, k, no_impact, as_json):
    """One proposal: its members, similarities and, while pending, what approving will do (the
    plan) and which searches' top k would change (impact: each member's own text and every --query,
    searched before and after a dry-run apply that is rolled back; nothing is written)."""
    plan, rows = None, []
    with ctx.engine(load="lazy" if no_impact else "now") as eng:
        d = eng.curator.get(proposal_id)
        if d.proposal.status == "pending":
            try:
                plan = eng.curator.plan(proposal_id)
                if not no_impact:
                    asked = [ImpactQuery(f"query {i + 1}", q, {}, k) for i, q in enumerate(queries)]
                    rows = eng.curator.impact(proposal_id, asked)
            except InvalidInput as exc:  # stale: shown, not fatal
                plan, rows = None, []
                click.echo(f"not approvable now: {str(exc).splitlines()[0]}", err=True)
    if as_json:
        impact_json = [{**dataclasses.asdict(r), "changed": r.changed} for r in rows]
        emit({**dataclasses.asdict(d), "plan": plan, "impact": impact_json}, True)
        return

    def human(d):
        p = d.proposal
        click.echo(f"proposal {p.id}: {p.kind} {p.target_kind} — {p.status}")
        if p.survivor_text:
            click.echo(f"text: {p.survivor_text}")
        if why := risk_of(p.evidence):
            click.echo(f"RISKY: {why}")
        for m in d.members:
            mark = "*" if m.id == d.survivor_id else " "
            click.echo(f" {mark} {m.kind} {m.id} [{m.state}, {m.strength:.2f}] {_short(m.text, 100)}")
        if d.similarities and len(d.members) > 1:
            click.echo("similarities:")
            for m, row in zip(d.members, d.similarities, strict=True):
                click.echo(f"  {m.id:>6} " + " ".join("  -  " if v is None else f"{v:.3f}" for v in row))
        if p.reason:
            click.echo(f"reason: {p.reason}")
        if plan is not None:
            click.echo("\nif approved:\n" + "\n".join("  " + ln for ln in plan.describe().splitlines()))
        if rows:
            changed = [r for r in rows if r.changed]
            click.echo(
                f"\nimpact (dry run, rolled back): {len(changed)} of {len(rows)} searches' top k change"
            )
            for r in changed:
                click.echo(f"  {r.label} “{_short(r.query, 50)}” (k={r.k}): " + _moves(r))

    emit(d, False, human)


def _moves(r) -> str:
    def ids(xs):
        return ", ".join("the merged memory" if i == NEW_RECORD else f"#{i}" for i in xs)

    parts = []
    if r.left:
        parts.append(f"leaves {ids(r.left)}")
    if r.entered:
        parts.append(f"enters {ids(r.entered)}")
    return "; ".join(parts) or "same hits, new order"


def _done(verb: str):
    return lambda p: click.echo(
        f"proposal {p.id}: {verb} (status {p.status}"
        + (f", result {p.result_id}" if p.result_id else "")
        + ")"
    )


def _targets(eng, ids, kind, agent, all_):
    """The ids named, or (with --all) every pending proposal of --kind (and --agent)."""
    if all_:
        if kind is None:
            fail("--all needs --kind (merge, archive, promote or retire)")
        if ids:
            fail("give proposal ids or --all, not both")
        return [p.id for p in eng.curator.pending(kind, agent)]
    if kind is not None or agent is not None:
        fail("--kind and --agent choose proposals only with --all")
    if not ids:
        fail("name at least one proposal id, or use --kind K --all")
    return list(ids)


def _report(outcomes, verb: str, as_json: bool) -> None:
    """Per-id outcomes; exit 1 if any proposal could not be decided."""

    def human(rows):
        for o in rows:
            if o.ok:
                click.echo(
                    f"proposal {o.id}: {verb} (status {o.status}"
                    + (f", result {o.result_id}" if o.result_id else "")
                    + ")"
                )
            elif o.skipped:
                click.echo(f"proposal {o.id}: {o.error} (--include-risky approves it)")
            else:
                click.echo(f"proposal {o.id}: refused — {o.error}")
        done = sum(1 for o in rows if o.ok)
        skipped = sum(1 for o in rows if o.skipped)
        stale = sum(1 for o in rows if o.stale)
        click.echo(
            f"{done} of {len(rows)} {verb}"
            + (f"; {skipped} risky skipped" if skipped else "")
            + (f"; {stale} stale (reject them all: proposal reject-stale --reason R)" if stale else "")
        )

    emit(outcomes, as_json, human)
    bad = [o for o in outcomes if not o.ok and not o.skipped]
    if bad:
        fail(f"{len(bad)} of {len(outcomes)} proposal(s) refused: " + ", ".join(str(o.id) for o in bad), 1)


_bulk = [
    click.option("--kind", type=KINDS, default=None, help="With --all: every pending proposal of this kind."),
    click.option("--agent", default=None, help="With --all: only proposals with a member of this agent."),
    click.option(
        "--all", "all_", is_flag=True, help="Decide every pending proposal --kind (and --agent) names."
    ),
]


def bulk_options(f):
    for opt in reversed(_bulk):
        f = opt(f)
    return f


@proposal.command("approve")
@click.argument("proposal_ids", type=ID, nargs=-1)
@click.option("--text", default=None, help="Edit the survivor (merge) or rule (promote) text (one id only).")
@click.option("--reason", default="")
@click.option(
    "--include-risky",
    is_flag=True,
    help="Also approve risky merges (members differing only in numbers/dates).",
)
@bulk_options
@json_option
@pass_ctx
def proposal_approve(ctx, proposal_ids, text, reason, include_risky, kind, agent, all_, as_json):
    """Approve and apply: one id (its proposal printed), several ids, or `--kind K [--agent A] --all`
    (per-id outcomes; each applied in its own transaction, a stale one refused and reported while
    the others still apply; exit 1 if any was refused). Several at once skip risky merges unless
    --include-risky."""
    if len(proposal_ids) == 1 and not all_ and kind is None and agent is None:
        with ctx.engine(load="now" if text is not None else "lazy") as eng:
            p = eng.curator.approve(proposal_ids[0], text=text, reason=reason)
        emit(p, as_json, _done("approved and applied"))
        return
    if text is not None:
        fail("--text edits one proposal; name exactly one id")
    with ctx.engine(load="lazy") as eng:
        outcomes = eng.curator.approve_many(
            _targets(eng, proposal_ids, kind, agent, all_), reason=reason, include_risky=include_risky
        )
    _report(outcomes, "approved and applied", as_json)


@proposal.command("reject")
@click.argument("proposal_ids", type=ID, nargs=-1)
@click.option("--reason", required=True)
@bulk_options
@json_option
@pass_ctx
def proposal_reject(ctx, proposal_ids, reason, kind, agent, all_, as_json):
    """Reject with a reason: one id, several ids, or `--kind K [--agent A] --all`."""
    if not reason.strip():
        fail("a rejection needs a reason")
    if len(proposal_ids) == 1 and not all_ and kind is None and agent is None:
        with ctx.engine(embedder=None) as eng:
            p = eng.curator.reject(proposal_ids[0], reason)
        emit(p, as_json, _done("rejected"))
        return
    with ctx.engine(embedder=None) as eng:
        outcomes = eng.curator.reject_many(_targets(eng, proposal_ids, kind, agent, all_), reason)
    _report(outcomes, "rejected", as_json)


@proposal.command("reject-stale")
@click.option("--reason", required=True)
@click.option("--kind", type=KINDS, default=None, help="Only proposals of this kind.")
@click.option("--agent", default=None, help="Only proposals with a member of this agent.")
@json_option
@pass_ctx
def proposal_reject_stale(ctx, reason, kind, agent, as_json):
    """Reject every pending proposal whose members changed since it was proposed (what approval
    would refuse as stale), with a reason; the others stay pending. Run the curator again to
    propose afresh."""
    if not reason.strip():
        fail("a rejection needs a reason")
    with ctx.engine(embedder=None) as eng:
        outcomes = eng.curator.reject_stale(reason, kind=kind, agent=agent)
    _report(outcomes, "rejected", as_json)


@proposal.command("undo")
@click.argument("proposal_id", type=ID)
@click.option("--reason", default="")
@json_option
@pass_ctx
def proposal_undo(ctx, proposal_id, reason, as_json):
    """Restore exactly the state before the proposal was applied."""
    with ctx.engine(embedder=None) as eng:
        p = eng.curator.undo(proposal_id, reason=reason)
    emit(p, as_json, _done("undone"))
