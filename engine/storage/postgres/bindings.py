"""What the adapter's connection carries: the table gateways and read models in PostgreSQL's SQL,
mixed into the connection class (`Gateways`), so a service reaches `conn.memories`,
`conn.forget_queries`. Each class is imported on first use: a one-shot CLI call pays only for
the tables it touches."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.storage.postgres.gateways.audit import PgAuditRows
    from engine.storage.postgres.gateways.curator_runs import PgCuratorRunRows
    from engine.storage.postgres.gateways.flow_runs import PgFlowRunRows
    from engine.storage.postgres.gateways.flows import PgFlowRows
    from engine.storage.postgres.gateways.forget_requests import PgForgetRequestRows
    from engine.storage.postgres.gateways.import_watermarks import PgImportWatermarkRows
    from engine.storage.postgres.gateways.memories import PgMemoryRows
    from engine.storage.postgres.gateways.messages import PgMessageRows
    from engine.storage.postgres.gateways.meta import PgMetaRows
    from engine.storage.postgres.gateways.proposals import PgProposalRows
    from engine.storage.postgres.gateways.recall_log import PgRecallLogRows
    from engine.storage.postgres.gateways.retrieval_checks import PgRetrievalCheckRows
    from engine.storage.postgres.gateways.rule_history import PgRuleHistoryRows
    from engine.storage.postgres.gateways.rules import PgRuleRows
    from engine.storage.postgres.gateways.sessions import PgSessionRows
    from engine.storage.postgres.gateways.tombstones import PgTombstoneRows
    from engine.storage.postgres.gateways.vector_staging import PgVectorStagingRows
    from engine.storage.postgres.queries.audit import PgAuditQueries
    from engine.storage.postgres.queries.curator import PgCuratorQueries
    from engine.storage.postgres.queries.forget import PgForgetQueries
    from engine.storage.postgres.queries.health import PgHealthQueries
    from engine.storage.postgres.queries.imports import PgImportQueries
    from engine.storage.postgres.queries.lifecycle import PgLifecycleQueries
    from engine.storage.postgres.queries.memory import PgMemoryQueries
    from engine.storage.postgres.queries.recalls import PgRecallQueries


class Gateways:
    """One instance of each per connection, made on first use."""

    @cached_property
    def meta(self) -> PgMetaRows:
        from engine.storage.postgres.gateways.meta import PgMetaRows

        return PgMetaRows(self)

    @cached_property
    def sessions(self) -> PgSessionRows:
        from engine.storage.postgres.gateways.sessions import PgSessionRows

        return PgSessionRows(self)

    @cached_property
    def messages(self) -> PgMessageRows:
        from engine.storage.postgres.gateways.messages import PgMessageRows

        return PgMessageRows(self)

    @cached_property
    def memories(self) -> PgMemoryRows:
        from engine.storage.postgres.gateways.memories import PgMemoryRows

        return PgMemoryRows(self)

    @cached_property
    def rules(self) -> PgRuleRows:
        from engine.storage.postgres.gateways.rules import PgRuleRows

        return PgRuleRows(self)

    @cached_property
    def rule_history(self) -> PgRuleHistoryRows:
        from engine.storage.postgres.gateways.rule_history import PgRuleHistoryRows

        return PgRuleHistoryRows(self)

    @cached_property
    def flows(self) -> PgFlowRows:
        from engine.storage.postgres.gateways.flows import PgFlowRows

        return PgFlowRows(self)

    @cached_property
    def flow_runs(self) -> PgFlowRunRows:
        from engine.storage.postgres.gateways.flow_runs import PgFlowRunRows

        return PgFlowRunRows(self)

    @cached_property
    def proposals(self) -> PgProposalRows:
        from engine.storage.postgres.gateways.proposals import PgProposalRows

        return PgProposalRows(self)

    @cached_property
    def curator_runs(self) -> PgCuratorRunRows:
        from engine.storage.postgres.gateways.curator_runs import PgCuratorRunRows

        return PgCuratorRunRows(self)

    @cached_property
    def audit(self) -> PgAuditRows:
        from engine.storage.postgres.gateways.audit import PgAuditRows

        return PgAuditRows(self)

    @cached_property
    def forget_requests(self) -> PgForgetRequestRows:
        from engine.storage.postgres.gateways.forget_requests import PgForgetRequestRows

        return PgForgetRequestRows(self)

    @cached_property
    def tombstones(self) -> PgTombstoneRows:
        from engine.storage.postgres.gateways.tombstones import PgTombstoneRows

        return PgTombstoneRows(self)

    @cached_property
    def import_watermarks(self) -> PgImportWatermarkRows:
        from engine.storage.postgres.gateways.import_watermarks import PgImportWatermarkRows

        return PgImportWatermarkRows(self)

    @cached_property
    def memory_queries(self) -> PgMemoryQueries:
        from engine.storage.postgres.queries.memory import PgMemoryQueries

        return PgMemoryQueries(self)

    @cached_property
    def audit_queries(self) -> PgAuditQueries:
        # with the anchor's after-write reads in one statement (queries/audit_anchor.py)
        from engine.storage.postgres.queries.audit_anchor import PgAnchorAuditQueries

        return PgAnchorAuditQueries(self)

    @cached_property
    def forget_queries(self) -> PgForgetQueries:
        from engine.storage.postgres.queries.forget import PgForgetQueries

        return PgForgetQueries(self)

    @cached_property
    def curator_queries(self) -> PgCuratorQueries:
        from engine.storage.postgres.queries.curator import PgCuratorQueries

        return PgCuratorQueries(self)

    @cached_property
    def lifecycle_queries(self) -> PgLifecycleQueries:
        from engine.storage.postgres.queries.lifecycle import PgLifecycleQueries

        return PgLifecycleQueries(self)

    @cached_property
    def imports_queries(self) -> PgImportQueries:
        from engine.storage.postgres.queries.imports import PgImportQueries

        return PgImportQueries(self)

    @cached_property
    def health_queries(self) -> PgHealthQueries:
        from engine.storage.postgres.queries.health import PgHealthQueries

        return PgHealthQueries(self)

    @cached_property
    def recall_log(self) -> PgRecallLogRows:
        from engine.storage.postgres.gateways.recall_log import PgRecallLogRows

        return PgRecallLogRows(self)

    @cached_property
    def retrieval_checks(self) -> PgRetrievalCheckRows:
        from engine.storage.postgres.gateways.retrieval_checks import PgRetrievalCheckRows

        return PgRetrievalCheckRows(self)

    @cached_property
    def recall_queries(self) -> PgRecallQueries:
        from engine.storage.postgres.queries.recalls import PgRecallQueries

        return PgRecallQueries(self)

    @cached_property
    def vector_staging(self) -> PgVectorStagingRows:
        from engine.storage.postgres.gateways.vector_staging import PgVectorStagingRows

        return PgVectorStagingRows(self)
