"""`memconsole mcp --http`: the door assembled — the SDK's /mcp app behind the token gate, served
by uvicorn with the connection guard, Host/Origin checked against an allow-list on every address,
the token file re-read when it changes or on SIGHUP (which never stops the server)."""

from __future__ import annotations

import asyncio
import ipaddress
import signal
from dataclasses import dataclass
from typing import Any

from engine.config import McpSettings

from .auth import TokenSource
from .conn import (
    ACCEPT_BURST,
    connection_cap,
    guarded_protocol,
    loop_errors,
    quiet_logging,
    raise_descriptor_limit,
)
from .gate import TokenGate
from .server import Door, build

LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
LOOPBACK_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")


class AllowListError(ValueError):
    """A non-loopback address without a Host allow-list: the server does not start."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class AllowList:
    hosts: tuple[str, ...]
    origins: tuple[str, ...]


def allow_list(host: str, port: int, hosts: tuple[str, ...], origins: tuple[str, ...]) -> AllowList:
    """The Host and Origin values accepted. On loopback, the loopback names (and any configured);
    elsewhere only what is configured — none configured is refused (DNS rebinding would reach an
    open door otherwise)."""
    if is_loopback(host):
        return AllowList(LOOPBACK_HOSTS + hosts, LOOPBACK_ORIGINS + origins)
    if not hosts:
        raise AllowListError(
            f"--http {host}:{port} is not a loopback address: name the Host values agents use with"
            f" --allow-host (e.g. --allow-host mem.example.org:{port}) or [mcp] allowed_hosts"
        )
    return AllowList(hosts, origins)


def make_app(eng: Any, actor: str, tokens: TokenSource, limits: McpSettings, allowed: AllowList) -> Any:
    from mcp.server.transport_security import TransportSecuritySettings

    mcp = build(Door(eng, actor, tokens), limits.max_text)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(allowed.hosts),
        allowed_origins=list(allowed.origins),
    )
    inner = mcp.streamable_http_app(
        json_response=True,
        transport_security=security,
        max_request_body_size=limits.max_body,
        session_idle_timeout=limits.session_idle,
    )
    return TokenGate(inner, tokens, limits)


def serve_http(eng: Any, actor: str, host: str, port: int, tokens: TokenSource, allowed: AllowList) -> None:
    import uvicorn

    limits: McpSettings = eng.settings.mcp
    fd_limit = raise_descriptor_limit()
    cap = connection_cap(limits.max_connections, fd_limit)
    app = make_app(eng, actor, tokens, limits, allowed)
    quiet_logging()  # after the SDK installed its rich handler (see console/mcp_conn.py)
    cfg = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        log_config=None,
        lifespan="on",
        http=guarded_protocol(cap, limits.request_timeout),
        backlog=ACCEPT_BURST,
        timeout_keep_alive=5,
        limit_concurrency=None,  # the guard caps sockets; the gate caps calls per token
    )
    server = uvicorn.Server(cfg)
    # SIGHUP only flags a reload; its default action would end the process.
    previous = signal.signal(signal.SIGHUP, lambda _sig, _frame: tokens.request_reload())

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(loop_errors)
        await server.serve()

    try:
        asyncio.run(main())
    finally:
        signal.signal(signal.SIGHUP, previous)
