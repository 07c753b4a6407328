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
from textual_serve.server import Server

from console.shared.served import ServedOperator, served_environment
from engine.errors import InvalidInput

from . import pages
from .accounts import AccountsFile
from .sessions import LoginLimiter, Session, SessionStore

log = logging.getLogger("memconsole.serve")

SESSION_COOKIE = "memconsole_session"
LOGIN_COOKIE = "memconsole_login"  # the double-submit CSRF token of the sign-in form
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


class ConsoleServer(Server):
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

    def _same_origin(self, request: web.Request) -> bool:
        """A request a browser sent from one of this server's own pages (a missing Origin is a
        non-browser client, which carries no victim's cookies)."""
        origin = request.headers.get("Origin")
        scheme = "https" if self.secure else "http"
        return origin is None or origin == f"{scheme}://{request.host}"

    def _cookie(self, response: web.StreamResponse, name: str, value: str, max_age: int | None) -> None:
        response.set_cookie(
            name, value, max_age=max_age, path="/", httponly=True, samesite="Strict", secure=self.secure
        )

    # -- signing in ----------------------------------------------------------------------------------------
    def _login_form(
        self, request: web.Request, error: str = "", name: str = "", status: int = 200
    ) -> web.Response:
        csrf = self._form_token(request)
        resp = web.Response(
            text=pages.login_page(csrf, self.opts.db_label or self.opts.db, error, name),
            content_type="text/html",
            status=status,
        )
        self._cookie(resp, LOGIN_COOKIE, csrf, 600)
        return resp

    @staticmethod
    def _form_token(request: web.Request) -> str:
        """The browser's sign-in form token: kept across page loads (a second tab, a reload or a
        favicon fetch must not invalidate a form already shown), new when it has none."""
        import secrets

        kept = request.cookies.get(LOGIN_COOKIE, "")
        return (
            kept
            if 20 <= len(kept) <= 64 and kept.replace("-", "").replace("_", "").isalnum()
            else (secrets.token_urlsafe(24))
        )

    async def handle_login_form(self, request: web.Request) -> web.Response:
        return self._login_form(request)

    def _csrf_ok(self, request: web.Request, form: Any) -> bool:
        import hmac

        sent, kept = str(form.get("csrf", "")), request.cookies.get(LOGIN_COOKIE, "")
        if not (kept and hmac.compare_digest(sent, kept)):
            log.warning(
                "sign-in form refused: its token does not match the browser's (from %s)", request.remote
            )
            return False
        if not self._same_origin(request):
            origin = request.headers.get("Origin")
            log.warning("sign-in form refused: posted from origin %r, not this server's", origin)
            return False
        return True

    def _client(self, request: web.Request) -> str:
        return f"ip:{request.remote or '?'}"

    async def handle_login(self, request: web.Request) -> web.Response:
        form = await request.post()
        name = str(form.get("name", "")).strip().lower()[:64]
        if not self._csrf_ok(request, form):
            return self._login_form(request, "The sign-in form expired; try again.", name, status=403)
        keys = (self._client(request), f"name:{name}")
        wait = self.limiter.blocked(*keys)
        if wait > 0:
            log.warning("login rate-limited for %r from %s", name, request.remote)
            return self._login_form(
                request, f"Too many failed sign-ins; wait {wait:.0f} s.", name, status=429
            )
        password = str(form.get("password", ""))
        account = await asyncio.to_thread(self.accounts.verify, name, password)
        if account is None:
            self.limiter.failed(*keys)
            log.warning("failed login for %r from %s", name, request.remote)
            return self._login_form(request, "Unknown operator or wrong password.", name, status=401)
        self.limiter.succeeded(*keys)
        return self._signed_in(ServedOperator(account.name, account.role), account.stamp)

    def _signed_in(self, operator: ServedOperator, stamp: str) -> web.Response:
        session = self.sessions.open(operator, stamp)
        # The file may have changed while the password was checked: the next look re-reads it.
        self._accounts_seen = None
        log.info("signed in: %s (%s)", operator.name, operator.role)
        resp = web.HTTPFound("/")
        self._cookie(resp, SESSION_COOKIE, session.sid, int(self.opts.session_minutes * 60))
        resp.del_cookie(LOGIN_COOKIE, path="/")
        return resp

    async def handle_link_form(self, request: web.Request) -> web.Response:
        # A GET never spends the link (a link preview or prefetch would); the button POSTs it.
        csrf = self._form_token(request)
        resp = web.Response(text=pages.link_page(csrf, request.match_info["token"]), content_type="text/html")
        self._cookie(resp, LOGIN_COOKIE, csrf, 600)
        return resp

    async def handle_link(self, request: web.Request) -> web.Response:
        form = await request.post()
        if not self._csrf_ok(request, form):
            return self._login_form(request, "The sign-in form expired; try again.", status=403)
        keys = (self._client(request),)
        if self.limiter.blocked(*keys) > 0:
            return self._login_form(request, "Too many failed sign-ins; wait a minute.", status=429)
        account = await asyncio.to_thread(self.accounts.spend_link, str(form.get("token", "")))
        if account is None:
            self.limiter.failed(*keys)
            return self._login_form(request, "That sign-in link is unknown, used or expired.", status=401)
        return self._signed_in(ServedOperator(account.name, account.role), account.stamp)

    async def handle_logout_form(self, request: web.Request) -> web.Response:
        session: Session = request["session"]
        html = (
            "<form method='post' action='/logout'>"
            f"<input type='hidden' name='csrf' value='{session.csrf}'>"
            "<button type='submit' id='sign-in'>Sign out</button></form>"
        )
        return web.Response(text=html, content_type="text/html")

    async def handle_logout(self, request: web.Request) -> web.Response:
        import hmac

        session: Session = request["session"]
        form = await request.post()
        if not (hmac.compare_digest(str(form.get("csrf", "")), session.csrf) and self._same_origin(request)):
            raise web.HTTPForbidden(text="bad sign-out form")
        self.sessions.close(session.sid)
        await self._close_sockets(session.sid)
        resp = web.Response(
            text=pages.message_page("Signed out", "Your console was closed."), content_type="text/html"
        )
        resp.del_cookie(SESSION_COOKIE, path="/")
        return resp

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
