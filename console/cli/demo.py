"""`memconsole demo`: a realistic demo database."""

from __future__ import annotations

import click

from .common import counts_text, emit, fail, json_option, pass_ctx


def register(cli: click.Group) -> None:
    cli.add_command(demo)


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
