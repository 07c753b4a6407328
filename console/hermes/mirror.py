"""The Hermes provider's mirror (console/hermes/provider.py): a session's messages copied from
Hermes' own state.db as `memconsole import hermes` stores them, a session's end as one episodic
note, and Hermes' built-in MEMORY.md / USER.md writes; never what a forget removed here. Run on
the provider's background worker."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

try:  # inside Hermes
    from agent.memory_provider import MemoryProvider
except ImportError:  # our own tests and type checks: the same shape, nothing more

    class MemoryProvider:  # type: ignore[no-redef]
        pass


def hermes_message(row: dict[str, Any]) -> dict[str, Any]:
    """One state.db message as `memconsole import hermes` stores it."""
    keys = row.keys()
    meta: dict[str, Any] = {"hermes_id": row["id"]}
    role = row["role"] or "user"
    if role not in ("user", "assistant", "system", "tool"):
        meta["hermes_role"], role = role, "system"
    for k in ("tool_call_id", "finish_reason", "reasoning"):
        if k in keys and row.get(k):
            meta[k] = row[k]
    if "tool_calls" in keys and row.get("tool_calls"):
        with contextlib.suppress(ValueError):
            meta["tool_calls"] = json.loads(row["tool_calls"])
    content = str(row["content"] or "").replace("\x00", "")
    return dict(
        role=role,
        content=content[:100_000],
        tool_name=row.get("tool_name") or None,
        at=float(row.get("timestamp") or 0) or None,
        token_count=row.get("token_count"),
        metadata=meta,
    )


class HermesMirror(MemoryProvider):
    """What MemconsoleProvider (provider.py) writes into the engine from Hermes; it sets the
    engine, the agent's names and the mirror's state in its __init__ and initialize."""

    eng: Any
    home: Path
    agent: str
    source: str
    user: str
    _high: dict[str, int]  # session -> highest Hermes message id held
    _known: set[str]
    _forgotten: set[str]  # sessions a forget removed here: never re-created

    def _gone(self, sid: str) -> bool:
        """A session a forget removed here is never re-created from Hermes' copy of it (an
        import would skip it too): checked on every write, since the operator may forget it while
        the agent still talks in it."""
        if sid in self._forgotten:
            return True
        if self.eng.forget.is_forgotten("session", ident=sid):
            self._forgotten.add(sid)
            self._known.discard(sid)
            return True
        return False

    def _ensure_session(self, sid: str, parent: str = "") -> None:
        from engine.errors import InvalidInput, NotFound

        if self._gone(sid):
            return
        if sid in self._known:
            return
        try:
            detail = self.eng.sessions.get(sid)
            ids = [m.metadata.get("hermes_id") for m in detail.messages]
            self._high[sid] = max([int(i) for i in ids if isinstance(i, int)] or [0])
        except NotFound:
            started, title = None, ""
            from engine.importers import hermes_live

            row = hermes_live.session_row(self.home, sid)
            if row is not None:
                started = row.get("started_at")
                parent = parent or (row.get("parent_session_id") or "")
                title = row.get("title") or ""
            try:
                self.eng.sessions.add(
                    sid,
                    agent=self.agent,
                    user=self.user,
                    source=self.source,
                    title=title or "",
                    started_at=started,
                    parent_session_id=parent or None,
                    metadata={"hermes_live": True},
                )
            except InvalidInput as exc:
                if "already exists" not in str(exc):
                    raise
            self._high[sid] = 0
        self._known.add(sid)

    def _mirror(self, sid: str, fallback: tuple[str, str] | None = None) -> None:
        """The session's messages Hermes stored since the last mirror, as the importer stores them."""
        if not sid or self._gone(sid):
            return
        self._ensure_session(sid)
        from engine.importers import hermes_live

        rows = hermes_live.messages_after(self.home, sid, self._high.get(sid, 0))
        if rows is None:  # no state.db in this home: the turn's texts as given
            if fallback and not any(self.eng.forget.is_forgotten("message", text=t) for t in fallback):
                self.eng.sessions.add_messages(sid, [
                    dict(role="user", content=fallback[0], metadata={"hermes_live": True}),
                    dict(role="assistant", content=fallback[1], metadata={"hermes_live": True}),
                ])  # fmt: skip
            return
        if rows:
            keep = [r for r in rows if not self.eng.forget.is_forgotten("message", text=r["content"] or "")]
            if keep:
                self.eng.sessions.add_messages(sid, [hermes_message(r) for r in keep])
            self._high[sid] = int(rows[-1]["id"])

    def _note(self, sid: str, what: str, messages: list[dict[str, Any]]) -> None:
        """What the session did, as one episodic memory tied to it. Hermes still holds the turns a
        forget removed: a last request that was forgotten is left out of the note, and a note the
        tombstones refuse is not written."""
        from engine.errors import Forgotten

        if not sid or self._gone(sid):
            return
        self._ensure_session(sid)
        users = [m for m in messages if m.get("role") == "user"]
        tools = sum(len(m.get("tool_calls") or []) for m in messages if m.get("role") == "assistant")
        last = str(users[-1].get("content") or "") if users else ""
        if last and any(self.eng.forget.is_forgotten(k, text=last) for k in ("message", "memory")):
            last = ""
        last = last[:300]
        text = (
            f"Hermes session {sid} ({self.source or 'unknown platform'}) {what} after "
            f"{len(messages)} messages ({len(users)} from the user, {tools} tool calls)."
            + (f" Last request: {last}" if last else "")
        )
        with contextlib.suppress(Forgotten):  # refused and audited by the engine
            self._add_note(text, sid, what)

    def _add_note(self, text: str, sid: str, what: str) -> None:
        self.eng.memories.add_ex(
            text,
            kind="episodic",
            category="context",
            agent=self.agent,
            user=self.user,
            session_id=sid,
            importance=0.3,
            dedup=False,
            metadata={"source": "hermes", "event": what},
            reason=f"hermes session {what}",
        )

    def _mirror_memory(self, action: str, target: str, content: str, meta: dict[str, Any]) -> None:
        """Hermes' built-in MEMORY.md / USER.md write, as the importer would store the entry."""
        fname = "USER.md" if target == "user" else "MEMORY.md"
        old = meta.get("old_text") if action == "replace" else content if action == "remove" else None
        if old:
            for h in self.eng.search(str(old), k=10, agent=self.agent, record_access=False).hits:
                if h.content == old and h.metadata.get("file") == f"memories/{fname}":
                    self.eng.memories.archive(h.id, reason=f"Hermes {action} in memories/{fname}")
        if action in ("add", "replace") and content.strip():
            if self.eng.forget.is_forgotten("memory", text=content):
                return  # forgotten here: the entry stays out, as an import would keep it out
            self.eng.memories.add_ex(
                content, kind="semantic", category="fact" if target == "user" else "learning",
                agent=self.agent, user=self.user if target == "user" else "",
                metadata={"source": "hermes", "file": f"memories/{fname}", "live": True},
                reason=f"Hermes wrote memories/{fname}",
            )  # fmt: skip
