"""`memconsole`: the command line over the engine. With no verb it opens the console.

Each group of verbs lives in its own module (console/cli/<group>.py) with a `register(group)`
function; add new modules to VERB_MODULES.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from pathlib import Path

import click

from console.shared.text_safety import SafeStream

from .common import Ctx, cut, warn

VERB_MODULES = [
    "console.cli.rules",
    "console.cli.flows",
    "console.cli.decay",
    "console.cli.audit",
    "console.cli.curator",
    "console.cli.forget",
    "console.cli.doctor",
    "console.cli.memories",
    "console.cli.search",
    "console.cli.sessions",
    "console.cli.demo",
    "console.cli.importers",
    "console.cli.agents",
    "console.cli.migrate",
    "console.cli.recalls",
    "console.cli.checks",
    "console.cli.operators",
    "console.cli.serve",
    "console.cli.reembed",
]


# Verbs whose module is known, so a call naming one imports that module only (a cold
# `memconsole recall replay` pays for none of the other verbs' imports, #26); any other name, a
# listing or --help imports every module in VERB_MODULES, as before.
VERB_OF = {"recall": "console.cli.recalls", "recalls": "console.cli.recalls"}


class _Verbs(click.Group):
    """The root group: verb modules registered on first need. Reading `commands` directly (a
    test, a help generator) registers every module first, so it always sees every verb."""

    loaded: set[str]
    _busy = False  # inside load: `commands` is the dict being filled

    @property  # type: ignore[override]
    def commands(self) -> dict[str, click.Command]:
        if not self._busy and not set(VERB_MODULES) <= self.loaded:
            self.load(VERB_MODULES)
        return self._commands

    @commands.setter
    def commands(self, value: dict[str, click.Command]) -> None:
        self._commands = value

    def load(self, modules: list[str]) -> None:
        self._busy = True
        try:
            for name in modules:
                if name not in self.loaded:
                    self.loaded.add(name)
                    importlib.import_module(name).register(self)
            _fill_help(self)
            boot = self._commands.get("boot")
            if boot is not None and "boot-warned" not in self.loaded:
                self.loaded.add("boot-warned")
                _warn_agent_without_memories(boot)
        finally:
            self._busy = False

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self._commands:
            self.load([VERB_OF[cmd_name]] if cmd_name in VERB_OF else VERB_MODULES)
        if cmd_name not in self._commands:
            self.load(VERB_MODULES)
        return self._commands.get(cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self.load(VERB_MODULES)
        return sorted(self._commands)


@click.group(
    cls=_Verbs, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Memory database (default: $MEMCONSOLE_DB or the user data dir).",
)
@click.option(
    "--actor",
    default=None,
    help="A label recorded beside your verified identity (OS user or database role), never instead of it.",
)
@click.option(
    "--read-only",
    "read_only",
    is_flag=True,
    help="Open the database read-only: every write refuses in one line (a read replica is always so).",
)
@click.pass_context
def cli(ctx: click.Context, db: Path | None, actor: str | None, read_only: bool) -> None:
    """memconsole: operate AI agents' long-term memory."""
    from engine.paths import default_db

    ctx.obj = Ctx(db=db or default_db(), actor=actor, read_only=read_only)
    if ctx.invoked_subcommand is not None and not isinstance(sys.stdout, SafeStream):
        # Called without main() (click's CliRunner, an embedding program): same safe door.
        out, err = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)

        def restore() -> None:
            sys.stdout, sys.stderr = out, err

        ctx.call_on_close(restore)
    if ctx.invoked_subcommand is None:
        from console.app import run_console

        # The console draws with escape codes of its own (its widgets escape stored text).
        out, err = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = _raw(out), _raw(err)
        try:
            run_console(ctx.obj.db, actor=actor, read_only=read_only)
        finally:
            sys.stdout, sys.stderr = out, err


def _raw(stream):
    return getattr(stream, "_raw", stream) if isinstance(stream, SafeStream) else stream


