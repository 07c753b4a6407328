"""Redacting forgotten text from the records that stay: a kept session's metadata and system
prompt, a kept message's or memory's metadata, rule history reasons, flow run notes, curator run
counts, import watermarks. The records that hold the text as their content are deleted
(forget_select); these only quote it. One vectorized pass per column finds the rows to touch."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from engine.forget.verify import (
    MIN_PIECE,
    Secrets,
    char_windows,
    redact,
    rows_containing,
    valid,
    walk_strings,
)
from engine.storage.erasure import SCRUBBED

if TYPE_CHECKING:
    from engine.storage.erasure import Eraser
    from engine.storage.port import Connection

# (table, column, whether the column holds JSON, the table's key): the only places rewritten
PLACES = SCRUBBED


def _redact_json(raw: str, sec: Secrets) -> str:
    try:
        doc = json.loads(raw)
    except (ValueError, TypeError):
        return redact(raw, sec)  # malformed JSON is redacted as text, never an error
    new = walk_strings(doc, lambda s: redact(s, sec))
    if isinstance(doc, dict):  # keys can quote text too
        new = {redact(k, sec) if isinstance(k, str) else k: v for k, v in new.items()}
    return raw if new == doc else json.dumps(new, ensure_ascii=False, separators=(",", ":"))


def scrub(conn: Connection, texts: list[str], eraser: Eraser) -> int:
    """Redact every place above that quotes one of `texts` (read and rewritten through the store's
    eraser, engine/storage/erasure.py). Returns the rows changed."""
    sec = char_windows(texts)
    if not sec:
        return 0
    changed = 0
    for table, col, is_json, _ in PLACES:
        # Nothing shorter than a short whole can quote anything ('{}', '', 'null' are most rows).
        # A stray blob or number in a text column quotes nothing: only text rows are read on.
        rows = eraser.quoting(conn, table, col, MIN_PIECE)
        if not rows:
            continue
        for i in sorted(rows_containing([r[1] for r in rows], texts)):
            rid, raw = rows[i]
            new = _redact_json(raw, sec) if is_json else redact(raw, sec)
            if new != raw:
                eraser.overwrite(conn, table, col, rid, valid(new))
                changed += 1
    return changed
