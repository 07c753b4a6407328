"""`whoami` and `operators list|grant|revoke`: who the engine takes you for, and who holds which
role (engine/operators.py, engine/roles.py). Granting and revoking need the admin role."""

from __future__ import annotations

import click

from .common import emit, json_option, pass_ctx, table


def register(cli: click.Group) -> None:
    cli.add_command(whoami)
    cli.add_command(operators)


@click.command()
@json_option
@pass_ctx
def whoami(ctx, as_json):
    """Your verified identity, its source, your --actor label and your roles on this database."""
    with ctx.engine(embedder=None) as eng:
        me = eng.operators.whoami()

    def human(w) -> None:
        label = f" (as {w.label})" if w.label else ""
        click.echo(f"{w.verified}{label} · {w.role} · verified by {w.source} ({w.why})")
        click.echo(f"roles: {', '.join(w.roles)}")
        click.echo(f"database: {w.database}{' · read-only' if w.read_only else ''}")
        click.echo(f"operators: {w.directory}")

    emit(me, as_json, human)


@click.group()
def operators():
    """Who holds which role (viewer, curator, forget, admin)."""


@operators.command("list")
@json_option
@pass_ctx
def list_operators(ctx, as_json):
    """Every operator granted a role (on SQLite the database's owner is always admin)."""
    with ctx.engine(embedder=None) as eng:
        rows = eng.operators.list()
    emit(
        rows,
        as_json,
        lambda rs: table([[r.name, ", ".join(r.roles), r.why] for r in rs], ["name", "roles", "why"]),
    )


@operators.command("grant")
@click.argument("user")
@click.argument("role")
@json_option
@pass_ctx
def grant(ctx, user, role, as_json):
    """Give USER (an OS user on SQLite, a database role on PostgreSQL) ROLE (admin only)."""
    with ctx.engine(embedder=None) as eng:
        entry = eng.operators.grant(user, role)
    emit(entry, as_json, lambda e: click.echo(f"{e.name}: {', '.join(e.roles)} ({e.why})"))


@operators.command("revoke")
@click.argument("user")
@click.argument("role")
@json_option
@pass_ctx
def revoke(ctx, user, role, as_json):
    """Take ROLE from USER (admin only)."""
    with ctx.engine(embedder=None) as eng:
        entry = eng.operators.revoke(user, role)
    emit(entry, as_json, lambda e: click.echo(f"{e.name}: {', '.join(e.roles) or 'no role'} ({e.why})"))
