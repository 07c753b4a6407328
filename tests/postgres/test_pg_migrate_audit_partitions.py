"""A partitioned audit log (issue #24: several hash chains on PostgreSQL, column `part`) keeps its
chains through `migrate`: into SQLite and into another PostgreSQL it verifies intact (each chain
walked on its own, the heads records still binding them), and a row edited there is still caught."""

from __future__ import annotations

import threading
import zlib

from console.cli import main
from engine import FixedClock, HashEmbedder, open_engine
from engine.audit import log as audit
from engine.audit import partitions
from engine.importers.migrate import migrate
from tests.direct_sql import direct

T0 = "2026-01-01T00:00:00Z"


def _open(where, actor: str = "tester"):
    return open_engine(where, embedder=HashEmbedder(), clock=FixedClock(T0), actor=actor, load="now")


def _actors(n: int) -> list[str]:
    """`n` actor names that hash to `n` different partitions (of the default 8)."""
    out: dict[int, str] = {}
    i = 0
    while len(out) < n:
        name = f"agent-{i}"
        out.setdefault(zlib.crc32(name.encode()) % 8, name)
        i += 1
    return list(out.values())


def _concurrent_log(url: str) -> list[int]:
    """Four writers, each its own engine and thread, appending at once; the partitions used."""
    first = _open(url)
    first.store.write(lambda c: audit.append(c, at=first.clock.now(), actor="tester", action="probe"))
    errors: list[BaseException] = []

    def writer(actor: str) -> None:
        try:
            with _open(url, actor) as e:
                for k in range(6):
                    e.store.write(
                        lambda c, k=k: audit.append(
                            c, at=e.clock.now(), actor=actor, action="probe", summary=k
                        )
                    )
        except BaseException as exc:  # reported by the test, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(a,)) for a in _actors(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    with first.store.reading() as c:
        parts = c.audit_queries.partitions()
    assert first.audit.verify().ok
    first.close()
    return parts


def _tamper_and_check(where) -> None:
    """An edited row, then (the edit undone) a row deleted from the middle of another chain: each
    is reported. The row after the deleted one is read from its chain, not from the probes: a
    heads record may sit between two probes of one partition."""
    with _open(where) as e:
        d = direct(e.store)
        probes = "SELECT id, part, summary FROM audit WHERE part <> 0 AND action = 'probe' ORDER BY id"
        rid, part, summary = d.all(probes)[2]
        d.execute("UPDATE audit SET summary = 'forged' WHERE id = ?", (rid,))
        chk = e.audit.verify()
        assert not chk.ok and chk.first_bad_id == rid, chk.problems
        assert main(["--db", str(where), "audit", "--verify"]) != 0
        d.execute("UPDATE audit SET summary = ? WHERE id = ?", (summary, rid))
        assert e.audit.verify().ok
        other = next(p for _, p, _ in d.all(probes) if p != part)
        with e.store.reading() as c:
            chain = [r["id"] for r in c.audit_queries.chain(other)]
        assert len(chain) >= 4, chain
        d.execute("DELETE FROM audit WHERE id = ?", (chain[2],))
        chk = e.audit.verify()
    assert not chk.ok
    assert any(f"row {chain[3]}: link does not match" in p for p in chk.problems), chk.problems


def test_a_partitioned_log_migrates_intact_to_sqlite_and_postgres(pg_db, pg_url, tmp_path, monkeypatch):
    monkeypatch.setattr(partitions, "HEADS_EVERY", 5)  # heads records among the migrated rows
    parts = _concurrent_log(pg_db)
    assert len(parts) >= 4, parts
    with _open(pg_db) as e:
        heads = direct(e.store).one("SELECT count(*) FROM audit WHERE action = 'audit-heads'")[0]
    assert heads >= 3
    lite = tmp_path / "copy.db"
    for target in (str(lite), pg_url):
        migrate(pg_db, target, actor="mover")
        with _open(target) as e:
            with e.store.reading() as c:
                assert set(parts) <= set(c.audit_queries.partitions())
            chk = e.audit.verify()
        assert chk.ok, (target, chk.problems)
        assert main(["--db", target, "audit", "--verify"]) == 0
        _tamper_and_check(target)
