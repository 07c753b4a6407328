"""What the adapter's connection carries: the table gateways and read models in SQLite's SQL,
mixed into the connection class (`Gateways`), so a service reaches `conn.memories`,
`conn.forget_queries`."""

from __future__ import annotations

from functools import cached_property

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
from engine.storage.sqlite.gateways.rule_history import SqliteRuleHistoryRows
from engine.storage.sqlite.gateways.rules import SqliteRuleRows
from engine.storage.sqlite.gateways.sessions import SqliteSessionRows
from engine.storage.sqlite.gateways.tombstones import SqliteTombstoneRows
from engine.storage.sqlite.queries.audit import SqliteAuditQueries
from engine.storage.sqlite.queries.curator import SqliteCuratorQueries
from engine.storage.sqlite.queries.forget import SqliteForgetQueries
from engine.storage.sqlite.queries.health import SqliteHealthQueries
from engine.storage.sqlite.queries.imports import SqliteImportQueries
from engine.storage.sqlite.queries.lifecycle import SqliteLifecycleQueries
from engine.storage.sqlite.queries.memory import SqliteMemoryQueries


class Gateways:
    """One instance of each per connection, made on first use."""

    @cached_property
    def meta(self) -> SqliteMetaRows:
        return SqliteMetaRows(self)

    @cached_property
    def sessions(self) -> SqliteSessionRows:
        return SqliteSessionRows(self)

    @cached_property
    def messages(self) -> SqliteMessageRows:
        return SqliteMessageRows(self)

    @cached_property
    def memories(self) -> SqliteMemoryRows:
        return SqliteMemoryRows(self)

    @cached_property
    def rules(self) -> SqliteRuleRows:
        return SqliteRuleRows(self)

    @cached_property
    def rule_history(self) -> SqliteRuleHistoryRows:
        return SqliteRuleHistoryRows(self)

    @cached_property
    def flows(self) -> SqliteFlowRows:
        return SqliteFlowRows(self)

    @cached_property
    def flow_runs(self) -> SqliteFlowRunRows:
        return SqliteFlowRunRows(self)

    @cached_property
    def proposals(self) -> SqliteProposalRows:
        return SqliteProposalRows(self)

    @cached_property
    def curator_runs(self) -> SqliteCuratorRunRows:
        return SqliteCuratorRunRows(self)

    @cached_property
    def audit(self) -> SqliteAuditRows:
        return SqliteAuditRows(self)

    @cached_property
    def forget_requests(self) -> SqliteForgetRequestRows:
        return SqliteForgetRequestRows(self)

    @cached_property
    def tombstones(self) -> SqliteTombstoneRows:
        return SqliteTombstoneRows(self)

    @cached_property
    def import_watermarks(self) -> SqliteImportWatermarkRows:
        return SqliteImportWatermarkRows(self)

    @cached_property
    def memory_queries(self) -> SqliteMemoryQueries:
        return SqliteMemoryQueries(self)

    @cached_property
    def audit_queries(self) -> SqliteAuditQueries:
        return SqliteAuditQueries(self)

    @cached_property
    def forget_queries(self) -> SqliteForgetQueries:
        return SqliteForgetQueries(self)

    @cached_property
    def curator_queries(self) -> SqliteCuratorQueries:
        return SqliteCuratorQueries(self)

    @cached_property
    def lifecycle_queries(self) -> SqliteLifecycleQueries:
        return SqliteLifecycleQueries(self)

    @cached_property
    def imports_queries(self) -> SqliteImportQueries:
        return SqliteImportQueries(self)

    @cached_property
    def health_queries(self) -> SqliteHealthQueries:
        return SqliteHealthQueries(self)
