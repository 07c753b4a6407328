"""The audit gateway and its read models on both backends: the chain's position, its rows as
written (byte for byte: the hashes are over them), the filters, and doctor's portable reads."""

from __future__ import annotations

import pytest

from engine.audit import log as audit
from engine.storage.queries.audit import AuditFilter
from engine.storage.queries.health import ORPHAN_CHECKS

pytestmark = pytest.mark.backends


def test_rows_come_back_as_written_in_chain_order(eng, backend):
    text = 'line\n"quoted" \\ 100% _under_ ünï 日本'
    rid = eng.store.write(
        lambda c: c.audit.insert(
            at=1.5, actor="a", action="probe", target_kind="k", target_id="7",
            reason=text, summary='{"x":1}', prev_hash="p" * 64, hash="h" * 64,
        )
    )  # fmt: skip

    def look(c):
        q = c.audit_queries
        return q.position, q.last(), q.head(), q.row(rid), [r["id"] for r in q.chain()], q.before(rid)

    pos, last, head, row, order, before = eng.store.query(look)
    assert pos == ("id" if backend == "sqlite" else "seq")
    assert last["id"] == rid and head["id"] == rid and head["hash"] == "h" * 64
    assert row["reason"] == text and row["summary"] == '{"x":1}' and row["prev_hash"] == "p" * 64
    assert order == sorted(order) and order[-1] == rid
    assert before is None or before[0] == row[pos] - 1
    assert eng.store.query(lambda c: c.audit_queries.count(through=rid)) == len(order)
    assert eng.store.query(lambda c: c.audit_queries.count(after=rid - 1, through=rid)) == 1


def test_text_and_links_are_replaced_only_where_asked(eng):
    rid = eng.store.write(
        lambda c: audit.append(c, at=2.0, actor="a", action="probe", reason="r", summary="s")
    )
    eng.store.write(lambda c: c.audit.set_text(rid, "r2", "s2"))
    r = eng.store.query(lambda c: c.audit_queries.row(rid))
    assert (r["reason"], r["summary"]) == ("r2", "s2")
    eng.store.write(lambda c: c.audit.set_text(rid, "r3", "s3", prev_hash="0" * 64, hash="1" * 64))
    eng.store.write(lambda c: c.audit.relink(rid, "2" * 64, "3" * 64))
    r = eng.store.query(lambda c: c.audit_queries.row(rid))
    assert (r["reason"], r["summary"], r["prev_hash"], r["hash"]) == ("r3", "s3", "2" * 64, "3" * 64)


def test_entries_filter_like_the_log_does(eng):
    def add(c):
        for action, reason in (("forget", "100% sure"), ("forget-verify", "under_score"), ("FORGOT", "x")):
            audit.append(c, at=3.0, actor="bo", action=action, target_kind="m", target_id="9", reason=reason)
        audit.append(c, at=4.0, actor="ana", action="add", target_kind="memory", target_id="12")
        audit.append(c, at=5.0, actor="bo", action="add", target_kind="memory", target_id="12")

    eng.store.write(add)

    def actions(**kw):
        return [r["action"] for r in eng.store.query(lambda c: c.audit_queries.entries(AuditFilter(**kw)))]

    assert actions(action_prefix="forg", newest_first=False) == ["forget", "forget-verify", "FORGOT"]
    assert actions(action_prefix="forget_") == []  # `_` is a literal, never a wildcard
    assert actions(words=("100%",)) == ["forget"]
    assert actions(words=("UNDER_",)) == ["forget-verify"]
    assert actions(target_kind="m", target_id="9", limit=1) == ["FORGOT"]
    assert actions(actor="ana") == ["add"]
    assert actions(since=4.0, until=5.0) == ["add"]
    adders = eng.store.query(lambda c: c.audit_queries.adders("memory", ["12", "13"]))
    assert adders == [("12", "bo"), ("12", "ana")]
    assert eng.store.query(lambda c: c.audit_queries.adders("memory", [])) == []
    assert eng.audit.writers([12]) == {12: "ana"}


def test_lock_place_and_meta(eng):
    eng.store.write(lambda c: c.audit.lock_chain())  # a no-op on SQLite, a transaction lock on a server
    place = eng.store.query(lambda c: c.audit_queries.database_place())
    assert place is not None and place[0] and place[1]
    assert eng.store.query(lambda c: c.audit_queries.meta_value("database_id"))
    assert eng.store.query(lambda c: c.audit_queries.meta_value("no such key")) is None


def test_health_reads(eng):
    m = eng.add_memory("a note", dedup=False)
    assert eng.store.query(lambda c: c.health_queries.count("memories")) == 1
    with pytest.raises(ValueError):
        eng.store.query(lambda c: c.health_queries.count("memories; DROP TABLE audit"))
    for check in ORPHAN_CHECKS:
        assert eng.store.query(lambda c, k=check: c.health_queries.orphans(k)) == []
    with pytest.raises(ValueError):
        eng.store.query(lambda c: c.health_queries.orphans("nope"))
    n, ids = eng.store.query(lambda c: c.health_queries.pending_vectors(10))
    assert n == len(ids) and (ids == [] or ids == [m])
