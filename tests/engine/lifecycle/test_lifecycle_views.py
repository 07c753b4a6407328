"""LifecycleViewsMixin: the Rules pane's filter facets and the Decay pane's day-by-day forecast.
The timeline must agree with forecast() (the same closed form), honour what-if rates, and write
nothing."""

from __future__ import annotations

import pytest

from engine import InvalidInput
from engine.clock import DAY

pytestmark = pytest.mark.backends


def _aged(eng, clock):
    """Memories of each kind at different ages, plus a pinned and a core one that never cross."""
    t0 = clock.now()
    ids = {}
    for name, kind, age in (
        ("e30", "episodic", 30),
        ("e5", "episodic", 5),
        ("e1", "episodic", 1),
        ("s20", "semantic", 20),
        ("p10", "procedural", 10),
    ):
        clock.t = t0 - age * DAY
        ids[name] = eng.add_memory(f"memory {name} about {kind}", kind=kind, agent="a" if age > 4 else "b")
    clock.t = t0 - 40 * DAY
    ids["pinned"] = eng.add_memory("pinned forever", kind="episodic", pinned=True)
    ids["core"] = eng.add_memory("core forever", kind="episodic", tier="core")
    clock.t = t0
    return ids


def test_rule_facets(eng):
    eng.rules.add("a", domain="git", agent="atlas")
    eng.rules.add("b", domain="deploy", agent="")
    eng.rules.add("c", domain="deploy", agent="hermes")
    eng.add_memory("scout's note", agent="scout")
    f = eng.rules.facets()
    assert f.domains == ["deploy", "git"]
    assert f.agents == ["", "atlas", "hermes"]
    assert f.boot_agents == ["atlas", "hermes", "scout"]
    assert f.total == 3


def test_timeline_agrees_with_forecast_and_writes_nothing(eng, clock):
    _aged(eng, clock)
    audit_before = len(eng.audit.log(limit=10_000))
    for days in (1, 7, 30, 90):
        tl = eng.decay.timeline(days)
        fc = eng.decay.forecast(days)
        assert tl.total == fc.memories_total, days
        assert tl.cumulative[-1] == tl.total and len(tl.counts["episodic"]) == days
        assert sum(tl.counts["semantic"]) == fc.by_kind.get("semantic", 0)
        assert tl.cumulative == sorted(tl.cumulative)
    tl = eng.decay.timeline(30)
    # e30 (episodic, 7 d half-life) is already under the 0.3 threshold: overdue, counted on day 0
    assert tl.overdue == 1 and tl.counts["episodic"][0] >= 1
    # e5 crosses at 5 + ~12.2 d → in ~7 days from now; e1 ~11 days from now
    crossings = {round((m.crosses_at - clock.now()) / DAY) for m in eng.decay.forecast(30).memories}
    assert {7, 11} <= crossings
    assert tl.counts["episodic"][7] == 1 and tl.counts["episodic"][11] == 1
    assert len(eng.audit.log(limit=10_000)) == audit_before


def test_timeline_what_if_rates_and_agent(eng, clock):
    _aged(eng, clock)
    base = eng.decay.timeline(30)
    faster = eng.decay.timeline(30, rates={"semantic": 3, "procedural": 3})
    assert faster.total > base.total
    assert faster.rates["semantic"] == 3.0 and base.rates is None
    assert faster.total == eng.decay.forecast(30, rates={"semantic": 3, "procedural": 3}).memories_total
    only_b = eng.decay.timeline(30, agent="b")
    assert only_b.total == eng.decay.forecast(30, agent="b").memories_total == 1
    later = eng.decay.timeline(30, now=clock.now() + 30 * DAY)
    assert later.overdue > base.overdue


@pytest.mark.parametrize("days", [0, -1, "x", 5000])
def test_timeline_rejects_bad_days(eng, days):
    with pytest.raises(InvalidInput):
        eng.decay.timeline(days)
