"""What the adapter's connection carries: the table gateways and read models in SQLite's SQL,
mixed into the connection class (`Gateways`), so a service reaches `conn.memories`,
`conn.forget_queries`. Each class is imported on first use: a one-shot CLI call pays only for
the tables it touches."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.storage.sqlite.gateways.audit import SqliteAuditRows
    from engine.storage.sqlite.gateways.curator_runs import SqliteCuratorRunRows
    from engine.storage.sqlite.gateways.flow_runs import SqliteFlowRunRows
    from engine.storage.sqlite.gateways.flows import SqliteFlowRows
    from engine.storage.sqlite.gateways.forget_requests import SqliteForgetRequestRows
    from engine.storage.sqlite.gateways.import_watermarks import SqliteImportWatermarkRows
    from engine.storage.sqlite.gateways.memories import SqliteMemoryRows
    from engine.storage.sqlite.gateways.messages import SqliteMessageRows
    from engine.storage.sqlite.gateways.meta import SqliteMetaRows
    from engine.storage.sqlite.gateways.proposals import SqliteProposalRows
    from engine.storage.sqlite.gateways.recall_log import SqliteRecallLogRows
    from engine.storage.sqlite.gateways.retrieval_checks import SqliteRetrievalCheckRows
    from engine.storage.sqlite.gateways.rule_history import SqliteRuleHistoryRows
    from engine.storage.sqlite.gateways.rules import SqliteRuleRows
    from engine.storage.sqlite.gateways.sessions import SqliteSessionRows
    from engine.storage.sqlite.gateways.tombstones import SqliteTombstoneRows
    from engine.storage.sqlite.gateways.vector_staging import SqliteVectorStagingRows
    from engine.storage.sqlite.queries.audit import SqliteAuditQueries
    from engine.storage.sqlite.queries.curator import SqliteCuratorQueries
    from engine.storage.sqlite.queries.forget import SqliteForgetQueries
    from engine.storage.sqlite.queries.health import SqliteHealthQueries
    from engine.storage.sqlite.queries.imports import SqliteImportQueries
    from engine.storage.sqlite.queries.lifecycle import SqliteLifecycleQueries
    from engine.storage.sqlite.queries.memory import SqliteMemoryQueries
    from engine.storage.sqlite.queries.recalls import SqliteRecallQueries


class Gateways:
    """One instance of each per connection, made on first use."""

    @cached_property
    def meta(self) -> SqliteMetaRows:
        from engine.storage.sqlite.gateways.meta import SqliteMetaRows

        return SqliteMetaRows(self)

    @cached_property
    def sessions(self) -> SqliteSessionRows:
        from engine.storage.sqlite.gateways.sessions import SqliteSessionRows

        return SqliteSessionRows(self)

    @cached_property
    def messages(self) -> SqliteMessageRows:
        from engine.storage.sqlite.gateways.messages import SqliteMessageRows

        return SqliteMessageRows(self)

    @cached_property
    def memories(self) -> SqliteMemoryRows:
        from engine.storage.sqlite.gateways.memories import SqliteMemoryRows

        return SqliteMemoryRows(self)

    @cached_property
    def rules(self) -> SqliteRuleRows:
        from engine.storage.sqlite.gateways.rules import SqliteRuleRows

        return SqliteRuleRows(self)

    @cached_property
    def rule_history(self) -> SqliteRuleHistoryRows:
        from engine.storage.sqlite.gateways.rule_history import SqliteRuleHistoryRows

        return SqliteRuleHistoryRows(self)

    @cached_property
    def flows(self) -> SqliteFlowRows:
        from engine.storage.sqlite.gateways.flows import SqliteFlowRows

        return SqliteFlowRows(self)

    @cached_property
    def flow_runs(self) -> SqliteFlowRunRows:
        from engine.storage.sqlite.gateways.flow_runs import SqliteFlowRunRows

        return SqliteFlowRunRows(self)

    @cached_property
    def proposals(self) -> SqliteProposalRows:
        from engine.storage.sqlite.gateways.proposals import SqliteProposalRows

        return SqliteProposalRows(self)

    @cached_property
    def curator_runs(self) -> SqliteCuratorRunRows:
        from engine.storage.sqlite.gateways.curator_runs import SqliteCuratorRunRows

        return SqliteCuratorRunRows(self)

    @cached_property
    def audit(self) -> SqliteAuditRows:
        from engine.storage.sqlite.gateways.audit import SqliteAuditRows

        return SqliteAuditRows(self)

    @cached_property
    def forget_requests(self) -> SqliteForgetRequestRows:
        from engine.storage.sqlite.gateways.forget_requests import SqliteForgetRequestRows

        return SqliteForgetRequestRows(self)

    @cached_property
    def tombstones(self) -> SqliteTombstoneRows:
        from engine.storage.sqlite.gateways.tombstones import SqliteTombstoneRows

        return SqliteTombstoneRows(self)

    @cached_property
    def import_watermarks(self) -> SqliteImportWatermarkRows:
        from engine.storage.sqlite.gateways.import_watermarks import SqliteImportWatermarkRows

        return SqliteImportWatermarkRows(self)

    @cached_property
    def memory_queries(self) -> SqliteMemoryQueries:
        from engine.storage.sqlite.queries.memory import SqliteMemoryQueries

        return SqliteMemoryQueries(self)

    @cached_property
    def audit_queries(self) -> SqliteAuditQueries:
        from engine.storage.sqlite.queries.audit import SqliteAuditQueries

        return SqliteAuditQueries(self)

    @cached_property
    def forget_queries(self) -> SqliteForgetQueries:
        from engine.storage.sqlite.queries.forget import SqliteForgetQueries

        return SqliteForgetQueries(self)

    @cached_property
    def curator_queries(self) -> SqliteCuratorQueries:
        from engine.storage.sqlite.queries.curator import SqliteCuratorQueries

        return SqliteCuratorQueries(self)

    @cached_property
    def lifecycle_queries(self) -> SqliteLifecycleQueries:
        from engine.storage.sqlite.queries.lifecycle import SqliteLifecycleQueries

        return SqliteLifecycleQueries(self)

    @cached_property
    def imports_queries(self) -> SqliteImportQueries:
        from engine.storage.sqlite.queries.imports import SqliteImportQueries

        return SqliteImportQueries(self)

    @cached_property
    def health_queries(self) -> SqliteHealthQueries:
        from engine.storage.sqlite.queries.health import SqliteHealthQueries

        return SqliteHealthQueries(self)

    @cached_property
    def recall_log(self) -> SqliteRecallLogRows:
        from engine.storage.sqlite.gateways.recall_log import SqliteRecallLogRows

        return SqliteRecallLogRows(self)

    @cached_property
    def retrieval_checks(self) -> SqliteRetrievalCheckRows:
        from engine.storage.sqlite.gateways.retrieval_checks import SqliteRetrievalCheckRows

        return SqliteRetrievalCheckRows(self)

    @cached_property
    def recall_queries(self) -> SqliteRecallQueries:
        from engine.storage.sqlite.queries.recalls import SqliteRecallQueries

        return SqliteRecallQueries(self)

    @cached_property
    def vector_staging(self) -> SqliteVectorStagingRows:
        from engine.storage.sqlite.gateways.vector_staging import SqliteVectorStagingRows

        return SqliteVectorStagingRows(self)
