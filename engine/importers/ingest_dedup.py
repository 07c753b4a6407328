"""Re-ingesting the same JSONL is idempotent: a message the session already holds is not added
again. Messages have no id of their own in the format, so one is matched by its role, text, tool
and time; a message written without a time got the time of its first ingest, so it matches on the
rest. Counts are kept: a file that says "ok" three times in a session that holds it once adds two."""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.storage.port import Connection


def _h(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def new_messages(conn: Connection, session_id: str, messages: list[dict]) -> tuple[list[dict], int]:
    """(the messages of `messages` the session does not hold yet, how many it already held)."""
    held = conn.messages.held(session_id)
    if not held:
        return messages, 0
    exact = Counter((role, _h(content), tool, at) for role, content, tool, at in held)
    loose = Counter((role, _h(content), tool) for role, content, tool, _ in held)
    keep: list[dict] = []
    for m in messages:
        base = (m.get("role") or "user", _h(m.get("content") or ""), m.get("tool_name") or "")
        at = m.get("at")
        key = (*base, at)
        if at is not None and exact[key] > 0:
            exact[key] -= 1
            loose[base] -= 1
        elif at is None and loose[base] > 0:
            loose[base] -= 1
        else:
            keep.append(m)
    return keep, len(messages) - len(keep)
