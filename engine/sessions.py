"""Sessions and their messages: the episodic log, with full-text search in two tokenizers."""

from __future__ import annotations

import builtins
import json
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from engine.audit import log as audit
from engine.errors import InvalidInput, NotFound, cut
from engine.memory_input import check_text
from engine.retrieval.query import clean, plan
from engine.storage.indexes import MessageScope
from engine.types import Message, MessageHit, Session, SessionDetail, load_json

if TYPE_CHECKING:
    from engine.context import Context
    from engine.storage.indexes import FtsIndex, KeywordIndex
    from engine.storage.port import Connection

ROLES = ("user", "assistant", "system", "tool")


def row_to_session(r: Any) -> Session:
    keys = r.keys()
    return Session(
        id=r["id"],
        agent=r["agent"],
        user=r["user"],
        source=r["source"],
        model=r["model"],
        title=r["title"],
        started_at=r["started_at"],
        ended_at=r["ended_at"],
        parent_session_id=r["parent_session_id"],
        metadata=load_json(r["metadata"]),
        message_count=int(r["n"]) if "n" in keys and r["n"] is not None else 0,
    )


def row_to_message(r: Any) -> Message:
    return Message(
        id=r["id"],
        session_id=r["session_id"],
        role=r["role"],
        content=r["content"],
        tool_name=r["tool_name"],
        at=r["at"],
        token_count=r["token_count"],
        metadata=load_json(r["metadata"]),
    )


