"""Rule verbs: rules, rule add|show|pin|unpin|retire|revive|reinforce|violate|set-score, reject,
boot. None of them needs a vector, so none loads the embedding model."""

from __future__ import annotations

import click

from engine.clock import iso

from .common import DAYS, ID, SCORE, emit, json_option, pass_ctx, table
from .filter_option import filter_option, merged, parsed

STATUS_CHOICE = click.Choice(["critical", "active", "dormant", "retired"])


def register(cli: click.Group) -> None:
    for cmd in (rules, rule, reject, boot):
        cli.add_command(cmd)


def _rule_rows(rs) -> None:
    table(
        [
            [
                r.id,
                f"{r.score:g}",
                r.status + (" (pinned)" if r.pinned else ""),
                r.violations,
                r.agent or "-",
                r.domain or "-",
                r.source,
                (iso(r.last_reinforced_at) or "-")[:10],
                r.text,
            ]
            for r in rs
        ],
        ["id", "score", "status", "viol", "agent", "domain", "source", "reinforced", "text"],
    )


@click.command()
@click.option("--status", type=STATUS_CHOICE, multiple=True, help="Repeat for several.")
@click.option("--agent", default=None)
@click.option("--domain", default=None)
@click.option("--source", default=None)
@click.option("--query", "-q", default=None, help="Full-text filter over the rule text.")
@click.option(
    "--order",
    type=click.Choice(["score", "recent", "created", "violations", "id"]),
    default="score",
    show_default=True,
)
@click.option("--limit", type=click.IntRange(1, 100000), default=500, show_default=True)
@filter_option
@json_option
@pass_ctx
def rules(ctx, status, agent, domain, source, query, order, limit, filter_text, as_json):
    """List rules (highest score first), with filters."""
    with ctx.engine(embedder=None) as eng:
        f = parsed(filter_text, "rules", eng.clock.now())
        given = {
            "status": list(status) or None,
            "agent": agent,
            "domain": domain,
            "source": source,
            "query": query,
        }
        rs = eng.rules.list(**merged(given, f), order=order, limit=limit)
    emit(rs, as_json, _rule_rows)


@click.group()
def rule() -> None:
    """Add, inspect and change one rule."""


@rule.command("add")
@click.argument("text")
@click.option("--score", type=SCORE, default=5.0, show_default=True)
@click.option("--domain", default="")
@click.option("--agent", default="")
@click.option(
    "--source",
    type=click.Choice(["manual", "learning", "discovery", "rejection"]),
    default="manual",
    show_default=True,
)
@click.option("--reason", default="")
@json_option
@pass_ctx
def rule_add(ctx, text, score, domain, agent, source, reason, as_json):
    """Add a rule; its status follows its score's band."""
    with ctx.engine(embedder=None) as eng:
        r = eng.rules.add(text, score=score, domain=domain, agent=agent, source=source, reason=reason)
    emit(
        {"id": r.id, "score": r.score, "status": r.status},
        as_json,
        lambda o: click.echo(f"added rule {o['id']} ({o['status']}, score {o['score']:g})"),
    )


@rule.command("show")
@click.argument("rule_id", type=ID)
@click.option("--days", type=DAYS, default=30, show_default=True, help="Projection window.")
@json_option
@pass_ctx
def rule_show(ctx, rule_id, days, as_json):
    """One rule with its score history and projected score."""
    with ctx.engine(embedder=None) as eng:
        d = eng.rules.detail(rule_id, days=days)

    def human(d):
        r = d.rule
        click.echo(f"rule {r.id}: {r.text}")
        click.echo(
            f"  score {r.score:g} · {r.status}{' · pinned' if r.pinned else ''} · "
            f"{r.violations} violations · source {r.source} · agent {r.agent or '-'} · "
            f"{d.days_since_reinforced:g} days since reinforced"
        )
        table(
            [
                [
                    iso(h.at),
                    "-" if h.old_score is None else f"{h.old_score:g}",
                    f"{h.new_score:g}",
                    h.new_status or "",
                    h.actor,
                    h.reason,
                ]
                for h in d.history
            ],
            ["at", "from", "to", "status", "actor", "reason"],
        )
        p = d.projection
        end = p.points[-1].value if p.points else r.score
        click.echo(
            f"  in {days:g} days: {end:g}"
            + (" (frozen)" if p.frozen else "")
            + (f"; retires {iso(p.crosses_at)}" if p.crosses_at else "")
        )

    emit(d, as_json, human)


def _change(verb: str, method: str, doc: str, *, needs_reason: bool = False):
    @rule.command(verb, help=doc)
    @click.argument("rule_id", type=ID)
    @click.option("--reason", default="", required=needs_reason)
    @json_option
    @pass_ctx
    def cmd(ctx, rule_id, reason, as_json):
        with ctx.engine(embedder=None) as eng:
            r = getattr(eng.rules, method)(rule_id, reason=reason)
        emit(
            r,
            as_json,
            lambda r: click.echo(
                f"rule {r.id}: score {r.score:g}, {r.status}{', pinned' if r.pinned else ''}"
                f", {r.violations} violations"
            ),
        )

    return cmd


_change("pin", "pin", "Freeze a rule: no decay; status stops following the score.")
_change("unpin", "unpin", "Unfreeze a rule: status follows the score again.")
_change("retire", "retire", "Retire a rule (kept; revivable). Only a person retires a critical rule.")
_change("revive", "revive", "Bring a retired rule back (score at least 5).")
_change("reinforce", "reinforce", "The rule proved useful: +1 score, decay clock reset.")
_change("violate", "record_violation", "Record that an agent broke the rule.")


@rule.command("set-score")
@click.argument("rule_id", type=ID)
@click.argument("score", type=SCORE)
@click.option("--reason", required=True, help="Why (kept in the rule's history).")
@json_option
@pass_ctx
def rule_set_score(ctx, rule_id, score, reason, as_json):
    """Set a rule's score (0–10); its status follows the new band unless pinned."""
    with ctx.engine(embedder=None) as eng:
        r = eng.rules.set_score(rule_id, score, reason)
    emit(r, as_json, lambda r: click.echo(f"rule {r.id}: score {r.score:g}, {r.status}"))


@click.command()
@click.argument("text")
@click.option("--agent", default="")
@click.option("--user", default="")
@click.option("--domain", default="")
@click.option("--reason", default="")
@json_option
@pass_ctx
def reject(ctx, text, agent, user, domain, reason, as_json):
    """Record that the user said no: a `rejected` memory and a critical rule, immediately."""
    with ctx.engine(embedder=None) as eng:
        r = eng.rules.reject(text, agent=agent, user=user, domain=domain, reason=reason)
    emit(
        r,
        as_json,
        lambda r: click.echo(f"rejection recorded: memory {r.memory_id}, critical rule {r.rule_id}"),
    )


@click.command()
@click.option("--agent", default=None, help="Default: every agent.")
@click.option("--max-rules", type=click.IntRange(0, 1000), default=None)
@json_option
@pass_ctx
def boot(ctx, agent, max_rules, as_json):
    """Exactly what an agent loads at start, as a fenced <memory-context> block."""
    with ctx.engine(embedder=None) as eng:
        b = eng.boot.context(agent, max_rules=max_rules)

    def human(b):
        click.echo(b.text)
        click.echo(
            f"(≈{b.tokens:,} tokens: {len(b.rejections)} rejections, {len(b.decisions)} "
            f"decisions, {len(b.tasks)} tasks, {len(b.rules)} rules)",
            err=True,
        )

    emit(b, as_json, human)
