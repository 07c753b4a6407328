"""Read model: what importers look up before they write (engine/importers/): whether a record is
already here, the rows an import compares its source with, and this database's identity."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.storage.gateways.base import Gateway

if TYPE_CHECKING:
    from engine.storage.port import Row


class ImportQueries(Gateway):
    """Read-only views; the caller's connection."""

    def database_id(self) -> str | None:
        """This database's id (meta `database_id`); None when it has none yet, or no meta table
        (not one of ours)."""
        raise NotImplementedError

    def memory_exists(self, agent: str, content: str) -> bool:
        """`agent` holds a memory with exactly this content."""
        raise NotImplementedError

    def skill_memory(self, agent: str, skill: str) -> Row | None:
        """`agent`'s procedural memory imported from the Hermes skill named `skill` (metadata
        `hermes_skill`): id, content, tier, pinned, metadata; None if there is none."""
        raise NotImplementedError

    def flow_named(self, name: str) -> Row | None:
        """The whole row of the flow called `name` (flow names are unique), or None."""
        raise NotImplementedError

    def session_exists(self, session_id: str) -> bool:
        raise NotImplementedError

    def session_state(self, session_id: str) -> Row | None:
        """What a re-import compares a session with: agent, title, ended_at, metadata; or None."""
        raise NotImplementedError

    def hermes_message_ids(self, session_id: str) -> set[str]:
        """The Hermes message ids (metadata `hermes_id`, as text) of the session's messages."""
        raise NotImplementedError

    def audited(self, target_kind: str, target_id: str, actor: str) -> bool:
        """An audit row by `actor` names this target (e.g. a Hermes curator run already imported)."""
        raise NotImplementedError
