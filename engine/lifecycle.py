"""The memory lifecycle as one mixin for MemoryEngine. Every call returns dataclasses from
engine/lifecycle_types.py; every mutation is audited.

Decay (decay_pass.py, math in decay.py)
    decay_pass(now=None, dry_run=False, refresh_snapshots=False, scope="all") -> DecayPassResult
    forecast(days, now=None, rates=None, limit=200, agent=None) -> Forecast        (writes nothing)
    decay_curve(memory_id, days=60, rates=None, now=None, points=61) -> DecayCurve
    rule_curve(rule_id, days=30, now=None) -> DecayCurve
    strength_distribution(now=None, bins=10) -> StrengthDistribution
    last_decay_pass_at() -> float | None
    `rates` is a what-if of half-lives in days per kind, e.g. {"semantic": 60}.
Rules and rejections (rules.py)
    list_rules(status=, agent=, domain=, source=, min_score=, max_score=, pinned=, query=,
               include_global=, order=, limit=) -> list[Rule]
    get_rule(id), rule_detail(id, days=30) -> RuleDetail, rule_history(id), rule_counts(agent=None)
    add_rule(text, score=5, ...), pin_rule, unpin_rule, retire_rule, revive_rule, reinforce_rule,
    record_violation (each (id, reason="") -> Rule), set_rule_score(id, score, reason) -> Rule
    reject(text, agent=, user=, domain=) -> RejectResult
Flows (flows.py)
    list_flows(domain=, agent=, status=, flagged=) -> list[Flow]; get_flow(name_or_id);
    flow_detail(name_or_id, runs=200) -> FlowDetail; check_flows(text, agent=, limit=5)
    add_flow(name, steps, ...), add_flow_doc(doc, replace=False), record_flow_run(name, outcome, ...),
    set_flow_status(name_or_id, "active" | "disabled")
Boot and gates (boot.py, gates.py)
    boot_context(agent=None, max_rules=None) -> BootContext (its .text is the fenced block)
    gate_pre(text, agent=None) -> GatePre; gate_post(outcome, summary, agent=, flow=) -> GatePost
"""
from __future__ import annotations

from .boot import BootMixin
from .decay_pass import DecayMixin
from .flows import FlowsMixin
from .gates import GatesMixin
from .rules import RulesMixin


class LifecycleMixin(DecayMixin, RulesMixin, FlowsMixin, BootMixin, GatesMixin):
    """Decay, rules, flows, boot context and gates (see each module's docstring)."""
