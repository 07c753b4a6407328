"""Forget's redaction across audit partitions (issue #24): rows of several writers (several chains
on PostgreSQL, one on SQLite) are redacted in place; no row's hash or link changes, so the heads
records that bound them stay true and the log verifies."""

from __future__ import annotations

import json

from engine import HashEmbedder, open_engine
from tests.direct_sql import direct

SECRET = "The vault passphrase is cobalt-heron-42"


def test_forget_redacts_across_partitions_without_rechaining(db_path, clock, backend):
    engines = [
        open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor=a) for a in ("ann", "bo", "cy")
    ]
    try:
        ids = [e.add_memory(f"{SECRET} (told to {i})", dedup=False) for i, e in enumerate(engines)]
        for e in engines:
            e.add_memory("an unrelated note", dedup=False)
        with engines[0].store.reading() as c:
            parts = c.audit_queries.partitions()
        assert len(parts) == (1 if backend == "sqlite" else 3) or backend == "postgres" and len(parts) >= 2
        before = {
            r[0]: (r[1], r[2]) for r in direct(engines[0].store).all("SELECT id, prev_hash, hash FROM audit")
        }
        engines[0].forget.run("memory", ids, "request 24")
        after = {
            r[0]: (r[1], r[2]) for r in direct(engines[0].store).all("SELECT id, prev_hash, hash FROM audit")
        }
        assert all(after[i] == before[i] for i in before)  # redacted in place: nothing re-chained
        rows = direct(engines[0].store).all("SELECT reason, summary FROM audit")
        assert "cobalt" not in json.dumps([tuple(r) for r in rows])
        chk = engines[1].audit.verify()
        assert chk.ok and chk.redacted_rows >= 3, chk.problems
    finally:
        for e in engines:
            e.close()
