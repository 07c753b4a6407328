"""`memconsole serve`: the console in a browser, behind a login (textual-serve underneath).

What textual-serve gives: a page that draws a terminal (xterm.js) and a websocket; each websocket
connection starts its own console process and pipes keys in and frames out. What this adds:

- every route but the sign-in pages and the static files needs a live session cookie;
- the websocket also needs an Origin equal to this server's (no cross-site websocket hijack);
- each websocket's console process is started for the session's operator and role
  (console/shared/served.py variables), so it acts as that verified operator and no one else;
  a process is reachable only through the websocket that started it;
- signing out, the session's time running out, or its account being removed or changed
  (`serve-user remove|passwd|role`, seen within SWEEP_SECONDS or at the next request) closes that
  session's websockets, which stops their processes; a download is served only to the session
  whose process offered it;
- at most `max_consoles` console processes run at once (`[serve] max_consoles`): one more is
  refused with a one-line page, not started.

Signing in and out is signin.py.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
import ssl
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web
from textual_serve.app_service import AppService

from console.shared.served import served_environment
from engine.errors import InvalidInput

from . import pages
from .accounts import AccountsFile
from .sessions import LoginLimiter, Session, SessionStore
from .signin import LOGIN_COOKIE, SESSION_COOKIE, SignIn

__all__ = ["LOGIN_COOKIE", "SESSION_COOKIE", "ConsoleServer", "OperatorAppService", "ServeOptions"]

log = logging.getLogger("memconsole.serve")

SWEEP_SECONDS = 2.0


@dataclass(frozen=True)
class ServeOptions:
    db: str
    host: str
    port: int
    accounts: Path
    session_minutes: float = 480.0
    tls: ssl.SSLContext | None = None
    db_label: str = ""
    login_attempts: int = 5
    login_window: float = 60.0
    max_consoles: int = 8


class OperatorAppService(AppService):
    """One console process for one websocket, started as the session's operator."""

    def __init__(self, command: str, *, session: Session, **kwargs: Any) -> None:
        super().__init__(command, **kwargs)
        self.session_id = session.sid
        self.operator = session.operator

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        return served_environment(super()._build_environment(width, height), self.operator)


