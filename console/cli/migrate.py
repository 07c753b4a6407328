"""`migrate --from PATH_OR_URL --to PATH_OR_URL [--force] [--json]`: move a whole memory database
between a SQLite file and a PostgreSQL server (either way, or file to file, server to server)."""

from __future__ import annotations

import click

from .common import counts_text, emit, json_option, pass_ctx


def register(cli: click.Group) -> None:
    cli.add_command(migrate)


@click.command()
@click.option("--from", "source", required=True, metavar="PATH_OR_URL", help="The database to copy from.")
@click.option(
    "--to", "target", required=True, metavar="PATH_OR_URL", help="The database to fill (created if missing)."
)
@click.option("--force", is_flag=True, help="Add to a target that already holds records.")
@json_option
@pass_ctx
def migrate(ctx, source, target, force, as_json):
    """Copy every record (ids, vectors, audit chain, tombstones) from one database to another."""
    from engine.importers.migrate import migrate as run

    res = run(source, target, force=force)  # --actor would vouch: never a flag's name

    def human(r):
        click.echo(f"migrated {r.source} -> {r.target}")
        click.echo(f"  copied (records by type):\n{counts_text(r.added, '    ') or '    nothing'}")
        click.echo(f"  vectors: {r.vectors}")
        for why, n in r.skipped.items():
            click.echo(f"  skipped {n}: {why}")

    emit(res, as_json, human)
