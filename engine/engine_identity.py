"""Who is calling an engine: the verified identity its calls are made and audited under, the
names a trusted process may vouch for, and the per-thread `acting_as` of the agents' doors
(engine/identity.py holds the Identity type and where identities come from)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING

from engine.identity import Identity, checked_label, operator_from_env, operator_grants_from_env, os_identity
from engine.identity_names import actor_name
from engine.roles import Role

if TYPE_CHECKING:
    from engine.config import Settings
    from engine.context import Context
    from engine.operators import Operators


class CallerIdentity:
    """The caller part of MemoryEngine (`ctx`, `operators` and `settings` are the engine's)."""

    ctx: Context
    operators: Operators
    settings: Settings

    @property
    def actor(self) -> str:
        """The current caller as the audit's `actor` text (`alice`, `alice (as ops-lead)`)."""
        return self.ctx.actor

    @actor.setter
    def actor(self, value: str) -> None:
        self.ctx.default_identity = self._vouched(value, self.ctx.default_identity)

    @property
    def identity(self) -> Identity:
        """The verified caller (engine/identity.py)."""
        return self.ctx.identity

    @staticmethod
    def _checked_actor(value: str, settings: Settings) -> str:
        return actor_name(value, allow_mixed_script=settings.actor_mixed_scripts)

    def _identity(self, actor: str | None, label: str | None, operator: str | None) -> Identity:
        """The engine's verified caller: PostgreSQL's `current_user` on a server, else the OS user;
        an operator account (`operator=`, $MEMCONSOLE_OPERATOR) or a vouched name (`actor=`) only
        when that caller is an admin. `label` (the CLI's `--actor`) is recorded beside it."""
        mixed = self.settings.actor_mixed_scripts
        pg_user = self.operators.directory.connection_user()
        base = Identity(pg_user, "pg") if pg_user else os_identity()
        ident = base
        operator = operator or operator_from_env()
        if operator:
            if Role.ADMIN not in self.operators.roles(base):
                from engine.errors import Refused

                raise Refused(f"only an admin may act for an operator account; {base.verified} is not one")
            # The login service vouches for the account's role too (MEMCONSOLE_ROLE), when it says.
            grants = operator_grants_from_env() if operator == operator_from_env() else None
            ident = Identity(self._checked_actor(operator, self.settings), "operator", grants=grants)
        elif actor:
            ident = self._vouched(actor, base)
        return ident.labelled(checked_label(label, allow_mixed_script=mixed) or ident.label)

    def _vouched(self, actor: str, base: Identity) -> Identity:
        """`actor` as the verified name when `base` is an admin's own process (a program or a
        test vouching for its caller, keeping the admin's roles); for anyone else a label only."""
        name = self._checked_actor(actor, self.settings)
        roles = self.operators.roles(base)
        if Role.ADMIN in roles and not base.door:
            return Identity(name, "operator", grants=frozenset(r.value for r in roles))
        return base.labelled(name)

    def acting_as(self, actor: str | Identity) -> AbstractContextManager[None]:
        """Within the block, this thread's (or task's) calls are made, and audited, as `actor`:
        an Identity as given; the engine's own actor text = itself through an agents' door (MCP
        stdio, Hermes; adds the agent role); any other name = an MCP token's verified actor.
        Other threads keep their own caller (see engine/context.py)."""
        if isinstance(actor, Identity):
            return self.ctx.acting_as(actor)
        if actor == self.ctx.default_identity.actor:
            return self.ctx.acting_as(replace(self.ctx.default_identity, door=True))
        return self.ctx.acting_as(Identity(self._checked_actor(actor, self.settings), "token"))

    def as_agents_door(self) -> None:
        """This engine serves an agent in process (the Hermes provider): its own caller, the OS
        user, also holds the agent role (remember, log turns...) outside `acting_as` blocks."""
        self.ctx.default_identity = replace(self.ctx.default_identity, door=True)
