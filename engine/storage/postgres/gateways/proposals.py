"""`proposals` rows in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.gateways.proposals import ProposalRows


class PgProposalRows(ProposalRows):
    pass
