"""Browser accounts are operator actions (#27): `serve-user add|link|passwd|role|remove` each leave
one audit row under the admin's verified identity (a non-admin is refused before the file changes),
and a running `memconsole serve` ends the live sessions of an account that was removed or changed
and refuses consoles past `--max-consoles` with a one-line page. HTTP-level: a real `memconsole
serve` process and an aiohttp client (cookies, CSRF form, a websocket that starts a real console)."""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest
from click.testing import CliRunner

from console.cli import cli, main
from console.serve.accounts import AccountsFile, accounts_path_for
from engine import open_engine
from engine.embed import HashEmbedder

ROOT = Path(__file__).resolve().parents[2]
NOBODY = 65534
PASSWORDS = {"alice": "alice-password-1", "bob": "bob-password-12", "carol": "carol-password-1"}


def _run(db: Path, *args: str, stdin: str | None = None):
    return CliRunner().invoke(cli, ["--db", str(db), "--actor", "lead", *args], input=stdin)


def _main(db: Path, capsys, *args: str) -> tuple[int, str]:
    """The real entry point (its errors are one line on stderr): (exit code, stderr)."""
    code = main(["--db", str(db), "--actor", "lead", *args])
    return code, capsys.readouterr().err


def test_account_changes_are_audited_under_the_admins_verified_identity(tmp_path, capsys):
    db = tmp_path / "m.db"
    assert _run(db, "serve-user", "add", "alice", "--role", "curator", "--password-stdin",
                stdin="alice-password-1\n").exit_code == 0  # fmt: skip
    r = _run(db, "serve-user", "link", "alice", "--json")
    assert r.exit_code == 0, r.output
    token = json.loads(r.output)["link_path"].rsplit("/", 1)[1]
    assert (
        _run(db, "serve-user", "passwd", "alice", "--password-stdin", stdin="new-password-22\n").exit_code
        == 0
    )
    assert _run(db, "serve-user", "role", "alice", "viewer").exit_code == 0
    assert _run(db, "serve-user", "remove", "alice").exit_code == 0
    code, err = _main(db, capsys, "serve-user", "remove", "alice")  # gone: one line, no audit row
    assert code != 0 and "no operator account named 'alice'" in err and len(err.splitlines()) == 1
    with open_engine(db, embedder=None) as eng:
        rows = [r for r in eng.audit.log(limit=50) if r.target_kind == "serve-account"]
        assert eng.audit.verify().ok
    assert [r.action for r in reversed(rows)] == [
        "serve-user-add", "serve-user-link", "serve-user-passwd", "serve-user-role", "serve-user-remove",
    ]  # fmt: skip
    me = pwd.getpwuid(os.getuid()).pw_name
    assert {r.actor for r in rows} == {f"{me} (as lead)"}  # verified identity; the label beside it
    assert {r.target_id for r in rows} == {"alice"}
    assert rows[1].reason == "role viewer" and rows[-1].reason == "add curator"
    text = json.dumps([[r.reason, r.summary] for r in rows])
    assert "password" not in text.replace("passwd", "") and token not in text  # no secret recorded


def test_a_non_admin_cannot_change_accounts_and_is_audited_as_refused(tmp_path, capsys):
    if os.getuid() != 0:
        pytest.skip("needs root to hand the database to another OS user")
    db = tmp_path / "m.db"
    with open_engine(db, embedder=HashEmbedder()) as eng:
        eng.add_memory("x")
    for p in tmp_path.iterdir():
        os.chown(p, NOBODY, NOBODY)  # another user's database: we are a viewer of it
    code, err = _main(db, capsys, "serve-user", "add", "mallory", "--role", "admin", "--link")
    assert code != 0 and "needs the admin role" in err and len(err.splitlines()) == 1
    assert not accounts_path_for(db).exists() or "mallory" not in accounts_path_for(db).read_text()
    with open_engine(db, embedder=None) as eng:
        refused = eng.audit.log(action="refused")
    assert refused[0].target_id == "operators.change_account"


