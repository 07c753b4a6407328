"""Where a file database's residue lies (issue #25): each hit's file and offset, the page and the
table or index that owns it (SQLite's `dbstat`), and, when a live record outside the case holds the
same piece, which one ("piece shared with live rule #37"). The operator can then widen the case,
or accept the residue with a recorded reason; `verified` still means no residue at all."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from engine.forget.fold import fold
from engine.forget.scan import locate_files
from engine.forget.verify import Targets, encoded

if TYPE_CHECKING:
    from engine.storage.port import Connection

KEEP = 20  # located hits recorded in a case
# table -> (what an operator calls one of its rows, the columns its text lives in)
LIVE = {
    "memories": ("memory", ("content", "metadata")),
    "rules": ("rule", ("text", "metadata")),
    "messages": ("message", ("content", "tool_name", "metadata")),
    "flows": ("flow", ("name", "description", "triggers", "steps", "metadata")),
    "sessions": ("session", ("title",)),
}


def locate(conn: Connection, paths: list[Path], tg: Targets, shown: dict[str, str]) -> list[dict]:
    """The hits of a verification's targets in `paths` (read by a child process), each resolved
    as far as it can be. `shown`: file path -> the name the case shows for it."""
    found = locate_files(paths, tg.wins, tg.short, tg.pieces)
    pages = [h[2] for hits in found.values() for h in hits if h[2]]
    owners = conn.forget_queries.page_owners(pages)
    holders = _holders(conn, {bytes.fromhex(h[1]) for hits in found.values() for h in hits})
    out: list[dict] = []
    for path, hits in found.items():
        end = -1
        for offset, piece_hex, page in sorted(hits):
            size = len(piece_hex) // 2
            if offset <= end and out:  # overlapping windows of one stretch: one hit
                out[-1]["length"] = max(out[-1]["length"], offset + size - out[-1]["offset"])
                end = max(end, offset + size)
                continue
            end = offset + size
            hit: dict = {"file": shown.get(path, Path(path).name), "offset": offset, "length": size}
            if page:
                hit["page"] = page
                if page in owners:
                    hit["table"] = owners[page]
            who = holders.get(bytes.fromhex(piece_hex))
            hit["shared_with"] = f"piece shared with live {who}" if who else ""
            out.append(hit)
    return out[:KEEP]


def _holders(conn: Connection, pieces: set[bytes]) -> dict[bytes, str]:
    """Which live record (outside the case: the case's own are deleted) holds each piece."""
    out: dict[bytes, str] = {}
    todo = {p: {p, p.lower()} for p in pieces}
    q = conn.forget_queries
    for table, (noun, cols) in LIVE.items():
        if not todo:
            break
        for r in q.text_rows(table, cols):
            blob = b"\n".join(encoded(v) + b"\n" + encoded(fold(v)) for v in r[1:] if isinstance(v, str))
            low = blob.lower()
            for p, forms in list(todo.items()):
                if any(f in blob or f in low for f in forms):
                    out[p] = f"{noun} #{r[0]}"
                    del todo[p]
    return out