class SessionsService:
    """Sessions and the messages in them (the episodic log), with transcript search."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    @property
    def index(self) -> KeywordIndex:
        """The store's keyword index (attached by the façade)."""
        return self.ctx.store.keyword

    def add(
        self,
        id: str | None = None,
        *,
        agent: str = "",
        user: str = "",
        source: str = "",
        model: str = "",
        title: str = "",
        started_at: float | None = None,
        ended_at: float | None = None,
        parent_session_id: str | None = None,
        metadata: dict | None = None,
    ) -> str:
        sid = check_text(id, "session id", limit=200) if id else f"s_{uuid.uuid4().hex[:12]}"
        for name, val in (
            ("agent", agent),
            ("user", user),
            ("source", source),
            ("model", model),
            ("title", title),
        ):
            check_text(val or "", name, allow_empty=True, limit=10_000)
        now = self.ctx.clock.now()

        def write(conn: Connection) -> None:
            if conn.sessions.exists(sid):
                raise InvalidInput(f"a session with id {cut(sid)} already exists")
            conn.sessions.insert(
                {
                    "id": sid, "agent": agent or "", "user": user or "", "source": source or "",
                    "model": model or "", "title": title or "",
                    "started_at": started_at if started_at is not None else now, "ended_at": ended_at,
                    "parent_session_id": parent_session_id,
                    "metadata": json.dumps(metadata or {}, ensure_ascii=False),
                },
            )  # fmt: skip
            audit.append(
                conn, at=now, actor=self.ctx.actor, action="add", target_kind="session", target_id=sid,
                summary={"agent": agent, "source": source},
            )  # fmt: skip

        self.ctx.store.write(write)
        return sid

    def add_message(
        self,
        session_id: str,
        role: str,
        content: str,
        *,
        tool_name: str | None = None,
        at: float | None = None,
        token_count: int | None = None,
        metadata: dict | None = None,
    ) -> int:
        one = dict(
            role=role, content=content, tool_name=tool_name, at=at, token_count=token_count, metadata=metadata
        )
        return self.add_messages(session_id, [one])[0]

    def add_messages(self, session_id: str, messages: builtins.list[dict]) -> builtins.list[int]:
        rows = []
        for m in messages:
            role = m.get("role") or "user"
            if role not in ROLES:
                raise InvalidInput(f"unknown role {cut(role)}; use one of {', '.join(ROLES)}")
            content = check_text(m.get("content") or "", "message content", allow_empty=True)
            tc = m.get("token_count")
            if tc is None:
                tc = max(1, len(content) // 4) if content else 0
            meta = json.dumps(m.get("metadata") or {}, ensure_ascii=False)
            rows.append((role, content, m.get("tool_name"), m.get("at"), int(tc), meta))
        now = self.ctx.clock.now()

        def write(conn: Connection) -> list[int]:
            if not conn.sessions.exists(session_id):
                raise NotFound(f"no session with id {cut(session_id)}")
            ids = []
            for role, content, tool, at, tc, meta in rows:
                at = at if at is not None else now
                ids.append(conn.messages.insert(session_id, role, content, tool, at, tc, meta))
            audit.append(
                conn, at=now, actor=self.ctx.actor, action="add-messages", target_kind="session",
                target_id=session_id, summary={"messages": len(ids)},
            )  # fmt: skip
            return ids

        return self.ctx.store.write(write)

    def list(
        self,
        *,
        agent: str | None = None,
        user: str | None = None,
        source: str | None = None,
        since: float | None = None,
        until: float | None = None,
        text: str | None = None,
        limit: int = 500,
    ) -> builtins.list[Session]:
        found = clean(text) if text else None
        rows = self.ctx.store.query(
            lambda c: c.memory_queries.sessions(
                agent=agent, user=user, source=source, since=since, until=until, text=found, limit=int(limit)
            )
        )
        return [row_to_session(r) for r in rows]

    def get(self, session_id: str) -> SessionDetail:
        with self.ctx.store.reading() as conn:
            q: Connection = conn
            r = q.memory_queries.session(session_id)
            if r is None:
                raise NotFound(f"no session with id {cut(session_id)}")
            msgs = q.memory_queries.messages_of(session_id)
            parent = None
            if r["parent_session_id"]:
                p = q.sessions.row(r["parent_session_id"])
                parent = row_to_session(p) if p else None
            kids = q.memory_queries.children(session_id)
        return SessionDetail(
            row_to_session(r), [row_to_message(m) for m in msgs], parent, [row_to_session(k) for k in kids]
        )

    def agent_of(self, session_id: str) -> str | None:
        """The agent a session belongs to ("" for none), or None when there is no such session."""
        r = self.ctx.store.query(lambda c: c.sessions.row(session_id))
        return None if r is None else str(r["agent"] or "")

    def get_message(self, message_id: int) -> Message:
        r = self.ctx.store.query(lambda c: c.messages.row(message_id))
        if r is None:
            raise NotFound(f"no message with id {message_id}")
        return row_to_message(r)

    def search_messages(
        self, query: str, *, limit: int = 50, session_id: str | None = None, agent: str | None = None
    ) -> builtins.list[MessageHit]:
        """Full-text search of transcripts: words (porter) for most text, trigram for CJK, and
        a LIKE scan for CJK shorter than three characters. Never raises on odd input."""
        p = plan(query)
        if p.index == "none":
            return []
        if p.index == "like":
            like = p.like
            rows = self.ctx.store.query(
                lambda c: c.memory_queries.messages_like(
                    like, session_id=session_id, agent=agent, limit=int(limit)
                )
            )
        else:
            index: FtsIndex = "words" if p.index == "words" else "trigram"
            match = p.match or ""
            scope = MessageScope(session_id or None, agent or None)
            with self.ctx.store.reading() as conn:
                rows = self.index.messages(conn, index, match, scope, int(limit))
        return [
            MessageHit(row_to_message(r), _snippet(r["content"], p.terms), r["session_title"]) for r in rows
        ]

    def count_matches(self, query: str) -> tuple[int, builtins.list[str]]:
        """How many messages match, and in which sessions (first few): the 'elsewhere' hint."""
        hits = self.search_messages(query, limit=200)
        sessions: list[str] = []
        for h in hits:
            if h.message.session_id not in sessions:
                sessions.append(h.message.session_id)
        return len(hits), sessions[:5]


def _snippet(text: str, terms: Sequence[str], width: int = 160) -> str:
    low = text.lower()
    pos = min((low.find(t.lower()) for t in terms if t and low.find(t.lower()) >= 0), default=0)
    start = max(0, pos - width // 3)
    s = text[start : start + width].replace("\n", " ")
    return ("…" if start else "") + s + ("…" if start + width < len(text) else "")