# -- a live server -------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """`memconsole serve --max-consoles 1` over a small database with three accounts."""
    d = tmp_path_factory.mktemp("serve-live")
    db = d / "m.db"
    with open_engine(db, embedder=HashEmbedder()) as eng:
        eng.add_memory("deploys need a change ticket")
    accounts = AccountsFile(accounts_path_for(db))
    for name, role in (("alice", "curator"), ("bob", "viewer"), ("carol", "curator")):
        accounts.add(name, role, PASSWORDS[name])
    env = dict(os.environ, PYTHONPATH=str(ROOT), MEMCONSOLE_EMBEDDER="hash", HF_HUB_OFFLINE="1")
    env.pop("MEMCONSOLE_OPERATOR", None)
    env.pop("MEMCONSOLE_ROLE", None)
    port = _free_port()
    log = open(d / "serve.log", "w")  # noqa: SIM115 - closed below
    cmd = [sys.executable, "-m", "console.cli", "--db", str(db), "serve",
           "--bind", f"127.0.0.1:{port}", "--insecure-http", "--max-consoles", "1"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    end = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if time.monotonic() > end or proc.poll() is not None:
                raise RuntimeError((d / "serve.log").read_text()) from None
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}", db, d / "serve.log"
    proc.terminate()
    proc.wait(10)
    log.close()


async def _sign_in(url: str, name: str) -> aiohttp.ClientSession:
    http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True), headers={"Origin": url})
    async with http.get(f"{url}/login") as r:
        csrf = r.cookies["memconsole_login"].value
    data = {"csrf": csrf, "name": name, "password": PASSWORDS[name]}
    async with http.post(f"{url}/login", data=data, allow_redirects=False) as r:
        assert r.status == 302, await r.text()
    return http


async def _page(http: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    async with http.get(f"{url}/", allow_redirects=False) as r:
        return r.status, (r.headers.get("Location") or await r.text())


async def _signed_out_within(http: aiohttp.ClientSession, url: str, seconds: float = 8.0) -> float:
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if await _page(http, url) == (302, "/login"):
            return time.monotonic() - start
        await asyncio.sleep(0.1)
    raise AssertionError("the session outlived its account's change")


async def test_changed_accounts_lose_their_sessions_and_consoles_are_capped(served):
    url, db, log = served
    alice = await _sign_in(url, "alice")
    bob = await _sign_in(url, "bob")
    carol = await _sign_in(url, "carol")
    try:
        assert (await _page(alice, url))[0] == 200
        ws = await alice.ws_connect(f"{url}/ws?width=80&height=24")  # starts alice's console
        first = await asyncio.wait_for(ws.receive(), 30)
        assert first.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT)
        # The cap (1): bob's console page and websocket are refused in one line, nothing started.
        status, text = await _page(bob, url)
        assert status == 503 and "All 1 browser consoles of this server are in use" in text
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await bob.ws_connect(f"{url}/ws?width=80&height=24")
        assert refused.value.status == 503

        # The admin removes alice: her console closes and her cookie no longer signs her in.
        assert (await asyncio.to_thread(_run, db, "serve-user", "remove", "alice")).exit_code == 0
        closed = await asyncio.wait_for(_closed(ws), 10)
        assert closed
        await _signed_out_within(alice, url, 1)
        assert (await _page(bob, url))[0] == 200  # the console alice held is free again

        # A new password or a new role ends the account's sessions too (within the sweep).
        r = await asyncio.to_thread(_run, db, "serve-user", "passwd", "bob", "--password-stdin",
                                    stdin="bob-new-password\n")  # fmt: skip
        assert r.exit_code == 0, r.output
        await _signed_out_within(bob, url)
        assert (await _page(carol, url))[0] == 200
        assert (await asyncio.to_thread(_run, db, "serve-user", "role", "carol", "viewer")).exit_code == 0
        await _signed_out_within(carol, url)
    finally:
        for h in (alice, bob, carol):
            await h.close()
    text = log.read_text()
    assert "account of alice removed or changed" in text and "Traceback" not in text


async def _closed(ws: aiohttp.ClientWebSocketResponse) -> bool:
    while True:
        msg = await ws.receive()
        if msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING):
            return True


def test_max_consoles_setting_is_checked(tmp_path):
    from engine.config import load_settings
    from engine.errors import InvalidInput

    cfg = tmp_path / "config.toml"
    cfg.write_text("[serve]\nmax_consoles = 3\n")
    assert load_settings(cfg).serve.max_consoles == 3
    cfg.write_text("[serve]\nmax_consoles = 0\n")
    with pytest.raises(InvalidInput, match="serve.max_consoles must be between 1 and 10000"):
        load_settings(cfg)
