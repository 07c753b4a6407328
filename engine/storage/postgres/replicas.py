"""What a forget's verification asks of the primary and of a configured read replica (engine/forget/
replicas.py), in PostgreSQL's SQL: the primary's WAL position after the forget, whether a server is
a streaming standby of this primary (same system identifier, in recovery), and how far it has
replayed. The scan itself is the primary's logical scan (eraser.py `logical_hits`), run on the
standby's own store."""

from __future__ import annotations

import time
from typing import Any

import psycopg

POLL_S = 0.05


def wal_position(raw: Any) -> tuple[str, int | None]:
    """(the primary's WAL insert position, its system identifier): a standby that has replayed
    past this position holds every commit made before it (the forget's included). The insert
    position, not the write one: with synchronous_commit off a commit may not be written yet."""
    row = raw.execute(
        "SELECT pg_current_wal_insert_lsn()::text, (SELECT system_identifier FROM pg_control_system())"
    ).fetchone()
    return str(row[0]), (None if row[1] is None else int(row[1]))


def standby_state(raw: Any) -> tuple[bool, int | None, str | None]:
    """(in recovery, system identifier, replayed up to) of the server `raw` is connected to."""
    row = raw.execute(
        "SELECT pg_is_in_recovery(), (SELECT system_identifier FROM pg_control_system()),"
        " pg_last_wal_replay_lsn()::text"
    ).fetchone()
    return bool(row[0]), (None if row[1] is None else int(row[1])), row[2]


def wait_replayed(raw: Any, position: str, timeout: float) -> tuple[bool, str | None]:
    """Poll until the standby has replayed past `position` or `timeout` seconds pass:
    (replayed, where it stood last)."""
    deadline = time.monotonic() + max(0.0, timeout)
    at: str | None = None
    while True:
        try:
            row = raw.execute(
                "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn, pg_last_wal_replay_lsn()::text", [position]
            ).fetchone()
        except psycopg.Error:
            return False, at
        at = row[1]
        if row[0]:
            return True, at
        if time.monotonic() >= deadline:
            return False, at
        time.sleep(POLL_S)


def data_nodes(raw: Any) -> list[str]:
    """The servers holding memconsole's rows, as a forget's levels name them: "this server" on
    plain PostgreSQL; with Citus (distributed tables), the coordinator and every active worker of
    `pg_dist_node` (the logical scan reads through the coordinator, so it covers them all; a host
    file scan covers only the node it runs on)."""
    try:
        has_citus = raw.execute("SELECT 1 FROM pg_extension WHERE extname = 'citus'").fetchone()
        if not has_citus:
            return ["this server"]
        rows = raw.execute(
            "SELECT nodename || ':' || nodeport, noderole, groupid FROM pg_dist_node"
            " WHERE isactive ORDER BY groupid, nodename"
        ).fetchall()
    except psycopg.Error:
        return ["this server"]
    nodes = [f"{r[0]} ({'coordinator' if int(r[2]) == 0 else 'worker'})" for r in rows]
    return nodes or ["this server"]
