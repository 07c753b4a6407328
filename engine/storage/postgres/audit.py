"""PostgreSQL's side of the audit chain: a server database's place (server address, port and
database name) and instance (the database's oid: a database dropped and created again under that
name is another one; a writer of its rows cannot change it), and the partitions' head locks.
The chain's position columns (`part`, `seq`) and the trigger that assigns it inside the writing transaction
are in schema.py. The audit gateway and read model (gateways/audit.py, queries/audit.py) answer
through these."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.storage.port import Connection

POSITION = "seq"

PLACE_SQL = (
    "SELECT coalesce(host(inet_server_addr()), 'local'), current_setting('port'), current_database(),"
    " (SELECT oid FROM pg_database WHERE datname = current_database())::text"
)


def database_place(conn: Connection) -> tuple[str, str] | None:
    row = conn.execute(PLACE_SQL).fetchone()
    if row is None:
        return None
    return f"postgresql://{row[0]}:{row[1]}/{row[2]}", str(row[3])


# How many chains appends spread over (postgres.audit_partitions; PgStore sets it when it opens).
PARTITIONS = 8


_PICK = (
    "SELECT part FROM audit_heads WHERE part < %s ORDER BY (part + %s - %s) %% %s"
    " LIMIT 1 FOR UPDATE SKIP LOCKED"
)
# The pick and the picked partition's newest row in one statement (issue #24: was two). Its
# snapshot is taken before the lock: a holder committing in between leaves the row read one
# behind, so the append that links to it checks the head again inside its INSERT
# (gateways/audit.py `check_prev`), whose snapshot follows the lock.
_WITH_LAST = (
    "SELECT h.part AS held_part, a.* FROM ({}) h LEFT JOIN LATERAL"
    " (SELECT * FROM audit WHERE audit.part = h.part ORDER BY seq DESC LIMIT 1) a ON true"
)
_PICK_LAST = _WITH_LAST.format(_PICK)
# A partition this transaction holds already, locked again (immediate; or waiting, when a
# savepoint rolled back released it) with its newest row: the same check covers a stale read.
_HELD_LAST = _WITH_LAST.format("SELECT part FROM audit_heads WHERE part = %s FOR UPDATE")


def _with_last(row: Any) -> tuple[int, Any | None] | None:
    return None if row is None else (int(row["held_part"]), None if row["id"] is None else row)


def lock_free_partition_last(conn: Connection, partitions: int, start: int) -> tuple[int, Any | None] | None:
    """`lock_partition`'s first pick (a free partition from `start` on) with that partition's
    newest row (None: empty) in one statement; None when every partition is busy or missing."""
    n = max(1, int(partitions))
    return _with_last(conn.execute(_PICK_LAST, (n, n, start % n, n)).fetchone())


def lock_held_partition_last(conn: Connection, part: int) -> tuple[int, Any | None] | None:
    """A held partition locked again and its newest row, in one statement (None: no heads row)."""
    return _with_last(conn.execute(_HELD_LAST, (part,)).fetchone())


def lock_partition(conn: Connection, partitions: int, start: int, part: int | None = None) -> int:
    """Lock one partition's head row (audit_heads) until the writing transaction ends; which one.
    Without `part`: the first free one from `start` % partitions on (a hash of the writer), so
    one writer keeps its chain and two rarely meet; all busy: make any missing heads rows and look
    again, then wait on the first choice. Appends to one partition stay ordered; others run beside."""
    n = max(1, int(partitions))
    if part is None:
        own = start % n
        pick = _PICK
        args = (n, n, own, n)
        row = conn.execute(pick, args).fetchone()
        if row is not None:
            return int(row[0])
        conn.execute(
            "INSERT INTO audit_heads(part) SELECT generate_series(0, %s - 1) ON CONFLICT DO NOTHING", (n,)
        )
        row = conn.execute(pick, args).fetchone()
        if row is not None:
            return int(row[0])
        part = own
    row = conn.execute("SELECT part FROM audit_heads WHERE part = %s FOR UPDATE", (part,)).fetchone()
    if row is None:  # a partition past those made so far
        conn.execute("INSERT INTO audit_heads(part) VALUES (%s) ON CONFLICT DO NOTHING", (part,))
        conn.execute("SELECT part FROM audit_heads WHERE part = %s FOR UPDATE", (part,)).fetchone()
    return int(part)
