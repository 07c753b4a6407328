"""Browser sessions of `memconsole serve`, kept in the server's memory only (a restart signs every
one out), and the login rate limit.

A session is a 256-bit random id in an HttpOnly, SameSite=Strict cookie (Secure under TLS); it
names one verified operator and role and dies at a fixed time (`--session-minutes`). Each session
also holds a CSRF token for its forms (sign out).
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from console.shared.served import ServedOperator


@dataclass
class Session:
    sid: str
    operator: ServedOperator
    expires_at: float
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    stamp: str = ""  # the account's stamp at sign-in (console/serve/accounts.py Account.stamp)

    def alive(self, now: float) -> bool:
        return now < self.expires_at


class SessionStore:
    def __init__(self, minutes: float, clock: Callable[[], float] = time.time) -> None:
        self.minutes = minutes
        self.clock = clock
        self._by_id: dict[str, Session] = {}

    def open(self, operator: ServedOperator, stamp: str = "") -> Session:
        s = Session(secrets.token_urlsafe(32), operator, self.clock() + self.minutes * 60, stamp=stamp)
        self._by_id[s.sid] = s
        return s

    def get(self, sid: str | None) -> Session | None:
        """The live session with this id (compared in constant time), else None."""
        if not sid:
            return None
        for known, s in list(self._by_id.items()):
            if hmac.compare_digest(known, sid):
                if s.alive(self.clock()):
                    return s
                del self._by_id[known]
                return None
        return None

    def close(self, sid: str) -> Session | None:
        return self._by_id.pop(sid, None)

    def outlived(self, stamps: dict[str, str]) -> list[Session]:
        """Remove and return the sessions whose account was removed or changed since sign-in
        (`stamps`: each account's current stamp by name)."""
        gone = [s for s in self._by_id.values() if stamps.get(s.operator.name) != s.stamp]
        for s in gone:
            del self._by_id[s.sid]
        return gone

    def expired(self) -> list[Session]:
        """Remove and return the sessions whose time is up."""
        now = self.clock()
        gone = [s for s in self._by_id.values() if not s.alive(now)]
        for s in gone:
            del self._by_id[s.sid]
        return gone


class LoginLimiter:
    """At most `attempts` failed logins per `window` seconds, per client address and per name
    (a password guesser is slowed whichever it varies)."""

    def __init__(self, attempts: int = 5, window: float = 60.0, clock: Callable[[], float] = time.time):
        self.attempts = attempts
        self.window = window
        self.clock = clock
        self._fails: dict[str, deque[float]] = {}

    def _recent(self, key: str) -> deque[float]:
        q = self._fails.setdefault(key, deque())
        cutoff = self.clock() - self.window
        while q and q[0] < cutoff:
            q.popleft()
        return q

    def blocked(self, *keys: str) -> float:
        """Seconds to wait before another try (0 when allowed)."""
        wait = 0.0
        for key in keys:
            q = self._recent(key)
            if len(q) >= self.attempts:
                wait = max(wait, q[0] + self.window - self.clock())
        return wait

    def failed(self, *keys: str) -> None:
        for key in keys:
            self._recent(key).append(self.clock())

    def succeeded(self, *keys: str) -> None:
        for key in keys:
            self._fails.pop(key, None)
