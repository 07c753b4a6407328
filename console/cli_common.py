"""What every CLI verb shares: opening the engine from the global options, printing one JSON
document or a readable table, and turning errors into one clear line (never a traceback)."""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import click

from engine.types import to_json


@dataclass
class Ctx:
    db: Path
    actor: str | None

    def engine(self, *, embedder: str | None = "default", load: str = "lazy", **kw):
        """Open the engine. `embedder=None` for verbs that never need a vector (so
        sentence-transformers is never imported); "lazy" loads the model only when a call needs it."""
        import os

        from engine import open_engine

        override = os.environ.get("MEMCONSOLE_EMBEDDER")   # "default" | "hash" | "none"
        if embedder is not None and override:
            embedder = None if override == "none" else override
        return open_engine(self.db, embedder=embedder, load=load, actor=self.actor, **kw)


pass_ctx = click.make_pass_decorator(Ctx)

json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")


def emit(obj: Any, as_json: bool, human: Callable[[Any], None] | None = None) -> None:
    if as_json or human is None:
        click.echo(json.dumps(to_json(obj), ensure_ascii=False, indent=None if as_json else 2))
    else:
        human(obj)


def fail(message: str, code: int = 2) -> None:
    """One clear line on stderr, a non-zero exit."""
    raise click.ClickException(message.splitlines()[0] if message else "error")


def table(rows: list[list[Any]], headers: list[str]) -> None:
    """A plain aligned table (no colour: pipes and scripts read this too)."""
    cells = [[("" if c is None else str(c)).replace("\n", " ") for c in r] for r in rows]
    widths = [len(h) for h in headers]
    for r in cells:
        for i, c in enumerate(r):
            widths[i] = min(max(widths[i], len(c)), 80)
    line = lambda r: "  ".join(c[:widths[i]].ljust(widths[i]) for i, c in enumerate(r)).rstrip()
    click.echo(line(headers))
    for r in cells:
        click.echo(line(r))


def progress_bar(total: int, label: str):
    """A progress bar on a terminal, nothing when piped. Returns (advance, close)."""
    if not sys.stderr.isatty() or total <= 0:
        return (lambda n: None), (lambda: None)
    bar = click.progressbar(length=total, label=label, file=sys.stderr)
    bar.__enter__()
    return bar.update, (lambda: bar.__exit__(None, None, None))
