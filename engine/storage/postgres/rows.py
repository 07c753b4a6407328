"""Rows addressable by position and by column name (what sqlite3.Row gives the services)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from psycopg.cursor import BaseCursor


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


def row_factory(cursor: BaseCursor[Any, Any]) -> Callable[[Sequence[Any]], PgRow]:
    desc = cursor.description
    if desc is None:
        return tuple  # type: ignore[return-value]
    names = [d.name for d in desc]
    cls = type(
        "Row", (PgRow,), {"__slots__": (), "_index": {n: i for i, n in enumerate(names)}, "_names": names}
    )
    return lambda values: cls(values)
