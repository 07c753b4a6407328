"""Lifecycle part of `memconsole demo`: about 80 rules in every band with score histories (critical
rejections included), about 15 flows with run histories (one at 32 of 34), decisions and tasks
for boot context, gate-post state, and memories reinforced at past dates so decay curves differ.

History is written by replaying the engine's own operations on a clock set to past moments, so
every chart point is a real rule_history / flow_runs / audit row. Deterministic (seeded).
"""

from __future__ import annotations

import random

from engine.clock import DAY, FixedClock

# (agent, domain, text): rejections become critical rules through `reject`.
REJECTIONS = [
    ("hermes-trader", "trading", "Never hold overnight without a stop loss"),
    ("hermes-trader", "trading", "Do not trade during FOMC minutes"),
    ("atlas", "engineering", "Never force-push to main"),
    ("concierge", "support", "Never read a customer's full card number back to them"),
    ("scout", "research", "Do not cite unpublished preprints as settled results"),
]

# (agent, domain, [rule texts]) — bands are assigned by the plan below.
RULES = [
    (
        "hermes-trader",
        "trading",
        [
            "Size positions by 20-day volatility",
            "Prefer limit orders in the first 15 minutes",
            "Flatten before CPI and jobs reports",
            "Check the economic calendar before the open",
            "Log every fill with the reason for the trade",
            "Cap single-name exposure at 5% of the book",
            "Never average down on a losing futures position",
            "Review open orders at 3:45pm ET",
            "Use bracket orders on every new entry",
            "Halve size after two losing days in a row",
            "Re-check borrow availability before shorting",
            "Write the thesis before entering a trade",
            "Avoid trading the first minute after a halt",
            "Confirm the contract month before rolling",
            "Keep a cash buffer of 10% on margin accounts",
            "Mark option positions at mid, not last",
        ],
    ),
    (
        "atlas",
        "engineering",
        [
            "Integration tests run against a real Postgres container",
            "Keep pull requests under 400 lines",
            "Run the linters before asking for review",
            "Pin direct dependencies in lock files",
            "Write a migration for every schema change",
            "Feature flags for risky deploys",
            "Document public functions with examples",
            "Never commit secrets; use the vault",
            "Squash fixup commits before merge",
            "Prefer composition over inheritance",
            "Add a regression test with each bug fix",
            "Tag releases with semantic versions",
            "Keep CI under ten minutes",
            "Use UTC in logs and databases",
            "Review dependency updates weekly",
            "Profile before optimizing",
            "Dark mode and 14pt font in every editor",
            "Prefer small focused functions",
        ],
    ),
    (
        "concierge",
        "support",
        [
            "Refunds above $100 need a supervisor's approval",
            "Answer within two hours on business days",
            "Offer the status page link during incidents",
            "Confirm the account email before changes",
            "Escalate legal threats to the support lead",
            "Close tickets only after the customer confirms",
            "Use the customer's name once per reply",
            "Never promise delivery dates for backorders",
            "Tag every ticket with a product area",
            "Apologize once, then fix",
            "Link the help article that answers the question",
            "Send a survey after resolved tickets",
            "Verify identity before sharing order history",
            "Keep macros under 120 words",
        ],
    ),
    (
        "scout",
        "research",
        [
            "Cite primary sources over summaries",
            "Record the retrieval date of every web source",
            "Flag sample sizes under 30",
            "Prefer meta-analyses for medical claims",
            "Quote numbers with their units",
            "Separate findings from speculation",
            "Check a paper's retraction status",
            "Note conflicts of interest in funding",
            "Summaries under 300 words unless asked",
            "Give confidence levels for conclusions",
            "Link datasets alongside papers",
            "Search in at least two databases",
        ],
    ),
    (
        "",
        "general",
        [
            "Ask before deleting anything",
            "Say when you are unsure",
            "Keep secrets out of memory",
            "Prefer the user's terminology",
            "Confirm time zones for scheduling",
            "Summarize long threads before answering",
            "Never invent citations",
            "Respect quiet hours for notifications",
            "Repeat back destructive commands before running",
            "Use ISO dates in written output",
            "Prefer plain language",
            "Check the calendar for holidays",
            "Leave the workspace as you found it",
            "State assumptions explicitly",
        ],
    ),
]

