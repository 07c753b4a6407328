"""Decay: closed-form strength by kind, the set-based pass (idempotent, injectable now), rule score
bands, forecasts and curves that write nothing."""

from __future__ import annotations

import math

import pytest

from engine import InvalidInput, NotFound
from engine.clock import DAY
from engine.lifecycle.decay import band, crossing_time, rule_cycles, strength_at
from tests.direct_sql import direct

pytestmark = pytest.mark.backends


def _snapshot(eng):
    c = direct(eng.store)
    mem = c.execute(
        "SELECT id, tier, strength, anchor_strength, last_reinforced_at, archive_at,"
        " pinned FROM memories ORDER BY id"
    ).fetchall()
    rules = c.execute("SELECT id, score, status, last_decayed_at FROM rules ORDER BY id").fetchall()
    hist = c.execute("SELECT count(*) FROM rule_history").fetchone()[0]
    audit_n = c.execute("SELECT count(*) FROM audit").fetchone()[0]
    return [tuple(r) for r in mem], [tuple(r) for r in rules], hist, audit_n


@pytest.fixture
def world(eng):
    """Memories of each kind plus frozen ones, and rules in every situation, all at T0."""
    ids = {
        k: eng.add_memory(f"a {k} memory about the harbour", kind=k)
        for k in ("episodic", "semantic", "procedural")
    }
    ids["pinned"] = eng.add_memory("a pinned episodic memory", kind="episodic", pinned=True)
    ids["core"] = eng.add_memory("a core episodic memory", kind="episodic", tier="core")
    t0 = eng.clock.now()
    rules = {
        "critical": eng.rules.add("Never hold overnight without a stop loss", score=9.5).id,
        "active": eng.rules.add("Prefer limit orders", score=6).id,
        "pinned": eng.rules.add("Check the calendar first", score=6, pinned=True).id,
        # reinforced 52 days in: at day 60 it has lost two cycles (5.5 -> 4.5: demoted)
        "late": eng.rules.add("Log every fill", score=5.5, created_at=t0 + 52 * DAY).id,
        # reinforced 50 days in: 8 -> 6, still active
        "fresh": eng.rules.add("Size positions by volatility", score=8, created_at=t0 + 50 * DAY).id,
    }
    return ids, rules, t0


def test_sixty_days_ahead_falls_by_kind_archives_and_spares_frozen(eng, world):
    ids, rules, t0 = world
    now = t0 + 60 * DAY
    res = eng.decay.run(now=now)  # `decay run --now`: the engine clock stays at t0
    eng.clock.advance(60 * DAY)  # read strengths as of the pass
    m = {k: eng.memories.get(i) for k, i in ids.items()}
    hl = eng.settings.decay.half_life_days
    for kind in ("episodic", "semantic", "procedural"):
        assert m[kind].strength == pytest.approx(0.5 ** (60 / hl[kind]), rel=1e-9)
    assert m["episodic"].strength < m["semantic"].strength < m["procedural"].strength
    # below 0.3 archived (never deleted), above it stays active
    assert m["episodic"].tier == "archived" and m["semantic"].tier == "archived"
    assert m["procedural"].tier == "active"
    assert res.memories_archived == 2 and sorted(res.archived_ids) == sorted(
        [ids["episodic"], ids["semantic"]]
    )
    assert res.memories_decayed == 1  # procedural: still decaying, not archived
    assert direct(eng.store).one("SELECT strength FROM memories WHERE id = ?", (ids["episodic"],))[
        0
    ] == pytest.approx(m["episodic"].strength)  # the archived row's snapshot was written
    for k in ("pinned", "core"):
        assert m[k].strength == 1.0 and m[k].tier in ("active", "core")
    r = {k: eng.rules.get(i) for k, i in rules.items()}
    assert (r["critical"].score, r["critical"].status) == (9.5, "critical")
    assert (r["pinned"].score, r["pinned"].status) == (6, "active")
    assert (r["active"].score, r["active"].status) == (2.5, "retired")  # decay stops once retired
    assert (r["late"].score, r["late"].status) == (4.5, "dormant")
    assert (r["fresh"].score, r["fresh"].status) == (6.0, "active")
    assert res.rules_decayed == 3 and res.rules_retired == 1 and res.rules_demoted == 1
    assert res.retired_rule_ids == [rules["active"]] and res.demoted_rule_ids == [rules["late"]]
    # every score change is in the history; the pass wrote one audit summary row
    hist = eng.rules.history(rules["late"])
    assert [(h.old_score, h.new_score, h.new_status) for h in hist][-1] == (5.5, 4.5, "dormant")
    row = direct(eng.store).one("SELECT * FROM audit WHERE action = 'decay-pass'")
    assert row is not None and '"memories_archived":2' in row["summary"]


