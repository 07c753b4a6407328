"""A real PgBouncer in transaction pooling mode in front of the session's test server
(tests/pg_server.py), for tests/postgres/test_pg_bouncer.py (issue #24). Debian's `pgbouncer`
(`make install` installs it as root, beside chromium); the tests that ask for `pg_bouncer` skip,
with the reason, only when there is no `pgbouncer` binary. `bench/fleet.py --via-bouncer` starts one
the same way in front of its own server.

- Runs as the unprivileged OS user the PostgreSQL test server runs as (`pgserver` when the suite
  runs as root: PgBouncer refuses to run as root), on 127.0.0.1 and a free port, and reaches the
  server over its unix socket. Started once per session, on first use (~0.2 s).
- `pool_mode = transaction`, `default_pool_size = 3`: many clients share three server connections
  per (database, user), so anything the engine left in a session would reach another client.
- Auth: `trust` on loopback; a user need not be listed beforehand (`auth_query` looks it up in
  `pg_shadow` as `postgres`), so the roles a test creates log in through the bouncer at once, and
  PgBouncer keeps one pool per (database, user): the server still sees each client's own role.
- The admin console (`SHOW POOLS`, `SHOW SERVERS`) answers `postgres` on the database `pgbouncer`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.pg_replica import _run_as, _socket_of
from tests.pg_server import PgServer

POOL_SIZE = 3
START_TIMEOUT_S = 15.0

CONFIG = """\
[databases]
* = host={socket} port={port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {listen}
unix_socket_dir =
auth_type = trust
auth_file = {folder}/userlist.txt
auth_user = postgres
auth_query = SELECT usename, passwd FROM pg_shadow WHERE usename = $1
pool_mode = transaction
default_pool_size = {pool}
max_client_conn = 500
admin_users = postgres
logfile = {folder}/pgbouncer.log
pidfile = {folder}/pgbouncer.pid
ignore_startup_parameters = extra_float_digits,options
"""


def binary() -> str | None:
    return shutil.which("pgbouncer") or next(
        (p for p in ("/usr/sbin/pgbouncer", "/usr/local/sbin/pgbouncer") if os.path.exists(p)), None
    )


def version(path: str) -> str:
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False).stdout
    return (out.splitlines() or ["PgBouncer ?"])[0].strip()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgBouncer:
    """A running PgBouncer: `url(server_url, user=...)` is the same database through it."""

    def __init__(
        self, primary: str, path: str, folder: Path, run_as: dict[str, Any], pool_size: int = POOL_SIZE
    ) -> None:
        self.primary = primary  # any database's URL on the server (its unix socket and port)
        self.pool_size = pool_size
        self.path = path
        self.version = version(path)
        self.folder = folder
        self.run_as = run_as
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.aliases: dict[str, str] = {}  # alias -> its [databases] line's settings

    def _write_config(self) -> None:
        primary = self.primary
        server = f"host={_socket_of(primary)} port={urlsplit(primary).port or 5432}"
        (self.folder / "userlist.txt").write_text('"postgres" ""\n')
        text = CONFIG.format(
            socket=_socket_of(primary),
            port=urlsplit(primary).port or 5432,
            listen=self.port,
            folder=self.folder,
            pool=self.pool_size,
        )
        extra = "".join(f"{name} = {server} {how}\n" for name, how in self.aliases.items())
        (self.folder / "pgbouncer.ini").write_text(text.replace("[databases]\n", "[databases]\n" + extra, 1))
        if self.run_as:
            for f in (self.folder, *self.folder.iterdir()):
                os.chown(f, self.run_as["user"], self.run_as["group"])

    def alias(self, server_url: str, mode: str, user: str = "postgres") -> str:
        """A URL through the bouncer to `server_url`'s database in another `pool_mode` (statement,
        session), under a name of its own (the config gains a [databases] line; RELOAD)."""
        name = urlsplit(server_url).path.lstrip("/")
        alias = f"{name}_{mode}"
        self.aliases[alias] = f"dbname={name} pool_mode={mode}"
        self._write_config()
        self.admin("RELOAD")
        return urlunsplit(("postgresql", f"{user}@127.0.0.1:{self.port}", f"/{alias}", "", ""))

    def start(self) -> None:
        self._write_config()
        self.proc = subprocess.Popen(
            [self.path, "-q", str(self.folder / "pgbouncer.ini")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            **self.run_as,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                self.admin("SHOW VERSION")
                return
            except Exception as exc:  # noqa: BLE001 - not listening yet, or it died (below)
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"pgbouncer did not start: {self.log_tail() or exc}") from None
                time.sleep(0.05)

    def url(self, server_url: str, user: str = "postgres") -> str:
        """`server_url`'s database through the bouncer, logged in as `user`."""
        name = urlsplit(server_url).path.lstrip("/")
        return urlunsplit(("postgresql", f"{user}@127.0.0.1:{self.port}", f"/{name}", "", ""))

    def admin(self, command: str) -> list[dict[str, Any]]:
        """One admin console command (SHOW POOLS, SHOW SERVERS, ...), rows as dicts."""
        import psycopg
        from psycopg.rows import dict_row

        # The admin console speaks the simple protocol only: no prepared statements, no params.
        with psycopg.connect(
            f"postgresql://postgres@127.0.0.1:{self.port}/pgbouncer",
            autocommit=True,
            connect_timeout=2,
            prepare_threshold=None,
            row_factory=dict_row,
        ) as c:
            cur = c.cursor()
            cur.execute(command.encode())  # bytes: psycopg sends them as they are (simple query)
            return list(cur.fetchall()) if cur.description else []

    def server_connections(self, database: str) -> int:
        """How many server connections the bouncer holds for `database` (every user), now."""
        return sum(1 for r in self.admin("SHOW SERVERS") if r.get("database") == database)

    def log_tail(self, n: int = 20) -> str:
        try:
            return "\n".join((self.folder / "pgbouncer.log").read_text().splitlines()[-n:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_bouncer(pg_server: PgServer) -> Iterator[PgBouncer]:
    """PgBouncer (transaction pooling) in front of the session's server, started on first use."""
    path = binary()
    if path is None:
        pytest.skip(
            "no pgbouncer binary (`make install` as root installs Debian's: apt-get install pgbouncer)"
        )
    folder = Path(tempfile.mkdtemp(prefix="mc-bouncer-"))
    run_as = _run_as(pg_server.server)
    bouncer = PgBouncer(pg_server.uri("postgres"), path, folder, run_as)
    try:
        bouncer.start()
    except RuntimeError as exc:
        bouncer.stop()
        pytest.fail(str(exc))
    yield bouncer
    bouncer.stop()
