"""`memconsole serve`: the console in a browser behind a login; `memconsole serve-user ...`: its
operator accounts (a 0600 file beside the database, console/serve/accounts.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from .common import emit, fail, json_option, pass_ctx, table


def register(cli: click.Group) -> None:
    cli.add_command(serve)
    cli.add_command(serve_user)


def _accounts_path(ctx, accounts: Path | None) -> Path:
    from console.serve.accounts import accounts_path_for

    return accounts or accounts_path_for(ctx.db)


accounts_option = click.option(
    "--accounts",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The accounts file (default: <db>.serve-accounts.json beside the database).",
)


@click.command()
@click.option("--bind", default="127.0.0.1:8765", show_default=True, help="HOST:PORT to listen on.")
@click.option(
    "--cert", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="TLS certificate (PEM)."
)
@click.option(
    "--key", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="TLS private key (PEM)."
)
@click.option("--insecure-http", is_flag=True, help="Plain HTTP (only on a loopback address).")
@click.option(
    "--session-minutes", type=click.FloatRange(1, 7 * 24 * 60), default=480, show_default=True,
    help="A sign-in lasts this long; then its consoles close.",
)  # fmt: skip
@click.option(
    "--max-consoles", type=click.IntRange(1, 10_000), default=None,
    help="Console processes running at once (default: [serve] max_consoles, 8); one more is refused.",
)  # fmt: skip
@accounts_option
@pass_ctx
def serve(ctx, bind, cert, key, insecure_http, session_minutes, max_consoles, accounts):
    """Serve the console in a browser behind a login: one console process per signed-in operator,
    acting as that operator with their role. Non-loopback binds need --cert/--key."""
    from console.serve.bind import parse_bind, tls_context

    where = parse_bind(bind)
    tls = tls_context(where, cert, key, insecure_http)
    path = _accounts_path(ctx, accounts)
    from console.serve.accounts import AccountsFile

    if not AccountsFile(path).accounts():
        fail(f"no operator accounts in {path}: add one with `memconsole serve-user add NAME --role admin`")
    from console.serve.server import ConsoleServer, ServeOptions
    from engine.config import load_settings

    cap = max_consoles or load_settings().serve.max_consoles
    opts = ServeOptions(
        db=str(ctx.db), host=where.host, port=where.port, accounts=path,
        session_minutes=session_minutes, tls=tls, max_consoles=cap,
    )  # fmt: skip
    ConsoleServer(opts).run()


@click.group("serve-user")
def serve_user():
    """Operator accounts of `memconsole serve` (passwords kept only as scrypt hashes)."""


def _read_password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\n")
    return str(click.prompt("Password", hide_input=True, confirmation_prompt=True))


@serve_user.command("add")
@click.argument("name")
@click.option(
    "--role", type=click.Choice(["viewer", "curator", "forget-officer", "admin"]), required=True,
    help="What this operator may do in the console.",
)  # fmt: skip
@click.option("--password-stdin", is_flag=True, help="Read the password from one line of stdin.")
@click.option("--link", is_flag=True, help="No password: print a one-time sign-in link instead.")
@accounts_option
@json_option
@pass_ctx
def user_add(ctx, name, role, password_stdin, link, accounts, as_json):
    """Add an operator account: prompts for a password, or prints a one-time sign-in link (admin
    only; audited under your verified identity)."""
    from console.serve.accounts import AccountsFile

    f = AccountsFile(_accounts_path(ctx, accounts))
    password = None if link else _read_password(password_stdin)

    def apply() -> dict[str, object]:
        acc = f.add(name, role, password)
        out: dict[str, object] = {"name": acc.name, "role": acc.role, "accounts": str(f.path)}
        if link:
            out["link_path"] = f"/login/link/{f.new_link(name)}"
        return out

    out = _audited(ctx, "add", name, apply, role=role, where=f.path)
    emit(out, as_json, _say_added)


def _audited(ctx, change: str, name: str, apply, *, role: str = "", where: Path) -> Any:
    """Run an account change through the engine: admin only, one audit row under the caller's
    verified identity (engine/operators.py change_account)."""
    with ctx.engine(embedder=None) as eng:
        return eng.operators.change_account(change, name, apply, role=role, where=str(where))


def _role_of(f, name: str) -> str:
    for a in f.accounts():
        if a.name == name:
            return str(a.role)
    return ""


def _say_added(out: dict) -> None:
    click.echo(f"operator {out['name']} ({out['role']}) added to {out['accounts']}")
    if "link_path" in out:
        click.echo(f"one-time sign-in (15 min): <serve URL>{out['link_path']}")


@serve_user.command("link")
@click.argument("name")
@click.option("--minutes", type=click.FloatRange(1, 24 * 60), default=15, show_default=True)
@accounts_option
@json_option
@pass_ctx
def user_link(ctx, name, minutes, accounts, as_json):
    """Print a one-time sign-in link for NAME (valid --minutes, spent by its first use)."""
    from console.serve.accounts import AccountsFile

    f = AccountsFile(_accounts_path(ctx, accounts))
    token = _audited(
        ctx, "link", name, lambda: f.new_link(name, minutes), role=_role_of(f, name), where=f.path
    )
    emit({"name": name, "link_path": f"/login/link/{token}"}, as_json, lambda o: click.echo(
        f"one-time sign-in for {name} ({minutes:g} min): <serve URL>{o['link_path']}"
    ))  # fmt: skip


@serve_user.command("passwd")
@click.argument("name")
@click.option("--password-stdin", is_flag=True, help="Read the password from one line of stdin.")
@accounts_option
@pass_ctx
def user_passwd(ctx, name, password_stdin, accounts):
    """Set NAME's password (admin only, audited); NAME's live browser sessions end."""
    from console.serve.accounts import AccountsFile

    f = AccountsFile(_accounts_path(ctx, accounts))
    password = _read_password(password_stdin)
    _audited(
        ctx, "passwd", name, lambda: f.set_password(name, password), role=_role_of(f, name), where=f.path
    )
    click.echo(f"password of {name} set; their open browser consoles are signed out")


@serve_user.command("role")
@click.argument("name")
@click.argument("role", type=click.Choice(["viewer", "curator", "forget-officer", "admin"]))
@accounts_option
@pass_ctx
def user_role(ctx, name, role, accounts):
    """Change NAME's role (admin only, audited); NAME's live browser sessions end."""
    from console.serve.accounts import AccountsFile

    f = AccountsFile(_accounts_path(ctx, accounts))
    _audited(ctx, "role", name, lambda: f.set_role(name, role), role=role, where=f.path)
    click.echo(f"operator {name} is now {role}; their open browser consoles are signed out")


@serve_user.command("remove")
@click.argument("name")
@accounts_option
@pass_ctx
def user_remove(ctx, name, accounts):
    """Remove NAME's account (admin only, audited); NAME's live browser sessions end."""
    from console.serve.accounts import AccountsFile

    f = AccountsFile(_accounts_path(ctx, accounts))
    _audited(ctx, "remove", name, lambda: f.remove(name), role=_role_of(f, name), where=f.path)
    click.echo(f"operator {name} removed; their open browser consoles are signed out")


@serve_user.command("list")
@accounts_option
@json_option
@pass_ctx
def user_list(ctx, accounts, as_json):
    """The accounts: name, role, whether a password is set, live one-time links."""
    from console.serve.accounts import AccountsFile

    rows = AccountsFile(_accounts_path(ctx, accounts)).accounts()
    emit(rows, as_json, lambda rs: table(
        [[a.name, a.role, "yes" if a.has_password else "no", a.pending_links] for a in rs],
        ["name", "role", "password", "links"],
    ))  # fmt: skip
