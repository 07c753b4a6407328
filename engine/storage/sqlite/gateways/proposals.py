"""`proposals` rows in SQLite's SQL."""

from __future__ import annotations

from engine.storage.gateways.proposals import ProposalRows


class SqliteProposalRows(ProposalRows):
    pass