cli.loaded = set()  # verb modules are registered by _Verbs.load, on first need

# A description for verbs registered without one (a verb's own docstring always wins).
HELP_FALLBACK = {
    "memory show": "One memory with every field, its strength and its source.",
    "memory pin": "Pin a memory: it stays core and never decays.",
    "memory unpin": "Unpin a memory: it decays again like any other.",
    "memory archive": "Archive a memory: out of search by default, restorable.",
    "memory restore": "Restore an archived memory to active (refused for any other tier).",
    "memory reinforce": "Reinforce a memory as if it had been used now.",
    "memory importance": "Set a memory's importance (0 to 1).",
    "proposal show": "One curator proposal: its members, evidence and state.",
}


def _fill_help(group: click.Group, path: tuple[str, ...] = ()) -> None:
    for name, cmd in group.commands.items():
        key = " ".join((*path, name))
        if not (cmd.help or cmd.short_help or "").strip() and key in HELP_FALLBACK:
            cmd.help = HELP_FALLBACK[key]
        if isinstance(cmd, click.Group):
            _fill_help(cmd, (*path, name))


def _warn_agent_without_memories(cmd: click.Command) -> None:
    """`boot --agent X` for an agent with no memories (a typo, or not imported yet): say so on
    stderr; the answer on stdout is unchanged."""
    inner = cmd.callback
    if inner is None:
        return

    @functools.wraps(inner)
    def run(*args, **kwargs):
        agent, obj = kwargs.get("agent"), click.get_current_context().find_object(Ctx)
        if agent and obj is not None:
            with obj.engine(embedder=None) as eng:
                if not eng.memories.list(agent=agent, limit=1):
                    warn(
                        f"agent {cut(agent)} has no memories: this is only what every agent shares "
                        "(check the name: `memconsole sessions` lists agents)"
                    )
        return inner(*args, **kwargs)

    cmd.callback = run


def main(argv: list[str] | None = None) -> int:
    """Entry point: engine errors and anything unexpected become one line on stderr. Every
    character written goes through SafeStream: stored or typed text (a memory, `--actor`, an
    error quoting input) never reaches the terminal as control sequences."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = out, err


def _main(argv: list[str] | None) -> int:
    from engine.errors import DISK_FULL_EXIT, DiskFull, EngineError, cut_line

    try:
        rv = cli.main(args=argv, prog_name="memconsole", standalone_mode=False)
        return rv if isinstance(rv, int) else 0
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except click.ClickException as exc:
        click.echo(f"memconsole: {cut_line(exc.format_message())}", err=True)
        return exc.exit_code
    except DiskFull as exc:
        click.echo(f"memconsole: {cut_line(str(exc).splitlines()[0])}", err=True)
        return DISK_FULL_EXIT
    except EngineError as exc:
        click.echo(
            f"memconsole: {cut_line(str(exc).splitlines()[0]) if str(exc) else type(exc).__name__}", err=True
        )
        return 2
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a full disk, a read-only folder, a missing permission: say which
        import errno

        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            where = f": {exc.filename}" if exc.filename else ""
            click.echo(f"memconsole: disk full{where}; what it was writing was not finished", err=True)
            return DISK_FULL_EXIT
        why = {
            errno.EROFS: "the location is read-only",
            errno.EACCES: "permission denied",
            errno.EPERM: "permission denied",
        }.get(exc.errno or 0, exc.strerror or type(exc).__name__)
        click.echo(f"memconsole: {why}" + (f": {exc.filename}" if exc.filename else ""), err=True)
        return 1
    except Exception as exc:  # a bug: still one line for the operator; details on request
        if os.environ.get("MEMCONSOLE_DEBUG"):
            raise
        click.echo(
            f"memconsole: internal error: {type(exc).__name__}: {cut_line(str(exc))}"
            " (set MEMCONSOLE_DEBUG=1 for details)",
            err=True,
        )
        return 70
