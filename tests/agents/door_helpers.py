"""The hostile door tests' server: `memconsole mcp --http` with its own config (limits), extra
arguments and, when asked, a lowered descriptor limit; plus raw HTTP helpers."""

from __future__ import annotations

import resource
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .conftest import MEMCONSOLE, child_env, listening

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def client(url: str, token: str, **headers: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}", **headers}, timeout=60)
    return Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60)


def auth(token: str, **more: str) -> dict[str, str]:
    return {**ACCEPT, "Authorization": f"Bearer {token}", **more}


def error_of(resp: httpx2.Response) -> str:
    doc = resp.json()
    assert isinstance(doc, dict), doc
    return str(doc.get("error", {}).get("message", doc))


@contextmanager
def door_server(
    db: Path,
    tokens: Path,
    port: int,
    *,
    config: str = "",
    args: tuple[str, ...] = (),
    nofile: int | None = None,
    listen: str = "127.0.0.1",
) -> Iterator[subprocess.Popen]:
    cfg = db.parent / f"door-{port}.toml"
    cfg.write_text(config)

    def limit() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    proc = subprocess.Popen(
        [MEMCONSOLE, "--db", str(db), "--actor", "operator", "mcp", "--http", f"{listen}:{port}",
         "--token-file", str(tokens), *args],
        env=child_env(MEMCONSOLE_CONFIG=str(cfg)), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=limit,
    )  # fmt: skip
    with listening(proc, port):
        yield proc


def stderr_of(proc: subprocess.Popen) -> str:
    """What the server said (after it was stopped)."""
    return proc.stderr.read().decode() if proc.stderr else ""
