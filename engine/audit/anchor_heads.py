"""Every audit partition's head, anchored outside the database beside the log's head (issue #24).

A heads record (partitions.py) binds the partitions' heads only every HEADS_EVERY ids, and the
anchor held only the newest row over all partitions, so a partition's tail cut back after the
last heads record went unseen: each chain still linked in itself, the anchored row was in another
partition. Now each time the anchor moves (after every committed audited write, any process of
this installation) it also records every partition's newest committed row (position, id, hash,
identity), only forward: a partition that no longer reaches its anchored position, or holds
another row there, stops the anchor (it stays as evidence) and `audit --verify` fails naming the
partition. Writers stay concurrent: nothing is added to a writing transaction; the read is one
statement after commit, under the anchor's flock that already orders the anchor's moves.

What it cannot see (as for the log's head): rows committed after this installation's anchor last
moved (a process killed between its commit and its anchor move; with agents on several machines,
each installation's anchor holds what it saw at its own last write)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.audit.hashing import Hasher, is_keyed

HEADS = "heads"  # the anchor's field: {"<partition>": [position, id, hash, identity]}

Anchored = dict[int, tuple[int, int, str, str]]


def anchored(rec: dict | None) -> Anchored:
    """The partitions' heads an anchor record holds ({} for an anchor from before #24)."""
    out: Anchored = {}
    doc = (rec or {}).get(HEADS)
    if not isinstance(doc, dict):
        return out
    for part, v in doc.items():
        try:
            out[int(part)] = (int(v[0]), int(v[1]), str(v[2]), str(v[3]))
        except (ValueError, TypeError, IndexError):
            continue  # the seal holds, so only an older format gets here: nothing to compare
    return out


def positions(heads: Anchored) -> list[tuple[int, int]]:
    return [(part, v[0]) for part, v in sorted(heads.items())]


def problems(hs: Hasher, heads: Anchored, at_rows: Iterable[Any], pos: str) -> list[str]:
    """Each anchored partition still holds its anchored row at its anchored position: the same
    hash, or (a forget re-linked an older chain under the key) the same identity, keyed."""
    found = {(int(r["part"]), int(r[pos])): r for r in at_rows}
    out = []
    for part, (seq, rid, h, ident) in sorted(heads.items()):
        r = found.get((part, seq))
        if r is None:
            out.append(
                f"partition {part} was cut back: the anchor records its head at position {seq} "
                f"(row {rid}, hash {h[:16]}...), which is missing"
            )
        elif r["hash"] != h and not (hs.identity(r) == ident and is_keyed(hs.scheme(r))):
            out.append(
                f"partition {part} position {seq} is not the row anchored there (row {rid}): "
                "the partition was cut back and written again, or replaced"
            )
    return out


def moved(hs: Hasher, heads: Anchored, head_rows: Iterable[Any], pos: str) -> dict[str, list]:
    """The anchor's new `heads` field: each partition's newest row, never behind what it held."""
    out: dict[str, list] = {str(p): list(v) for p, v in sorted(heads.items())}
    for r in head_rows:
        part, seq = int(r["part"]), int(r[pos])
        old = heads.get(part)
        if old is not None and (seq < old[0] or (seq == old[0] and r["hash"] == old[2])):
            continue  # unchanged (or read before another process moved it further)
        out[str(part)] = [seq, int(r["id"]), str(r["hash"]), hs.identity(r)]
    return out
