"""Risky merges: near-duplicates that differ only in numbers or dates are proposed but flagged,
shown as such, and left alone by a bulk approval unless it includes them."""

from __future__ import annotations

import pytest

from engine.curator.risky import numeric_risk

pytestmark = pytest.mark.backends

WEEKLY = "Weekly review week {n}: walk through the open incidents, the on-call handover notes and the deploy calendar"
DEPLOY = "The payments service deploy is scheduled on {d} after the database migration and the smoke tests"
VPN = "Deploys to staging need the VPN turned on first and the staging token refreshed before the run"


def test_numeric_risk_detector():
    assert "40 / 44 / 46" in str(numeric_risk([WEEKLY.format(n=n) for n in (40, 44, 46)]))
    assert "2026-03-01 / 2026-04-01" in str(
        numeric_risk([DEPLOY.format(d=d) for d in ("2026-03-01", "2026-04-01")])
    )
    assert numeric_risk([VPN, VPN + "!"]) is None  # a true duplicate (punctuation)
    assert numeric_risk([WEEKLY.format(n=40), WEEKLY.format(n=40) + "."]) is None  # same numbers
    assert numeric_risk([WEEKLY.format(n=40), VPN]) is None  # different texts


def test_real_detector_flags_number_only_merges_and_bulk_skips_them(eng):
    weekly = [eng.add_memory(WEEKLY.format(n=n), agent="atlas", dedup=False) for n in (40, 44, 46)]
    deploy = [
        eng.add_memory(DEPLOY.format(d=d), agent="atlas", dedup=False) for d in ("2026-03-01", "2026-04-01")
    ]
    vpn = [eng.add_memory(t, agent="atlas", dedup=False) for t in (VPN, VPN + "!")]
    run = eng.curator.run()
    merges = {tuple(p.members): p for p in run.proposals if p.kind == "merge"}
    assert set(merges) == {tuple(weekly), tuple(deploy), tuple(vpn)}  # the hash embedder: spelling
    for ids in (weekly, deploy):
        ev = merges[tuple(ids)].evidence
        assert ev["risky"] is True and "differ only in numbers or dates" in ev["risky_reason"]
    assert "risky" not in merges[tuple(vpn)].evidence
    assert "40 / 44 / 46" in eng.curator.get(merges[tuple(weekly)].id).proposal.evidence["risky_reason"]

    ids = [p.id for p in eng.curator.pending("merge")]
    out = {o.id: o for o in eng.curator.approve_many(ids, reason="bulk")}
    safe = merges[tuple(vpn)].id
    assert out[safe].ok and out[safe].status == "applied"
    for ids_ in (weekly, deploy):
        o = out[merges[tuple(ids_)].id]
        assert not o.ok and o.skipped and o.status == "pending" and "risky" in o.error
    for m in weekly + deploy:
        assert eng.memories.get(m).tier == "active" and eng.memories.get(m).absorbed_into is None
    out = eng.curator.approve_many([merges[tuple(weekly)].id], reason="yes, really", include_risky=True)
    assert out[0].ok and out[0].status == "applied"
    assert eng.memories.get(weekly[0]).absorbed_into == out[0].result_id
