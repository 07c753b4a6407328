"""Rules: bands, operations with history and audit, filters, rejections."""

from __future__ import annotations

import pytest

from engine import InvalidInput, NotFound
from engine.clock import DAY
from tests.direct_sql import direct

pytestmark = pytest.mark.backends


def _audit_actions(eng, rule_id):
    return [
        r[0]
        for r in direct(eng.store).all(
            "SELECT action FROM audit WHERE target_kind = 'rule' AND target_id = ? ORDER BY id",
            (str(rule_id),),
        )
    ]


def test_status_follows_the_band(eng):
    got = {s: eng.rules.add(f"rule scored {s}", score=s).status for s in (10, 9, 8, 7, 6, 5, 4, 3, 2, 1)}
    assert got == {
        10: "critical",
        9: "critical",
        8: "active",
        7: "active",
        6: "active",
        5: "active",
        4: "dormant",
        3: "dormant",
        2: "retired",
        1: "retired",
    }


def test_operations_write_history_and_audit(eng):
    r = eng.rules.add("Prefer limit orders", score=6, agent="atlas", domain="trading")
    eng.clock.advance(DAY)
    assert eng.rules.reinforce(r.id).score == 7
    assert eng.rules.record_violation(r.id, reason="market order at open").violations == 1
    assert eng.rules.get(r.id).score == 7.5
    assert eng.rules.set_score(r.id, 9.2, reason="the desk insists").status == "critical"
    assert eng.rules.retire(r.id, reason="desk closed").status == "retired"
    revived = eng.rules.revive(r.id)
    assert revived.status == "critical" and revived.score == 9.2
    assert eng.rules.pin(r.id).pinned
    assert eng.rules.set_score(r.id, 4, reason="pinned keeps status").status == "critical"
    un = eng.rules.unpin(r.id)
    assert (un.pinned, un.status) == (False, "dormant")
    hist = eng.rules.history(r.id)
    assert [h.new_score for h in hist] == [6, 7, 7.5, 9.2, 9.2, 9.2, 4, 4]
    assert [h.new_status for h in hist][-4:] == ["retired", "critical", "critical", "dormant"]
    assert _audit_actions(eng, r.id) == [
        "rule-add",
        "rule-reinforce",
        "rule-violate",
        "rule-set-score",
        "rule-retire",
        "rule-revive",
        "rule-pin",
        "rule-set-score",
        "rule-unpin",
    ]


def test_bad_input_is_a_clear_error(eng):
    r = eng.rules.add("x rule", score=5)
    with pytest.raises(InvalidInput):
        eng.rules.add("too high", score=11)
    with pytest.raises(InvalidInput):
        eng.rules.add("   ")
    with pytest.raises(InvalidInput):
        eng.rules.add("bad source", source="gossip")
    with pytest.raises(InvalidInput):
        eng.rules.set_score(r.id, 7, reason="")
    with pytest.raises(InvalidInput):
        eng.rules.revive(r.id)  # not retired
    with pytest.raises(NotFound):
        eng.rules.pin(12345)
    with pytest.raises(InvalidInput):
        eng.rules.list(status="sleepy")


def test_a_retired_rule_stays_retired_until_revived_or_rescored(eng):
    r = eng.rules.add("Old habit", score=6)
    eng.rules.retire(r.id, reason="no longer true")
    assert eng.rules.reinforce(r.id).status == "retired"
    assert eng.rules.record_violation(r.id).status == "retired"
    assert eng.rules.set_score(r.id, 6, reason="true again").status == "active"


def test_reinforce_caps_at_ten_and_resets_decay(eng):
    r = eng.rules.add("Check the calendar", score=9.6)
    assert eng.rules.reinforce(r.id).score == 10
    low = eng.rules.add("Log every fill", score=6)
    eng.clock.advance(6 * DAY)
    eng.rules.reinforce(low.id)  # the grace restarts here
    eng.clock.advance(6 * DAY)
    assert eng.decay.run().rules_decayed == 0
    eng.clock.advance(2 * DAY)
    assert eng.decay.run().rules_decayed == 1


def test_set_score_counts_from_now(eng):
    r = eng.rules.add("Old rule", score=6)
    eng.clock.advance(30 * DAY)
    eng.rules.set_score(r.id, 8, reason="still matters")
    assert eng.decay.run().rules_decayed == 0  # no retroactive loss for the 30 days
    eng.clock.advance(DAY)
    eng.decay.run()
    assert eng.rules.get(r.id).score == 7.5


def test_list_filters(eng):
    eng.rules.add("Never hold overnight without a stop loss", score=10, agent="atlas", domain="trading")
    eng.rules.add("Prefer limit orders near the open", score=6, agent="atlas", domain="trading")
    eng.rules.add("Summaries under 200 words", score=4, agent="scribe", domain="writing")
    eng.rules.add("Always cite the source", score=7, domain="writing")
    assert [r.score for r in eng.rules.list()] == [10, 7, 6, 4]
    assert {r.text[:5] for r in eng.rules.list(agent="atlas")} == {"Never", "Prefe"}
    assert len(eng.rules.list(agent="scribe", include_global=True)) == 2
    assert [r.status for r in eng.rules.list(status=["critical", "dormant"])] == ["critical", "dormant"]
    assert [r.text for r in eng.rules.list(query="limit orders")] == ["Prefer limit orders near the open"]
    assert len(eng.rules.list(min_score=6, max_score=7)) == 2
    assert eng.rules.counts() == {"critical": 1, "active": 2, "dormant": 1, "retired": 0}


def test_rule_detail_has_history_and_projection(eng):
    r = eng.rules.add("Prefer limit orders", score=6)
    d = eng.rules.detail(r.id, days=30)
    assert d.rule.id == r.id and len(d.history) == 1
    vals = [p.value for p in d.projection.points]
    assert vals[0] == 6 and vals[7] == 5.5 and min(vals) == 2.5 and d.projection.crosses_at is not None


def test_reject_records_a_pinned_rejection_and_a_critical_rule(eng):
    res = eng.rules.reject("Do not trade during FOMC minutes", agent="atlas")
    m = eng.memories.get(res.memory_id)
    r = eng.rules.get(res.rule_id)
    assert (m.category, m.pinned, m.agent) == ("rejected", True, "atlas")
    assert r.score >= 9 and r.status == "critical" and r.source == "rejection"
    assert r.metadata["memory_id"] == m.id
    with pytest.raises(InvalidInput):
        eng.rules.reject("soft no", score=6)
    # critical rules never decay on their own
    eng.clock.advance(365 * DAY)
    eng.decay.run()
    assert eng.rules.get(res.rule_id).score == r.score


def test_lifecycle_demo_covers_every_band_and_the_32_of_34_flow(eng):
    from engine.demo.lifecycle import write_lifecycle_demo

    counts = write_lifecycle_demo(eng)
    by_status = eng.rules.counts()
    assert all(by_status[s] > 0 for s in ("critical", "active", "dormant", "retired")), by_status
    assert sum(by_status.values()) >= 75
    stop = eng.rules.list(query="overnight stop loss")[0]
    assert stop.status == "critical" and stop.source == "rejection"
    assert sum(len(eng.rules.history(r.id)) > 2 for r in eng.rules.list()) >= 40  # charts with shape
    flows = eng.flows.list()
    assert len(flows) == counts["flows"] == 15
    assert {(f.stats.passes, f.stats.uses, f.stats.effectiveness) for f in flows} >= {(32, 34, 0.941)}
    assert any(f.stats.flagged for f in flows) and any(f.stats.trend == "down" for f in flows)
    assert eng.clock.now() == 1767225600.0  # the engine's own clock is restored
