"""Agents' doors under test: the real `memconsole mcp` process driven by the `mcp` SDK's own
client (stdio and streamable HTTP), and the Hermes provider loaded by hermes-agent's own loader.
Subprocesses use the hash embedder (MEMCONSOLE_EMBEDDER=hash): fast, spelling not meaning."""

from __future__ import annotations

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
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None:
                    err = proc.stderr.read().decode() if proc.stderr else ""
                    raise RuntimeError(f"server exited: {err}") from None
                if time.monotonic() > deadline:
                    raise TimeoutError("server did not listen in 30 s") from None
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
