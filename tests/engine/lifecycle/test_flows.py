"""Flows: effectiveness with counts and trend, flagging, check by trigger and full text."""

from __future__ import annotations

import pytest

from engine import InvalidInput, NotFound
from engine.clock import DAY
from engine.lifecycle.flows import flow_stats
from tests.direct_sql import direct

pytestmark = pytest.mark.backends


def _flow(eng, name="deploy-release", **kw):
    return eng.flows.add(
        name,
        kw.pop("steps", ["run the tests", "tag the release", "deploy to prod"]),
        triggers=kw.pop("triggers", ["deploy", "ship a release"]),
        **kw,
    )


def test_thirty_two_of_thirty_four_is_0_941(eng):
    f = _flow(eng)
    t0 = eng.clock.now()
    for i in range(34):
        eng.flows.record_run(f.name, "fail" if i in (5, 20) else "pass", at=t0 + i * DAY)
    s = eng.flows.get(f.name).stats
    assert (s.passes, s.uses, s.fails, s.effectiveness) == (32, 34, 2, 0.941)
    assert not s.flagged
    d = eng.flows.detail(f.name, runs=5)
    assert len(d.runs) == 5 and d.runs[0].at > d.runs[-1].at  # newest first
    assert len(d.rolling) == 34 and d.rolling[-1].value == pytest.approx(32 / 34, abs=1e-4)
    assert d.rolling[0].value == 1.0


def test_flag_and_trend():
    fs = dict(window=10, flag_below=0.6, min_runs=5)
    s = flow_stats([True] * 10 + [False] * 10, 1.0, **fs)
    assert (s.effectiveness, s.trend, s.trend_delta, s.flagged) == (0.5, "down", -1.0, True)
    s = flow_stats([False] * 3, 1.0, **fs)
    assert s.flagged is False and s.trend == "new"  # too few runs to judge
    s = flow_stats([False] * 10 + [True] * 10, 1.0, **fs)
    assert s.trend == "up" and s.recent_outcomes == [True] * 10
    assert flow_stats([], None, **fs).effectiveness is None


def test_list_flows_flagged_filter(eng):
    good, bad = _flow(eng, "good-flow"), _flow(eng, "bad-flow", agent="atlas")
    for i in range(6):
        eng.flows.record_run(good.name, "pass")
        eng.flows.record_run(bad.name, "pass" if i == 0 else "fail")
    assert [f.name for f in eng.flows.list()] == ["bad-flow", "good-flow"]
    assert [f.name for f in eng.flows.list(flagged=True)] == ["bad-flow"]
    assert [f.name for f in eng.flows.list(agent="atlas")] == ["bad-flow"]


def test_check_by_trigger_then_full_text(eng):
    _flow(eng, "deploy-release")
    eng.flows.add(
        "rotate-keys",
        ["revoke the old key", "issue a new key", "update the vault"],
        triggers=["rotate credentials"],
        description="Rotate API keys every quarter",
    )
    eng.flows.add("old-flow", ["x"], triggers=["deploy"], status="disabled")
    m = eng.flows.check("Going to deploy the billing service now")
    assert [x.flow.name for x in m] == ["deploy-release"] and m[0].via == "trigger"
    assert m[0].matched == ["deploy"] and m[0].flow.steps[0] == "run the tests"
    m = eng.flows.check("the API keys are old, refresh them")  # no trigger: full text
    assert [x.flow.name for x in m] == ["rotate-keys"] and m[0].via == "text"
    assert eng.flows.check("bake a cake") == []


def test_add_flow_validation_and_replace(eng):
    f = _flow(eng)
    eng.flows.record_run(f.name, "pass")
    with pytest.raises(InvalidInput):
        _flow(eng)  # duplicate name
    g = eng.flows.add_doc({"name": f.name, "steps": ["one step"], "needs_approval": True}, replace=True)
    assert g.id == f.id and g.steps == ["one step"] and g.needs_approval and g.stats.uses == 1
    with pytest.raises(InvalidInput):
        eng.flows.add("empty", [])
    with pytest.raises(InvalidInput):
        eng.flows.add_doc({"name": "x", "steps": ["a"], "colour": "red"})
    with pytest.raises(InvalidInput):
        eng.flows.record_run(f.name, "maybe")
    with pytest.raises(NotFound):
        eng.flows.record_run("nope", "pass")
    actions = [
        r[0] for r in direct(eng.store).all("SELECT action FROM audit WHERE target_kind = 'flow' ORDER BY id")
    ]
    assert actions == ["flow-add", "flow-run", "flow-update"]
