"""Rows addressable by position and by column name (what sqlite3.Row gives the services)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from psycopg.cursor import BaseCursor
from psycopg.pq import ExecStatus


class PgRow(tuple):
    """A result row: a tuple that also answers `row["column"]` and `keys()`."""

    __slots__ = ()
    _index: dict[str, int] = {}  # noqa: RUF012 - replaced per result set by the factory's subclass
    _names: list[str] = []  # noqa: RUF012

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self._index[key])
            except KeyError:
                raise IndexError(f"no such column: {key}") from None
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


_TUPLES = (ExecStatus.TUPLES_OK, ExecStatus.SINGLE_TUPLE, ExecStatus.TUPLES_CHUNK)
_classes: dict[tuple[bytes, ...], type[PgRow]] = {}  # one Row class per column list, made once


def row_factory(cursor: BaseCursor[Any, Any]) -> Callable[[Sequence[Any]], PgRow]:
    # Column names straight from the result (cursor.description builds a Column object per
    # column per statement) and the Row class made once per column list: ~40 us a statement
    # that an agent's call paid ~20 times (issue #24). Same rules as `description` for None.
    res = cursor.pgresult
    if not res or not (res.nfields or res.status in _TUPLES):
        return tuple  # type: ignore[return-value]
    key = tuple(res.fname(i) or b"" for i in range(res.nfields))
    cls = _classes.get(key)
    if cls is None:
        enc = getattr(cursor, "_encoding", "utf-8")
        names = [f.decode(enc) if f else f"column_{i + 1}" for i, f in enumerate(key)]
        cls = type(
            "Row", (PgRow,), {"__slots__": (), "_index": {n: i for i, n in enumerate(names)}, "_names": names}
        )
        if len(_classes) > 1024:  # ad hoc column lists: bounded
            _classes.clear()
        _classes[key] = cls
    return cls
