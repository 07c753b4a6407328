"""`memconsole mcp`: the engine as a Model Context Protocol server (official `mcp` SDK).

One engine (and one loaded embedding model) serves every call for the server's life. Transports:
stdio for local agents, streamable HTTP at /mcp behind a bearer token (console/mcp_auth.py) for
remote ones.

Identity. The engine records `ctx.actor` on every mutation. The SDK runs each tool call in a
worker thread, concurrently, so the actor is set per call under one lock and restored after:
a call's writes are audited under its caller and never under another's. The lock costs almost
nothing: the engine's store already serializes every statement on its one connection.

Errors. Engine errors and bad arguments become MCP tool errors with a one-line message; nothing
a caller sends stops the server. A write is committed before its result is sent, and a worker
thread is never abandoned on cancel, so a client that disconnects mid-call loses nothing that was
acknowledged (and a write it did not see acknowledged is either whole or absent).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import ToolAnnotations
from pydantic import ValidationError

from engine.errors import EngineError, cut, cut_line

from . import mcp_results as R
from .mcp_auth import BearerGate, Caller, TokenMap, bearer

log = logging.getLogger("memconsole.mcp")
T = TypeVar("T")

Kind = Literal["episodic", "semantic", "procedural"]
Role = Literal["user", "assistant", "system", "tool"]
Outcome = Literal["pass", "fail"]
Tier = Literal["core", "active", "archived"]

READ = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
WRITE_TOOLS = ("remember", "gate_post", "reject", "log_message")


def one_line(text: str) -> str:
    line = next((s.strip() for s in str(text).splitlines() if s.strip()), "")
    return cut_line(line, 500) or "error"


class Door:
    """The engine behind the tools: who is calling, and their calls under their own name."""

    def __init__(self, eng: Any, actor: str, tokens: TokenMap | None = None) -> None:
        self.eng = eng
        self.default = Caller(actor)
        self.tokens = tokens
        self._lock = threading.Lock()

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
        with self._lock:
            try:
                return fn(self.eng)
            except EngineError as exc:
                raise ToolError(one_line(str(exc)) or type(exc).__name__) from None

    def run(self, ctx: Context | None, fn: Callable[[Any, Caller], T], *, write: bool = False) -> T:
        who = self.caller(ctx)
        if write and who.read_only:
            raise ToolError(f"the token of {cut(who.actor)} is read-only: it may not write")
        with self._lock:
            before = self.eng.actor
            self.eng.actor = who.actor
            try:
                return fn(self.eng, who)
            except EngineError as exc:
                raise ToolError(one_line(str(exc)) or type(exc).__name__) from None
            except (ValueError, TypeError, OverflowError) as exc:
                raise ToolError(one_line(f"bad argument: {exc}")) from None
            finally:
                self.eng.actor = before


class Server(MCPServer):
    """MCPServer whose argument errors read as one line ("recall: k: Input should be ...")."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
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


def build(door: Door) -> Server:
    mcp = Server(
        "memconsole",
        instructions=(
            "Shared long-term memory. `boot` at start; `recall` before answering from memory; "
            "`remember` facts, decisions and preferences; `gate_pre` before a consequential action "
            "and `gate_post` after it; `reject` what the user refused; `log_message` the turns."
        ),
        log_level="WARNING",
    )

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

        return door.run(ctx, fn, write=True)

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
                record_access=not who.read_only,
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

        return door.run(ctx, fn, write=True)

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

        return door.run(ctx, fn, write=True)

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
        return door.run(
            ctx,
            lambda eng, _w: log_to(eng, session_id, role, content, agent, user, source, title),
            write=True,
        )

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
    build(Door(eng, actor)).run("stdio")


def serve_http(eng: Any, actor: str, host: str, port: int, tokens: TokenMap) -> None:
    import uvicorn

    mcp = build(Door(eng, actor, tokens))
    app = BearerGate(mcp.streamable_http_app(host=host, json_response=True), tokens)
    cfg = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    uvicorn.Server(cfg).run()
