"""`memconsole serve`'s sign-in and sign-out (console/serve/server.py): the login form with its
double-submit CSRF token, the password check behind a rate limit, one-time sign-in links, the
session cookie set on success and cleared on sign-out (which closes that session's consoles)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from aiohttp import web
from textual_serve.server import Server

from console.shared.served import ServedOperator

from . import pages
from .accounts import AccountsFile
from .sessions import LoginLimiter, Session, SessionStore

if TYPE_CHECKING:
    from .server import ServeOptions

log = logging.getLogger("memconsole.serve")

SESSION_COOKIE = "memconsole_session"
LOGIN_COOKIE = "memconsole_login"  # the double-submit CSRF token of the sign-in form


class SignIn(Server):
    """The sign-in routes of ConsoleServer (server.py), which sets what is declared here."""

    opts: ServeOptions
    secure: bool
    accounts: AccountsFile
    sessions: SessionStore
    limiter: LoginLimiter
    _accounts_seen: tuple[int, int, int] | None

    if TYPE_CHECKING:  # the server's own (server.py)

        async def _close_sockets(self, sid: str) -> None: ...

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
