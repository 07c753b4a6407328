"""The serve door's parts without a browser: accounts (scrypt, 0600, one-time links spent once),
the bind/TLS rule, sessions that expire, the login limiter, and the CLI verbs' one-line refusals."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from console.cli import cli, main
from console.serve.accounts import AccountsFile
from console.serve.bind import parse_bind, tls_context
from console.serve.sessions import LoginLimiter, SessionStore
from console.shared.served import ServedOperator, served_environment, served_operator
from engine.errors import InvalidInput


def test_accounts_hash_passwords_and_spend_links_once(tmp_path):
    f = AccountsFile(tmp_path / "acc.json")
    f.add("alice", "curator", "a-long-password")
    assert oct(os.stat(f.path).st_mode & 0o777) == "0o600"
    assert "a-long-password" not in f.path.read_text()  # only the scrypt hash is kept
    assert f.verify("alice", "a-long-password").role == "curator"
    assert f.verify("alice", "wrong-password") is None and f.verify("nobody", "x") is None
    f.add("bob", "viewer", None)
    token = f.new_link("bob")
    assert token not in f.path.read_text()
    assert f.spend_link(token).name == "bob"
    assert f.spend_link(token) is None  # spent
    with pytest.raises(InvalidInput, match="at least 10"):
        f.add("carol", "viewer", "short")
    with pytest.raises(InvalidInput, match="role must be one of"):
        f.add("carol", "root", "a-long-password")
    os.chmod(f.path, 0o644)
    with pytest.raises(InvalidInput, match="chmod 600"):
        f.verify("alice", "a-long-password")


def test_bind_rule():
    assert parse_bind("127.0.0.1:8765").loopback and parse_bind("[::1]:9").loopback
    assert not parse_bind("0.0.0.0:8443").loopback
    with pytest.raises(InvalidInput, match="without TLS"):
        tls_context(parse_bind("0.0.0.0:8443"), None, None, insecure_http=True)
    with pytest.raises(InvalidInput, match="--insecure-http"):
        tls_context(parse_bind("127.0.0.1:8765"), None, None, insecure_http=False)
    assert tls_context(parse_bind("localhost:8765"), None, None, insecure_http=True) is None
    with pytest.raises(InvalidInput, match="HOST:PORT"):
        parse_bind("nonsense")


def test_sessions_expire_and_logins_are_limited():
    now = [1000.0]
    store = SessionStore(minutes=1, clock=lambda: now[0])
    s = store.open(ServedOperator("alice", "curator"))
    assert store.get(s.sid) is s and store.get("forged") is None
    now[0] += 61
    assert store.get(s.sid) is None
    lim = LoginLimiter(attempts=2, window=60, clock=lambda: now[0])
    lim.failed("ip:x")
    assert lim.blocked("ip:x") == 0
    lim.failed("ip:x")
    assert lim.blocked("ip:x") > 0
    now[0] += 61
    assert lim.blocked("ip:x") == 0


def test_served_identity_cannot_be_inherited():
    env = served_environment({"MEMCONSOLE_OPERATOR": "mallory", "MEMCONSOLE_ROLE": "admin", "X": "1"},
                             ServedOperator("bob", "viewer"))  # fmt: skip
    assert served_operator(env) == ServedOperator("bob", "viewer") and env["X"] == "1"
    assert served_operator({"MEMCONSOLE_OPERATOR": "eve", "MEMCONSOLE_ROLE": "superuser"}).role == "viewer"
    assert not ServedOperator("bob", "viewer").may("curator") and ServedOperator("a", "admin").may("curator")


def test_cli_verbs(tmp_path, capsys):
    db = tmp_path / "x.db"
    run = CliRunner().invoke
    r = run(cli, ["--db", str(db), "serve-user", "add", "alice", "--role", "admin", "--password-stdin"],
            input="a-long-password\n")  # fmt: skip
    assert r.exit_code == 0, r.output
    r = run(cli, ["--db", str(db), "serve-user", "add", "bob", "--role", "viewer", "--link", "--json"])
    assert r.exit_code == 0 and '"link_path": "/login/link/' in r.output
    r = run(cli, ["--db", str(db), "serve-user", "list"])
    assert "alice" in r.output and "bob" in r.output
    code = main(["--db", str(db), "serve", "--bind", "0.0.0.0:8443", "--insecure-http"])
    err = capsys.readouterr().err
    assert code != 0 and "without TLS" in err and "Traceback" not in err and len(err.splitlines()) == 1
