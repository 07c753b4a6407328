"""The lifecycle gateways (rules, rule_history, flows, flow_runs), the typed decay access and the
lifecycle read model, on both backends: each adapter's own SQL gives the same answers."""

from __future__ import annotations

import pytest

from engine.clock import DAY
from engine.lifecycle.decay import BANDS, RETIRE_EDGE, clock_for, rule_score_at, strength_at
from engine.storage.gateways.rule_history import RuleChange
from engine.storage.lifecycle import DecayFilter
from engine.storage.queries.lifecycle import RuleDecayStep, RuleFilter

pytestmark = pytest.mark.backends


def _rule(c, text, now, **kw):
    vals = {
        "text": text,
        "domain": kw.pop("domain", ""),
        "agent": kw.pop("agent", ""),
        "source": "manual",
        "score": kw.pop("score", 5.0),
        "status": kw.pop("status", "active"),
        "last_reinforced_at": kw.pop("at", now),
        "created_at": now,
        "updated_at": now,
        "pinned": 0,
        "metadata": "{}",
    }
    return c.rules.insert({**vals, **kw})


def test_rule_rows_and_history(eng):
    now = eng.clock.now()

    def write(c):
        a = _rule(c, "always run the tests", now, agent="coder")
        b = _rule(c, "never force-push", now, score=9.5, status="critical")
        c.rules.update(a, {"score": 6.0}, now + 1)
        h1 = c.rule_history.record(RuleChange(a, now, 5.0, "active", "created", "tester"))
        c.rule_history.record_many([RuleChange(a, now + 1, 6.0, "active", "set", "tester", 5.0, "active")])
        return a, b, h1

    a, b, h1 = eng.store.write(write)

    def read(c):
        return c.rules.row(a), c.rules.row(10**9), c.rule_history.of_rule(a), c.rules.ids_of_agent("coder")

    row, missing, hist, mine = eng.store.query(read)
    assert (row["score"], row["updated_at"], missing, mine) == (6.0, now + 1, None, [a])
    assert [(h["old_score"], h["new_score"]) for h in hist] == [(None, 5.0), (5.0, 6.0)]
    with pytest.raises(ValueError):
        eng.store.write(lambda c: c.rules.update(a, {"id": 3}, now))
    eng.store.write(lambda c: c.rule_history.remove([h1]))
    assert len(eng.store.query(lambda c: c.rule_history.of_rule(a))) == 1
    eng.store.write(lambda c: c.rules.restore({**dict(row), "score": 4.0}, row.keys()))
    assert eng.store.query(lambda c: c.rules.row(a))["score"] == 4.0
    eng.store.write(lambda c: c.rules.delete([a]))
    assert eng.store.query(lambda c: (c.rules.row(a), c.rule_history.of_rule(a))) == (None, [])
    assert eng.store.query(lambda c: c.rules.row(b))["status"] == "critical"


def test_rule_views(eng):
    now = eng.clock.now()

    def write(c):
        return [
            _rule(c, "Deploy only on weekdays", now, agent="ops", domain="release", score=7.0),
            _rule(c, "ask before deleting data", now, score=3.5, status="dormant"),
            _rule(
                c, "DEPLOY with a changelog", now, agent="dev", domain="release", score=9.2, status="critical"
            ),
        ]

    a, b, d = eng.store.write(write)
    q = lambda f, order="score", limit=50: [  # noqa: E731
        r["id"] for r in eng.store.query(lambda c: c.lifecycle_queries.rules(f, order, limit))
    ]
    assert q(RuleFilter()) == [d, a, b]
    assert q(RuleFilter(like=("%deploy%",))) == [d, a]  # ASCII case-insensitive on both
    assert q(RuleFilter(agent="ops", include_global=True), "id") == [a, b]
    assert q(RuleFilter(statuses=("dormant", "critical")), "id") == [b, d]
    assert q(RuleFilter(min_score=5.0, max_score=8.0, domain="release")) == [a]
    assert q(RuleFilter(ids=[]), "id") == [] and q(RuleFilter(ids=[b, d]), "id") == [b, d]
    assert eng.store.query(lambda c: c.lifecycle_queries.rule_counts()) == {
        "active": 1,
        "dormant": 1,
        "critical": 1,
    }
    top = eng.store.query(lambda c: c.lifecycle_queries.top_rules("dev", ("critical", "active"), 5))
    assert [r["id"] for r in top] == [d]
    domains, agents, _, total = eng.store.query(lambda c: c.lifecycle_queries.rule_facets())
    assert (domains, agents, total) == (["", "release"], ["", "dev", "ops"], 3)


