"""Forget verification on configured read replicas (issue #24), against the suite's real streaming
standby: a canary forgotten on the primary is "clean" on the replica once it has replayed past the
forget; a replica that has not replayed (replay paused) or cannot be reached is "not checked",
never clean; a re-verify through the replica's own URL never claims a scan of 0 texts clean."""

from __future__ import annotations

import dataclasses
from urllib.parse import urlsplit

import psycopg
import pytest

from engine import HashEmbedder, open_engine
from engine.config import load_settings
from engine.forget.levels import summary

CANARY = "canary 7f3a: the vault combination is left-right-left 42 17 9"


def _engine(url, clock, replicas=(), wait=10.0):
    s = load_settings()
    s = dataclasses.replace(
        s, forget=dataclasses.replace(s.forget, replicas=tuple(replicas), replica_wait=wait)
    )
    return open_engine(url, embedder=HashEmbedder(), clock=clock, actor="tester", settings=s, load="now")


def _replica_level(ver):
    found = [lv for lv in ver.levels if lv.name.startswith("replica ")]
    assert len(found) == 1, [lv.name for lv in ver.levels]
    return found[0]


def _holds_canary(standby_url) -> bool:
    with psycopg.connect(standby_url, autocommit=True) as r:
        return bool(r.execute("SELECT count(*) FROM memories WHERE content = %s", [CANARY]).fetchone()[0])


def test_a_forget_is_verified_clean_on_a_configured_replica_after_it_replays(replica_db, pg_replica, clock):
    primary_url, standby_url = replica_db
    eng = _engine(primary_url, clock, [standby_url])
    try:
        mid = eng.add_memory(CANARY, agent="ops")
        eng.add_memory("an ordinary memory that stays", agent="ops")
        pg_replica.wait_for(primary_url)
        assert _holds_canary(standby_url)  # the replica had the text before the forget
        res = eng.forget.run("memory", [mid], "user asked")
        level = _replica_level(res.verification)
        assert level.checked and level.residue == 0, level
        assert "replayed past the forget" in level.note
        assert summary(res.verification.levels)[level.name] == "clean"
        assert not _holds_canary(standby_url)
        # the case records the replica's level beside the primary's (the primary's WAL still holds
        # the insert: tests/postgres/test_pg_forget.py, so the case itself stays "executed")
        assert eng.forget.get(res.request_id).counts["levels"][level.name] == "clean"
        # the logical level names the node(s) holding data (plain PostgreSQL: this server)
        assert "nodes holding data: this server" in res.verification.levels[0].note
    finally:
        eng.close()


def test_a_replica_that_has_not_replayed_the_forget_is_not_checked_never_clean(replica_db, pg_replica, clock):
    primary_url, standby_url = replica_db
    eng = _engine(primary_url, clock, [standby_url], wait=0.5)
    mid = eng.add_memory(CANARY, agent="ops")
    pg_replica.wait_for(primary_url)
    with psycopg.connect(standby_url, autocommit=True) as r:
        r.execute("SELECT pg_wal_replay_pause()")
        try:
            res = eng.forget.run("memory", [mid], "user asked")
            level = _replica_level(res.verification)
            assert not level.checked and "had not replayed past the forget" in level.note, level
            assert _holds_canary(standby_url)  # it still holds the text: exactly why it is not clean
            assert summary(res.verification.levels)[level.name].startswith("not checked")
        finally:
            r.execute("SELECT pg_wal_replay_resume()")
            eng.close()


def test_an_unreachable_replica_is_named_not_checked(pg_db, tmp_path, clock):
    from engine.forget.replicas import replica_levels

    gone = f"postgresql://verifier:s3cret@/{urlsplit(pg_db).path.lstrip('/')}?host={tmp_path}"
    eng = _engine(pg_db, clock)
    try:
        (level,) = replica_levels(eng.store.eraser.server, [gone], [CANARY], 0.5)
        assert not level.checked and level.note.startswith("not checked: unreachable"), level
        assert "s3cret" not in level.name + level.note  # the password is never shown
        # nothing to look for: not checked either, never "clean"
        (empty,) = replica_levels(eng.store.eraser.server, [gone], [], 0.5)
        assert not empty.checked and "0 texts" in empty.note
    finally:
        eng.close()


def test_reverifying_through_a_replica_url_never_claims_residue_0_with_0_texts(replica_db, pg_replica, clock):
    primary_url, standby_url = replica_db
    eng = _engine(primary_url, clock)
    try:
        mid = eng.add_memory(CANARY, agent="ops")
        case = eng.forget.run("memory", [mid], "user asked", preview=True).request.id
        eng.forget.execute(case, verify=False)  # executed; its sealed texts live beside the primary's URL
    finally:
        eng.close()
    pg_replica.wait_for(primary_url)
    replica = _engine(standby_url, clock)
    try:
        ver = replica.forget.verify(case)
        assert ver.checked_texts == 0
        assert not any(lv.checked for lv in ver.levels), ver.levels
        assert all(line.startswith("not checked") for line in summary(ver.levels).values())
        assert replica.forget.get(case).status == "executed"  # nothing recorded on a replica
    finally:
        replica.close()


@pytest.mark.parametrize("bad", ["/var/lib/replica.db", "mysql://x/y"])
def test_a_replica_setting_that_is_not_a_postgres_url_is_refused(tmp_path, bad):
    from engine.errors import InvalidInput

    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[forget]\nreplicas = ["{bad}"]\n')
    with pytest.raises(InvalidInput, match="forget.replicas"):
        load_settings(cfg)
