"""Decay verbs: decay run|forecast|curve. No vectors needed, so the model is never loaded."""

from __future__ import annotations

import click

from engine.clock import iso, parse_time
from engine.errors import cut

from .common import DAYS, ID, emit, fail, json_option, pass_ctx, table


def register(cli: click.Group) -> None:
    cli.add_command(decay)


def _now(value: str | None) -> float | None:
    return parse_time(value) if value else None


def _rates(values: tuple[str, ...]) -> dict | None:
    """--half-life semantic=60 (repeatable) -> {"semantic": 60.0}."""
    out = {}
    for v in values:
        kind, sep, days = v.partition("=")
        try:
            out[kind.strip()] = float(days)
        except ValueError:
            fail(f"--half-life takes KIND=DAYS (e.g. semantic=60), not {cut(v)}")
        if not sep or not 0 < out[kind.strip()] <= 36500:  # also refuses nan and inf
            fail(f"--half-life takes KIND=DAYS with DAYS a number above 0 and at most 36500, not {cut(v)}")
        if not sep:
            fail(f"--half-life takes KIND=DAYS (e.g. semantic=60), not {cut(v)}")
    return out or None


half_life_option = click.option(
    "--half-life",
    "half_life",
    multiple=True,
    metavar="KIND=DAYS",
    help="What-if half-life for a kind (repeatable).",
)


@click.group()
def decay() -> None:
    """Apply decay, or see what it would do."""


@decay.command("run")
@click.option("--now", "now", default=None, help="ISO-8601 time to decay to (default: now).")
@click.option("--dry-run", is_flag=True, help="Count what would change; write nothing.")
@click.option("--scope", type=click.Choice(["all", "memories", "rules"]), default="all", show_default=True)
@click.option(
    "--refresh-snapshots",
    is_flag=True,
    help="Also rewrite the stored strength column (a full scan; strength is computed on read).",
)
@json_option
@pass_ctx
def decay_run(ctx, now, dry_run, scope, refresh_snapshots, as_json):
    """One decay pass: archive memories below the threshold, lower unreinforced rules."""
    with ctx.engine(embedder=None) as eng:
        r = eng.decay.run(now=_now(now), dry_run=dry_run, scope=scope, refresh_snapshots=refresh_snapshots)
    emit(
        r,
        as_json,
        lambda r: click.echo(
            f"{'would change' if r.dry_run else 'decayed'} as of {iso(r.now)}: "
            f"{r.memories_archived} memories archived, {r.memories_decayed} still decaying, "
            f"{r.memories_scheduled} scheduled; {r.rules_decayed} rules lost score, "
            f"{r.rules_demoted} demoted, {r.rules_retired} retired"
        ),
    )


@decay.command("forecast")
@click.option("--days", type=DAYS, required=True)
@click.option("--now", "now", default=None, help="ISO-8601 start (default: now).")
@click.option("--agent", default=None)
@click.option("--limit", type=click.IntRange(1, 100000), default=50, show_default=True)
@half_life_option
@json_option
@pass_ctx
def decay_forecast(ctx, days, now, agent, limit, half_life, as_json):
    """Which memories and rules cross a threshold within N days if nothing is reinforced."""
    with ctx.engine(embedder=None) as eng:
        f = eng.decay.forecast(days, _now(now), rates=_rates(half_life), limit=limit, agent=agent)

    def human(f):
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(f.by_kind.items())) or "none"
        click.echo(
            f"in {f.days:g} days ({iso(f.until)}): {f.memories_total} memories archived "
            f"({kinds}); {len(f.rules)} rules change status"
        )
        if f.memories:
            table(
                [
                    [
                        m.id,
                        m.kind,
                        f"{m.strength_now:.3f}",
                        f"{m.strength_then:.3f}",
                        iso(m.crosses_at),
                        m.preview[:60],
                    ]
                    for m in f.memories
                ],
                ["id", "kind", "now", "then", "crosses", "memory"],
            )
        if f.rules:
            table(
                [
                    [
                        r.id,
                        f"{r.score_now:g}",
                        f"{r.score_then:g}",
                        f"{r.status_now} -> {r.status_then}",
                        r.text[:60],
                    ]
                    for r in f.rules
                ],
                ["rule", "now", "then", "status", "text"],
            )

    emit(f, as_json, human)


@decay.command("curve")
@click.argument("memory_id", type=ID)
@click.option("--days", type=DAYS, default=60, show_default=True)
@click.option("--points", type=click.IntRange(2, 1000), default=13, show_default=True)
@click.option("--rule", "is_rule", is_flag=True, help="The id is a rule: project its score.")
@half_life_option
@json_option
@pass_ctx
def decay_curve(ctx, memory_id, days, points, is_rule, half_life, as_json):
    """Projected strength of a memory (or score of a rule) over the next N days."""
    with ctx.engine(embedder=None) as eng:
        if is_rule:
            c = eng.rules.curve(memory_id, days)
        else:
            c = eng.decay.curve(memory_id, days, rates=_rates(half_life), points=points)

    def human(c):
        click.echo(
            f"{c.target_kind} {c.target_id} ({c.label}){' frozen' if c.frozen else ''}; "
            f"threshold {c.threshold:g}; "
            + (f"crosses {iso(c.crosses_at)}" if c.crosses_at else "does not cross in the window")
        )
        table([[f"{p.day:g}", iso(p.at), f"{p.value:.4f}"] for p in c.points], ["day", "at", "value"])

    emit(c, as_json, human)
