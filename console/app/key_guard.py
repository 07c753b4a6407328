"""No stray key acts (console/app/guard.py): every key's action passes MemConsole.run_action, defined
here; a pane key that needs a role the served operator lacks is refused in one line and audited, one
that would write at once asks first, and on a read-only database a writing key is refused."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App

from console.shared.served import ServedOperator

from .guard import ENGINE_ROLE, ask_first, has_marks, role_needed
from .widgets.confirm import ConfirmModal

if TYPE_CHECKING:
    from engine.engine import MemoryEngine


class KeyGuardedApp(App):
    """The key guard of MemConsole (app.py), which sets `engine`, `served` and `errors`."""

    engine: MemoryEngine
    served: ServedOperator | None
    errors: list[str]

    async def run_action(self, action: Any, default_namespace: Any = None, namespaces: Any = None) -> bool:
        """Every key's action passes here: a pane key that needs a role the served operator lacks
        is refused in one line (and audited); one that would write at once asks first."""
        target, name, params = self._parse_action(
            action, self if default_namespace is None else default_namespace, namespaces
        )
        pane_id = getattr(target, "PANE_ID", "")
        if pane_id and target.check_action(name, params):
            need = role_needed(pane_id, name)
            ask = ask_first(pane_id, name, params)
            if (need or ask is not None) and self.engine.read_only:  # a replica: refused at the key
                self._say_refused(self.engine.read_only_reason or "read-only")
                return True
            if need and not self._may(need):
                self._refuse(pane_id, name, need)
                return True
            if ask is not None and not (ask.skip_when_marked and has_marks(target)):

                def answered(ok: bool | None) -> None:
                    if ok:
                        self.call_later(self._dispatch_action, target, name, params)

                self.push_screen(ConfirmModal(ask.title, ask.body, confirm_label=ask.confirm_label), answered)
                return True
        return await super().run_action(action, default_namespace, namespaces)

    def _may(self, need: str) -> bool:
        """The served operator's role grants `need`; else the engine's own roles for its caller
        (the engine refuses anyway: this stops the key before any dialog opens)."""
        if self.served is not None:
            return self.served.may(need)
        try:
            held = {r.value for r in self.engine.operators.roles()}
        except Exception:  # noqa: BLE001 - unknown here: the engine's own check decides
            return True
        return "admin" in held or ENGINE_ROLE.get(need, need) in held

    def _refuse(self, pane_id: str, action: str, need: str) -> None:
        who = (
            f"{self.served.name} is {self.served.role}"
            if self.served is not None
            else f"{self.engine.identity.verified} is {self._role_word()}"
        )
        self._say_refused(f"Refused: {action.replace('_', ' ')} needs the {need} role; {who}.")
        self._audit_refusal(f"{pane_id}.{action}", need)

    def _role_word(self) -> str:
        try:
            return self.engine.operators.whoami().role
        except Exception:  # noqa: BLE001
            return "not allowed"

    def _say_refused(self, line: str) -> None:
        self.errors.append(line)
        self.notify(line, severity="warning", timeout=8)

    @work(thread=True, exit_on_error=False, group="app.refused")
    def _audit_refusal(self, action: str, need: str) -> None:
        self.engine.audit.refused(
            action, target_kind="console key", target_id=action, reason=f"needs the {need} role (console key)"
        )