# (name, agent, domain, triggers, steps, needs_approval, runs, passes, recent_failures)
FLOWS = [
    (
        "pre-market-checklist",
        "hermes-trader",
        "trading",
        ["pre-market", "before the open"],
        [
            "Read the overnight brief",
            "Check the economic calendar",
            "Review open positions and stops",
            "Set the day's loss limit",
            "Confirm connectivity to the broker",
        ],
        False,
        34,
        32,
        0,
    ),
    (
        "close-positions-eod",
        "hermes-trader",
        "trading",
        ["end of day", "close positions", "flatten"],
        [
            "List open positions",
            "Cancel working orders",
            "Flatten intraday positions",
            "Confirm stops on overnight holds",
            "Write the daily P&L note",
        ],
        True,
        28,
        24,
        1,
    ),
    (
        "roll-futures",
        "hermes-trader",
        "trading",
        ["roll the contract", "rollover"],
        [
            "Check the roll calendar",
            "Compare spreads",
            "Roll with a calendar spread order",
            "Verify the new contract month",
        ],
        True,
        9,
        5,
        3,
    ),
    (
        "deploy-release",
        "atlas",
        "engineering",
        ["deploy", "ship a release", "release to prod"],
        [
            "Run the full test suite",
            "Tag the release",
            "Deploy to staging",
            "Smoke-test staging",
            "Deploy to production behind a flag",
            "Watch error rates for 15 minutes",
        ],
        True,
        41,
        36,
        0,
    ),
    (
        "hotfix",
        "atlas",
        "engineering",
        ["hotfix", "urgent fix", "production bug"],
        [
            "Reproduce with a failing test",
            "Fix on a hotfix branch",
            "Get one review",
            "Deploy and monitor",
            "Back-merge to main",
        ],
        True,
        12,
        10,
        1,
    ),
    (
        "db-migration",
        "atlas",
        "engineering",
        ["migration", "schema change", "alter table"],
        [
            "Write the migration and its rollback",
            "Run it against a production snapshot",
            "Check lock times",
            "Apply in a maintenance window",
            "Verify row counts",
        ],
        True,
        15,
        9,
        4,
    ),
    (
        "dependency-update",
        "atlas",
        "engineering",
        ["update dependencies", "bump versions"],
        ["Read the changelogs", "Update the lock file", "Run tests", "Open a PR with the summary"],
        False,
        20,
        19,
        0,
    ),
    (
        "refund-request",
        "concierge",
        "support",
        ["refund", "money back", "chargeback"],
        [
            "Verify the order and identity",
            "Check the refund policy window",
            "Ask a supervisor above $100",
            "Issue the refund",
            "Confirm by email",
        ],
        True,
        56,
        51,
        1,
    ),
    (
        "account-recovery",
        "concierge",
        "support",
        ["locked out", "reset password", "account recovery"],
        [
            "Verify identity with two factors",
            "Send the reset link",
            "Confirm access",
            "Review recent account activity",
        ],
        False,
        23,
        20,
        0,
    ),
    (
        "incident-comms",
        "concierge",
        "support",
        ["outage", "incident", "service down"],
        [
            "Link the status page",
            "Use the incident macro",
            "Tag tickets with the incident id",
            "Follow up when resolved",
        ],
        False,
        8,
        4,
        3,
    ),
    (
        "literature-review",
        "scout",
        "research",
        ["literature review", "survey the papers"],
        [
            "Define the question",
            "Search two databases",
            "Screen abstracts",
            "Extract findings",
            "Grade the evidence",
            "Write the summary with citations",
        ],
        False,
        14,
        12,
        0,
    ),
    (
        "fact-check",
        "scout",
        "research",
        ["fact check", "verify the claim", "is it true"],
        [
            "Find the primary source",
            "Check the date and context",
            "Look for retractions",
            "Give a verdict with confidence",
        ],
        False,
        30,
        25,
        2,
    ),
    (
        "dataset-intake",
        "scout",
        "research",
        ["new dataset", "ingest data"],
        [
            "Record the source and licence",
            "Check the schema",
            "Profile missing values",
            "Store with a checksum",
        ],
        False,
        6,
        3,
        2,
    ),
    (
        "weekly-report",
        "",
        "general",
        ["weekly report", "status update"],
        ["Collect merged work", "List open risks", "Summarize in five bullets", "Send to the channel"],
        False,
        10,
        10,
        0,
    ),
    (
        "delete-data",
        "",
        "general",
        ["delete", "remove all", "wipe"],
        [
            "Repeat back exactly what will be deleted",
            "Get explicit confirmation",
            "Take a backup",
            "Delete",
            "Verify and report",
        ],
        True,
        5,
        5,
        0,
    ),
]

DECISIONS = [
    ("atlas", "decision", "The ledger service uses Postgres 16 with logical replication"),
    ("atlas", "decision", "Releases go out Tuesdays and Thursdays only"),
    ("atlas", "task", "Migrate the billing cron jobs to the job queue"),
    ("atlas", "task", "Upgrade the API gateway before the end of the quarter"),
    ("hermes-trader", "decision", "Trade only the ES and NQ futures this quarter"),
    ("hermes-trader", "task", "Backtest the volatility sizing rule on 2020 data"),
    ("concierge", "decision", "Refund window is 30 days from delivery"),
    ("concierge", "task", "Rewrite the shipping-delay macro"),
    ("scout", "decision", "Use PubMed and Semantic Scholar as the two default databases"),
    ("scout", "task", "Finish the review of sleep and memory consolidation papers"),
]


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
