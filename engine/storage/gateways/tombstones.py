"""The `tombstones` table gateway (keyed prints of forgotten text): its only writer.

Hashes arrive computed (engine/forget/tombstones.py keys them); the gateway stores and matches
them, never the text."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

from engine.storage.gateways.base import Gateway


class TombstoneRows(Gateway):
    """Operations on `tombstones` rows, inside the caller's transaction."""

    @abstractmethod
    def insert(
        self,
        request_id: int,
        kind: str,
        target_id: str,
        ident_hash: str | None,
        content_hash: str | None,
        at: float,
    ) -> None:
        """One tombstone of a forget case (its legacy `content_sha256` left empty)."""

    @abstractmethod
    def has_ident(self, kind: str, ident_hash: str) -> bool:
        """Is there a tombstone of `kind` with this identity hash?"""

    @abstractmethod
    def has_legacy_session(self, session_id: str) -> bool:
        """Is there a legacy session tombstone (one with a plain `content_sha256`) whose target is
        this session id?"""

    @abstractmethod
    def has_content(self, kinds: Sequence[str], content_hash: str) -> bool:
        """Is there a tombstone of one of `kinds` with this keyed content hash?"""

    @abstractmethod
    def has_legacy_content(self, kind: str, sha256: str) -> bool:
        """Is there a legacy tombstone of `kind` whose plain `content_sha256` is this (non-empty)?"""

    @abstractmethod
    def any_content(self) -> bool:
        """Does any tombstone carry a keyed content hash?"""