def test_second_pass_at_the_same_clock_changes_nothing(eng, world):
    _, _, t0 = world
    now = t0 + 60 * DAY
    eng.decay.run(now=now)
    before = _snapshot(eng)
    res = eng.decay.run(now=now)
    assert _snapshot(eng) == before
    assert (
        res.memories_scheduled,
        res.memories_decayed,
        res.memories_archived,
        res.rules_decayed,
        res.rules_demoted,
        res.rules_retired,
    ) == (0, 0, 0, 0, 0, 0)
    assert eng.decay.last_run_at() == now
    # refreshing the stored snapshots is idempotent too
    assert eng.decay.run(now=now, refresh_snapshots=True).snapshots_refreshed == 1
    before = _snapshot(eng)
    assert eng.decay.run(now=now, refresh_snapshots=True).snapshots_refreshed == 0
    assert _snapshot(eng) == before


def test_daily_passes_equal_one_big_pass(tmp_path, clock):
    """Closed forms: passes at every day up to 60 end where one pass at day 60 does."""
    from engine import HashEmbedder, open_engine

    def build(path):
        e = open_engine(path, embedder=HashEmbedder(), clock=clock, actor="t")
        for i, k in enumerate(("episodic", "semantic", "procedural") * 3):
            e.memories.add_ex(f"memory {i} {k}", kind=k, created_at=clock.now() - i * 3 * DAY)
        for s in (4, 5.5, 6, 7.5, 8.5):
            e.rules.add(f"rule at {s}", score=s)
        return e

    a, b = build(tmp_path / "a.db"), build(tmp_path / "b.db")
    t0 = clock.now()
    for d in range(1, 61):
        a.decay.run(now=t0 + d * DAY)
    b.decay.run(now=t0 + 60 * DAY)
    q_m = "SELECT id, tier FROM memories ORDER BY id"
    q_r = "SELECT id, score, status FROM rules ORDER BY id"
    assert [tuple(r) for r in direct(a.store).all(q_m)] == [tuple(r) for r in direct(b.store).all(q_m)]
    assert [tuple(r) for r in direct(a.store).all(q_r)] == [tuple(r) for r in direct(b.store).all(q_r)]
    # daily history: one row per lost cycle on the daily engine
    n_a = direct(a.store).one("SELECT count(*) FROM rule_history")[0]
    n_b = direct(b.store).one("SELECT count(*) FROM rule_history")[0]
    assert n_a > n_b
    a.close()
    b.close()


def test_dry_run_counts_match_and_write_nothing(eng, world):
    _, _, t0 = world
    now = t0 + 60 * DAY
    before = _snapshot(eng)
    dry = eng.decay.run(now=now, dry_run=True)
    assert _snapshot(eng) == before
    real = eng.decay.run(now=now)
    for f in (
        "memories_scheduled",
        "memories_decayed",
        "memories_archived",
        "rules_decayed",
        "rules_demoted",
        "rules_retired",
        "archived_ids",
    ):
        assert getattr(dry, f) == getattr(real, f), f


def test_reinforced_and_restored_memories_are_rescheduled(eng):
    mid = eng.add_memory("semantic fact that gets used", kind="semantic")
    t0 = eng.clock.now()
    eng.decay.run(now=t0)
    first = direct(eng.store).one("SELECT archive_at FROM memories WHERE id = ?", (mid,))[0]
    assert first == pytest.approx(t0 + math.log(1 / 0.3) / eng.settings.decay.rate("semantic"))
    eng.clock.advance(20 * DAY)
    eng.memories.reinforce(mid)
    assert direct(eng.store).one("SELECT archive_at FROM memories WHERE id = ?", (mid,))[0] is None
    eng.decay.run()
    second = direct(eng.store).one("SELECT archive_at FROM memories WHERE id = ?", (mid,))[0]
    assert second > first
    # archived, then restored by an operator: the next pass must not archive it straight back
    eng.clock.advance(200 * DAY)
    assert eng.decay.run().memories_archived == 1
    assert eng.memories.set_tier(mid, "active").tier == "active"
    assert eng.decay.run().memories_archived == 0
    assert eng.memories.get(mid).tier == "active"


