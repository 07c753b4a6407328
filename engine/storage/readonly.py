"""Why a store refuses writes, in one line (engine.errors.ReadOnly), for both adapters: a standby
(a streaming read replica, where the server itself refuses every write) or a store opened
read-only on purpose (`memconsole --read-only`, `open_engine(..., read_only=True)`). The store
refuses before it tries, so nothing half-happens and no driver error ("ReadOnlySqlTransaction")
ever reaches an operator."""

from __future__ import annotations

from engine.errors import ReadOnly

STANDBY = "standby"  # a server in recovery: pg_is_in_recovery()
SESSION = "session"  # the server's role or database defaults to read-only transactions
OPENED = "opened"  # the caller asked for a read-only store

_WHY = {
    STANDBY: "read-only replica: writes go to the primary",
    SESSION: "read-only: the server makes this role's transactions read-only "
    "(default_transaction_read_only); writes go to a read-write server",
    OPENED: "opened read-only: nothing is written",
}


def reason(kind: str) -> str:
    """The one line an operator sees for a read-only store of this kind."""
    return _WHY.get(kind, _WHY[OPENED])


def refused(where: str, kind: str) -> ReadOnly:
    """The error a write on a read-only store raises (`where`: the database, shown)."""
    return ReadOnly(f"{where}: {reason(kind)}")
