"""Curator verbs: curate run, proposals, proposal show/approve/reject/undo."""

from __future__ import annotations

import click

from engine.clock import iso

from .cli_common import ID, emit, json_option, pass_ctx, table

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
@click.option("--limit", type=click.IntRange(1, 100000), default=500, show_default=True)
@json_option
@pass_ctx
def proposals(ctx, status, kind, limit, as_json):
    """The approval queue, newest first."""
    with ctx.engine(embedder=None) as eng:
        rows = eng.curator.list(status=status, kind=kind, limit=limit)
    emit(
        rows,
        as_json,
        lambda ps: table(
            [
                [
                    p.id,
                    p.kind,
                    p.target_kind,
                    p.status,
                    ",".join(map(str, p.members)),
                    iso(p.created_at),
                    _short(p.survivor_text),
                ]
                for p in ps
            ],
            ["id", "kind", "target", "status", "members", "created", "text"],
        ),
    )


@click.group()
def proposal():
    """Look at, approve, reject or undo one proposal."""


@proposal.command("show")
@click.argument("proposal_id", type=ID)
@json_option
@pass_ctx
def proposal_show(ctx, proposal_id, as_json):
    with ctx.engine(embedder=None) as eng:
        d = eng.curator.get(proposal_id)

    def human(d):
        p = d.proposal
        click.echo(f"proposal {p.id}: {p.kind} {p.target_kind} — {p.status}")
        if p.survivor_text:
            click.echo(f"text: {p.survivor_text}")
        for m in d.members:
            mark = "*" if m.id == d.survivor_id else " "
            click.echo(f" {mark} {m.kind} {m.id} [{m.state}, {m.strength:.2f}] {_short(m.text, 100)}")
        if d.similarities and len(d.members) > 1:
            click.echo("similarities:")
            for m, row in zip(d.members, d.similarities, strict=True):
                click.echo(f"  {m.id:>6} " + " ".join("  -  " if v is None else f"{v:.3f}" for v in row))
        if p.reason:
            click.echo(f"reason: {p.reason}")

    emit(d, as_json, human)


def _done(verb: str):
    return lambda p: click.echo(
        f"proposal {p.id}: {verb} (status {p.status}"
        + (f", result {p.result_id}" if p.result_id else "")
        + ")"
    )


@proposal.command("approve")
@click.argument("proposal_id", type=ID)
@click.option("--text", default=None, help="Edit the survivor (merge) or rule (promote) text.")
@click.option("--reason", default="")
@json_option
@pass_ctx
def proposal_approve(ctx, proposal_id, text, reason, as_json):
    """Approve and apply in one transaction."""
    with ctx.engine(load="now" if text is not None else "lazy") as eng:
        p = eng.curator.approve(proposal_id, text=text, reason=reason)
    emit(p, as_json, _done("approved and applied"))


@proposal.command("reject")
@click.argument("proposal_id", type=ID)
@click.option("--reason", required=True)
@json_option
@pass_ctx
def proposal_reject(ctx, proposal_id, reason, as_json):
    with ctx.engine(embedder=None) as eng:
        p = eng.curator.reject(proposal_id, reason)
    emit(p, as_json, _done("rejected"))


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
