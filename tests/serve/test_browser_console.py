"""The console in a browser, for real: `memconsole serve` on a free loopback port over a demo
database, driven by headless Chromium over the DevTools protocol. Alice (curator) signs in, switches
panes, runs a search and approves a proposal: the audit row names alice. Bob (viewer) signs in in
another browser context (own cookies, own console process) and presses the same keys: refused,
audited as refused under bob, the proposal stays pending.

Screenshots land in the test's tmp dir (and in $MEMCONSOLE_SHOTS when set, to look at)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from tests.serve.cdp import chromium, chromium_binary

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = chromium_binary()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium on PATH (Debian: apt-get install -y chromium; `make install` does it)",
)

PASSWORDS = {"alice": "alice-password-1", "bob": "bob-password-12"}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(ROOT), MEMCONSOLE_EMBEDDER="hash", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.pop("MEMCONSOLE_OPERATOR", None)
    env.pop("MEMCONSOLE_ROLE", None)
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A demo database, two accounts, and `memconsole serve` on it: yields (url, db)."""
    from console.serve.accounts import AccountsFile, accounts_path_for
    from engine import HashEmbedder, open_engine
    from engine.demo.build import write_demo

    d = tmp_path_factory.mktemp("serve")
    db = d / "demo.db"
    with open_engine(db, embedder=HashEmbedder()) as eng:  # what `memconsole demo` writes
        write_demo(eng)
    accounts = AccountsFile(accounts_path_for(db))
    accounts.add("alice", "curator", PASSWORDS["alice"])
    accounts.add("bob", "viewer", PASSWORDS["bob"])
    assert (accounts.path.stat().st_mode & 0o777) == 0o600
    port = _free_port()
    log = open(d / "serve.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "console.cli",
            "--db",
            str(db),
            "serve",
            "--bind",
            f"127.0.0.1:{port}",
            "--insecure-http",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=_env(),
    )
    end = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if time.monotonic() > end or proc.poll() is not None:
                raise RuntimeError((d / "serve.log").read_text()) from None
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}", db
    proc.terminate()
    proc.wait(10)
    log.close()


def _audit(db: Path, actor: str) -> list:
    from engine import open_engine

    with open_engine(db, embedder=None) as eng:
        return eng.audit.log(actor=actor, limit=50)


def _pending(db: Path) -> set[int]:
    from engine import open_engine

    with open_engine(db, embedder=None) as eng:
        return {r.proposal.id for r in eng.curator.rows(status="pending")}


