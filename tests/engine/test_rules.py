"""Rules: bands, operations with history and audit, filters, rejections."""
from __future__ import annotations

import pytest

from engine import InvalidInput, NotFound
from engine.clock import DAY


def _audit_actions(eng, rule_id):
    return [r[0] for r in eng.store.read(
        "SELECT action FROM audit WHERE target_kind = 'rule' AND target_id = ? ORDER BY id", (str(rule_id),))]


def test_status_follows_the_band(eng):
    got = {s: eng.add_rule(f"rule scored {s}", score=s).status for s in (10, 9, 8, 7, 6, 5, 4, 3, 2, 1)}
    assert got == {10: "critical", 9: "critical", 8: "active", 7: "active", 6: "active", 5: "active",
                   4: "dormant", 3: "dormant", 2: "retired", 1: "retired"}


def test_operations_write_history_and_audit(eng):
    r = eng.add_rule("Prefer limit orders", score=6, agent="atlas", domain="trading")
    eng.clock.advance(DAY)
    assert eng.reinforce_rule(r.id).score == 7
    assert eng.record_violation(r.id, reason="market order at open").violations == 1
    assert eng.get_rule(r.id).score == 7.5
    assert eng.set_rule_score(r.id, 9.2, reason="the desk insists").status == "critical"
    assert eng.retire_rule(r.id, reason="desk closed").status == "retired"
    revived = eng.revive_rule(r.id)
    assert revived.status == "critical" and revived.score == 9.2
    assert eng.pin_rule(r.id).pinned
    assert eng.set_rule_score(r.id, 4, reason="pinned keeps status").status == "critical"
    un = eng.unpin_rule(r.id)
    assert (un.pinned, un.status) == (False, "dormant")
    hist = eng.rule_history(r.id)
    assert [h.new_score for h in hist] == [6, 7, 7.5, 9.2, 9.2, 9.2, 4, 4]
    assert [h.new_status for h in hist][-4:] == ["retired", "critical", "critical", "dormant"]
    assert _audit_actions(eng, r.id) == ["rule-add", "rule-reinforce", "rule-violate", "rule-set-score",
                                         "rule-retire", "rule-revive", "rule-pin", "rule-set-score",
                                         "rule-unpin"]


def test_bad_input_is_a_clear_error(eng):
    r = eng.add_rule("x rule", score=5)
    with pytest.raises(InvalidInput):
        eng.add_rule("too high", score=11)
    with pytest.raises(InvalidInput):
        eng.add_rule("   ")
    with pytest.raises(InvalidInput):
        eng.add_rule("bad source", source="gossip")
    with pytest.raises(InvalidInput):
        eng.set_rule_score(r.id, 7, reason="")
    with pytest.raises(InvalidInput):
        eng.revive_rule(r.id)                    # not retired
    with pytest.raises(NotFound):
        eng.pin_rule(12345)
    with pytest.raises(InvalidInput):
        eng.list_rules(status="sleepy")


def test_a_retired_rule_stays_retired_until_revived_or_rescored(eng):
    r = eng.add_rule("Old habit", score=6)
    eng.retire_rule(r.id, reason="no longer true")
    assert eng.reinforce_rule(r.id).status == "retired"
    assert eng.record_violation(r.id).status == "retired"
    assert eng.set_rule_score(r.id, 6, reason="true again").status == "active"


def test_reinforce_caps_at_ten_and_resets_decay(eng):
    r = eng.add_rule("Check the calendar", score=9.6)
    assert eng.reinforce_rule(r.id).score == 10
    low = eng.add_rule("Log every fill", score=6)
    eng.clock.advance(6 * DAY)
    eng.reinforce_rule(low.id)                   # the grace restarts here
    eng.clock.advance(6 * DAY)
    assert eng.decay_pass().rules_decayed == 0
    eng.clock.advance(2 * DAY)
    assert eng.decay_pass().rules_decayed == 1


def test_set_score_counts_from_now(eng):
    r = eng.add_rule("Old rule", score=6)
    eng.clock.advance(30 * DAY)
    eng.set_rule_score(r.id, 8, reason="still matters")
    assert eng.decay_pass().rules_decayed == 0   # no retroactive loss for the 30 days
    eng.clock.advance(DAY)
    eng.decay_pass()
    assert eng.get_rule(r.id).score == 7.5


def test_list_filters(eng):
    eng.add_rule("Never hold overnight without a stop loss", score=10, agent="atlas", domain="trading")
    eng.add_rule("Prefer limit orders near the open", score=6, agent="atlas", domain="trading")
    eng.add_rule("Summaries under 200 words", score=4, agent="scribe", domain="writing")
    eng.add_rule("Always cite the source", score=7, domain="writing")
    assert [r.score for r in eng.list_rules()] == [10, 7, 6, 4]
    assert {r.text[:5] for r in eng.list_rules(agent="atlas")} == {"Never", "Prefe"}
    assert len(eng.list_rules(agent="scribe", include_global=True)) == 2
    assert [r.status for r in eng.list_rules(status=["critical", "dormant"])] == ["critical", "dormant"]
    assert [r.text for r in eng.list_rules(query="limit orders")] == ["Prefer limit orders near the open"]
    assert len(eng.list_rules(min_score=6, max_score=7)) == 2
    assert eng.rule_counts() == {"critical": 1, "active": 2, "dormant": 1, "retired": 0}


def test_rule_detail_has_history_and_projection(eng):
    r = eng.add_rule("Prefer limit orders", score=6)
    d = eng.rule_detail(r.id, days=30)
    assert d.rule.id == r.id and len(d.history) == 1
    vals = [p.value for p in d.projection.points]
    assert vals[0] == 6 and vals[7] == 5.5 and min(vals) == 2.5 and d.projection.crosses_at is not None


def test_reject_records_a_pinned_rejection_and_a_critical_rule(eng):
    res = eng.reject("Do not trade during FOMC minutes", agent="atlas")
    m = eng.get_memory(res.memory_id)
    r = eng.get_rule(res.rule_id)
    assert (m.category, m.pinned, m.agent) == ("rejected", True, "atlas")
    assert r.score >= 9 and r.status == "critical" and r.source == "rejection"
    assert r.metadata["memory_id"] == m.id
    with pytest.raises(InvalidInput):
        eng.reject("soft no", score=6)
    # critical rules never decay on their own
    eng.clock.advance(365 * DAY)
    eng.decay_pass()
    assert eng.get_rule(res.rule_id).score == r.score


def test_lifecycle_demo_covers_every_band_and_the_32_of_34_flow(eng):
    from engine.demo.lifecycle import write_lifecycle_demo

    counts = write_lifecycle_demo(eng)
    by_status = eng.rule_counts()
    assert all(by_status[s] > 0 for s in ("critical", "active", "dormant", "retired")), by_status
    assert sum(by_status.values()) >= 75
    stop = eng.list_rules(query="overnight stop loss")[0]
    assert stop.status == "critical" and stop.source == "rejection"
    assert sum(len(eng.rule_history(r.id)) > 2 for r in eng.list_rules()) >= 40   # charts with shape
    flows = eng.list_flows()
    assert len(flows) == counts["flows"] == 15
    assert {(f.stats.passes, f.stats.uses, f.stats.effectiveness) for f in flows} >= {(32, 34, 0.941)}
    assert any(f.stats.flagged for f in flows) and any(f.stats.trend == "down" for f in flows)
    assert eng.clock.now() == 1767225600.0          # the engine's own clock is restored
