"""Forget verification on the read replicas the operator configures (`[forget] replicas`, issue #24).

A streaming standby holds what its primary held until it replays the forget: a case is not proven
gone from a replica by a scan of the primary. So after the primary's levels, each configured
replica is checked in turn:
1. it must be a standby of this server (in recovery, the same system identifier): anything else
   is "not checked", named;
2. it is waited for (at most `forget.replica_wait` seconds) until it has replayed past the
   primary's WAL position taken now, after the forget committed; a replica still behind is "not
   checked: had not replayed past the forget", never clean;
3. then it gets the primary's logical scan (eraser `logical_hits`: every text column of
   memconsole's tables and their statistics, read through SQL) on its own connection.
A replica that cannot be reached, or a scan with no text to look for (0 texts), is "not checked"
with the reason: a scan of nothing is never reported as residue 0. The host files of a replica
are not scanned (its data directory is another machine's, or another server's on this one).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from engine.forget.types import Level
from engine.storage import open_storage
from engine.storage.reach import ServerEraser

_PASSWORD = re.compile(r"(//[^/:@]*):[^@/]*@")


def label(url: str) -> str:
    """A replica's URL as levels name it (never its password)."""
    return _PASSWORD.sub(r"\1:***@", url)


def _first(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def replica_levels(
    primary: ServerEraser, urls: Sequence[str], wholes: list[str], timeout: float
) -> list[Level]:
    """One level per configured replica ("replica <url>"), checked or saying why not."""
    if not urls:
        return []
    try:
        position, ident = primary.wal_position()
    except Exception as exc:  # noqa: BLE001 - every replica is then "not checked", with the reason
        why = f"not checked: the primary's WAL position is unknown ({_first(exc)})"
        return [Level(f"replica {label(u)}", False, 0, {}, why) for u in urls]
    return [_check(u, position, ident, wholes, timeout) for u in urls]


def _check(url: str, position: str, ident: int | None, wholes: list[str], timeout: float) -> Level:
    name = f"replica {label(url)}"

    def unchecked(why: str) -> Level:
        return Level(name, False, 0, {}, f"not checked: {why}")

    if not wholes:
        return unchecked("0 texts to scan for (the case's sealed texts are not here)")
    try:
        store = open_storage(url, readonly=True)
    except Exception as exc:  # noqa: BLE001 - an unreachable replica is a level, not a failure
        return unchecked(f"unreachable ({_first(exc)})")
    try:
        server = store.eraser.server
        if server is None:
            return unchecked("not a database server")
        recovering, theirs, _ = server.standby_state()
        if not recovering:
            return unchecked(
                "not a standby (not in recovery): a streaming replica of this server is expected"
            )
        if ident is not None and theirs != ident:
            return unchecked("a standby of another server (its system identifier differs)")
        done, at = server.wait_replayed(position, timeout)
        if not done:
            return unchecked(
                f"had not replayed past the forget (WAL {position}) after {timeout:g} s; it stood at {at}"
            )
        with store.reading() as conn:
            hits = server.logical_hits(conn, wholes)
        return Level(
            name, True, sum(hits.values()), hits,
            f"{len(wholes)} texts looked for whole in every text column of memconsole's tables and their "
            f"statistics on the standby, read through SQL after it replayed past the forget (WAL {position})",
        )  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - lost mid-check: said, never counted clean
        return unchecked(f"unreachable ({_first(exc)})")
    finally:
        store.close()
