"""Rules, flows and aged memories for the Rules, Flows and Decay pane tests: the same rows every
run. The clock walks from 40 days before T0 to T0 (decay passes on the way write rule history),
then a few fresh memories are added at T0. Independent of tests/screens/seed.py on purpose, so
these panes' assertions and snapshots do not move when other panes' seed grows."""

from __future__ import annotations

from engine import FixedClock
from engine.clock import DAY, parse_time

from .seed import T0, make_engine


def seed_lifecycle(eng, clock: FixedClock) -> dict:
    t0 = parse_time(T0)
    ids: dict = {"rule": {}, "flow": {}, "mem": {}}
    at = lambda days: t0 + days * DAY  # noqa: E731  (days relative to T0, negative = past)

    clock.t = at(-40)
    r = ids["rule"]
    r["push"] = eng.rules.add(
        "Never force-push to main",
        score=10,
        domain="git",
        agent="atlas",
        source="rejection",
        reason="the user said no",
    ).id
    r["tests"] = eng.rules.add(
        "Run the test suite before every deploy", score=7, domain="deploy", agent="atlas", source="learning"
    ).id
    r["size"] = eng.rules.add(
        "Cap position size at 2% of the book",
        score=9.5,
        domain="trading",
        agent="hermes",
        source="manual",
        pinned=True,
    ).id
    r["jenkins"] = eng.rules.add(
        "Use Jenkins job deploy-prod for releases", score=4, domain="deploy", agent="atlas", source="learning"
    ).id
    m = ids["mem"]
    m["failed"] = eng.add_memory(
        "Deploy of v1.2 failed on a cache miss",
        kind="episodic",
        category="context",
        agent="atlas",
        importance=0.3,
    )
    clock.t = at(-30)
    eng.rules.reinforce(r["tests"], reason="caught a broken build")
    clock.t = at(-20)
    r["et"] = eng.rules.add(
        "Quote market times in ET", score=6, domain="trading", agent="hermes", source="discovery"
    ).id
    m["ports"] = eng.add_memory(
        "Staging listens on port 8443", kind="semantic", category="fact", agent="atlas", importance=0.4
    )
    eng.decay.run()
    clock.t = at(-12)
    r["lock"] = eng.rules.add(
        "Pin dependency versions in lockfiles", score=6, domain="deploy", agent="", source="discovery"
    ).id
    eng.rules.record_violation(r["tests"], reason="deployed without tests")
    clock.t = at(-10)
    m["hotfix"] = eng.add_memory(
        "Hotfix 1.2.1 shipped after a manual test run",
        kind="episodic",
        category="context",
        agent="atlas",
        importance=0.5,
    )
    eng.decay.run()
    clock.t = at(-5)
    m["standup"] = eng.add_memory(
        "Standup moved to 9:30", kind="episodic", category="context", agent="hermes", importance=0.2
    )
    eng.rules.set_score(r["et"], 8, reason="asked for twice this week")
    clock.t = at(0)
    eng.decay.run()

    f = ids["flow"]
    f["deploy"] = eng.flows.add(
        "deploy-release",
        ["run the tests", "build the image", "deploy to staging", "smoke test", "promote to prod"],
        triggers=["deploy", "release"],
        domain="deploy",
        agent="atlas",
        needs_approval=True,
        description="Ship a tagged release",
        created_at=at(-40),
    ).id
    f["rollback"] = eng.flows.add(
        "rollback",
        ["open a ticket", "revert the release", "verify health"],
        triggers=["rollback"],
        domain="deploy",
        agent="atlas",
        created_at=at(-30),
    ).id
    f["brief"] = eng.flows.add(
        "pre-market-brief",
        ["pull inventories", "summarise movers", "post brief"],
        triggers=["brief"],
        domain="trading",
        agent="hermes",
        created_at=at(-30),
    ).id
    f["keys"] = eng.flows.add(
        "rotate-keys", ["list keys", "rotate", "update secrets"], domain="ops", created_at=at(-3)
    ).id
    deploy = "ppfpppfppppppppppppp"  # 18 of 20; the recent window is perfect: trend up
    for i, o in enumerate(deploy):
        eng.flows.record_run(
            f["deploy"],
            "pass" if o == "p" else "fail",
            agent="atlas",
            note=f"release {i}",
            at=at(-30 + i * 1.5),
        )
    for i, o in enumerate("pfpffpff"):  # 3 of 8: flagged
        eng.flows.record_run(
            f["rollback"],
            "pass" if o == "p" else "fail",
            agent="atlas",
            note="cache miss" if o == "f" else "",
            at=at(-25 + i * 3),
        )
    for i, o in enumerate("pppppfpppppp"):
        eng.flows.record_run(f["brief"], "pass" if o == "p" else "fail", agent="hermes", at=at(-24 + i * 2))
    return ids


def seeded_lifecycle_engine(path, **kw):
    """The shared seed plus lifecycle rows; the clock ends at T0 (returned for tests to move)."""
    clock = FixedClock(T0)
    eng = make_engine(path, clock=clock, **kw)
    ids = seed_lifecycle(eng, clock)
    clock.t = parse_time(T0)
    m = ids["mem"]
    m["fridays"] = eng.add_memory(
        "Never deploy on Fridays", kind="procedural", category="decision", agent="atlas", importance=0.9
    )
    m["actions"] = eng.add_memory(
        "CI runs on GitHub Actions; Jenkins is retired",
        kind="semantic",
        category="fact",
        agent="atlas",
        importance=0.6,
    )
    m["dark"] = eng.add_memory(
        "The user prefers dark mode in every editor",
        kind="semantic",
        category="preference",
        agent="atlas",
        importance=0.5,
        tier="core",
    )
    m["sizing"] = eng.add_memory(
        "Position sizing is capped at 2% of the book per trade",
        kind="procedural",
        category="decision",
        agent="hermes",
        importance=0.8,
        pinned=True,
    )
    return eng, ids, clock
