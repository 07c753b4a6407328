"""The memory lifecycle: decay, rules, flows, boot context and gates, as five services on the
engine. Every call returns dataclasses from engine/lifecycle/types.py; every mutation is audited.

eng.decay (decay_pass.py; forecasts in decay_forecast.py, math in decay.py)      Decay(ctx)
    run(now=None, dry_run=False, refresh_snapshots=False, scope="all") -> DecayPassResult
    forecast(days, now=None, rates=None, limit=200, agent=None) -> Forecast        (writes nothing)
    curve(memory_id, days=60, rates=None, now=None, points=61) -> DecayCurve
    distribution(now=None, bins=10) -> StrengthDistribution
    timeline(days=30, now=None, rates=None, agent=None) -> ForecastTimeline
    last_run_at() -> float | None
    `rates` is a what-if of half-lives in days per kind, e.g. {"semantic": 60}.
eng.rules (rules.py; reads in rule_reads.py, changes in rule_change.py, history rows through
    conn.rule_history)      Rules(ctx, memories)
    list(status=, agent=, domain=, source=, min_score=, max_score=, pinned=, query=,
         include_global=, order=, limit=) -> list[Rule]
    get(id), detail(id, days=30) -> RuleDetail, history(id), counts(agent=None),
    curve(id, days=30, now=None) -> DecayCurve, facets() -> RuleFacets
    add(text, score=5, ...), pin, unpin, retire, revive, reinforce, record_violation
    (each (id, reason="") -> Rule), set_score(id, score, reason) -> Rule
    reject(text, agent=, user=, domain=) -> RejectResult
eng.flows (flows.py)      Flows(ctx)
    list(domain=, agent=, status=, flagged=) -> list[Flow]; get(name_or_id);
    detail(name_or_id, runs=200) -> FlowDetail; check(text, agent=, limit=5) -> list[FlowMatch]
    add(name, steps, ...), add_doc(doc, replace=False), record_run(name, outcome, ...),
    set_status(name_or_id, "active" | "disabled")
eng.boot, eng.gates (boot.py, gates.py)      Boot(ctx, rules); Gates(ctx, rules, flows, boot, memories)
    boot.context(agent=None, max_rules=None) -> BootContext (its .text is the fenced block)
    gates.pre(text, agent=None) -> GatePre; gates.post(outcome, summary, agent=, flow=) -> GatePost
Storage: no SQL here. Rows go through the gateways `conn.rules`, `conn.rule_history`, `conn.flows`,
`conn.flow_runs`; views and forecasts through the read model `conn.lifecycle_queries`
(engine/storage/queries/lifecycle.py); the decay pass reaches memories through
`store.decay_access` with typed filters and changes (engine/storage/lifecycle.py); rules and flows
match text through `store.keyword`. Each adapter renders its own SQL.
"""
