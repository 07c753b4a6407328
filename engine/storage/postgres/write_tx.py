"""A write transaction on PostgreSQL: how it starts and ends (one round trip each way, issue
#24), its retry policy, and the change sequence's names the live views read (store.py runs it)."""

from __future__ import annotations

import psycopg

from engine.storage.postgres import schema

WRITE_RETRIES = 60  # the same patience as the SQLite store
WRITE_TIMEOUT_S = 30.0
JITTER_MS = (20, 150)
LOCK_TIMEOUT_MS = 2000  # one try's wait for a row or transaction lock, under the jittered retries
# The change feed's order (see the module's docstring): held from the move to the commit, only by
# writes that changed a memory's vector, filters or text.
FEED_LOCK = int.from_bytes(b"MCfd", "big")
CHANNEL = "memconsole"
# A write's end, in one round trip (the simple protocol: no parameters; every name is fixed here):
# a transaction that wrote (has an xid) takes the change sequence's next number and NOTIFYs it;
# its change-feed entries queued by the triggers move into the log under the feed's own lock, held
# from here to the commit, so feed positions are in commit order; then COMMIT.
COMMIT_SQL = (
    f"SELECT n, pg_notify('{CHANNEL}', n::text) FROM (SELECT nextval('mc_change_seq') AS n"
    " WHERE pg_current_xact_id_if_assigned() IS NOT NULL OFFSET 0) AS s;"
    " DO $$ BEGIN IF EXISTS (SELECT 1 FROM vector_changes_pending) THEN"
    f" PERFORM pg_advisory_xact_lock({FEED_LOCK});"
    " WITH moved AS (DELETE FROM vector_changes_pending RETURNING memory_id, text_changed)"
    " INSERT INTO vector_changes(memory_id, text_changed) SELECT memory_id, text_changed FROM moved;"
    " END IF; END $$;"
    " COMMIT"
)


def begin_write() -> tuple[str, ...]:
    """A write's start: sent in one pipeline with its first statement (PgConnection.later)."""
    return (
        "BEGIN",
        f"SET LOCAL lock_timeout = {int(LOCK_TIMEOUT_MS)}",
        f"SET LOCAL {schema.DEFERRED_FEED} = 'on'",
    )


# The change sequence's newest number (listen.py): the live views' backstop read.
COUNTER_SQL = "SELECT last_value FROM mc_change_seq"
RETRYABLE = (
    psycopg.errors.SerializationFailure,
    psycopg.errors.DeadlockDetected,
    psycopg.errors.LockNotAvailable,
)
