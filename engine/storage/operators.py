"""The operator directory port: who the connection is, and which roles a name holds. SQLite keeps
roles in a file beside the database (the OS vouches for the user); PostgreSQL keeps them as database
roles and GRANTs (the server vouches for the user and refuses a viewer's write itself)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class OperatorEntry:
    name: str
    roles: tuple[str, ...]  # role words: viewer, curator, forget, admin
    why: str = ""  # "operators file", "database owner", "PostgreSQL role memconsole_curator", ...


class OperatorDirectory(Protocol):
    where: str  # the operators file's path, or "PostgreSQL roles"

    def connection_user(self) -> str | None:
        """The name the database itself vouches for (PostgreSQL `current_user`); None on SQLite."""
        ...

    def roles_of(self, name: str) -> tuple[frozenset[str], str]:
        """(role words, why) for `name`; raises Refused when the directory cannot be trusted."""
        ...

    def list(self) -> list[OperatorEntry]: ...

    def grant(self, name: str, role: str) -> None: ...

    def revoke(self, name: str, role: str) -> None: ...
