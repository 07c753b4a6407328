"""Widgets shared by several panes."""

from .confirm import ConfirmModal, PromptModal
from .header import StatusHeader, badge
from .table import DataGrid

__all__ = ["ConfirmModal", "PromptModal", "StatusHeader", "DataGrid", "badge"]