def test_rules_decay_due_matches_the_python_formula(eng):
    ds = eng.settings.decay
    now = eng.clock.now()

    def write(c):
        ids = []
        for n, (score, status) in enumerate(
            [(8.5, "active"), (5.0, "active"), (3.2, "dormant"), (9.5, "critical")]
        ):
            ids.append(
                _rule(c, f"rule {n}", now - 40 * DAY, score=score, status=status, at=now - (10 + 7 * n) * DAY)
            )
        return ids

    eng.store.write(write)
    step = RuleDecayStep(now, DAY, ds.rule_grace_days * DAY, ds.rule_daily_loss, RETIRE_EDGE, BANDS)
    due = {r["id"]: r for r in eng.store.query(lambda c: c.lifecycle_queries.rules_decay_due(step))}
    rows = eng.store.query(lambda c: c.lifecycle_queries.rules_decaying())
    assert due and len(rows) == 3
    for r in rows:
        score, status = rule_score_at(r, now, ds)
        if r["id"] in due:
            assert (due[r["id"]]["new_score"], due[r["id"]]["new_status"]) == (pytest.approx(score), status)
        else:
            assert score == r["score"]


def test_flow_rows_and_runs(eng):
    now = eng.clock.now()

    def write(c):
        f = c.flows.insert(
            {
                "name": "deploy",
                "agent": "ops",
                "steps": "[]",
                "triggers": "[]",
                "created_at": now,
                "updated_at": now,
            }
        )
        g = c.flows.insert(
            {"name": "backup", "steps": "[]", "triggers": "[]", "created_at": now, "updated_at": now}
        )
        r1 = c.flow_runs.insert(f, "pass", "", "", now + 2)
        c.flow_runs.insert(f, "fail", "", "", now + 1)
        c.flow_runs.insert(g, "pass", "", "", now + 3)
        c.flows.update(g, {"status": "disabled"}, now + 5)
        return f, g, r1

    f, g, r1 = eng.store.write(write)

    def read(c):
        return (
            c.flows.named("deploy")["id"],
            c.flows.row(g)["status"],
            c.flow_runs.outcomes([f, g]),
            [r["id"] for r in c.flow_runs.of_flow(f)],
            c.flows.ids_of_agent("ops"),
            [r["name"] for r in c.lifecycle_queries.flows(status="active", for_agent="dev")],
        )

    named, status, outcomes, runs, mine, active = eng.store.query(read)
    assert (named, status, mine, active) == (f, "disabled", [f], [])
    assert outcomes == [(f, "fail", now + 1), (f, "pass", now + 2), (g, "pass", now + 3)]
    assert runs[-1] == r1
    eng.store.write(lambda c: c.flow_runs.delete([r1]))
    assert len(eng.store.query(lambda c: c.flow_runs.of_flow(f))) == 1
    eng.store.write(lambda c: c.flows.delete([f]))
    assert eng.store.query(lambda c: (c.flows.row(f), c.flow_runs.outcomes([f]))) == (None, [])


def test_typed_decay_access_and_forecast_views(eng):
    ds = eng.settings.decay
    t0 = eng.clock.now()
    ids = [eng.memories.add(f"memory number {i} about decay", kind="episodic") for i in range(6)]
    access = eng.store.decay_access
    clock = clock_for(ds, t0)
    rate = clock.rates["episodic"]
    until = t0 + 400 * DAY
    late = clock_for(ds, until)

    def counts(c):
        return (
            access.count(c, "archive_at", DecayFilter(clock, archive_at="unscheduled")),
            access.count(c, "archive_at", DecayFilter(late, archive_at="later", estimated=True)),
            access.ids(c, "planner", DecayFilter(late, archive_at="due", estimated=True)),
        )

    assert eng.store.query(counts) == (6, 0, ids)
    assert (
        eng.store.write(
            lambda c: access.update(c, "archive_at", "schedule", DecayFilter(clock, archive_at="unscheduled"))
        )
        == 6
    )
    got = eng.store.write(
        lambda c: access.update_ids(c, "archive_at", "archive", DecayFilter(late, archive_at="due"))
    )
    assert sorted(got) == ids

    def views(c):
        q = c.lifecycle_queries
        return (
            q.strength_bins(late, 10),
            q.below_threshold(clock),
            q.crossings_per_day(clock, until, DAY, None),
        )

    bins, below, per_day = eng.store.query(views)
    want = int(strength_at(1.0, t0, rate, until) * 10)  # truncated, not rounded, on both
    assert bins == [("archived", want, 6)] and below == 0 and per_day == []
    row = eng.store.query(lambda c: c.lifecycle_queries.memory(ids[0]))
    assert row["tier"] == "archived" and row["strength"] == pytest.approx(strength_at(1.0, t0, rate, until))
