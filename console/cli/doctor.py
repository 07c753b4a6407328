"""`doctor [--repair] [--json]`: is the database consistent with itself? Exit 0 when every check
passes, 1 when something is wrong (so scripts and cron can alert on it)."""

from __future__ import annotations

import click

from engine.errors import DatabaseDamaged
from engine.health.doctor import doctor_file

from .common import emit, json_option, pass_ctx


def register(cli: click.Group) -> None:
    cli.add_command(doctor)


@click.command()
@click.option(
    "--repair", is_flag=True, help="Rebuild derived indexes (full-text, vectors, vector filter fields) first."
)
@json_option
@pass_ctx
def doctor(ctx, repair, as_json):
    """Check integrity: SQLite, full-text and vector indexes, orphans, the audit hash chain."""
    # Repair may re-embed memories, so it needs the model; a plain check never loads it.
    try:
        with ctx.engine(embedder="default" if repair else None, load="lazy", auto_backfill=False) as eng:
            report = eng.health.doctor(repair=repair)
    except DatabaseDamaged:  # too damaged to open: still a finding (exit 1), not an error
        report = doctor_file(ctx.db)

    def human(r):
        for line in r.repaired:
            click.echo(f"repaired: {line}")
        for ch in r.checks:
            ids = f"  ids: {', '.join(map(str, ch.ids))}" if ch.ids and not ch.ok else ""
            click.echo(f"{'ok  ' if ch.ok else 'FAIL'}  {ch.name:<28} {ch.detail}{ids}")
        if r.counts.get("pending_vectors"):
            click.echo(
                f"pending vectors: {r.counts['pending_vectors']} "
                f"(run `memconsole backfill` or `doctor --repair`)"
            )
        click.echo("healthy" if r.ok else f"{len(r.problems)} problem(s) found")

    emit(report, as_json, human)
    if not report.ok:
        raise click.exceptions.Exit(1)
