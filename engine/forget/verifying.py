"""Verifying a forget (`eng.forget.verify`): the WAL checkpointed and truncated, the database's
files and reports scanned for the sealed text in a child process (on a server, level by level),
the result recorded on the case; without the sealed text, its keyed fingerprints slid over every
live row instead.
"""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine import tempfiles
from engine.audit import log as audit
from engine.curator.report import report_files
from engine.errors import InvalidInput
from engine.forget import prints
from engine.forget.levels import file_levels, server_levels, summary
from engine.forget.locate import locate
from engine.forget.scan import scan_files
from engine.forget.seal import discard, main_count, unseal
from engine.forget.types import (
    ForgetRequest,
    Level,
    Verification,
)
from engine.forget.verify import (
    MIN_PIECE,
    targets,
)
from engine.paths import home_of

if TYPE_CHECKING:
    from engine.forget.service import Forget
    from engine.storage.port import Connection

CHECKPOINT_TRIES = 10  # x 0.2 s: how long a forget waits for other readers to let go
CHECKPOINT_PAUSE = 0.2


def verify(forget: Forget, request_id: int) -> Verification:
    """Checkpoint and truncate the WAL, then scan the database files and reports for the text,
    in a child process (engine/forget/scan.py: this process must never open and close the
    database's files while its connection lives). The texts come from the case's sealed copy,
    so any process of this installation can re-verify; without one (already verified, or
    sealed under another key) the result says `checked_texts == 0` and is not recorded."""
    req = forget.get(request_id)
    if req.status not in ("executed", "verified"):
        raise InvalidInput(f"forget request {req.id} is {req.status}; execute it first")
    eraser = forget.store.eraser
    token = req.selected.get("seal")
    held = unseal(forget.path, token)
    located: builtins.list[dict] = []
    if held is None and req.selected.get("prints"):
        return recheck(forget, req)
    texts, strict = held if held else (None, [])
    # The curator's reports, and any temporary copy a migrate or export left (engine/tempfiles.py).
    reports = report_files(forget.path) + tempfiles.leftovers(home_of(forget.path))
    server = eraser.server
    if server is not None:
        levels, files, searched, truncated = server_levels(
            server, forget.store.reading, texts or [], main_count(forget.path, token), strict, reports,
            int(req.counts.get("compressed", 0)), CHECKPOINT_TRIES, CHECKPOINT_PAUSE,
            host=forget.ctx.settings.forget.host_files, replicas=replicas(forget, server))  # fmt: skip
        residue = sum(lv.residue for lv in levels if lv.checked)
        skipped = 0
    else:
        truncated = eraser.truncate_log(CHECKPOINT_TRIES, CHECKPOINT_PAUSE)
        with forget.store.reading() as conn, eraser.tolerant(conn):
            tg = targets(lambda: eraser.live_texts(conn, MIN_PIECE), texts or [], strict)
        paths = eraser.files() + reports
        found = (scan_files(paths, tg.wins, tg.short, tg.terms, pieces=tg.pieces) if tg.count
                 else {str(p): 0 for p in paths})  # fmt: skip
        files = {_shown(forget.path, p): found.get(str(p), 0) for p in paths}
        residue = sum(files.values())
        if residue:  # where it lies: file, page, table, and a live record sharing the piece
            with forget.store.reading() as conn, eraser.tolerant(conn):
                located = locate(conn, paths, tg, {str(p): _shown(forget.path, p) for p in paths})
        searched, skipped = tg.count, tg.skipped
        levels = file_levels(residue, files, tg.unchecked)
    ver = Verification(req.id, residue, files, len(texts or []) + len(strict), searched, skipped,
                       truncated, levels)  # fmt: skip
    if texts is None or forget.store.readonly:
        return ver  # nothing to compare with, or a replica: report, but do not overwrite the stored proof
    now = forget.ctx.clock.now()
    actor = forget.ctx.actor

    # On a server the case records what "verified" covers, level by level (a file database's
    # one level is its files, all of them scanned: its records stay as they were).
    # Both backends record every level's line and what it checked (issue #25: a fresh forget's
    # JSON says "verified" or why not, level by level).
    lines = summary(levels)
    counts = {**req.counts, "levels": lines, "level_notes": {lv.name: lv.note for lv in levels}}
    counts.pop("residue_at", None)
    if located:
        counts["residue_at"] = located
    marks = None
    if residue == 0 and truncated:  # proven gone: the seal goes, keyed fingerprints stay
        with forget.store.reading() as conn, eraser.tolerant(conn):
            marks = prints.take(texts, strict, "\n".join(eraser.live_texts(conn, MIN_PIECE)))

    def write(conn: Connection) -> None:
        status = "verified" if residue == 0 and truncated else "executed"
        if marks is not None:
            conn.forget_requests.set_selected(req.id, {**req.selected, "prints": marks})
        conn.forget_requests.verified(req.id, residue, status,
                                 now if status == "verified" else None, counts)  # fmt: skip
        audit.append(conn, at=now, actor=actor, action="forget-verify", target_kind="forget_request",
                     target_id=req.id, summary={"residue": residue, "files": files,
                                                "substrings": ver.checked_substrings,
                                                "wal_truncated": truncated,
                                                **({"levels": lines} if lines else {})})  # fmt: skip

    forget.store.write(write)
    if residue == 0 and truncated:
        discard(forget.path, token)
    if server is None:  # a file database: the verify's own write grew the WAL again
        eraser.truncate_log(1, CHECKPOINT_PAUSE)
    return ver


def recheck(forget: Forget, req: ForgetRequest) -> Verification:
    """A verified case whose sealed text is gone: its keyed fingerprints (forget/prints.py) slid
    over every live row. Text that came back is reported and the case's residue recorded."""
    eraser = forget.store.eraser
    marks = req.selected["prints"]
    with forget.store.reading() as conn, eraser.tolerant(conn):
        hits = prints.recurrences(marks, eraser.live_texts(conn, 1))
    searched = sum(len(v) for v in marks.values())
    levels = [
        Level("recurrence", True, hits, {"live rows": hits} if hits else {},
              f"{searched} keyed fingerprints of the forgotten text slid over every live row"),
        Level("files", False, 0, {}, "not checked: the sealed text is gone, so no byte scan of files"),
    ]  # fmt: skip
    now, actor = forget.ctx.clock.now(), forget.ctx.actor

    def write(conn: Connection) -> None:
        conn.forget_requests.set_residue(req.id, hits)
        audit.append(conn, at=now, actor=actor, action="forget-verify", target_kind="forget_request",
                     target_id=req.id,
                     summary={"recurrence": hits, "fingerprints": searched})  # fmt: skip

    if not forget.store.readonly:  # on a replica: reported, recorded by the primary only
        forget.store.write(write)
    return Verification(req.id, hits, {}, 0, searched, 0, True, levels)


def replicas(forget: Forget, server: Any) -> Any:
    """The configured read replicas' levels (engine/forget/replicas.py), or None."""
    from engine.forget.replicas import replica_levels

    cfg = forget.ctx.settings.forget
    if not cfg.replicas or forget.store.readonly:
        return None
    return lambda wholes: replica_levels(server, cfg.replicas, wholes, cfg.replica_wait)


def _shown(db_path: Path, f: Path) -> str:
    home = home_of(db_path)
    return f.name if f.parent == home else str(f.relative_to(home))
