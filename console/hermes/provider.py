"""memconsole as a Hermes Agent memory provider (MemoryProvider, hermes-agent 0.19.0).

`memconsole --db DB hermes install-provider HERMES_HOME` writes a short shim (console/hermes/plugin.py)
to `HERMES_HOME/plugins/memconsole/__init__.py` beside `memconsole.json` ({"db", "actor", "agent",
"paths", "python", "prefetch_chars", "recall_k"}); the shim imports this module from the installation
those paths name. `memory.provider: memconsole` in config.yaml turns it on.

- Turns: `sync_turn` only queues; one background thread mirrors the session's messages from
  Hermes' own state.db (read-only) into the engine with the importer's representation (the Hermes
  session id, `metadata.hermes_id`), so `memconsole import hermes` of the same home skips them:
  per session, the messages at or below the highest Hermes id already held are never written
  again. Without a state.db the two turn texts are written as given.
- Identity: agent = the Hermes profile ("default" is agent "hermes", as the importer names it);
  every write is audited under the OS user running Hermes (verified), labelled with the agent:
  `alice (as hermes:hermes)` (or `alice (as <actor>)` with `actor` in memconsole.json).
- Failures never reach Hermes: each hook catches, logs and counts (`self.failures`).
- What is written into the engine from Hermes (messages, session notes, MEMORY.md) is mirror.py.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import queue
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from console.hermes.mirror import HermesMirror, hermes_message

__all__ = ["MemconsoleProvider", "agent_name", "hermes_message", "register"]

log = logging.getLogger("memconsole.hermes")
CONFIG = "memconsole.json"
_STOP = object()


def agent_name(identity: str | None, home: Path) -> str:
    """The agent a Hermes home writes as: its profile; the main home ("default") is "hermes" (as
    `memconsole import hermes` names them, so both write into the same sessions)."""
    if identity and identity not in ("default", "hermes"):
        return identity
    return home.name if home.parent.name == "profiles" else "hermes"


def _run(coro: Any) -> Any:
    """Run a coroutine to its end from any thread (Hermes may call from inside an event loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}
    t = threading.Thread(target=lambda: box.update(v=asyncio.run(coro)))
    t.start()
    t.join()
    return box.get("v")


