"""The Forget & Audit pane (pane.py) and the helpers only it uses; `screens.forget_audit` names
the pane and its audit filter parser as before the split."""

from .audit_log import parse_audit_filter
from .pane import ForgetAuditPane

__all__ = ["ForgetAuditPane", "parse_audit_filter"]
