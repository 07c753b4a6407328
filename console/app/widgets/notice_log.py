"""`ctrl+n`: the notifications this console has shown, newest first, with their time and severity
(a toast disappears after seconds; what it said stays here, up to the last NOTICE_LOG_SIZE)."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label

from .safe import SafeStatic

NOTICE_LOG_SIZE = 500


@dataclass(frozen=True)
class Notice:
    at: float
    severity: str
    message: str


class NoticeLog:
    """What was shown, in order (thread-safe appends: notify may be called from a worker)."""

    def __init__(self, size: int = NOTICE_LOG_SIZE) -> None:
        self._items: deque[Notice] = deque(maxlen=size)

    def add(self, severity: str, message: str) -> None:
        self._items.append(Notice(time.time(), severity, message))

    def newest_first(self) -> list[Notice]:
        return list(reversed(self._items))

    def __len__(self) -> int:
        return len(self._items)


MARK = {"information": " ", "warning": "!", "error": "✗"}


def notice_lines(notices: list[Notice]) -> str:
    if not notices:
        return "No notifications yet."
    return "\n".join(
        f"{time.strftime('%H:%M:%S', time.localtime(n.at))} {MARK.get(n.severity, ' ')} {n.message}"
        for n in notices
    )


class NoticeLogScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="notices.close"),
        Binding("ctrl+n", "dismiss", "Close", show=False, id="notices.toggle"),
        Binding("q", "dismiss", "Close", show=False, id="notices.quit"),
    ]
    DEFAULT_CSS = """
    NoticeLogScreen { align: center middle; }
    NoticeLogScreen > Vertical {
        width: 90%; max-width: 120; height: 80%; padding: 1 2;
        border: thick $accent; background: $surface;
    }
    NoticeLogScreen #notices-title { text-style: bold; margin-bottom: 1; }
    """

    def __init__(self, notices: list[Notice]) -> None:
        super().__init__()
        self.notices = notices

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(
                f"Notifications ({len(self.notices)}, newest first) · escape closes", id="notices-title"
            )
            with VerticalScroll(id="notices-scroll"):
                yield SafeStatic(notice_lines(self.notices), id="notices-text")

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