class MemconsoleProvider(HermesMirror):
    def __init__(self, config_dir: str | os.PathLike | None = None) -> None:
        self.dir = Path(config_dir) if config_dir else Path(__file__).resolve().parent
        self.config: dict[str, Any] = {}
        self.eng: Any = None
        self.server: Any = None
        self.session_id = ""
        self.home = Path(".")
        self.agent = "hermes"
        self.source = ""
        self.user = ""
        self.writes = True
        self.failures = 0
        self.last_error = ""
        self._high: dict[str, int] = {}  # session -> highest Hermes message id held
        self._known: set[str] = set()
        self._forgotten: set[str] = set()  # sessions a forget removed here: never re-created
        # (session, query) -> (forgets executed when it was built, block): a forget in between
        # drops it, so a block recalled before a forget never serves the forgotten text after it
        self._prefetched: dict[tuple[str, str], tuple[int, str]] = {}
        self._jobs: queue.Queue[Any] = queue.Queue()
        self._worker: threading.Thread | None = None
        self._schemas: list[dict[str, Any]] | None = None

    @property
    def name(self) -> str:
        return "memconsole"

    # -- availability and start -------------------------------------------------------------------
    def _load_config(self) -> dict[str, Any]:
        if not self.config:
            p = self.dir / CONFIG
            self.config = json.loads(p.read_text(encoding="utf-8")) if p.is_file() else {}
            for extra in self.config.get("paths") or []:
                if extra not in sys.path:
                    sys.path.append(extra)  # after Hermes' own packages: theirs win
        return self.config

    def is_available(self) -> bool:
        try:
            import importlib.util

            db = os.environ.get("MEMCONSOLE_DB") or self._load_config().get("db")
            return bool(db) and importlib.util.find_spec("engine") is not None
        except Exception as exc:
            self._failed("is_available", exc)
            return False

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        try:
            from console.mcp.server import Door, build
            from engine import open_engine

            cfg = self._load_config()
            self.home = Path(kwargs.get("hermes_home") or os.environ.get("HERMES_HOME") or ".")
            self.agent = cfg.get("agent") or agent_name(kwargs.get("agent_identity"), self.home)
            self.source = str(kwargs.get("platform") or "")
            self.user = str(kwargs.get("user_id") or "")
            self.writes = kwargs.get("agent_context", "primary") in ("", "primary")
            db = os.environ.get("MEMCONSOLE_DB") or cfg["db"]
            embedder = os.environ.get("MEMCONSOLE_EMBEDDER") or "default"
            self.eng = open_engine(
                db,
                label=cfg.get("actor") or f"hermes:{self.agent}",  # the OS user, as the Hermes agent
                load="background",
                embedder=None if embedder == "none" else embedder,
            )
            self.eng.as_agents_door()  # its background sync writes too, outside the door's calls
            self.server = build(Door(self.eng, self.eng.actor), self.eng.settings.mcp.max_text)
            self.session_id = session_id
            self._worker = threading.Thread(target=self._drain, name="memconsole-sync", daemon=True)
            self._worker.start()
            if self.writes and session_id:
                parent = str(kwargs.get("parent_session_id") or "")
                self._submit(lambda: self._ensure_session(session_id, parent))
        except Exception as exc:
            self._failed("initialize", exc)

    def system_prompt_block(self) -> str:
        if self.eng is None:
            return ""
        return (
            "Shared long-term memory (memconsole): recall, remember, reject, gate_pre/gate_post, "
            "flow_check and log_message are tools; relevant memory arrives before each turn."
        )

    # -- the turn ------------------------------------------------------------------------------------
    def prefetch(self, query: str, *, session_id: str = "") -> str:
        try:
            cached = self._prefetched.pop((session_id or self.session_id, query), None)
            if cached is not None and self.eng is not None and cached[0] == self.eng.forget.generation():
                return cached[1]
            return self._recall_block(query)
        except Exception as exc:
            self._failed("prefetch", exc)
            return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        key = (session_id or self.session_id, query)

        def build() -> None:
            gen = self.eng.forget.generation()  # read first: a forget while building invalidates it
            self._prefetched[key] = (gen, self._recall_block(query))

        self._submit(build)

    def _recall_block(self, query: str) -> str:
        """Recall for the query, then the critical rules and rejections, cut to the budget. Plain
        text: Hermes puts it inside its own <memory-context> fence."""
        if self.eng is None or not query.strip():
            return ""
        cfg = self.config
        budget = int(cfg.get("prefetch_chars") or 2400)
        hits = self.eng.search(
            query,
            k=int(cfg.get("recall_k") or 5),
            agent=None,
            record_access=False,
            door="hermes",
            for_agent=self.agent,
        )
        boot = self.eng.boot.context(self.agent)
        lines: list[str] = []
        crit = [r for r in boot.rules if r.status == "critical"]
        if crit:
            lines.append("Critical rules:")
            lines += [f"- {r.text}" for r in crit]
        if boot.rejections:
            lines.append("The user rejected:")
            lines += [f"- {r.content}" for r in boot.rejections]
        if hits.hits:
            lines.append("Recalled:")
            lines += [f"- [{h.id}] {h.content}" for h in hits.hits]
        out, used = [], 0
        for line in lines:
            line = line.replace("<", "‹").replace(">", "›")  # never a fence of its own
            if used + len(line) + 1 > budget:
                break
            out.append(line)
            used += len(line) + 1
        return "\n".join(out)

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        if not self.writes:
            return
        sid = session_id or self.session_id
        self._submit(lambda: self._mirror(sid, fallback=(user_content, assistant_content)))

    # -- session boundaries --------------------------------------------------------------------------
    def on_session_switch(
        self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False, **kwargs: Any
    ) -> None:
        old = self.session_id
        self.session_id = new_session_id
        if self.writes and new_session_id:
            parent = parent_session_id or ("" if reset else old)
            self._submit(
                lambda: self._ensure_session(new_session_id, parent if parent != new_session_id else "")
            )

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        sid = self.session_id
        if self.writes:
            self._submit(lambda: self._mirror(sid))
            self._submit(lambda: self._note(sid, "compressed its context", messages))
        return ""

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        sid = self.session_id
        if self.writes:
            self._submit(lambda: self._mirror(sid))
            self._submit(lambda: self._note(sid, "ended", messages))

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        if self.writes:
            self._submit(lambda: self._mirror_memory(action, target, content, metadata or {}))

    # -- tools (the MCP tools, same names and schemas) ----------------------------------------------
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """The MCP server's tools, same names and JSON schemas. Hermes routes by these names before
        initialize(), so they need no engine."""
        try:
            if self._schemas is None:
                server = self.server
                if server is None:
                    self._load_config()
                    from console.mcp.server import Door, build

                    server = build(Door(None, ""))
                self._schemas = [
                    {"name": t.name, "description": t.description or "", "parameters": t.input_schema}
                    for t in _run(server.list_tools())
                ]
            return list(self._schemas)
        except Exception as exc:
            self._failed("get_tool_schemas", exc)
            return []

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        try:
            if self.server is None:
                return json.dumps({"error": "memconsole is not initialized"})
            if not self.writes and tool_name in ("remember", "gate_post", "reject", "log_message"):
                return json.dumps({"error": "this agent context does not write to memory"})
            res = _run(self.server.call_tool(tool_name, dict(args or {})))
            return json.dumps(res.structured_content or {}, ensure_ascii=False)
        except Exception as exc:  # ToolError: a one-line message for the model
            return json.dumps({"error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__})

    def shutdown(self) -> None:
        try:
            if self._worker is not None:
                self._jobs.put(_STOP)
                self._worker.join(timeout=30)
                self._worker = None
            if self.eng is not None:
                self.eng.close()
                self.eng = None
        except Exception as exc:
            self._failed("shutdown", exc)

    def flush(self, timeout: float = 30) -> bool:
        """Wait until every queued write is done (tests, shutdown)."""
        done = threading.Event()
        self._submit(done.set)
        return done.wait(timeout)

    # -- the background worker -------------------------------------------------------------------------
    def _submit(self, job: Callable[[], Any]) -> None:
        if self.eng is None or self._worker is None:
            return
        self._jobs.put(job)

    def _drain(self) -> None:
        while True:
            job = self._jobs.get()
            if job is _STOP:
                return
            try:
                job()
            except Exception as exc:
                self._failed("background write", exc)

    def _failed(self, where: str, exc: BaseException) -> None:
        self.failures += 1
        self.last_error = f"{where}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        log.warning("memconsole provider %s", self.last_error)


def register(ctx: Any) -> None:
    """Hermes' plugin entry point."""
    ctx.register_memory_provider(MemconsoleProvider())
