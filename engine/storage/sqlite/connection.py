"""The connection a read or write function receives on SQLite: the driver's own (sqlean's
sqlite3, made with `factory=`) with the gateways mixed in, so `conn.memories` is the memories
gateway in SQLite's SQL and nothing is wrapped per statement."""

from __future__ import annotations

import sqlean as sqlite3

from engine.storage.sqlite.bindings import Gateways


class SqliteConnection(sqlite3.Connection, Gateways):
    """sqlite3.Connection plus `conn.<table>` gateways and `conn.<area>_queries` read models."""
