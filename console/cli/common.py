"""What every CLI verb shares: opening the engine from the global options, printing one JSON
document or a readable table, and turning errors into one clear line (never a traceback)."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn

import click

from console.shared.env import embedder_choice
from console.shared.text_safety import json_safe, visible
from engine.clock import iso
from engine.errors import cut
from engine.types import to_json

if TYPE_CHECKING:
    from engine.engine import MemoryEngine


@dataclass
class Ctx:
    db: Path
    actor: str | None  # --actor: a label recorded beside the verified identity (engine/identity.py)
    read_only: bool = False  # --read-only: every write refuses in one line (a standby is so anyway)

    def engine(self, *, embedder: str | None = "default", load: str = "lazy", **kw: Any) -> MemoryEngine:
        """Open the engine. `embedder=None` for verbs that never need a vector (so
        sentence-transformers is never imported); "lazy" loads the model only when a call needs it."""
        from engine import open_engine

        if self.read_only:
            kw.setdefault("read_only", True)
        return open_engine(self.db, embedder=embedder_choice(embedder), load=load, label=self.actor, **kw)


pass_ctx = click.make_pass_decorator(Ctx)

json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")


def dumps(obj: Any, indent: int | None = None) -> str:
    """Strict JSON (non-finite numbers are null, never `NaN`/`Infinity`) with every control,
    C1 and bidi character escaped, so a terminal shows it and any JSON parser reads it. Times are
    ISO-8601 UTC (`"at": "2026-01-01T09:00:00Z"`) with the epoch seconds beside them
    (`"at_epoch": 1767258000.0`); see iso_times."""
    doc = iso_times(to_json(obj))
    return json_safe(json.dumps(doc, ensure_ascii=False, allow_nan=False, indent=indent))


TIME_KEYS = frozenset({"at", "deadline", "created", "now", "since", "until"})


def is_time_key(key: object) -> bool:
    return isinstance(key, str) and (key in TIME_KEYS or key.endswith("_at"))


def iso_times(doc: Any) -> Any:
    """Every time field (`at`, `*_at`, `deadline`, `created`, `now`, `since`, `until`) holding
    epoch seconds becomes ISO-8601 UTC text, and `<key>_epoch` keeps the number."""
    if isinstance(doc, list):
        return [iso_times(v) for v in doc]
    if not isinstance(doc, dict):
        return doc
    out: dict[Any, Any] = {}
    for k, v in doc.items():
        number = isinstance(v, (int, float)) and not isinstance(v, bool)
        if is_time_key(k) and (number or v is None) and f"{k}_epoch" not in doc:
            try:
                out[k] = iso(v)
            except (OverflowError, OSError, ValueError):  # out of any calendar: the number stays
                out[k] = v
            out[f"{k}_epoch"] = v
        else:
            out[k] = iso_times(v)
    return out


def counts_text(counts: dict[str, Any], indent: str = "  ") -> str:
    """A summary of counts for people: "5 agents · 12 sessions", nested groups on their own
    line ("lifecycle: 40 rules · 3 flows"), never a Python dict."""
    flat = [_count(k, v) for k, v in counts.items() if not isinstance(v, dict)]
    lines = [indent + " · ".join(flat)] if flat else []
    for k, v in counts.items():
        if isinstance(v, dict):
            inner = counts_text(v, indent + "  ").strip()
            lines.append(f"{indent}{k.replace('_', ' ')}: {inner or 'nothing'}")
    return "\n".join(lines)


def _count(key: str, value: Any) -> str:
    """One "12 sessions" part; a list or text value reads as "pending kinds: archive, merge"."""
    name = key.replace("_", " ")
    if isinstance(value, bool) or not isinstance(value, int | float):
        shown = ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
        return f"{name}: {shown}"
    return f"{value:,} {name}"


def warn(message: str) -> None:
    """One warning line on stderr (stdout stays the verb's answer, or its JSON document)."""
    click.echo(f"memconsole: warning: {message}", err=True)


def emit(obj: Any, as_json: bool, human: Callable[[Any], None] | None = None) -> None:
    if as_json or human is None:
        click.echo(dumps(obj, indent=None if as_json else 2))
    else:
        human(obj)


class Refused(click.ClickException):
    """One line, exit 2: the input was refused."""

    exit_code = 2


class Failed(Refused):
    """One line, exit 1: the input was fine, the operation could not be done."""

    exit_code = 1


def fail(message: str, code: Literal[1, 2] = 2) -> NoReturn:
    """One clear line on stderr, a non-zero exit (2: the input was refused)."""
    raise (Failed if code == 1 else Refused)(message.splitlines()[0] if message else "error")


class Number(click.ParamType):
    """A finite number within [lo, hi]: `nan`, `inf`, `1e999` and `2**70` are refused at the door
    (exit 2, nothing written) instead of reaching the database."""

    def __init__(self, lo: float | None = None, hi: float | None = None, integer: bool = False) -> None:
        self.lo, self.hi, self.integer = lo, hi, integer
        self.name = "integer" if integer else "number"

    def convert(self, value, param, ctx):
        try:
            v = (
                int(str(value).strip(), 10)
                if self.integer and not isinstance(value, int)
                else (value if self.integer else float(value))
            )
        except (TypeError, ValueError, OverflowError):
            self.fail(f"{cut(value)} is not {'an integer' if self.integer else 'a number'}", param, ctx)
        if not self.integer and not math.isfinite(v):
            self.fail(f"{cut(value)} is not a finite number", param, ctx)
        if (self.lo is not None and v < self.lo) or (self.hi is not None and v > self.hi):
            self.fail(f"{cut(value)} is not between {_fmt(self.lo)} and {_fmt(self.hi)}", param, ctx)
        return v


def _fmt(x) -> str:
    return "-inf" if x is None else (f"{x:g}" if isinstance(x, float) else str(x))


MAX_ID = 2**63 - 1
ID = Number(0, MAX_ID, integer=True)  # a row id: SQLite's integer range, never negative
UNIT = Number(0.0, 1.0)  # importance, strength, shares
DAYS = Number(0.0, 36500.0)  # a time span in days (a century at most)
SCORE = Number(0.0, 10.0)  # a rule score
KIND_CHOICE = click.Choice(["episodic", "semantic", "procedural"])  # a memory's kind


def table(rows: list[list[Any]], headers: list[str]) -> None:
    """A plain aligned table (no colour: pipes and scripts read this too)."""
    cells = [
        [visible("" if c is None else str(c).replace("\n", " "), one_line=True) for c in r] for r in rows
    ]
    widths = [len(h) for h in headers]
    for r in cells:
        for i, c in enumerate(r):
            widths[i] = min(max(widths[i], len(c)), 80)

    def line(r: list[str]) -> str:
        return "  ".join(c[: widths[i]].ljust(widths[i]) for i, c in enumerate(r)).rstrip()

    headers = [visible(h, one_line=True) for h in headers]
    click.echo(line(headers))
    for r in cells:
        click.echo(line(r))


def progress_bar(total: int, label: str):
    """A progress bar on a terminal, nothing when piped. Returns (advance, close)."""
    if not sys.stderr.isatty() or total <= 0:
        return (lambda n: None), (lambda: None)
    # The bar's own \r and cursor codes are ours, not data: it writes past the SafeStream.
    raw = getattr(sys.stderr, "_raw", sys.stderr)
    bar = click.progressbar(length=total, label=visible(label, one_line=True), file=raw)
    bar.__enter__()
    return bar.update, (lambda: bar.__exit__(None, None, None))
