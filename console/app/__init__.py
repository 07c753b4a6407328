"""The terminal face: the Textual app, its palette and the widgets the panes share."""

from .app import MemConsole, run_console

__all__ = ["MemConsole", "run_console"]
