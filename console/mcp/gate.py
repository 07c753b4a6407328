"""The HTTP door's gate (ASGI, in front of the SDK's /mcp app): who may come in, and how much of
the door one token may take.

- No `Authorization: Bearer` → 401; a token the token file does not hold (now: the file is re-read
  when it changes) → 403.
- Sessions are counted per token: a token holding `sessions_per_token` live sessions is refused a
  new one (429) until one ends or expires; a session unused for `session_idle` seconds expires
  (the SDK drops it at the same age); a session is only usable with the token that opened it.
- Calls (POST, DELETE) run `calls_per_token` at once per token (1 for a read-only token), with
  `queued_per_token` more waiting; beyond that a call is refused at once (429), so one token
  never fills the worker threads every agent shares.
- A body over `max_body` bytes is refused (413) before it is read.

Every refusal is a JSON-RPC error with one line the SDK client shows as the call's error.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from engine.config import McpSettings

from .auth import Caller, TokenSource, bearer

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SESSION_HEADER = b"mcp-session-id"


@dataclass
class _Session:
    key: bytes
    used: float


@dataclass
class _Slots:
    """One token's calls: a semaphore for those running and a count of those waiting."""

    running: asyncio.Semaphore
    waiting: int = 0


@dataclass
class SessionBook:
    """Live sessions by id, each with the token digest that opened it and when it was last used."""

    idle: float
    clock: Callable[[], float] = time.monotonic
    sessions: dict[str, _Session] = field(default_factory=dict)

    def expire(self) -> None:
        cut = self.clock() - self.idle
        for sid in [s for s, v in self.sessions.items() if v.used < cut]:
            del self.sessions[sid]

    def count(self, key: bytes) -> int:
        self.expire()
        return sum(1 for v in self.sessions.values() if v.key == key)

    def owner(self, sid: str) -> bytes | None:
        self.expire()
        found = self.sessions.get(sid)
        return found.key if found else None

    def add(self, sid: str, key: bytes) -> None:
        self.sessions[sid] = _Session(key, self.clock())

    def touch(self, sid: str) -> None:
        if sid in self.sessions:
            self.sessions[sid].used = self.clock()

    def drop(self, sid: str) -> None:
        self.sessions.pop(sid, None)


class TokenGate:
    """ASGI middleware: authentication, per-token sessions and calls, the body limit."""

    def __init__(self, app: ASGIApp, tokens: TokenSource, limits: McpSettings) -> None:
        self.app = app
        self.tokens = tokens
        self.limits = limits
        self.book = SessionBook(limits.session_idle)
        self._slots: dict[bytes, _Slots] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan events carry no request
            await self.app(scope, receive, send)
            return
        headers = scope.get("headers") or []
        token = bearer(headers)
        if token is None:
            await deny(send, 401, "a bearer token is required (Authorization: Bearer <token>)")
            return
        who = self.tokens.lookup(token)
        if who is None:
            await deny(send, 403, "this token is not allowed")
            return
        size = _header(headers, b"content-length")
        if size.isdigit() and int(size) > self.limits.max_body:
            await deny(
                send, 413, f"the request is {int(size):,} bytes; the limit is {self.limits.max_body:,}"
            )
            return
        sid = _header(headers, SESSION_HEADER)
        if sid:  # every session was opened through this gate: one it does not know has expired
            if self.book.owner(sid) != who.key:
                await deny(send, 404, "session not found: it expired, ended or belongs to another token")
                return
        elif scope.get("method") == "POST" and self.book.count(who.key) >= self.limits.sessions_per_token:
            await deny(
                send, 429,
                f"this token already holds {self.limits.sessions_per_token} sessions (the limit);"
                " end one or let it expire",
            )  # fmt: skip
            return
        if scope.get("method") == "GET":  # a server-to-client stream, not a call: no slot
            await self._serve(scope, receive, send, who, sid)
            return
        slots = self._slots_of(who)
        if slots.running.locked() and slots.waiting >= self.limits.queued_per_token:
            await deny(send, 429, f"too many calls in flight for the token of {who.actor!r}; retry shortly")
            return
        slots.waiting += 1
        try:
            await slots.running.acquire()
        finally:
            slots.waiting -= 1
        try:
            await self._serve(scope, receive, send, who, sid)
        finally:
            slots.running.release()

    def _slots_of(self, who: Caller) -> _Slots:
        found = self._slots.get(who.key)
        if found is None:
            n = 1 if who.read_only else self.limits.calls_per_token
            found = self._slots[who.key] = _Slots(asyncio.Semaphore(n))
        return found

    async def _serve(self, scope: Scope, receive: Receive, send: Send, who: Caller, sid: str) -> None:
        async def watch(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                opened = _header(message.get("headers") or [], SESSION_HEADER)
                if opened and not sid:
                    self.book.add(opened, who.key)
            await send(message)

        self.book.touch(sid)
        try:
            await self.app(scope, receive, watch)
        finally:
            if scope.get("method") == "DELETE":
                self.book.drop(sid)
            else:
                self.book.touch(sid)


def _header(headers: Any, name: bytes) -> str:
    for k, v in headers:
        if k.lower() == name:
            return bytes(v).decode("latin-1").strip()
    return ""


async def deny(send: Send, status: int, message: str) -> None:
    """A JSON-RPC error (no id) at an HTTP status: the SDK client shows `message` as the error."""
    doc = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    body = json.dumps(doc).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="memconsole"'))
    if status in (429, 503):
        headers.append((b"retry-after", b"1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
