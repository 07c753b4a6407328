"""PostgreSQL's side of the audit chain: a server database's place (server address, port and
database name) and instance (the database's oid: a database dropped and created again under that
name is another one; a writer of its rows cannot change it), and the chain's own transaction lock.
The chain's position column (`seq`) and the trigger that assigns it inside the writing transaction
are in schema.py. The audit gateway and read model (gateways/audit.py, queries/audit.py) answer
through these."""

from __future__ import annotations

from typing import TYPE_CHECKING

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


CHAIN_LOCK = int.from_bytes(b"MCau", "big")  # the audit chain's own transaction lock


def lock_chain(conn: Connection) -> None:
    """A transaction-level advisory lock on the chain's head, held until the writing transaction
    ends: appends stay ordered even where writes of other rows run concurrently."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (CHAIN_LOCK,)).fetchone()