def test_unpinned_memory_decays_from_now(eng):
    mid = eng.add_memory("pinned for a while", kind="episodic", pinned=True)
    eng.clock.advance(100 * DAY)
    assert eng.decay.run().memories_archived == 0
    eng.memories.unpin(mid)
    assert eng.decay.run().memories_archived == 0
    eng.clock.advance(30 * DAY)  # 30 days of episodic decay from the unpin: 0.05 < 0.3
    assert eng.decay.run().memories_archived == 1


def test_forecast_and_curves_write_nothing_and_agree_with_the_pass(eng, world):
    ids, rules, t0 = world
    before = _snapshot(eng)
    fc = eng.decay.forecast(60)
    curve = eng.decay.curve(ids["semantic"], days=60)
    rc = eng.rules.curve(rules["active"], days=60)
    assert _snapshot(eng) == before
    assert {m.id for m in fc.memories} == {ids["episodic"], ids["semantic"]}
    assert fc.by_kind == {"episodic": 1, "semantic": 1} and fc.memories_total == 2
    assert {f.id: f.status_then for f in fc.rules} == {rules["active"]: "retired", rules["late"]: "dormant"}
    vals = [p.value for p in curve.points]
    assert vals[0] == 1.0 and all(a > b for a, b in zip(vals, vals[1:], strict=False))
    assert curve.crosses_at == pytest.approx(crossing_time(1.0, t0, eng.settings.decay.rate("semantic"), 0.3))
    assert rc.points[0].value == 6 and rc.points[-1].value == 2.5 and rc.crosses_at is not None
    # what-if: a 365-day semantic half-life keeps it above the threshold for 60 days
    slow = eng.decay.forecast(60, rates={"semantic": 365})
    assert {m.id for m in slow.memories} == {ids["episodic"]} and slow.rates["semantic"] == 365
    assert eng.decay.curve(ids["semantic"], 60, rates={"semantic": 365}).crosses_at is None
    assert eng.decay.curve(ids["pinned"], 60).frozen
    eng.decay.run(now=t0 + 60 * DAY)
    assert {m for m in ids.values() if eng.memories.get(m).tier == "archived"} == {m.id for m in fc.memories}


def test_forecast_rejects_bad_input(eng):
    with pytest.raises(InvalidInput):
        eng.decay.forecast(0)
    with pytest.raises(InvalidInput):
        eng.decay.forecast(10, rates={"episodic": -1})
    with pytest.raises(NotFound):
        eng.decay.curve(999, 10)


def test_strength_distribution_by_tier(eng, world):
    ids, _, t0 = world
    d = eng.decay.distribution(now=t0 + 20 * DAY)
    assert sum(sum(v) for v in d.counts.values()) == 5
    assert d.counts["core"][-1] == 1  # core holds 1.0 (top bin)
    assert d.below_threshold["active"] == 1  # episodic after 20 days: 0.14
    assert len(d.edges) == 11


def test_pure_functions():
    assert [band(s) for s in (10, 9, 8.9, 5, 4.5, 3, 2.9, 0)] == [
        "critical",
        "critical",
        "active",
        "active",
        "dormant",
        "dormant",
        "retired",
        "retired",
    ]
    assert strength_at(1.0, 0, math.log(2) / 10, 10) == pytest.approx(0.5)
    from engine.config import DecaySettings

    ds = DecaySettings()
    assert rule_cycles(None, 0.0, None, 6.9 * DAY, ds) == (0, None)
    assert rule_cycles(None, 0.0, None, 7.0 * DAY, ds) == (1, 7 * DAY)
    assert rule_cycles(None, 0.0, 7 * DAY, 7.5 * DAY, ds) == (0, 7 * DAY)
    assert rule_cycles(None, 0.0, 7 * DAY, 10.0 * DAY, ds) == (3, 10 * DAY)


def test_scope_limits_the_pass(eng, world):
    ids, rules, t0 = world
    r = eng.decay.run(now=t0 + 60 * DAY, scope="rules")
    assert r.memories_archived == 0 and r.rules_decayed == 3
    assert eng.memories.get(ids["episodic"]).tier == "active"
    m = eng.decay.run(now=t0 + 60 * DAY, scope="memories")
    assert m.memories_archived == 2 and m.rules_decayed == 0
    with pytest.raises(InvalidInput):
        eng.decay.run(scope="everything")
