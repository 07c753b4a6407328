"""Who is calling `memconsole mcp --http`: the token file and the bearer check in front of /mcp.

The token file (`--token-file F`) holds one token per line:

    # token                              actor           access
    9f2c1e0d7a4b4c2e8d1f6a3b5c7e9d0f     claude-laptop
    4b6d8f0a2c4e6a8c0e2a4c6e8a0c2e4a     dashboard       read-only

Blank lines and lines starting with `#` are skipped. A token is at least 16 characters with no
spaces; the actor is the name recorded on every change that token makes (the audit trail's
`actor`); `read-only` (or `ro`) limits it to tools that write nothing. The file must be a regular
file (not a symlink, FIFO or device) readable by its owner only (mode 0600 or 0400), else the
server refuses to start. `python -c "import secrets; print(secrets.token_hex(24))"` makes a token.

Requests without `Authorization: Bearer <token>` get 401, a token not in the file 403. Tokens are
compared in constant time (hmac.compare_digest of their SHA-256 digests, every entry checked).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MIN_TOKEN = 16
READ_ONLY_WORDS = ("read-only", "readonly", "ro")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class TokenFileError(ValueError):
    """The token file is unsafe or malformed: the server does not start (one line says why)."""


@dataclass(frozen=True)
class Caller:
    actor: str
    read_only: bool = False


@dataclass(frozen=True)
class _Entry:
    digest: bytes
    caller: Caller


class TokenMap:
    """Tokens → callers. Only SHA-256 digests are kept in memory after loading."""

    def __init__(self, entries: dict[str, Caller]) -> None:
        self._entries = [_Entry(_digest(t), c) for t, c in entries.items()]

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, token: str) -> Caller | None:
        """The caller for `token`, comparing against every entry (no early exit)."""
        d = _digest(token)
        found: Caller | None = None
        for e in self._entries:
            if hmac.compare_digest(d, e.digest) and found is None:
                found = e.caller
        return found


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def read_token_file(path: str | os.PathLike) -> TokenMap:
    """Load and check the token file (see the module docstring for its format and rules)."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if p.is_symlink():
            raise TokenFileError(f"{p}: the token file is a symlink; give the real file") from None
        raise TokenFileError(f"{p}: cannot open the token file ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TokenFileError(f"{p}: the token file is not a regular file")
        if st.st_mode & 0o077:
            raise TokenFileError(
                f"{p}: the token file is readable by others (mode {stat.S_IMODE(st.st_mode):04o});"
                f" run `chmod 600 {p}`"
            )
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            raise TokenFileError(f"{p}: the token file belongs to another user")
        if st.st_size > 1_000_000:
            raise TokenFileError(f"{p}: the token file is over 1 MB")
        with os.fdopen(fd, "rb", closefd=False) as f:
            raw = f.read(1_000_001)
    finally:
        os.close(fd)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise TokenFileError(f"{p}: the token file is not UTF-8 text") from None
    return TokenMap(parse_tokens(text, str(p)))


def parse_tokens(text: str, where: str = "token file") -> dict[str, Caller]:
    out: dict[str, Caller] = {}
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) not in (2, 3):
            raise TokenFileError(f"{where}:{n}: expected `TOKEN ACTOR [read-only]`")
        token, actor = parts[0], parts[1]
        if len(token) < MIN_TOKEN:
            raise TokenFileError(f"{where}:{n}: a token is at least {MIN_TOKEN} characters")
        if not actor.isprintable() or len(actor) > 200:
            raise TokenFileError(f"{where}:{n}: the actor name must be printable, at most 200 characters")
        if len(parts) == 3 and parts[2].lower() not in READ_ONLY_WORDS:
            raise TokenFileError(f"{where}:{n}: the third column is `read-only` or nothing")
        if token in out:
            raise TokenFileError(f"{where}:{n}: the same token appears twice")
        out[token] = Caller(actor, read_only=len(parts) == 3)
    if not out:
        raise TokenFileError(f"{where}: no tokens in the token file")
    return out


def bearer(headers: Any) -> str | None:
    """The token of an `Authorization: Bearer <token>` header (a mapping or ASGI header list)."""
    value: str | None = None
    if isinstance(headers, list):
        for k, v in headers:
            if k.lower() == b"authorization":
                value = v.decode("latin-1")
                break
    elif headers is not None:
        value = headers.get("authorization")
    if not value:
        return None
    scheme, _, token = value.strip().partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


class BearerGate:
    """ASGI middleware: 401 without a bearer token, 403 with one the file does not hold."""

    def __init__(self, app: ASGIApp, tokens: TokenMap) -> None:
        self.app = app
        self.tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan events carry no request
            await self.app(scope, receive, send)
            return
        token = bearer(scope.get("headers") or [])
        if token is None:
            await _deny(send, 401, "a bearer token is required (Authorization: Bearer <token>)")
            return
        if self.tokens.lookup(token) is None:
            await _deny(send, 403, "this token is not allowed")
            return
        await self.app(scope, receive, send)


async def _deny(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="memconsole"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
