"""`memconsole mcp`: the engine as a Model Context Protocol server (official `mcp` SDK).

One engine (and one loaded embedding model) serves every call for the server's life. Transports:
stdio for local agents, streamable HTTP at /mcp behind a bearer token (console/mcp_auth.py) for
remote ones.

Identity. The engine records its actor on every mutation. The SDK runs each tool call in a
worker thread, concurrently; each call runs inside `eng.acting_as(caller)` (a context variable),
so its writes are audited under its caller and never under another's, and calls from different
tokens run at the same time: there is no lock around a call (the store keeps its own locking).
A token acts for the agents the token file names (default: its own name); a write, rejection or
log line for another agent is refused, and the refusal is audited (action `refused`).

Limits. Every text argument is at most `[mcp] max_text` characters (a recall of megabytes is
refused in one line); HTTP-level limits (sessions, calls in flight, body size) are the gate's
(console/mcp_gate.py), sockets and timeouts the connection guard's (console/mcp_conn.py).

Errors. Engine errors and bad arguments become MCP tool errors with a one-line message; nothing
a caller sends stops the server. A write is committed before its result is sent, and a worker
thread is never abandoned on cancel, so a client that disconnects mid-call loses nothing that was
acknowledged (and a write it did not see acknowledged is either whole or absent).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import ToolAnnotations
from pydantic import ValidationError

from engine.errors import EngineError, cut, cut_line

from . import results as R
from .auth import Caller, TokenSource, bearer

log = logging.getLogger("memconsole.mcp")
T = TypeVar("T")

Kind = Literal["episodic", "semantic", "procedural"]
Role = Literal["user", "assistant", "system", "tool"]
Outcome = Literal["pass", "fail"]
Tier = Literal["core", "active", "archived"]

READ = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
WRITE_TOOLS = ("remember", "gate_post", "reject", "log_message")
READ_YIELD_MAX_S = 30.0  # a read-only call waits for writers at most this long, then runs anyway


def one_line(text: str) -> str:
    line = next((s.strip() for s in str(text).splitlines() if s.strip()), "")
    return cut_line(line, 500) or "error"


class Door:
    """The engine behind the tools: who is calling, and their calls under their own name."""

    def __init__(self, eng: Any, actor: str, tokens: TokenSource | None = None) -> None:
        self.eng = eng
        self.default = Caller(actor, agents=frozenset(["*"]))  # stdio: the local user, any agent
        self.tokens = tokens
        # Writers first: a read-only token's call starts only when no write is running or waiting,
        # so a writer waits at most for the one read-only call already running (per token: 1).
        self._writes = 0
        self._no_writes = threading.Condition()
        # Calls inside the engine at once: no more than its pool has connections. Past the pool a
        # call waited in psycopg_pool and failed after 30 s ("couldn't get a connection") when a
        # fleet's calls queued longer than that; here the queue has no deadline (issue #24).
        self.slots = engine_slots(eng)
        self._in_engine = threading.BoundedSemaphore(self.slots)

    def caller(self, ctx: Context | None) -> Caller:
        if self.tokens is None:
            return self.default
        token = bearer(ctx.headers if ctx is not None else None)
        found = self.tokens.lookup(token) if token else None
        if found is None:  # the HTTP gate already refused it; never fall back to a default
            raise ToolError("this call carries no valid token")
        return found

    def view(self, fn: Callable[[Any], T]) -> T:
        """A read that writes nothing (resources): no identity needed, the gate already let it in."""
        try:
            with self._in_engine:
                return fn(self.eng)
        except EngineError as exc:
            raise ToolError(one_line(str(exc)) or type(exc).__name__) from None

    def run(
        self,
        ctx: Context | None,
        fn: Callable[[Any, Caller], T],
        *,
        write: bool = False,
        tool: str = "",
        agent: str | None = None,
    ) -> T:
        who = self.caller(ctx)
        if write and who.read_only:
            raise ToolError(f"the token of {cut(who.actor)} is read-only: it may not write")
        with self._turn(who, write), self._in_engine, self.eng.acting_as(who.actor):
            try:
                if write and not who.may_act_for(agent):
                    self.refuse(who, tool, agent or "")
                return fn(self.eng, who)
            except EngineError as exc:
                raise ToolError(one_line(str(exc)) or type(exc).__name__) from None
            except (ValueError, TypeError, OverflowError) as exc:
                raise ToolError(one_line(f"bad argument: {exc}")) from None

    @contextmanager
    def _turn(self, who: Caller, write: bool) -> Iterator[None]:
        if who.read_only:
            with self._no_writes:
                self._no_writes.wait_for(lambda: self._writes == 0, timeout=READ_YIELD_MAX_S)
            yield
            return
        if write:
            with self._no_writes:
                self._writes += 1
        try:
            yield
        finally:
            if write:
                with self._no_writes:
                    self._writes -= 1
                    self._no_writes.notify_all()

    def refuse(self, who: Caller, tool: str, agent: str) -> None:
        """Audit the attempt (under the caller, action `refused`) and refuse it in one line."""
        why = f"the token of {who.actor!r} may not act for agent {agent!r}"
        self.eng.audit.refused(tool, target_kind="agent", target_id=agent, reason=f"mcp {tool}: {why}")
        raise ToolError(f"{why} (token file: agents=...)")


def engine_slots(eng: Any) -> int:
    """`[mcp] engine_calls`, or (0) the size of the engine's connection pool ([postgres]
    pool_size; SQLite has no pool: the same number bounds its threads)."""
    settings = getattr(eng, "settings", None)
    if settings is None:  # a door built only to list its tools (the Hermes provider's schema)
        return 1
    return max(1, int(settings.mcp.engine_calls or settings.postgres.pool_size))


def check_sizes(name: str, arguments: dict[str, Any], limit: int) -> None:
    """Every text argument (and the metadata as JSON) within `limit` characters, else one line."""
    for key, value in arguments.items():
        size = len(value) if isinstance(value, str) else 0
        if isinstance(value, dict | list):
            size = len(json.dumps(value, ensure_ascii=False, default=str))
        if size > limit:
            raise ToolError(f"{name}: {key} is {size:,} characters; the limit is {limit:,} ([mcp] max_text)")


class Server(MCPServer):
    """MCPServer whose argument errors read as one line ("recall: k: Input should be ...") and
    whose text arguments are bounded (`max_text` characters each)."""

    max_text = 32_000

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        check_sizes(name, arguments or {}, self.max_text)
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise  # a crash: its message is one line already; the SDK logs the traceback
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                parts = [
                    f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in cause.errors()
                ]
                raise ToolError(one_line(f"{name}: " + "; ".join(parts))) from None
            raise ToolError(one_line(str(exc))) from None


def build(door: Door, max_text: int = Server.max_text) -> Server:
    mcp = Server(
        "memconsole",
        instructions=(
            "Shared long-term memory. `boot` at start; `recall` before answering from memory; "
            "`remember` facts, decisions and preferences; `gate_pre` before a consequential action "
            "and `gate_post` after it; `reject` what the user refused; `log_message` the turns."
        ),
        log_level="WARNING",
    )
    mcp.max_text = max_text

    @mcp.tool(annotations=WRITE)
    def remember(
        content: str,
        ctx: Context,
        kind: Kind = "semantic",
        category: str = "general",
        agent: str = "",
        user: str = "",
        importance: float = 0.5,
        metadata: dict[str, Any] | None = None,
    ) -> R.Remembered:
        """Store a memory. A near-duplicate of an existing one reinforces it instead (same id back)."""

        def fn(eng: Any, who: Caller) -> R.Remembered:
            res = eng.memories.add_ex(
                content, kind=kind, category=category, agent=agent, user=user, importance=importance,
                metadata=metadata, reason=f"mcp remember ({who.actor})",
            )  # fmt: skip
            return R.Remembered.of(res)

        return door.run(ctx, fn, write=True, tool="remember", agent=agent)

    @mcp.tool(annotations=READ)
    def recall(
        query: str,
        ctx: Context,
        k: int = 10,
        agent: str | None = None,
        user: str | None = None,
        kind: Kind | None = None,
        category: str | None = None,
        tier: Tier | None = None,
    ) -> R.Recalled:
        """Hybrid search (keywords + meaning). Each hit carries its score breakdown. Hits count as
        the agent's access (they are reinforced), except for a read-only token."""
        if not 1 <= k <= 200:
            raise ToolError("k must be between 1 and 200")

        def fn(eng: Any, who: Caller) -> R.Recalled:
            res = eng.search(
                query, k=k, agent=agent, user=user, kind=kind, category=category, tier=tier,
                record_access=not who.read_only, door="mcp", for_agent=agent or who.actor,
            )  # fmt: skip
            return R.Recalled.of(res)

        return door.run(ctx, fn)

    @mcp.tool(annotations=READ)
    def explain(
        query: str, memory_id: int, ctx: Context, k: int = 10, agent: str | None = None
    ) -> R.Explained:
        """Why a memory is (or is not) in the top k for a query: its ranks, scores and the bar."""
        return door.run(ctx, lambda eng, _w: R.Explained.of(eng.explain(query, memory_id, k=k, agent=agent)))

    @mcp.tool(annotations=READ)
    def boot(ctx: Context, agent: str | None = None) -> R.Booted:
        """The fenced boot context an agent loads at start: rejections, decisions, tasks, top rules."""
        return door.run(ctx, lambda eng, _w: R.Booted.of(eng.boot.context(agent or None)))

    @mcp.tool(annotations=READ)
    def gate_pre(text: str, ctx: Context, agent: str | None = None) -> R.GateChecked:
        """Before acting on `text`: matching flows, rejections, open state and critical rules."""
        return door.run(ctx, lambda eng, _w: R.GateChecked.of(eng.gates.pre(text, agent=agent or None)))

    @mcp.tool(annotations=WRITE)
    def gate_post(
        outcome: Outcome,
        summary: str,
        ctx: Context,
        agent: str = "",
        flow: str | None = None,
        note: str = "",
    ) -> R.GateRecorded:
        """After acting: how it went (a flow run when `flow` is named, and a state entry)."""

        def fn(eng: Any, _w: Caller) -> R.GateRecorded:
            return R.GateRecorded.of(eng.gates.post(outcome, summary, agent=agent, flow=flow, note=note))

        return door.run(ctx, fn, write=True, tool="gate_post", agent=agent)

    @mcp.tool(annotations=READ)
    def flow_check(text: str, ctx: Context, agent: str | None = None, limit: int = 5) -> R.FlowsChecked:
        """Flows (procedures) that apply to an intended action, best first."""
        if not 1 <= limit <= 100:
            raise ToolError("limit must be between 1 and 100")

        def fn(eng: Any, _w: Caller) -> R.FlowsChecked:
            found = eng.flows.check(text, agent=agent or None, limit=limit)
            return R.FlowsChecked(text=text, matches=[R.FlowMatchOut.of(m) for m in found])

        return door.run(ctx, fn)

    @mcp.tool(annotations=WRITE)
    def reject(
        text: str, ctx: Context, agent: str = "", user: str = "", domain: str = "", reason: str = ""
    ) -> R.Rejected:
        """The user said no to something: a pinned `rejected` memory and a critical rule."""

        def fn(eng: Any, _w: Caller) -> R.Rejected:
            return R.Rejected.of(eng.rules.reject(text, agent=agent, user=user, domain=domain, reason=reason))

        return door.run(ctx, fn, write=True, tool="reject", agent=agent)

    @mcp.tool(annotations=WRITE)
    def log_message(
        session_id: str,
        role: Role,
        content: str,
        ctx: Context,
        agent: str = "",
        user: str = "",
        source: str = "mcp",
        title: str = "",
    ) -> R.Logged:
        """Append a message to a session's episodic log; the session is created on first use."""

        def fn(eng: Any, who: Caller) -> R.Logged:
            owner = eng.sessions.agent_of(session_id)  # an existing session: its agent is the one acted for
            if owner and not who.may_act_for(owner):
                door.refuse(who, "log_message", owner)
            return log_to(eng, session_id, role, content, agent, user, source, title)

        return door.run(ctx, fn, write=True, tool="log_message", agent=agent)

    @mcp.resource("memconsole://boot", mime_type="text/plain", description="Boot context (all agents)")
    def boot_all() -> str:
        return str(door.view(lambda eng: eng.boot.context(None).text))

    @mcp.resource("memconsole://boot/{agent}", mime_type="text/plain", description="Boot context of an agent")
    def boot_agent(agent: str) -> str:
        return str(door.view(lambda eng: eng.boot.context(agent).text))

    @mcp.resource("memconsole://rules", mime_type="application/json", description="Critical and active rules")
    def rules() -> str:
        def fn(eng: Any) -> str:
            found = eng.rules.list(status=("critical", "active"), limit=500)
            return json.dumps([R.RuleOut.of(r).model_dump() for r in found], ensure_ascii=False)

        return door.view(fn)

    return mcp


def log_to(
    eng: Any, session_id: str, role: str, content: str, agent: str, user: str, source: str, title: str
) -> R.Logged:
    """Append one message, opening the session first if this database has never seen it."""
    from engine.errors import InvalidInput, NotFound

    created = False
    try:
        mid = eng.sessions.add_message(session_id, role, content)
    except NotFound:
        try:
            eng.sessions.add(session_id, agent=agent, user=user, source=source, title=title)
            created = True
        except InvalidInput as exc:
            if "already exists" not in str(exc):  # another process opened it first: fine
                raise
        mid = eng.sessions.add_message(session_id, role, content)
    return R.Logged(session_id=session_id, message_id=mid, created_session=created)


def serve_stdio(eng: Any, actor: str) -> None:
    build(Door(eng, actor), eng.settings.mcp.max_text).run("stdio")
