"""The filter input every listing pane uses (issue #27): one language (engine/filter_language),
parsed as the operator types, with completion of keys and known values.

- `FilterInput(surface)`: an Input. Ghost text completes the token being typed (`ag` -> `agent:`,
  `tier:ar` -> `tier:archived`, `agent:at` -> `agent:atlas` from the values the pane feeds in
  with `set_known`); `tab` (or `→` at the end) accepts it. It posts `FilterInput.Parsed` with the
  typed `Filter` whenever the text parses (while typing, a last half-typed token is left out).
- `FilterHint`: the one line under it: the error that stops the filter (naming the token and its
  column), else the completions on offer; hidden when it has nothing to say.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from textual import on
from textual.binding import Binding
from textual.message import Message
from textual.suggester import Suggester
from textual.widgets import Input

from console.app.widgets.safe import SafeStatic
from console.shared.text_safety import has_unsafe
from engine.errors import cut_line
from engine.filter_language import Filter, FilterError, candidates, complete, parse_filter

SHOWN = 6  # completions named in the hint line


class _Completer(Suggester):
    def __init__(self, owner: FilterInput) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.owner = owner

    async def get_suggestion(self, value: str) -> str | None:
        found = complete(value, self.owner.surface, self.owner.known)
        return found if found is not None and found.startswith(value) else None


class FilterHint(SafeStatic):
    """The filter's one line: an error, or the completions on offer (hidden when empty)."""

    DEFAULT_CSS = """
    FilterHint { height: auto; max-height: 2; padding: 0 1; color: $text-muted; }
    FilterHint.-error { color: $warning; }
    FilterHint.-empty { display: none; }
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs["classes"] = (kwargs.get("classes", "") + " -empty").strip()
        super().__init__("", **kwargs)

    def say(self, text: str, *, error: bool = False) -> None:
        self.update(cut_line(text))
        self.set_class(error, "-error")
        self.set_class(not text, "-empty")


class FilterInput(Input):
    DEFAULT_CSS = """
    FilterInput.-bad-filter { color: $warning; }
    """
    BINDINGS = [Binding("tab", "complete", "Complete", show=False, id="filter.complete")]

    @dataclass
    class Parsed(Message):
        """The text parsed: `filter` is what to list (`submitted`: enter was pressed)."""

        input: FilterInput
        filter: Filter
        submitted: bool = False

        @property
        def control(self) -> FilterInput:
            return self.input

    def __init__(self, surface: str, *, hint: str | None = None, **kwargs: Any) -> None:
        super().__init__(suggester=_Completer(self), **kwargs)
        self.surface = surface
        self.hint_selector = hint  # the FilterHint this input reports to (a selector in its pane)
        self.known: dict[str, list[str]] = {}
        self.filter = Filter(surface)  # the last text that parsed
        self.error: str | None = None  # why the current text does not

    # -- what the pane feeds in -------------------------------------------------------------------
    def set_known(self, **values: Iterable[str]) -> None:
        """Known values of keys (agents, domains, ...) for completion; unsafe text is left out."""
        for key, vals in values.items():
            have = self.known.setdefault(key, [])
            for v in vals:
                if v and v not in have and not has_unsafe(v) and len(v) <= 200:
                    have.append(v)
            have.sort()

    def parse(self, *, partial: bool) -> Filter | None:
        """Parse the current text: the Filter, or None (and the error in the hint line)."""
        try:
            f = parse_filter(self.value, self.surface, now=self._now(), partial=partial)
        except FilterError as exc:
            self.error = str(exc)
            self._hint(self.error, error=True)
            self.set_class(True, "-bad-filter")
            return None
        self.filter, self.error = f, None
        self.set_class(False, "-bad-filter")
        offers = candidates(self.value, self.surface, self.known)
        more = " …" if len(offers) > SHOWN else ""
        said = [f"tab completes: {' · '.join(offers[:SHOWN])}{more}"] if offers else []
        self._hint(" │ ".join([*said, *f.notes]))
        return f

    # -- events -----------------------------------------------------------------------------------
    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        if event.input is not self:
            return
        f = self.parse(partial=True)
        if f is not None:
            self.post_message(self.Parsed(self, f))

    @on(Input.Submitted)
    def _entered(self, event: Input.Submitted) -> None:
        if event.input is not self:
            return
        f = self.parse(partial=False)
        if f is not None:
            self.post_message(self.Parsed(self, f, submitted=True))
        elif self.error:
            self.notify(self.error, severity="error", timeout=4)

    def action_complete(self) -> None:
        done = complete(self.value, self.surface, self.known)
        if done is None or self.cursor_position != len(self.value):
            self.screen.focus_next()
            return
        self.value = done
        self.cursor_position = len(done)

    # -- helpers ------------------------------------------------------------------------------------
    def _now(self) -> float | None:
        engine = getattr(self.app, "engine", None)
        return engine.clock.now() if engine is not None else None

    def _hint(self, text: str, *, error: bool = False) -> None:
        if not self.hint_selector:
            return
        for node in self.ancestors:
            found = node.query(self.hint_selector)
            if found:
                hint = found.first()
                if isinstance(hint, FilterHint):
                    hint.say(text, error=error)
                return
