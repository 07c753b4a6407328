"""One `memconsole mcp --http` process on a free loopback port, a bearer token per agent, for the
tests and benches that drive the MCP door with the real client SDK (tests/stress/mcp_kill.py,
bench/fleet_mcp.py, bench/embed_batch.py)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

EXE = Path(sys.executable).with_name("memconsole")


class McpHttpServer:
    """Started at once; `wait_listening()` before use. `token_of(agent)` is each agent's token,
    `embedder` the server's (MEMCONSOLE_EMBEDDER), `config` its TOML; `command` runs instead of
    the `memconsole` script (e.g. `python -c ...` wrapping the CLI), given the same arguments."""

    def __init__(
        self,
        db: str,
        folder: Path,
        name: str,
        agents: list[str],
        token_of: Callable[[str], str],
        *,
        config: str = "",
        embedder: str = "hash",
        actor: str = "",
        command: Sequence[str] = (),
    ) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        tokens = folder / f"{name}.tokens"
        tokens.write_text("".join(f"{token_of(n)} {n}\n" for n in agents))
        tokens.chmod(0o600)
        cfg = folder / f"{name}.toml"
        cfg.write_text(config)
        env = {
            **os.environ,
            "MEMCONSOLE_EMBEDDER": embedder,
            "MEMCONSOLE_CONFIG": str(cfg),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
        env.pop("MEMCONSOLE_DB", None)  # --db says which
        self.log = folder / f"{name}.stderr"
        argv = [*(command or [str(EXE)]), "--db", db, "--actor", actor or f"op-{name}", "mcp", "--http",
                f"127.0.0.1:{self.port}", "--token-file", str(tokens)]  # fmt: skip
        with open(self.log, "wb") as err:  # the child holds its own descriptor
            self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=err)

    def wait_listening(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"the MCP server did not listen: {self.stderr()[-800:]}") from None
                time.sleep(0.1)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stderr(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
