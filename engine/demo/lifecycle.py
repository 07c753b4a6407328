"""Lifecycle part of `memconsole demo`: about 80 rules in every band with score histories (critical
rejections included), about 15 flows with run histories (one at 32 of 34), decisions and tasks
for boot context, gate-post state, and memories reinforced at past dates so decay curves differ.

History is written by replaying the engine's own operations on a clock set to past moments, so
every chart point is a real rule_history / flow_runs / audit row. Deterministic (seeded). The
content is in lifecycle_rules and lifecycle_flows; this module writes it.
"""

from __future__ import annotations

import random

from engine.clock import DAY, FixedClock
from engine.demo.lifecycle_flows import DECISIONS, FLOWS
from engine.demo.lifecycle_rules import REJECTIONS, RULES


def _plan(rng: random.Random, n: int) -> list[str]:
    """Target bands for n rules: roughly 10% critical, 45% active, 25% dormant, 20% retired."""
    kinds = ["critical"] * round(n * 0.10) + ["active"] * round(n * 0.45) + ["dormant"] * round(n * 0.25)
    kinds += ["retired"] * (n - len(kinds))
    rng.shuffle(kinds)
    return kinds


def write_lifecycle_demo(eng, seed: int = 11) -> dict:
    """Write the lifecycle demo into `eng` (dated relative to its clock). Returns counts."""
    rng = random.Random(seed)
    real_clock = eng.clock
    now = real_clock.now()
    events: list[tuple[float, int, str, tuple]] = []  # (time, order, action, args)

    def at(t: float, action: str, *args) -> None:
        events.append((t, len(events), action, args))

    for agent, domain, text in REJECTIONS:
        at(now - rng.uniform(20, 80) * DAY, "reject", agent, domain, text)
    flat = [(a, d, t) for a, d, texts in RULES for t in texts]
    for (agent, domain, text), band in zip(flat, _plan(rng, len(flat)), strict=False):
        born = now - rng.uniform(30, 90) * DAY
        source = rng.choice(("learning", "learning", "discovery", "manual"))
        if band == "critical":
            at(born, "rule", agent, domain, text, source, rng.choice((9.0, 9.5, 10.0)), {})
        elif band in ("active", "dormant"):
            # Reinforced every 8–9 days (+1, and the daily loss takes exactly 1 back) until recently;
            # dormant ones stopped 9.5–11 days ago and have been losing 0.5 a day since.
            start = rng.choice((5.5, 6.0, 6.5, 7.0, 7.5) if band == "active" else (5.5, 6.0))
            at(born, "rule", agent, domain, text, source, start, {})
            stop = now - (rng.uniform(0, 5) if band == "active" else rng.uniform(9.5, 11)) * DAY
            t = born + rng.uniform(8.05, 8.95) * DAY
            while t < stop:
                at(t, "reinforce", text)
                t += rng.uniform(8.05, 8.95) * DAY
            if band == "active" and rng.random() < 0.25:
                at(now - rng.uniform(1, 10) * DAY, "violate", text)
        else:
            at(born, "rule", agent, domain, text, source, rng.choice((5.0, 5.5)), {})
            if rng.random() < 0.3:
                at(born + rng.uniform(5, 20) * DAY, "retire", text, "superseded by a newer rule")
    for t_pin in rng.sample([t for a, d, t in flat], 4):
        at(now - rng.uniform(1, 5) * DAY, "pin", t_pin)
    # Daily decay cycles over the whole window (rules only: the memory tiers are the base demo's).
    first = min(e[0] for e in events)
    d = 1
    while first + d * DAY <= now:
        at(first + d * DAY, "decay")
        d += 1

    rule_ids: dict[str, int] = {}
    counts = {
        "rules": 0,
        "rejections": 0,
        "flows": 0,
        "flow_runs": 0,
        "decisions": 0,
        "state": 0,
        "reinforced_memories": 0,
    }
    clock = FixedClock(now)
    eng.clock = clock
    try:
        for t, _, action, args in sorted(events):
            clock.t = min(t, now)
            if action == "reject":
                agent, domain, text = args
                r = eng.rules.reject(text, agent=agent, domain=domain, reason="the user said no")
                rule_ids[text] = r.rule_id
                counts["rejections"] += 1
            elif action == "rule":
                agent, domain, text, source, score, _ = args
                rule_ids[text] = eng.rules.add(
                    text, score=score, agent=agent, domain=domain, source=source, reason="demo"
                ).id
                counts["rules"] += 1
            elif action == "reinforce":
                # Planned active/dormant rules stay out of the critical band (only people and
                # rejections make critical rules in this story).
                if eng.rules.get(rule_ids[args[0]]).score < 8:
                    eng.rules.reinforce(rule_ids[args[0]], reason="applied successfully")
            elif action == "violate":
                if eng.rules.get(rule_ids[args[0]]).score < 8.5:
                    eng.rules.record_violation(rule_ids[args[0]], reason="broken in a session")
            elif action == "set":
                eng.rules.set_score(rule_ids[args[0]], args[1], reason=args[2])
            elif action == "retire":
                if eng.rules.get(rule_ids[args[0]]).status != "retired":
                    eng.rules.retire(rule_ids[args[0]], reason=args[1])
            elif action == "pin":
                if not eng.rules.get(rule_ids[args[0]]).pinned:
                    eng.rules.pin(rule_ids[args[0]], reason="operator keeps this one")
            elif action == "decay":
                eng.decay.run(now=clock.t, scope="rules")

        # Flows with run histories; the last `recent_failures` of the fails land at the end.
        for name, agent, domain, triggers, steps, approval, runs, passes, late_fails in FLOWS:
            clock.t = now - 75 * DAY
            eng.flows.add(
                name,
                steps,
                triggers=triggers,
                domain=domain,
                agent=agent,
                needs_approval=approval,
                description=f"{domain} procedure: {steps[0].lower()}…",
            )
            outcomes = ["pass"] * passes + ["fail"] * (runs - passes - late_fails)
            rng.shuffle(outcomes)
            outcomes += ["fail"] * late_fails
            span = rng.uniform(30, 70)
            for k, outcome in enumerate(outcomes):
                t = now - span * DAY + (k + rng.random() * 0.5) * span * DAY / runs
                clock.t = min(t, now - 60)
                eng.flows.record_run(
                    name,
                    outcome,
                    agent=agent or "atlas",
                    at=clock.t,
                    note=rng.choice(("", "", "smooth", "slow broker", "retried once", "step 3 took long"))
                    if outcome == "pass"
                    else rng.choice(("timeout at step 2", "approval denied", "test failure", "missing data")),
                )
            counts["flows"] += 1
            counts["flow_runs"] += runs

        for agent, category, text in DECISIONS:
            clock.t = now - rng.uniform(1, 20) * DAY
            eng.add_memory(
                text,
                kind="semantic",
                category=category,
                agent=agent,
                importance=0.8,
                dedup=False,
                reason="demo",
            )
            counts["decisions"] += 1
        for agent, flow, outcome, summary in (
            ("atlas", "deploy-release", "pass", "billing v2.4.1 deployed; error rate flat"),
            ("atlas", "db-migration", "fail", "ledger migration 0042 hit a lock timeout; rolled back"),
            ("hermes-trader", None, "pass", "calendar: CPI at 8:30 ET; size halved"),
            ("concierge", None, "pass", "shipping delay macro drafted for review"),
        ):
            clock.t = now - rng.uniform(0.1, 2) * DAY
            eng.gates.post(outcome, summary, agent=agent, flow=flow)
            counts["state"] += 1
            counts["flow_runs"] += 1 if flow else 0

        # Reinforce some memories at past dates so anchors and curves differ.
        rows = eng.store.query(lambda c: c.lifecycle_queries.reinforce_candidates(("state", "rejected")))
        for r in rng.sample(rows, min(40, len(rows))):
            t = r["created_at"] + rng.uniform(0.2, 0.9) * (now - r["created_at"])
            clock.t = min(t, now)
            eng.memories.reinforce(r["id"], reason="returned by search")
            counts["reinforced_memories"] += 1
    finally:
        eng.clock = real_clock
    counts["rules_by_status"] = eng.rules.counts()
    return counts
