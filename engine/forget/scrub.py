"""Redacting forgotten text from the records that stay: a kept session's metadata and system
prompt, a kept message's or memory's metadata, rule history reasons, flow run notes, curator run
counts, import watermarks. The records that hold the text as their content are deleted
(forget_select); these only quote it. One vectorized pass per column finds the rows to touch."""
from __future__ import annotations

import json

from engine.forget.verify import MIN_WHOLE, char_windows, redact, rows_containing, valid, walk_strings

# (table, column, whether the column holds JSON)
PLACES = (
    ("sessions", "title", False), ("sessions", "metadata", True),
    ("messages", "metadata", True), ("memories", "metadata", True), ("rules", "metadata", True),
    ("rule_history", "reason", False), ("flows", "metadata", True), ("flow_runs", "note", False),
    ("curator_runs", "counts", True), ("import_watermarks", "value", True),
    ("forget_requests", "reason", False),
)


def _redact_json(raw: str, sec) -> str:
    try:
        doc = json.loads(raw)
    except (ValueError, TypeError):
        return redact(raw, sec)             # malformed JSON is redacted as text, never an error
    new = walk_strings(doc, lambda s: redact(s, sec))
    if isinstance(doc, dict):               # keys can quote text too
        new = {redact(k, sec) if isinstance(k, str) else k: v for k, v in new.items()}
    return raw if new == doc else json.dumps(new, ensure_ascii=False, separators=(",", ":"))


def scrub(conn, texts: list[str]) -> int:
    """Redact every place above that quotes one of `texts`. Returns the rows changed."""
    sec = char_windows(texts)
    if not (sec.wins or sec.short):
        return 0
    changed = 0
    for table, col, is_json in PLACES:
        # Nothing shorter than a short whole can quote anything ('{}', '', 'null' are most rows).
        rows = conn.execute(f"SELECT rowid, {col} FROM {table} WHERE typeof({col}) = 'text'"
                            f" AND length({col}) >= {MIN_WHOLE}").fetchall()
        if not rows:
            continue
        for i in sorted(rows_containing([r[1] for r in rows], texts)):
            rid, raw = rows[i]
            new = _redact_json(raw, sec) if is_json else redact(raw, sec)
            if new != raw:
                conn.execute(f"UPDATE {table} SET {col} = ? WHERE rowid = ?", (valid(new), rid))
                changed += 1
    return changed
