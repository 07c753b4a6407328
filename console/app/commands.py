"""The command palette (ctrl+p): global commands plus the current pane's own."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from .app import MemConsole


class ConsoleCommands(Provider):
    @property
    def app(self) -> MemConsole:
        """The console, typed (the palette calls its pane switching and refresh)."""
        return cast("MemConsole", super().app)

    def _commands(self) -> list[tuple[str, str, Callable[[], Any]]]:
        app = self.app
        out: list[tuple[str, str, Callable[[], Any]]] = []
        pane = app.current_pane()
        if pane is not None:
            out += [(f"{pane.TITLE}: {c.name}", c.help, c.callback) for c in pane.commands()]
        for spec in app.pane_specs:
            out.append(
                (
                    f"Go to {spec.key} {spec.title}",
                    f"Switch to the {spec.title} pane",
                    partial(app.switch_pane, spec.pane_id),
                )
            )
        out.append(("Refresh", "Reload every pane and the header counts", app.data_changed))
        out.append(("Help: key bindings", "List every binding", app.action_help))
        out.append(("Quit", "Leave the console", app.exit))
        return out

    async def discover(self) -> Hits:
        for name, help, cb in self._commands():
            yield DiscoveryHit(name, cb, help=help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help, cb in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), cb, help=help)
