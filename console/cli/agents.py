"""The agents' doors: `mcp` (serve the engine over MCP, stdio or HTTP) and `hermes install-provider`
(write the memconsole memory provider into a Hermes home)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from engine.errors import cut

from .common import Ctx, emit, fail, json_option, pass_ctx


def register(cli: click.Group) -> None:
    cli.add_command(mcp)
    cli.add_command(hermes)


def parse_listen(value: str) -> tuple[str, int]:
    """`HOST:PORT`, `:PORT` or `PORT` (host 127.0.0.1); `[::1]:PORT` for IPv6."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "", value
    host = host.strip("[]") or "127.0.0.1"
    try:
        n = int(port)
    except ValueError:
        n = -1
    if not 0 < n < 65536:
        fail(f"--http wants HOST:PORT with a port between 1 and 65535, not {cut(value)}")
    return host, n


@click.command()
@click.option(
    "--http",
    "listen",
    default=None,
    metavar="HOST:PORT",
    help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (host default 127.0.0.1).",
)
@click.option(
    "--token-file",
    type=click.Path(path_type=Path),
    default=None,
    help="Bearer tokens for --http: lines of `TOKEN ACTOR [read-only] [agents=A,B]`, file mode 0600;"
    " re-read when it changes or on SIGHUP.",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="HOST[:PORT|:*]",
    help="A Host header value callers use (repeatable; also [mcp] allowed_hosts). Required off loopback.",
)
@click.option(
    "--allow-origin",
    "allow_origins",
    multiple=True,
    metavar="ORIGIN",
    help="An Origin header value allowed (repeatable; also [mcp] allowed_origins).",
)
@pass_ctx
def mcp(
    ctx: Ctx,
    listen: str | None,
    token_file: Path | None,
    allow_hosts: tuple[str, ...],
    allow_origins: tuple[str, ...],
) -> None:
    """Serve the memory to agents over the Model Context Protocol (stdio unless --http).

    Tools: remember, recall, explain, boot, gate_pre, gate_post, flow_check, reject, log_message.
    Resources: memconsole://boot, memconsole://boot/{agent}, memconsole://rules. The embedding
    model loads once, in the background; recall is keyword-only until it is ready."""
    from console.mcp.auth import TokenFileError, TokenSource
    from console.mcp.http import AllowListError, allow_list
    from engine.config import load_settings

    tokens = None
    if listen is not None:
        host, port = parse_listen(listen)
        if token_file is None:
            fail("--http needs --token-file: every HTTP call must carry a bearer token")
        assert token_file is not None
        settings = load_settings()
        try:
            tokens = TokenSource(token_file, settings.actor_mixed_scripts)
            allowed = allow_list(
                host, port, tuple(settings.mcp.allowed_hosts) + allow_hosts,
                tuple(settings.mcp.allowed_origins) + allow_origins,
            )  # fmt: skip
        except (TokenFileError, AllowListError) as exc:
            fail(str(exc))
    elif token_file is not None or allow_hosts or allow_origins:
        fail("--token-file and --allow-host/--allow-origin are for --http (stdio callers are the local user)")
    eng = ctx.engine(load="background")
    actor = str(eng.actor)  # --actor, else the OS user (the engine's default)
    try:
        if tokens is None:
            from console.mcp.server import serve_stdio

            serve_stdio(eng, actor)
        else:
            from console.mcp.http import serve_http

            click.echo(f"memconsole mcp: http://{host}:{port}/mcp ({len(tokens)} token(s))", err=True)
            serve_http(eng, actor, host, port, tokens, allowed)
    except KeyboardInterrupt:
        pass
    finally:
        eng.close()


@click.group()
def hermes() -> None:
    """Hermes Agent: install the live memory provider (`import hermes` reads a home instead)."""


@hermes.command("install-provider")
@click.argument("home", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Replace a provider that differs from this version's.")
@json_option
@pass_ctx
def install_provider(ctx: Ctx, home: Path, force: bool, as_json: bool) -> None:
    """Write the memconsole provider into HOME/plugins/memconsole/ (HOME: the Hermes home, e.g.
    ~/.hermes). The provider opens this --db; set `memory.provider: memconsole` in config.yaml."""
    from console.hermes.install import ProviderExists, install

    try:
        res = install(home.expanduser(), db=str(ctx.db), actor=ctx.actor, force=force, python=sys.executable)
    except ProviderExists as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{home}: cannot write the provider ({exc.strerror or exc})", 1)

    def human(r: dict) -> None:
        click.echo(f"wrote {r['path']}")
        click.echo(f"database: {r['db']}")
        click.echo("now set this in " + str(Path(r["home"]) / "config.yaml") + ":")
        click.echo("  memory:\n    provider: memconsole")
        click.echo(
            "Hermes' Python imports memconsole from where it is installed, else from the "
            "folders listed in " + r["config"]
        )

    emit(res, as_json, human)
