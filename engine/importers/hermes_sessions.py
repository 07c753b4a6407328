"""A Hermes home's sessions and messages, written into the memory database: new sessions keep
their Hermes ids, changed ones are refreshed only where the source changed (keyed hashes of what
was last imported), messages come in once and never past a tombstone."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from engine.audit import log as audit
from engine.errors import ImportFailed, InvalidInput, cut
from engine.importers.common import (
    ImportSummary,
    forgotten,
    forgotten_session,
)
from engine.importers.hermes import StateData
from engine.keys import keyed_hash
from engine.memory_input import MAX_CONTENT

if TYPE_CHECKING:
    from engine.importers.service import Importers
    from engine.storage.port import Connection


def import_sessions(
    imp: Importers,
    conn: Connection,
    s: ImportSummary,
    state: StateData,
    agent: str,
    key: str,
    now: float,
    step,
    fresh: set[str],
) -> set[str]:
    """Add new sessions (their ids go in `fresh`), refresh changed ones; returns the ids not to
    write into (held by another agent, or forgotten)."""
    blocked: set[str] = set()
    for hs in state.sessions:
        step(1)
        row = conn.imports_queries.session_state(hs.id)
        if row is None and forgotten_session(conn, hs.id):
            blocked.add(hs.id)
            s.skip("session was forgotten here (tombstone)")
            continue
        # Only what changed in the source since the last import is written: a kept session a
        # forget scrubbed (its title, its system prompt) is not rewritten from an unchanged
        # source, and a copy of the home elsewhere changes nothing. The first import's source
        # stays its provenance.
        live_meta = json_object(row["metadata"]) if row is not None else {}
        sync = _sync(hs)
        meta = {**hs.metadata, "imported_from": live_meta.get("imported_from") or key, "hermes_sync": sync}
        if row is None:
            try:
                imp.sessions.add(
                    hs.id,
                    agent=agent,
                    user=hs.user,
                    source=hs.source,
                    model=hs.model,
                    title=hs.title,
                    started_at=hs.started_at,
                    ended_at=hs.ended_at,
                    parent_session_id=hs.parent_session_id,
                    metadata=meta,
                )
            except InvalidInput as exc:
                raise ImportFailed(f"state.db session {cut(hs.id)}: {exc}") from None
            s.add("sessions")
            fresh.add(hs.id)
            continue
        if row["agent"] != agent:
            blocked.add(hs.id)
            s.skip("session id already used by another agent")
            continue
        synced = live_meta.get("hermes_sync")
        was: dict = synced if isinstance(synced, dict) else {}
        title = row["title"] if was.get("title") == sync["title"] else hs.title
        meta["hermes"] = _merge(
            live_meta.get("hermes"), hs.metadata.get("hermes") or {}, was.get("hermes"), sync["hermes"]
        )
        meta_json = json.dumps(meta, ensure_ascii=False)
        if (row["title"], row["ended_at"], row["metadata"]) == (title, hs.ended_at, meta_json):
            s.skip("session already imported")
            continue
        conn.sessions.update(hs.id, {"title": title, "ended_at": hs.ended_at, "metadata": meta_json})
        audit.append(
            conn,
            at=now,
            actor=imp.ctx.actor,
            action="import-update",
            target_kind="session",
            target_id=hs.id,
            summary={"ended_at": hs.ended_at},
        )
        s.update("sessions")
    return blocked


def json_object(text) -> dict:
    try:
        v = json.loads(text or "{}")
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


def _digest(value) -> str:
    return keyed_hash("hermes-sync", json.dumps(value, sort_keys=True, ensure_ascii=False))


def _sync(hs) -> dict:
    """Keyed hashes of the source's title and of each of its Hermes fields as last imported
    (never the text): a later import rewrites a field only when the source's own value changed,
    so a field a forget scrubbed stays scrubbed while the message counts move on."""
    return {
        "title": _digest(hs.title),
        "hermes": {k: _digest(v) for k, v in (hs.metadata.get("hermes") or {}).items()},
    }


def _merge(live, source: dict, was, now: dict) -> dict:
    live = live if isinstance(live, dict) else {}
    was = was if isinstance(was, dict) else {}
    return {k: live[k] if k in live and was.get(k) == now[k] else v for k, v in source.items()}


def _imported_ids(conn: Connection, session_id: str, cache: dict[str, set]) -> set:
    """Hermes message ids this session already holds (a copy of the home, or another path to
    it, has its own watermark: without this its messages would come in twice)."""
    if session_id not in cache:
        cache[session_id] = conn.imports_queries.hermes_message_ids(session_id)
    return cache[session_id]


def import_messages(
    imp: Importers,
    conn: Connection,
    s: ImportSummary,
    state: StateData,
    after: int,
    blocked: set[str],
    fresh: set[str],
    step,
) -> None:
    by_session: dict[str, list[dict]] = {}
    held: dict[str, set] = {}
    for m in state.messages:
        step(1)
        if m.id <= after:  # another import got here first
            s.skip("message already imported")
            continue
        if m.session_id in blocked:
            s.skip("message of a session held by another agent or forgotten")
            continue
        if str(m.id) in _imported_ids(conn, m.session_id, held):
            s.skip("message already imported")
            continue
        # In a session this database already holds, a message missing here with a forgotten
        # message's content is that message. A session new here is a conversation the forget
        # never saw: its "thanks" is not the "thanks" of a forgotten session (a forget by session,
        # agent or user keeps a content hash of every message it removed).
        if m.session_id not in fresh and forgotten(conn, "message", texts=(m.content,)):
            s.skip("message was forgotten here (tombstone)")
            continue
        content, meta = m.content, m.metadata
        if len(content) > MAX_CONTENT:  # a huge tool dump: keep its head, say so
            content, meta = content[:MAX_CONTENT], {**meta, "truncated_from": len(content)}
            s.warnings.append(f"message {m.id} truncated to {MAX_CONTENT:,} characters")
        by_session.setdefault(m.session_id, []).append(
            dict(
                role=m.role,
                content=content,
                tool_name=m.tool_name,
                at=m.at,
                token_count=m.token_count,
                metadata=meta,
            )
        )
    for sid, ms in by_session.items():
        imp.sessions.add_messages(sid, ms)
        s.add("messages", len(ms))
