"""The installation's secret key, kept outside every database: keyed hashes (tombstones, the audit
chain) cannot be recomputed or dictionary-attacked by someone who holds only the database file.

The key lives in `<state dir>/secret.key` (32 random bytes, 0600, in a 0700 folder); the state dir
is `$MEMCONSOLE_STATE`, else `<user config dir>/memconsole`. `$MEMCONSOLE_KEY_FILE` points several
machines that share one PostgreSQL database at one key. Each purpose gets its own derived key.

A key is created only for a new installation: where audit anchors already exist in the state dir
(or, see engine.audit.service, the database holds a keyed chain), a missing key is refused, never
regenerated, since a new key would turn every keyed hash into "does not verify".
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import threading
from pathlib import Path

from engine.errors import EngineError
from engine.paths import state_dir

KEY_BYTES = 32
_lock = threading.Lock()
_cache: dict[str, bytes] = {}


def key_file() -> Path:
    env = os.environ.get("MEMCONSOLE_KEY_FILE")
    return Path(env) if env else state_dir() / "secret.key"


def _read_key(path: Path) -> bytes:
    """Read the key through a descriptor opened without following a symlink, and check it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise EngineError(f"{path}: cannot read the memconsole key ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise EngineError(f"{path}: the memconsole key is not a regular file")
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != KEY_BYTES:
        raise EngineError(f"{path}: the memconsole key is damaged ({len(data)} bytes, not {KEY_BYTES})")
    return data


def missing_key_error(path: Path | None = None) -> EngineError:
    """The one line for a key that an existing installation has lost."""
    return EngineError(
        f"the memconsole key {path or key_file()} is missing; restore it from your backup of "
        f"{state_dir()} — it is never regenerated for an existing installation"
    )


def key_missing() -> bool:
    path = key_file()
    return str(path) not in _cache and not path.exists() and not path.is_symlink()


def _installed() -> bool:
    """Has this state dir anchored an audit chain (an anchor or a place record)? Then it is an
    existing installation, whose key is restored from a backup, never made anew."""
    anchors = state_dir() / "anchors"
    try:
        with os.scandir(anchors) as it:
            for entry in it:
                if entry.name.endswith(".json") or entry.name == "places":
                    return True
    except OSError:  # no anchors folder (or not readable: opening it later says why)
        return False
    return False


def forget_cached() -> None:
    """Drop the key this process read (tests that replace or remove the key file)."""
    with _lock:
        _cache.clear()


def master_key() -> bytes:
    """The key, created on first use by a new installation (O_EXCL, so two processes racing agree
    on one); refused with one line when an existing installation's key is missing."""
    path = key_file()
    with _lock:
        cached = _cache.get(str(path))
        if cached is not None:
            return cached
        if not path.exists() and not path.is_symlink():
            if _installed():
                raise missing_key_error(path)
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
            except FileExistsError:
                pass
            except OSError as exc:
                raise EngineError(f"{path}: cannot create the memconsole key ({exc.strerror})") from None
            else:
                with os.fdopen(fd, "wb") as f:
                    f.write(secrets.token_bytes(KEY_BYTES))
                    f.flush()
                    os.fsync(f.fileno())
        key = _read_key(path)
        _cache[str(path)] = key
        return key


_derived: dict[tuple[bytes, str], bytes] = {}


def derived_key(purpose: str) -> bytes:
    # Keyed on the master key itself: a replaced key (tests, forget_cached) derives anew.
    master = master_key()
    got = _derived.get((master, purpose))
    if got is None:
        got = hmac.new(master, b"memconsole:" + purpose.encode(), hashlib.sha256).digest()
        if len(_derived) > 64:
            _derived.clear()
        _derived[(master, purpose)] = got
    return got


def keyed_hash(purpose: str, data: str | bytes) -> str:
    """HMAC-SHA256 (hex) of `data` under the purpose's key."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    return hmac.new(derived_key(purpose), raw, hashlib.sha256).hexdigest()
