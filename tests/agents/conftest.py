"""Agents' doors under test: the real `memconsole mcp` process driven by the `mcp` SDK's own
client (stdio and streamable HTTP), and the Hermes provider loaded by hermes-agent's own loader.
Subprocesses use the hash embedder (MEMCONSOLE_EMBEDDER=hash): fast, spelling not meaning."""

from __future__ import annotations

import fcntl
import hashlib
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
MEMCONSOLE = str(BIN / "memconsole")


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCONSOLE_DB")}
    env.update(MEMCONSOLE_EMBEDDER="hash", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **extra)
    return env


def rows(db: Path, sql: str, params: tuple = ()) -> list[tuple]:
    """What the console would read: the database file itself, opened read-only."""
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_tokens(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text)
    path.chmod(mode)
    return path


RW_TOKEN = "rw-token-0123456789abcdef"
RO_TOKEN = "ro-token-0123456789abcdef"
TOKENS = f"# token actor access\n{RW_TOKEN} laptop\n{RO_TOKEN} viewer read-only\n"


@contextmanager
def http_server(db: Path, token_file: Path, port: int) -> Iterator[subprocess.Popen]:
    proc = subprocess.Popen(
        [MEMCONSOLE, "--db", str(db), "--actor", "operator", "mcp", "--http", f"127.0.0.1:{port}",
         "--token-file", str(token_file)],
        env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    with listening(proc, port):
        yield proc


@contextmanager
def listening(proc: subprocess.Popen, port: int) -> Iterator[subprocess.Popen]:
    """Wait until the server `proc` listens on `port` (or say why it exited); stop it after."""
    try:
        deadline = time.monotonic() + 60  # a busy 2-core machine with two test workers
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None:
                    err = proc.stderr.read().decode() if proc.stderr else ""
                    raise RuntimeError(f"server exited: {err}") from None
                if time.monotonic() > deadline:
                    raise TimeoutError("server did not listen in 60 s") from None
                time.sleep(0.1)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


HERMES_PINS = ["hermes-agent==0.19.0", "mcp>=2.3,<3"]


def hermes_venv() -> Path:
    """Where the hermes-agent venv lives: the user's cache, outside any clone, named for the pins
    and the Python that builds it. Building it took ~4 min of a clean clone's `make test` (255 s at
    load 15 here, the slowest item of the suite); a later clone or worktree on the machine reuses it,
    as pip reuses its wheel cache."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    key = f"{' '.join(HERMES_PINS)} {sys.version} {sys.base_prefix}"
    return base / "memconsole" / f"hermes-agent-0.19.0-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


@pytest.fixture(scope="session")
def hermes_python() -> Path:
    """Python of a separate venv holding hermes-agent 0.19.0 (its pins — rich 14, pydantic 2.13 —
    would downgrade this venv's). Built once per machine by the suite (a few minutes, from the
    package index) in the user's cache (`hermes_venv()`), then reused; MEMCONSOLE_HERMES_PYTHON
    points at another one. memconsole itself reaches it the way it reaches a user's Hermes: through
    the folders `install-provider` records."""
    given = os.environ.get("MEMCONSOLE_HERMES_PYTHON")
    if given:
        return Path(given)
    venv = hermes_venv()
    py = venv / "bin" / "python"
    stamp = venv / ".installed"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two runs at once on the machine: one builds, one waits
        if not stamp.exists():
            try:
                if not py.exists():
                    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
                subprocess.run([str(py), "-m", "pip", "install", "-q", *HERMES_PINS], check=True,
                               timeout=1500, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
            except (subprocess.SubprocessError, OSError) as exc:
                pytest.skip(f"cannot build the hermes-agent venv ({exc})")
            stamp.write_text(" ".join(HERMES_PINS) + "\n")
    return py


@pytest.fixture(autouse=True)
def hash_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process engines opened by the code under test (the provider) use the hash embedder too."""
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
