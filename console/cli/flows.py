"""Flow and gate verbs: flows, flow add|run|check|show, gate pre|post. No vectors needed, so the
embedding model is never loaded."""

from __future__ import annotations

import json
from pathlib import Path

import click

from engine.clock import iso, parse_time

from .common import emit, fail, json_option, pass_ctx, table


def register(cli: click.Group) -> None:
    for cmd in (flows, flow, gate):
        cli.add_command(cmd)


def _eff(s) -> str:
    return "-" if s.effectiveness is None else f"{s.effectiveness:.3f}"


def _flow_rows(fs) -> None:
    table(
        [
            [
                f.id,
                f.name,
                f"{f.stats.passes}/{f.stats.uses}",
                _eff(f.stats),
                f.stats.trend,
                "FLAGGED" if f.stats.flagged else "",
                f.agent or "-",
                f.domain or "-",
                "yes" if f.needs_approval else "",
                (iso(f.stats.last_run_at) or "-")[:10],
            ]
            for f in fs
        ],
        ["id", "name", "pass/uses", "effect.", "trend", "flag", "agent", "domain", "approval", "last run"],
    )


@click.command()
@click.option("--agent", default=None)
@click.option("--domain", default=None)
@click.option("--flagged", is_flag=True, help="Only flows below the effectiveness threshold.")
@json_option
@pass_ctx
def flows(ctx, agent, domain, flagged, as_json):
    """List flows with counts, effectiveness and trend."""
    with ctx.engine(embedder=None) as eng:
        fs = eng.flows.list(agent=agent, domain=domain, flagged=True if flagged else None)
    emit(fs, as_json, _flow_rows)


@click.group()
def flow() -> None:
    """Add, run, check and inspect flows."""


@flow.command("add")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--replace", is_flag=True, help="Update a flow of the same name (its runs are kept).")
@json_option
@pass_ctx
def flow_add(ctx, file, replace, as_json):
    """Add a flow from a JSON file: name, steps, triggers, domain, agent, needs_approval."""
    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        fail(f"{file}: not a readable JSON file ({exc})")
    with ctx.engine(embedder=None) as eng:
        f = eng.flows.add_doc(doc, replace=replace)
    emit({"id": f.id, "name": f.name}, as_json, lambda o: click.echo(f"flow {o['id']}: {o['name']}"))


@flow.command("run")
@click.argument("name")
@click.argument("outcome", type=click.Choice(["pass", "fail"]))
@click.option("--note", default="")
@click.option("--agent", default="")
@click.option("--at", "at", default=None, help="ISO-8601 time of the run (default: now).")
@json_option
@pass_ctx
def flow_run(ctx, name, outcome, note, agent, at, as_json):
    """Record a run of a flow (pass or fail)."""
    when = parse_time(at) if at else None
    with ctx.engine(embedder=None) as eng:
        run = eng.flows.record_run(name, outcome, note=note, agent=agent, at=when)
        stats = eng.flows.get(run.flow_id).stats
    emit(
        {"run": run, "stats": stats},
        as_json,
        lambda o: click.echo(
            f"recorded {outcome}; {name}: {stats.passes}/{stats.uses} = {_eff(stats)}"
            + (" (FLAGGED)" if stats.flagged else "")
        ),
    )


@flow.command("check")
@click.argument("text")
@click.option("--agent", default=None)
@click.option("--limit", type=click.IntRange(1, 100), default=5, show_default=True)
@json_option
@pass_ctx
def flow_check(ctx, text, agent, limit, as_json):
    """Find the flows for an intended action, with steps and effectiveness."""
    with ctx.engine(embedder=None) as eng:
        ms = eng.flows.check(text, agent=agent, limit=limit)

    def human(ms):
        if not ms:
            click.echo("no flow matches")
        for m in ms:
            s = m.flow.stats
            click.echo(
                f"{m.flow.name}  [{m.via}: {', '.join(m.matched)}]  {_eff(s)} "
                f"({s.passes}/{s.uses}){'  FLAGGED' if s.flagged else ''}"
            )
            for i, step in enumerate(m.flow.steps, 1):
                click.echo(f"  {i}. {step}")

    emit(ms, as_json, human)


@flow.command("show")
@click.argument("name")
@click.option("--runs", type=click.IntRange(1, 100000), default=20, show_default=True)
@json_option
@pass_ctx
def flow_show(ctx, name, runs, as_json):
    """One flow: steps, effectiveness and its recent runs."""
    with ctx.engine(embedder=None) as eng:
        d = eng.flows.detail(name, runs=runs)

    def human(d):
        f, s = d.flow, d.flow.stats
        click.echo(f"{f.name} (id {f.id}, {f.status}{', needs approval' if f.needs_approval else ''})")
        click.echo(
            f"  effectiveness {_eff(s)} ({s.passes} of {s.uses}); recent {s.recent_effectiveness}"
            f" trend {s.trend} ({s.trend_delta:+g}){'  FLAGGED' if s.flagged else ''}"
        )
        click.echo(f"  triggers: {', '.join(f.triggers) or '-'}")
        for i, step in enumerate(f.steps, 1):
            click.echo(f"  {i}. {step}")
        table(
            [[r.id, iso(r.at), r.outcome, r.agent or "-", r.note] for r in d.runs],
            ["run", "at", "outcome", "agent", "note"],
        )

    emit(d, as_json, human)


@click.group()
def gate() -> None:
    """Checks around an agent's action: gate pre before, gate post after."""


@gate.command("pre")
@click.argument("text")
@click.option("--agent", default=None)
@json_option
@pass_ctx
def gate_pre(ctx, text, agent, as_json):
    """Flows, rejections, active state and critical rules for an intended action."""
    with ctx.engine(embedder=None) as eng:
        pre = eng.gates.pre(text, agent=agent)
    emit(pre, as_json, lambda p: click.echo(p.block))


@gate.command("post")
@click.argument("outcome", type=click.Choice(["pass", "fail"]))
@click.argument("summary")
@click.option("--agent", default="")
@click.option("--flow", "flow_name", default=None, help="Record a run of this flow.")
@json_option
@pass_ctx
def gate_post(ctx, outcome, summary, agent, flow_name, as_json):
    """Record how an action went: a flow run and a (consolidated) state entry."""
    with ctx.engine(embedder=None) as eng:
        post = eng.gates.post(outcome, summary, agent=agent, flow=flow_name)

    def human(p):
        click.echo(f"{'updated' if p.consolidated else 'logged'} state memory {p.state_memory_id}")
        if p.stats:
            click.echo(
                f"{p.flow}: {p.stats.passes}/{p.stats.uses} = {_eff(p.stats)}"
                + ("  FLAGGED" if p.stats.flagged else "")
            )

    emit(post, as_json, human)
