"""The browser console's operator accounts: one 0600 JSON file beside the database.

A password is kept only as its scrypt hash (memory-hard: 32 MiB and ~0.1 s per try, so a stolen
file is slow to attack); a one-time login link is kept only as the SHA-256 of its token, with an
expiry, and is spent by its first use. The file is read on every login, so `serve-user add` takes
effect without restarting `memconsole serve`; writes are atomic (a temp file renamed over it)
under an exclusive lock, and a file anyone but its owner can read is refused, never used.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from console.shared.served import ROLES
from engine.errors import InvalidInput, NotFound

# scrypt cost: n=2^15, r=8 -> 32 MiB of memory per hash.
SCRYPT_N, SCRYPT_R, SCRYPT_P, SCRYPT_LEN = 2**15, 8, 1, 32
SCRYPT_MAXMEM = 64 * 1024 * 1024
MIN_PASSWORD = 10
NAME_RE = re.compile(r"^[a-z][a-z0-9._-]{0,39}$")
LINK_MINUTES = 15


def accounts_path_for(db: Path | str) -> Path:
    """`<db>.serve-accounts.json` beside a database file."""
    p = Path(db)
    return p.with_name(p.name + ".serve-accounts.json")


def hash_password(password: str, salt: bytes | None = None) -> dict[str, Any]:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(
        password.encode("utf-8"),
        salt=salt,
        n=SCRYPT_N,
        r=SCRYPT_R,
        p=SCRYPT_P,
        maxmem=SCRYPT_MAXMEM,
        dklen=SCRYPT_LEN,
    )
    return {
        "kdf": "scrypt",
        "n": SCRYPT_N,
        "r": SCRYPT_R,
        "p": SCRYPT_P,
        "salt": salt.hex(),
        "hash": digest.hex(),
    }


def check_password(password: str, stored: dict[str, Any]) -> bool:
    try:
        digest = hashlib.scrypt(
            password.encode("utf-8"),
            salt=bytes.fromhex(stored["salt"]),
            n=int(stored["n"]),
            r=int(stored["r"]),
            p=int(stored["p"]),
            maxmem=SCRYPT_MAXMEM,
            dklen=len(bytes.fromhex(stored["hash"])),
        )
    except (KeyError, ValueError, TypeError):
        return False
    return hmac.compare_digest(digest.hex(), str(stored["hash"]))


# A hash to check against when the name is unknown: a wrong name costs what a wrong password costs.
_DUMMY = hash_password(secrets.token_hex(16))


def _stamp(a: dict[str, Any]) -> str:
    stored = a.get("password")
    pw: dict[str, Any] = stored if isinstance(stored, dict) else {}
    basis = f"{a.get('role')}|{a.get('created_at')}|{pw.get('salt', '')}|{pw.get('hash', '')}"
    return hashlib.sha256(basis.encode("utf-8")).hexdigest()[:32]


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Account:
    name: str
    role: str
    has_password: bool
    created_at: float
    pending_links: int = 0
    # Changes when the account's role or password does (not when a link is made or spent): a
    # session signed in under another stamp has outlived the account it signed in as.
    stamp: str = ""


@dataclass
class AccountsFile:
    path: Path
    _doc: dict[str, Any] = field(default_factory=dict, repr=False)

    # -- reading -----------------------------------------------------------------------------------
    def _read(self) -> dict[str, Any]:
        if not self.path.exists():
            return {"version": 1, "accounts": {}}
        st = self.path.stat()
        if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise InvalidInput(
                f"{self.path} is readable by others (mode {stat.S_IMODE(st.st_mode):o}); "
                f"run `chmod 600 {self.path}` first"
            )
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise InvalidInput(f"{self.path}: not a readable accounts file ({e})") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("accounts"), dict):
            raise InvalidInput(f"{self.path}: not an accounts file (no accounts table)")
        return doc

    def accounts(self) -> list[Account]:
        doc = self._read()
        return [self._account(n, a) for n, a in sorted(doc["accounts"].items())]

    @staticmethod
    def _account(name: str, a: dict[str, Any]) -> Account:
        now = time.time()
        return Account(
            name=name,
            role=str(a.get("role", "viewer")),
            has_password=bool(a.get("password")),
            created_at=float(a.get("created_at", 0.0)),
            pending_links=sum(1 for link in a.get("links", []) if link.get("expires_at", 0) > now),
            stamp=_stamp(a),
        )

    def stamps(self) -> dict[str, str]:
        """Each account's stamp by name (what a live session is checked against)."""
        return {n: _stamp(a) for n, a in self._read()["accounts"].items()}

    def verify(self, name: str, password: str) -> Account | None:
        """The account when `password` is its password, else None (same cost either way)."""
        a = self._read()["accounts"].get(name)
        stored = a.get("password") if a else None
        ok = check_password(password, stored or _DUMMY)
        return self._account(name, a) if (a and stored and ok) else None

    # -- writing (locked, atomic, 0600) -------------------------------------------------------------
    @contextlib.contextmanager
    def _editing(self) -> Iterator[dict[str, Any]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.with_name(self.path.name + ".lock")
        fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            doc = self._read()
            yield doc
            tmp = self.path.with_name(self.path.name + f".tmp{os.getpid()}")
            out = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
            with os.fdopen(out, "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=2, sort_keys=True)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def add(self, name: str, role: str, password: str | None) -> Account:
        """A new account (a password, or none yet: then a one-time link signs it in)."""
        if not NAME_RE.match(name):
            raise InvalidInput(
                f"an operator name is 1-40 of a-z 0-9 . _ - starting with a letter, not {name!r}"
            )
        if role not in ROLES:
            raise InvalidInput(f"role must be one of {', '.join(ROLES)}, not {role!r}")
        if password is not None and len(password) < MIN_PASSWORD:
            raise InvalidInput(f"a password has at least {MIN_PASSWORD} characters")
        with self._editing() as doc:
            if name in doc["accounts"]:
                raise InvalidInput(f"operator {name} already has an account (serve-user remove first)")
            doc["accounts"][name] = {
                "role": role,
                "password": hash_password(password) if password is not None else None,
                "created_at": time.time(),
                "links": [],
            }
            return self._account(name, doc["accounts"][name])

    def set_password(self, name: str, password: str) -> None:
        if len(password) < MIN_PASSWORD:
            raise InvalidInput(f"a password has at least {MIN_PASSWORD} characters")
        with self._editing() as doc:
            self._get(doc, name)["password"] = hash_password(password)

    def set_role(self, name: str, role: str) -> None:
        if role not in ROLES:
            raise InvalidInput(f"role must be one of {', '.join(ROLES)}, not {role!r}")
        with self._editing() as doc:
            self._get(doc, name)["role"] = role

    def remove(self, name: str) -> None:
        with self._editing() as doc:
            self._get(doc, name)
            del doc["accounts"][name]

    def new_link(self, name: str, minutes: float = LINK_MINUTES) -> str:
        """A one-time login token for `name`, valid `minutes`; only its hash is stored."""
        token = secrets.token_urlsafe(32)
        with self._editing() as doc:
            a = self._get(doc, name)
            now = time.time()
            a["links"] = [lk for lk in a.get("links", []) if lk.get("expires_at", 0) > now]
            a["links"].append({"hash": _token_hash(token), "expires_at": now + minutes * 60})
        return token

    def spend_link(self, token: str) -> Account | None:
        """The account a live link token belongs to, the token spent; None if unknown or expired."""
        h, now = _token_hash(token), time.time()
        with self._editing() as doc:
            for name, a in doc["accounts"].items():
                links = a.get("links", [])
                hit = [lk for lk in links if hmac.compare_digest(str(lk.get("hash", "")), h)]
                if hit:
                    a["links"] = [lk for lk in links if lk not in hit and lk.get("expires_at", 0) > now]
                    if hit[0].get("expires_at", 0) > now:
                        return self._account(name, a)
                    return None
        return None

    @staticmethod
    def _get(doc: dict[str, Any], name: str) -> dict[str, Any]:
        a = doc["accounts"].get(name)
        if a is None:
            raise NotFound(f"no operator account named {name!r}")
        assert isinstance(a, dict)
        return a
