"""Who is calling `memconsole mcp --http`: the token file, read again when it changes.

The token file (`--token-file F`) holds one token per line:

    # token                              actor           access      agents
    9f2c1e0d7a4b4c2e8d1f6a3b5c7e9d0f     claude-laptop
    4b6d8f0a2c4e6a8c0e2a4c6e8a0c2e4a     dashboard       read-only
    7c1d9e3f5a7b9c1d3e5f7a9b1c3d5e7f     ci-runner                   agents=build,deploy

Blank lines and lines starting with `#` are skipped. A token is at least 16 characters with no
spaces; the actor is the name recorded on every change that token makes (the audit trail's
`actor`), normalised and checked like every actor name (engine/identity_names.py: a lookalike is
refused); `read-only` (or `ro`) limits it to tools that write nothing; `agents=a,b` names the
agents the token may write, reject or log for (default: its own actor name only; `agents=*`:
any). The file must be a regular file (not a symlink, FIFO or device) readable by its owner only
(mode 0600 or 0400), else the server refuses to start. `python -c "import secrets;
print(secrets.token_hex(24))"` makes a token.

Reload. The server looks at the file at most once a second (on a request) and re-reads it when its
inode, size or mtime changed, and at once after SIGHUP: a token removed is refused from the next
request on, a token added is let in. A new file that is unsafe or malformed is not loaded: the old
tokens stay and one line on stderr says why.

Tokens are compared in constant time (hmac.compare_digest of their SHA-256 digests, every entry
checked).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import stat
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engine.errors import InvalidInput
from engine.identity_names import actor_name

MIN_TOKEN = 16
READ_ONLY_WORDS = ("read-only", "readonly", "ro")
ANY_AGENT = "*"
RELOAD_EVERY_S = 1.0
log = logging.getLogger("memconsole.mcp")


class TokenFileError(ValueError):
    """The token file is unsafe or malformed: the server does not start (one line says why)."""


@dataclass(frozen=True)
class Caller:
    actor: str
    read_only: bool = False
    agents: frozenset[str] = frozenset()  # whom it may act for besides itself; {"*"}: anyone
    key: bytes = b""  # the token's digest: what per-token limits count by

    def may_act_for(self, agent: str | None) -> bool:
        """No agent named, its own name, or one the token file lists for it."""
        return not agent or agent == self.actor or ANY_AGENT in self.agents or agent in self.agents


@dataclass(frozen=True)
class _Entry:
    digest: bytes
    caller: Caller


class TokenMap:
    """Tokens → callers. Only SHA-256 digests are kept in memory after loading."""

    def __init__(self, entries: dict[str, Caller]) -> None:
        self._entries = [_Entry(d, replace(c, key=d)) for t, c in entries.items() for d in [_digest(t)]]

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


def read_token_file(path: str | os.PathLike, allow_mixed_script: bool = False) -> TokenMap:
    """Load and check the token file (see the module docstring for its format and rules)."""
    return TokenMap(parse_tokens(_read_safely(Path(path)), str(path), allow_mixed_script))


def _signature(p: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(p)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class TokenSource:
    """The token file's current tokens; re-read when the file changes or after `request_reload`
    (SIGHUP). Safe to call from the event loop: a check is one stat() at most once a second."""

    def __init__(self, path: str | os.PathLike, allow_mixed_script: bool = False) -> None:
        self.path = Path(path)
        self.allow_mixed_script = allow_mixed_script
        self._sig = _signature(self.path)
        self._tokens = read_token_file(self.path, allow_mixed_script)
        self._checked = time.monotonic()
        self._forced = False

    def request_reload(self) -> None:
        """Only flags the reload (a signal handler may call it): the next request re-reads."""
        self._forced = True

    def current(self) -> TokenMap:
        now = time.monotonic()
        if self._forced or now - self._checked >= RELOAD_EVERY_S:
            self._checked = now
            forced, self._forced = self._forced, False
            sig = _signature(self.path)
            if forced or sig != self._sig:
                self._sig = sig
                try:
                    self._tokens = read_token_file(self.path, self.allow_mixed_script)
                    log.warning("token file re-read: %d token(s)", len(self._tokens))
                except TokenFileError as exc:
                    log.warning("token file not reloaded, the old tokens stay: %s", exc)
        return self._tokens

    def lookup(self, token: str) -> Caller | None:
        return self.current().lookup(token)

    def __len__(self) -> int:
        return len(self._tokens)


def _read_safely(p: Path) -> str:
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
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise TokenFileError(f"{p}: the token file is not UTF-8 text") from None


FORMAT = "expected `TOKEN ACTOR [read-only] [agents=NAME,...]`"


def parse_tokens(text: str, where: str = "token file", allow_mixed_script: bool = False) -> dict[str, Caller]:
    out: dict[str, Caller] = {}
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) < 2:
            raise TokenFileError(f"{where}:{n}: {FORMAT}")
        token, rest = parts[0], parts[2:]
        if len(token) < MIN_TOKEN:
            raise TokenFileError(f"{where}:{n}: a token is at least {MIN_TOKEN} characters")

        def name(raw: str, what: str, at: str = f"{where}:{n}") -> str:
            if raw == ANY_AGENT and what == "agent name":
                return raw
            try:
                return actor_name(raw, allow_mixed_script=allow_mixed_script, what=what)
            except InvalidInput as exc:
                raise TokenFileError(f"{at}: {exc}") from None

        actor = name(parts[1], "actor name")
        read_only, agents = False, frozenset([actor])
        for word in rest:
            if word.lower() in READ_ONLY_WORDS and not read_only:
                read_only = True
            elif word.lower().startswith("agents=") and agents == {actor}:
                listed = [name(a, "agent name") for a in word[len("agents=") :].split(",") if a]
                if not listed:
                    raise TokenFileError(f"{where}:{n}: `agents=` names at least one agent")
                agents = frozenset(listed)
            else:
                raise TokenFileError(f"{where}:{n}: {FORMAT}; `{word[:40]}` is neither")
        if token in out:
            raise TokenFileError(f"{where}:{n}: the same token appears twice")
        out[token] = Caller(actor, read_only=read_only, agents=agents)
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
