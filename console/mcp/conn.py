"""The HTTP door's sockets: what an unauthenticated caller can hold, bounded, and nothing they do
ends the process.

The finding this answers: with the descriptor limit reached, asyncio's accept loop logs the EMFILE
through the root logger; the SDK had installed rich's handler there, which imports
`rich.traceback` on first use — opening a file, which fails with EMFILE too and escapes the event
loop, so uvicorn returned and the server exited. Anyone who could open sockets could stop it.
So, here:

- `raise_descriptor_limit` lifts the soft RLIMIT_NOFILE to the hard one, and the connection cap
  stays `RESERVED_FDS` + two accept bursts below it (asyncio accepts `ACCEPT_BURST` at a time
  before any of them is counted), so accept() never reaches EMFILE in the first place;
- `guarded_protocol` is uvicorn's h11 protocol with a connection cap (a new connection over it
  evicts the oldest one still waiting for a request — a half-sent header or an idle keep-alive —
  or is closed at once when none is) and a request timeout (headers and body must arrive within
  `request_timeout` seconds of the connection or of the previous response);
- `quiet_logging` replaces the SDK's rich handler by a plain one-line handler that never raises,
  and `loop_errors` makes the event loop's error handler one line that never raises either.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import sys
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

RESERVED_FDS = 64  # descriptors kept free for the database, the model files, logging
ACCEPT_BURST = 64  # connections asyncio may accept in one go (uvicorn's `backlog`, also the listen queue)
_last_error = [0.0]


def raise_descriptor_limit() -> int:
    """Lift the soft descriptor limit to the hard one; return the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError):
            pass
    return int(soft) if soft != resource.RLIM_INFINITY else 1 << 20


def connection_cap(configured: int, fd_limit: int) -> int:
    """At most `configured`, and far enough below the descriptor limit that a burst of accepts
    plus what the engine opens never meets it."""
    return max(8, min(configured, fd_limit - RESERVED_FDS - 2 * ACCEPT_BURST))


def guarded_protocol(cap: int, request_timeout: float) -> type[H11Protocol]:
    class Guarded(H11Protocol):
        """uvicorn's h11 protocol under a connection cap and a request (header + body) timeout."""

        _deadline: asyncio.TimerHandle | None = None
        _waiting_since = 0.0

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()
            live = [c for c in self.connections if not c.transport.is_closing()]
            if len(live) <= cap:
                return
            idle = [c for c in live if c is not self and isinstance(c, Guarded) and c._idle()]
            victim = min(idle, key=lambda c: c._waiting_since) if idle else self
            victim.transport.close()  # refused or evicted: the process and the others go on

        def _idle(self) -> bool:
            """Waiting for a request: nothing or only part of its headers or body has come."""
            state = self.conn.their_state
            done = self.cycle is None or self.cycle.response_complete
            return state is h11.SEND_BODY or (state is h11.IDLE and done)

        def _arm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            self._waiting_since = time.monotonic()
            self._deadline = self.loop.call_later(request_timeout, self._expire)

        def _expire(self) -> None:
            self._deadline = None
            if not self.transport.is_closing() and self.conn.their_state in (h11.IDLE, h11.SEND_BODY):
                self.transport.close()  # a slow (or stalled) client: dropped

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            super().connection_lost(exc)

    return Guarded


class OneLine(logging.Formatter):
    """`memconsole mcp: <message>[: <exception>]` on one line; never a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text = f"{text}: {type(exc).__name__}: {exc}"
        first = next((s for s in text.splitlines() if s.strip()), "")
        return f"memconsole mcp: {first[:500]}"


def quiet_logging(level: int = logging.WARNING) -> None:
    """One plain stderr handler for everything (the SDK's rich handler opens files lazily)."""
    logging.raiseExceptions = False  # a handler that fails drops the line, never raises
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "mcp"):
        lg = logging.getLogger(name)
        lg.handlers.clear()
        lg.propagate = True
    logging.getLogger("uvicorn.access").setLevel(logging.CRITICAL)


def loop_errors(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The event loop's error handler: one line at most once a second, and it never raises."""
    try:
        now = time.monotonic()
        if now - _last_error[0] < 1.0:
            return
        _last_error[0] = now
        exc = context.get("exception")
        why = f"{type(exc).__name__}: {exc}" if exc is not None else ""
        logging.getLogger("memconsole.mcp").warning("%s %s", context.get("message", "event loop error"), why)
    except Exception:
        pass
