"""`import` (hermes, markdown, jsonl) and `export` (jsonl): bringing in what agents wrote
elsewhere, and moving a whole database. Progress bars on a terminal; a summary at the end."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from .common import emit, json_option, pass_ctx, progress_bar

KIND_CHOICE = click.Choice(["episodic", "semantic", "procedural"])


def register(cli: click.Group) -> None:
    cli.add_command(import_group)
    cli.add_command(export_group)


class _Bar:
    """A progress bar created on the first report, when the engine knows the total."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._advance: Callable[[int], object] | None = None
        self.close: Callable[[], object] = lambda: None

    def __call__(self, n: int, total: int) -> None:
        if self._advance is None:
            self._advance, self.close = progress_bar(total, self.label)
        self._advance(n)


def _run(label: str, fn):
    bar = _Bar(label)
    try:
        return fn(bar)
    finally:
        bar.close()


def _counts(d: dict) -> str:
    return ", ".join(f"{n} {k}" for k, n in d.items())


def _print_summary(s) -> None:
    what = "would import" if s.dry_run else "imported"
    click.echo(f"{what} from {s.source}: {_counts(s.added) or 'nothing new'}")
    if s.updated:
        click.echo(f"updated: {_counts(s.updated)}")
    if s.vectors:
        click.echo(f"embedded: {s.vectors} memories")
    for reason, n in s.skipped.items():
        click.echo(f"skipped {n}: {reason}")
    for w in s.warnings:
        click.echo(f"warning: {w}", err=True)
    if s.dry_run:
        click.echo("(dry run: nothing was written)")


def _engine(ctx, embed: bool):
    """Without --embed no model is loaded: new memories wait for the console's backfill."""
    return ctx.engine(load="now", auto_backfill=False) if embed else ctx.engine(embedder=None)


dry_run_option = click.option("--dry-run", is_flag=True, help="Report what would change; write nothing.")
embed_option = click.option(
    "--embed", is_flag=True, help="Load the model now and embed new memories (else backfill later)."
)


@click.group("import")
def import_group() -> None:
    """Import what agents wrote: a Hermes home, Markdown memory files, a JSONL export."""


@import_group.command("hermes")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--agent", default=None, help="Agent name (default: the profile name, or 'hermes').")
@click.option("--include-bundled", is_flag=True, help="Also import skills shipped with Hermes.")
@dry_run_option
@embed_option
@json_option
@pass_ctx
def import_hermes(ctx, path, agent, include_bundled, dry_run, embed, as_json):
    """Import a Hermes home (~/.hermes): sessions, messages, memories, skills, curator reports.

    The home is never written to: state.db is copied with its WAL and the copy is read.
    Importing again brings in only what the agent wrote since."""
    with _engine(ctx, embed) as eng:
        s = _run(
            f"import {path.name}",
            lambda bar: eng.importers.hermes(
                path, agent=agent, include_bundled=include_bundled, dry_run=dry_run, progress=bar
            ),
        )
    emit(s, as_json, _print_summary)


@import_group.command("markdown")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--agent", required=True, help="Whose memories these are.")
@click.option("--user", default="", help="The user they are about, if any.")
@click.option("--kind", type=KIND_CHOICE, default="semantic", show_default=True)
@click.option("--category", default=None, help="Default: general (USER.md entries: preference or fact).")
@dry_run_option
@embed_option
@json_option
@pass_ctx
def import_markdown(ctx, file, agent, user, kind, category, dry_run, embed, as_json):
    """Import a MEMORY.md-style file: entries separated by `§` lines or blank lines."""
    with _engine(ctx, embed) as eng:
        s = _run(
            f"import {file.name}",
            lambda bar: eng.importers.markdown(
                file, agent=agent, user=user, kind=kind, category=category, dry_run=dry_run, progress=bar
            ),
        )
    emit(s, as_json, _print_summary)


@import_group.command("jsonl")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@dry_run_option
@json_option
@pass_ctx
def import_jsonl(ctx, file, dry_run, as_json):
    """Restore a full export (`export jsonl`): every record keeps its id; rows already present
    are skipped, a different row under the same id is refused."""
    with ctx.engine(embedder=None) as eng:
        s = _run(f"import {file.name}", lambda bar: eng.importers.jsonl(file, dry_run=dry_run, progress=bar))
    emit(s, as_json, _print_summary)


@click.group("export")
def export_group() -> None:
    """Export the database."""


@export_group.command("jsonl")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--no-vectors", is_flag=True, help="Leave vectors out (smaller; re-embedded on import).")
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
@json_option
@pass_ctx
def export_jsonl(ctx, file, no_vectors, force, as_json):
    """Write every record (sessions, messages, memories, rules, flows, proposals, audit,
    forget tombstones, ...) to FILE, readable only by you (0600)."""
    from engine.importers.jsonl_io import check_target

    check_target(
        file, force, database=Path(ctx.db).expanduser()
    )  # before opening it: a refusal costs nothing
    with ctx.engine(embedder=None) as eng:
        s = _run(
            f"export {file.name}",
            lambda bar: eng.importers.export_jsonl(
                file, vectors=not no_vectors, overwrite=force, progress=bar
            ),
        )
    emit(
        s,
        as_json,
        lambda s: click.echo(
            f"exported {sum(s.records.values())} records ({_counts(s.records)}; {s.vectors} vectors) "
            f"to {s.path}, {s.bytes:,} bytes"
        ),
    )