async def _wait_until(check, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if await asyncio.to_thread(check):
            return True
        await asyncio.sleep(0.25)
    return False


def _shots(tmp_path: Path) -> Path:
    return Path(os.environ.get("MEMCONSOLE_SHOTS") or tmp_path)


async def _sign_in(page, url: str, name: str) -> None:
    await page.goto(f"{url}/login")
    await page.eval(
        f"document.getElementById('name').value = {name!r};"
        f"document.getElementById('password').value = {PASSWORDS[name]!r};"
        "document.getElementById('password').focus(); true"
    )
    await page.press("enter")  # submits the form, as a person signing in does
    # The console page: the terminal draws once its process sends the first frame.
    await page.wait_for("document.body && document.body.classList.contains('-first-byte')", 25)
    await page.eval("document.querySelector('.xterm-helper-textarea').focus(); true")
    await asyncio.sleep(0.5)  # the console's first frame


async def test_browser_login_search_approve_and_viewer_refused(served, tmp_path):
    url, db = served
    shots = _shots(tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    before = _pending(db)
    assert before, "the demo has pending proposals"
    assert CHROMIUM is not None
    async with chromium(CHROMIUM) as browser:
        alice = await browser.new_page()
        await alice.record_terminal()
        await alice.goto(f"{url}/")  # no session: the sign-in page
        assert await alice.eval("location.pathname") == "/login"
        await alice.screenshot(shots / "0-login.png")
        await _sign_in(alice, url, "alice")
        assert await alice.eval("location.pathname") == "/"
        await alice.screenshot(shots / "1-alice-sessions.png")

        await alice.screen_shows("Sessions")
        await alice.clear_screen()
        await alice.press("2")  # Search
        await alice.screen_shows("any category")  # the Search pane's filters are drawn
        await alice.press("/")
        await alice.type("deploy")
        await alice.press("enter")
        await alice.screen_shows("hits")  # "25 hits · hybrid": the search ran in the Search pane
        await asyncio.sleep(0.5)
        await alice.screenshot(shots / "2-alice-search.png")

        await alice.press("escape", "5")  # Curator

        def approved() -> bool:
            return any(e.target_kind == "proposal" for e in _audit(db, "alice"))

        # `a` asks first (the dialog), `y` confirms; pressed again if the pane was still loading.
        ok = False
        for attempt in range(8):
            await alice.press("a")
            await asyncio.sleep(0.8)  # the dialog ignores keys for its first 0.4 s
            if attempt == 0:
                await alice.screenshot(shots / "3-alice-confirm.png")
            await alice.press("y")
            if ok := await _wait_until(approved, 2.0):
                break
        await alice.screenshot(shots / "4-alice-approved.png")
        assert ok, f"no audit row by alice; screenshots in {shots}"
        rows = [e for e in _audit(db, "alice") if e.target_kind == "proposal"]
        assert rows[0].actor == "alice" and rows[0].action.startswith("proposal")
        decided = before - _pending(db)
        assert decided, "the approval changed no proposal"

        # Bob, a viewer, in his own browser context (own cookies -> own session -> own process).
        bob = await browser.new_page()
        await bob.record_terminal()
        await _sign_in(bob, url, "bob")
        pending_before_bob = _pending(db)
        await bob.press("5")

        def refused() -> bool:
            return any(e.action == "refused" for e in _audit(db, "bob"))

        ok = False
        for _ in range(8):
            await bob.press("a")
            await asyncio.sleep(0.5)
            await bob.press("y")
            if ok := await _wait_until(refused, 2.0):
                break
        await bob.screenshot(shots / "5-bob-refused.png")
        assert ok, f"bob's refusal was not audited; screenshots in {shots}"
        assert _pending(db) == pending_before_bob, "a viewer's key approved a proposal"
        assert not [e for e in _audit(db, "bob") if e.action != "refused"]


async def test_login_door(served):
    """What a browser cannot be tricked past: no session -> no console and no websocket; a form
    without its CSRF token, a wrong password and a websocket from another origin are refused;
    failed sign-ins are rate limited; the session cookie is HttpOnly and SameSite=Strict."""
    url, _db = served
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        async with http.get(f"{url}/", allow_redirects=False) as r:
            assert r.status == 302 and r.headers["Location"] == "/login"
        async with http.get(f"{url}/ws") as r:
            assert r.status == 401
        # No CSRF cookie/token: refused before the password is even checked.
        async with http.post(f"{url}/login", data={"name": "alice", "password": PASSWORDS["alice"]}) as r:
            assert r.status == 403

    async def form(http: aiohttp.ClientSession) -> str:
        async with http.get(f"{url}/login") as r:
            return r.cookies["memconsole_login"].value

    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        token = await form(http)
        data = {"csrf": token, "name": "alice", "password": PASSWORDS["alice"]}
        async with http.post(f"{url}/login", data=data, headers={"Origin": "http://evil.example"}) as r:
            assert r.status == 403  # a cross-site form post
        async with http.post(f"{url}/login", data=data, allow_redirects=False) as r:
            assert r.status == 302
            cookie = r.headers.getall("Set-Cookie")
            session = next(c for c in cookie if c.startswith("memconsole_session="))
            assert "HttpOnly" in session and "SameSite=Strict" in session and "Max-Age" in session
        async with http.get(f"{url}/", allow_redirects=False) as r:
            assert r.status == 200
        # Signed in, but the websocket must come from this server's own page.
        with pytest.raises(aiohttp.WSServerHandshakeError) as e:
            await http.ws_connect(f"{url}/ws", headers={"Origin": "http://evil.example"})
        assert e.value.status == 403

    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        statuses = []
        for _ in range(6):
            token = await form(http)
            async with http.post(
                f"{url}/login", data={"csrf": token, "name": "carol", "password": "wrong-password"}
            ) as r:
                statuses.append(r.status)
        assert statuses[:5] == [401] * 5 and statuses[5] == 429


def test_chromium_installed_by_make():
    """CI gets the browser from `make install` (the test above skips only where it is absent)."""
    text = (ROOT / "Makefile").read_text()
    assert "chromium" in text
