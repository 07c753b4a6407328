"""Operators (`eng.operators`): who the caller is, which roles they hold, and the check every
guarded engine call goes through (engine/roles.py says which call needs which role).

Where roles come from:
- an MCP token's caller: `agent` (the token file says what else it may do: read-only, agents=);
- through an agents' door (MCP stdio, the Hermes provider): the OS user's roles plus `agent`;
- an identity an admin's own process vouched for (`open_engine(actor=...)`): that admin's roles;
- anyone else: the operator directory of the backend (engine/storage/operators.py): on SQLite the
  operators file beside the database (absent: the database file's owner is admin, every other OS
  user a viewer), on PostgreSQL the memconsole_* database roles.

A refusal raises `Refused` naming the role in one line and leaves an audit row (action `refused`)
when the caller may write one (a viewer's SQLite file may be read-only to them: then only the
exception).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from engine.audit.log import append
from engine.context import Context
from engine.errors import InvalidInput, ReadOnly, Refused
from engine.identity import Identity
from engine.identity_names import actor_name
from engine.roles import OPERATOR_ROLES, Role, best, expand, role_of
from engine.storage.operators import OperatorDirectory, OperatorEntry

T = TypeVar("T")

# Changes to the browser console's accounts (console/serve/accounts.py): the audit action of each.
ACCOUNT_CHANGES = {
    "add": "serve-user-add",
    "passwd": "serve-user-passwd",
    "remove": "serve-user-remove",
    "link": "serve-user-link",
    "role": "serve-user-role",
}


@dataclass(frozen=True)
class WhoAmI:
    verified: str
    source: str
    label: str | None
    actor: str  # the audit text
    role: str  # one word: the strongest role held
    roles: list[str]
    why: str
    database: str
    read_only: bool
    directory: str  # the operators file, or "PostgreSQL roles"


class Operators:
    def __init__(self, ctx: Context, directory: OperatorDirectory) -> None:
        self.ctx = ctx
        self.directory = directory
        self.is_read_only: Callable[[], bool] = lambda: False  # the façade's MemoryEngine.read_only

    # -- roles -------------------------------------------------------------------------------------
    def roles_with_why(self, ident: Identity | None = None) -> tuple[frozenset[Role], str]:
        ident = ident or self.ctx.identity
        if ident.source == "token":
            return expand([Role.AGENT]), "MCP token"
        if ident.grants is not None:
            words, why = ident.grants, "vouched for by an admin's process"
        else:
            words, why = self.directory.roles_of(ident.verified)
        roles = [r for w in words if (r := _known(w)) is not None]
        if ident.door:
            roles.append(Role.AGENT)
            why += " + agents' door"
        return expand(roles), why

    def roles(self, ident: Identity | None = None) -> frozenset[Role]:
        return self.roles_with_why(ident)[0]

    def check(self, key: str, need: Role) -> None:
        """Pass, or audit the refusal and raise Refused naming `need` (one line)."""
        ident = self.ctx.identity
        try:
            held = self.roles(ident)
        except Refused as exc:  # an untrusted operators file: nothing above viewer is granted
            self._audit_refusal(key, need, str(exc))
            raise
        if need in held:
            return
        word = "forget officer" if need is Role.FORGET else need.value
        why = f"{key} needs the {word} role; {ident.verified} is {best(held)}"
        self._audit_refusal(key, need, why)
        raise Refused(why)

    def _audit_refusal(self, key: str, need: Role, why: str) -> None:
        summary = {"attempted": key, "needs": need.value, "why": why}
        with contextlib.suppress(Exception):  # the refusal stands even when it cannot be written
            self.ctx.store.write(
                lambda c: append(
                    c, at=self.ctx.clock.now(), actor=self.ctx.actor, action="refused",
                    target_kind="call", target_id=key, reason=why, summary=summary,
                )
            )  # fmt: skip

    # -- verbs -------------------------------------------------------------------------------------
    def whoami(self) -> WhoAmI:
        ident = self.ctx.identity
        try:
            roles, why = self.roles_with_why(ident)
        except Refused as exc:
            roles, why = expand([]), str(exc)
        return WhoAmI(
            verified=ident.verified,
            source=ident.source,
            label=ident.label,
            actor=ident.actor,
            role=best(roles),
            roles=sorted(r.value for r in roles),
            why=why,
            database=str(self.ctx.path),
            read_only=self.is_read_only(),
            directory=self.directory.where,
        )

    def list(self) -> list[OperatorEntry]:
        return self.directory.list()

    def grant(self, name: str, role: str) -> OperatorEntry:
        """Give `name` (an OS user on SQLite, a database role on PostgreSQL) `role`; audited."""
        who, r = self._name_role(name, role)
        self.directory.grant(who, r.value)
        self._audit("operator-grant", who, r)
        return self._entry(who)

    def revoke(self, name: str, role: str) -> OperatorEntry:
        who, r = self._name_role(name, role)
        self.directory.revoke(who, r.value)
        self._audit("operator-revoke", who, r)
        return self._entry(who)

    def change_account(
        self, change: str, name: str, apply: Callable[[], T], *, role: str = "", where: str = ""
    ) -> T:
        """A change to a browser console account (`memconsole serve-user ...`; the accounts file is
        the console's, so it is passed in as `apply`): admin only (checked before `apply` runs), then
        one audit row under the caller's verified identity. No secret (password, link token) is
        recorded: only the change, the account, its role and the file."""
        action = ACCOUNT_CHANGES.get(change)
        if action is None:
            raise InvalidInput(f"unknown account change {change!r} (one of: {', '.join(ACCOUNT_CHANGES)})")
        if self.is_read_only():  # the change could not be audited: refuse it before it is made
            raise ReadOnly(f"serve-user {change} needs a writable database (this one is read-only)")
        result = apply()
        reason = f"{change} {role}".strip()
        summary = {"change": change, "role": role, "accounts": where}
        self.ctx.store.write(
            lambda c: append(
                c, at=self.ctx.clock.now(), actor=self.ctx.actor, action=action,
                target_kind="serve-account", target_id=name, reason=reason, summary=summary,
            )
        )  # fmt: skip
        return result

    def _name_role(self, name: str, role: str) -> tuple[str, Role]:
        who = actor_name(name, what="operator name")
        if " " in who:
            raise InvalidInput(
                f"operator name {who!r} holds a space (an OS user or database role is one word)"
            )
        r = role_of(role)
        if r not in OPERATOR_ROLES:
            raise InvalidInput(
                f"{r.value} is not granted to operators (MCP tokens and agents' doors hold it)"
            )
        return who, r

    def _entry(self, who: str) -> OperatorEntry:
        words, why = self.directory.roles_of(who)
        return OperatorEntry(who, tuple(sorted(words)), why)

    def _audit(self, action: str, who: str, role: Role) -> None:
        self.ctx.store.write(
            lambda c: append(
                c, at=self.ctx.clock.now(), actor=self.ctx.actor, action=action,
                target_kind="operator", target_id=who, reason=f"{action.split('-')[1]} {role.value}",
                summary={"role": role.value, "where": self.directory.where},
            )
        )  # fmt: skip


def _known(word: str) -> Role | None:
    try:
        return role_of(word)
    except InvalidInput:
        return None  # an unknown word in the file grants nothing
