"""Who is calling: a verified identity, never a name the caller typed.

- On SQLite the verified identity is the OS user of the process's uid (`pwd.getpwuid(os.getuid())`,
  never `$USER` or `getpass`, which read the environment).
- On PostgreSQL it is `current_user` of the engine's connection (the server vouches for it).
- Through an MCP token it is the token's actor (the token file vouches for it).
- An admin may hand a process a logged-in operator account (`memconsole serve` does: it logs the
  person in and starts their console with `MEMCONSOLE_OPERATOR=name`, see `operator_from_env`);
  nobody else may.
- The Hermes provider is the OS user running Hermes, labelled with the Hermes agent.

A label (`--actor ops-lead`, the Hermes agent) is recorded beside the verified identity, never
instead of it. The audit table keeps one `actor` text column (its hash covers it), so both travel
in it in one documented format, built by `actor_text` and read back by `parse_actor`:

    alice                      verified identity only
    alice (as ops-lead)        verified identity, then the label

A verified name never holds " (as " (OS users, PostgreSQL roles and token actors are single words),
so the first " (as " splits the two; the label may hold anything (even parentheses).
"""

from __future__ import annotations

import functools
import os
import pwd
from dataclasses import dataclass, replace
from typing import Literal

from engine.identity_names import actor_filter, actor_name

Source = Literal["os", "pg", "token", "operator"]
LABEL_SEP = " (as "
OPERATOR_ENV = "MEMCONSOLE_OPERATOR"  # set by an admin's process (serve) for a logged-in operator


@dataclass(frozen=True)
class Identity:
    verified: str  # the name something other than the caller vouches for
    source: Source  # who vouches: the OS, PostgreSQL, an MCP token, an admin's login service
    label: str | None = None  # what the caller calls themself (`--actor`), recorded beside it
    door: bool = False  # acting through an agents' door (MCP, Hermes): the `agent` role is added
    # Roles fixed by whoever vouched, when that was an admin's own process (open_engine(actor=...)
    # in a program or a test): None = look the name up in the operator directory.
    grants: frozenset[str] | None = None

    @property
    def actor(self) -> str:
        """The audit row's `actor` text."""
        return actor_text(self.verified, self.label)

    def labelled(self, label: str | None) -> Identity:
        return replace(self, label=label or None)


@dataclass(frozen=True)
class ActorText:
    verified: str
    label: str | None


def actor_text(verified: str, label: str | None = None) -> str:
    """`alice` or `alice (as ops-lead)` (a label equal to the verified name adds nothing)."""
    if not label or label == verified:
        return verified
    return f"{verified}{LABEL_SEP}{label})"


def parse_actor(text: str) -> ActorText:
    """An audit row's `actor` text split into the verified identity and the label (None when the
    row carries none; rows written before identities were verified read as verified = the text)."""
    head, sep, tail = text.partition(LABEL_SEP)
    if sep and tail.endswith(")") and head:
        return ActorText(head, tail[:-1])
    return ActorText(text, None)


def checked_label(raw: str | None, *, allow_mixed_script: bool = False) -> str | None:
    """A label in the normal form of every recorded name (engine/identity_names.py)."""
    if raw is None or not str(raw).strip():
        return None
    return actor_name(raw, allow_mixed_script=allow_mixed_script, what="--actor label")


def os_user() -> str:
    """The OS user of this process's real uid, from the password database (not the environment)."""
    uid = os.getuid()
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:  # a uid with no entry (a container's arbitrary uid): the number is the name
        return f"uid:{uid}"
    return actor_filter(name) or f"uid:{uid}"


def os_identity(label: str | None = None) -> Identity:
    return Identity(os_user(), "os", label)


@functools.lru_cache(maxsize=64)  # the password database is read once per uid per process
def owner_name(uid: int) -> str:
    try:
        return actor_filter(pwd.getpwuid(uid).pw_name) or f"uid:{uid}"
    except KeyError:
        return f"uid:{uid}"


ROLE_ENV = "MEMCONSOLE_ROLE"  # the account's role, set beside OPERATOR_ENV by the same login service
# The login service's role words (console/shared/served.py) as engine roles (engine/roles.py).
_SERVED_ROLES = {"viewer": "viewer", "curator": "curator", "forget-officer": "forget", "admin": "admin"}


def operator_grants_from_env() -> frozenset[str] | None:
    """The roles the login service vouches for with the operator account (None: look the name up in
    the operator directory). An unknown word reads as viewer: a typo never grants more."""
    raw = os.environ.get(ROLE_ENV, "").strip()
    if not raw:
        return None
    return frozenset({_SERVED_ROLES.get(raw, "viewer")})


def operator_from_env() -> str | None:
    """The operator account a login service (serve) started this process for, if any. It is
    trusted only when the process's own identity is an admin (checked by the engine)."""
    raw = os.environ.get(OPERATOR_ENV, "").strip()
    return raw or None
