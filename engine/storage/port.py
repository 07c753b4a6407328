"""The storage port: what the services need from a database, and nothing else.

Services run portable SQL (`?` parameters, `RETURNING id`, standard joins) on the connection a
`read`/`reading`/`write` gives them. What truly differs between backends sits behind named parts
of the port: the keyword index (FTS5 / tsvector BM25), the vector store (vec0 / pgvector), the
schema reconcile and health checks, the change feed (data_version / LISTEN-NOTIFY) and erasure
with its verification (secure_delete + byte scan / VACUUM + levels).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Row(Protocol):
    """A result row: by position and by column name."""

    def __getitem__(self, key: int | str) -> Any: ...

    def keys(self) -> list[str]: ...


class Connection(Protocol):
    """The connection a read or write function receives (DB-API shaped)."""

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ...) -> Any: ...

    def executemany(self, sql: str, params: Any) -> Any: ...


class Storage(Protocol):
    """One database. Writes run a function in one transaction with bounded, jittered retries:
    callers never see "locked" or a serialization error, only `StoreBusy` after their patience."""

    path: Path
    after_commit: list[Callable[[Any], None]]

    def read(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]: ...

    def read_one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any: ...

    def reading(self) -> AbstractContextManager[Any]: ...

    def write(self, fn: Callable[[Any], T]) -> T: ...

    def data_version(self) -> int: ...

    def close(self) -> None: ...