class ConsoleServer(SignIn):
    def __init__(self, opts: ServeOptions) -> None:
        scheme = "https" if opts.tls else "http"
        host = f"[{opts.host}]" if ":" in opts.host else opts.host
        command = shlex.join([sys.executable, "-m", "console.cli", "--db", opts.db])
        super().__init__(
            command,
            host=opts.host,
            port=opts.port,
            title="memconsole",
            public_url=f"{scheme}://{host}:{opts.port}",
        )
        self.opts = opts
        self.secure = opts.tls is not None
        self.accounts = AccountsFile(opts.accounts)
        self.sessions = SessionStore(opts.session_minutes)
        self.limiter = LoginLimiter(opts.login_attempts, opts.login_window)
        self.sockets: dict[str, set[web.WebSocketResponse]] = {}
        self._sweeper: asyncio.Task[None] | None = None
        self._accounts_seen: tuple[int, int, int] | None = None  # (inode, mtime_ns, size) checked

    # -- the aiohttp app ---------------------------------------------------------------------------------
    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._guard)
        app.add_routes(
            [
                web.get("/login", self.handle_login_form),
                web.post("/login", self.handle_login),
                web.get("/login/link/{token}", self.handle_link_form),
                web.post("/login/link", self.handle_link),
                web.get("/logout", self.handle_logout_form),
                web.post("/logout", self.handle_logout),
            ]
        )
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        public = request.path == "/login" or request.path.startswith(("/login/", "/static/"))
        if not public:
            session = self._session(request)
            if session is None:
                if request.path == "/":
                    raise web.HTTPFound("/login")
                raise web.HTTPUnauthorized(text="sign in first")
            if await self._end_outlived(session):
                if request.path == "/":
                    raise web.HTTPFound("/login")
                raise web.HTTPUnauthorized(text="your account changed; sign in again")
            request["session"] = session
        response: web.StreamResponse = await handler(request)
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "same-origin")  # no-referrer makes Origin "null"
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        if not request.path.startswith("/static/"):
            response.headers.setdefault("Cache-Control", "no-store")
        return response

    def _session(self, request: web.Request) -> Session | None:
        return self.sessions.get(request.cookies.get(SESSION_COOKIE))

    # -- the console --------------------------------------------------------------------------------------
    async def handle_download(self, request: web.Request) -> web.StreamResponse:
        try:
            meta = await self.download_manager.get_download_metadata(request.match_info["key"])
        except KeyError:
            raise web.HTTPNotFound() from None
        if getattr(meta.app_service, "session_id", None) != request["session"].sid:
            raise web.HTTPNotFound()  # another session's file: as if it did not exist
        return await super().handle_download(request)

    # -- how many consoles ----------------------------------------------------------------------------
    def consoles(self) -> int:
        return sum(len(s) for s in self.sockets.values())

    def _full(self) -> str:
        """The one-line refusal when no console may start now, else ""."""
        cap = self.opts.max_consoles
        if self.consoles() < cap:
            return ""
        return f"All {cap} browser consoles of this server are in use; close one or try again later."

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        full = self._full()
        if full:
            log.warning("console page refused to %s: %s", request["session"].operator.name, full)
            return web.Response(
                text=pages.message_page("Too many consoles", full), content_type="text/html", status=503
            )
        response: web.StreamResponse = await super().handle_index(request)
        return response

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        if not self._same_origin(request) or request.headers.get("Origin") is None:
            raise web.HTTPForbidden(text="websocket from another origin")
        session: Session = request["session"]
        full = self._full()
        if full:  # checked again here: the page may have been loaded while a console was free
            log.warning("console refused to %s: %s", session.operator.name, full)
            raise web.HTTPServiceUnavailable(text=full)
        websocket = web.WebSocketResponse(heartbeat=15)
        width = _int(request.query.get("width", "80"), 80)
        height = _int(request.query.get("height", "24"), 24)
        service: OperatorAppService | None = None
        self.sockets.setdefault(session.sid, set()).add(websocket)
        try:
            await websocket.prepare(request)
            log.info("console started for %s (%s)", session.operator.name, session.operator.role)
            service = OperatorAppService(
                self.command,
                session=session,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=websocket.close,
                download_manager=self.download_manager,
                debug=self.debug,
            )
            await service.start(width, height)
            await self._process_messages(websocket, service)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:  # one line in the server's log; the browser sees the socket close
            log.error("console for %s failed: %s", session.operator.name, error)
        finally:
            self.sockets.get(session.sid, set()).discard(websocket)
            if service is not None:
                await service.stop()
        return websocket

    async def _close_sockets(self, sid: str) -> None:
        for ws in list(self.sockets.pop(sid, set())):
            await ws.close(message=b"signed out")

    async def _end_outlived(self, session: Session | None = None) -> bool:
        """End the sessions whose account was removed or changed since they signed in (the file
        is re-read only when it changed); True when `session` was one of them."""
        try:
            st = self.opts.accounts.stat()
            seen: tuple[int, int, int] | None = (st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            seen = None  # no file: no account, every session has outlived its account
        if seen is not None and seen == self._accounts_seen:
            return False
        try:
            stamps = self.accounts.stamps() if seen is not None else {}
        except InvalidInput as e:  # an unsafe or broken file: nobody new signs in; say so once
            log.warning("accounts file not usable, sessions kept as they are: %s", e)
            self._accounts_seen = seen
            return False
        self._accounts_seen = seen
        ended = False
        for s in self.sessions.outlived(stamps):
            log.info("account of %s removed or changed: its session ends", s.operator.name)
            await self._close_sockets(s.sid)
            ended = ended or (session is not None and s.sid == session.sid)
        return ended

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_SECONDS)
            for s in self.sessions.expired():
                log.info("session of %s expired", s.operator.name)
                await self._close_sockets(s.sid)
            try:
                await self._end_outlived()
            except OSError as e:
                log.warning("accounts file not checked: %s", e)

    async def on_startup(self, app: web.Application) -> None:
        self._sweeper = asyncio.create_task(self._sweep())
        print(f"memconsole serve: {self.public_url}/ (database {self.opts.db})", flush=True)

    async def on_shutdown(self, app: web.Application) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        for sid in list(self.sockets):
            await self._close_sockets(sid)

    def run(self) -> None:
        """Serve until interrupted (SIGINT/SIGTERM)."""
        import signal

        self.initialize_logging()
        logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.request_exit)
        web.run_app(
            self._make_app(),
            host=self.opts.host,
            port=self.opts.port,
            ssl_context=self.opts.tls,
            handle_signals=False,
            loop=loop,
            print=lambda *a: None,
        )


def _int(value: str, default: int) -> int:
    try:
        return max(10, min(int(value), 1000))
    except ValueError:
        return default
