"""The flows service (`eng.flows`): named procedures (ordered steps, trigger phrases) and their runs.

Effectiveness = passes / uses, shown with its counts and a trend (the recent window of runs against
the window before it). A flow under `flow_flag_below` after `flow_flag_min_runs` runs is flagged.
`check(text)` finds the flows for an intended action by trigger phrase, then full text.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from typing import Any

from engine.audit import log as audit
from engine.clock import DAY
from engine.context import Context
from engine.errors import InvalidInput, NotFound, cut
from engine.lifecycle.types import (
    FLOW_OUTCOMES,
    FLOW_STATUSES,
    CurvePoint,
    Flow,
    FlowDetail,
    FlowMatch,
    FlowOutcome,
    FlowRun,
    FlowStats,
    FlowStatus,
)
from engine.memory_input import check_text
from engine.retrieval.query import plan, terms
from engine.storage.indexes import KeywordIndex
from engine.storage.port import Connection
from engine.types import load_json

TEXT_MATCHES = 50  # full-text candidates considered by check()
_FIELDS = {"name", "domain", "agent", "triggers", "steps", "needs_approval", "description", "status"}


def effectiveness(passes: int, uses: int) -> float | None:
    """passes / uses to three decimals (32 of 34 -> 0.941); None before the first run."""
    return round(passes / uses, 3) if uses else None


def flow_stats(
    outcomes: list[bool], last_run_at: float | None, *, window: int, flag_below: float, min_runs: int
) -> FlowStats:
    """Stats from every outcome of a flow, oldest first (True = pass)."""
    uses, passes = len(outcomes), sum(outcomes)
    recent, before = outcomes[-window:], outcomes[-2 * window : -window]
    eff = effectiveness(passes, uses)
    rec = effectiveness(sum(recent), len(recent))
    if not before:
        trend, delta = "new", 0.0
    else:
        delta = round(sum(recent) / len(recent) - sum(before) / len(before), 3)
        trend = "up" if delta > 0.05 else "down" if delta < -0.05 else "flat"
    flagged = uses >= min_runs and eff is not None and eff < flag_below
    return FlowStats(uses, passes, uses - passes, eff, rec, trend, delta, flagged, last_run_at, list(recent))


def _text_list(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise InvalidInput(f"{what} must be a list of text")
    return [check_text(v, f"{what} item", limit=2000).strip() for v in value]


class Flows:
    """`eng.flows`: flows with their stats, matching an intended action, and recording runs."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    @property
    def _keyword(self) -> KeywordIndex:
        """The store's keyword index (attached by the façade)."""
        return self.ctx.store.keyword

    def _stats_settings(self) -> dict[str, Any]:
        ls = self.ctx.settings.lifecycle
        return {
            "window": ls.flow_trend_window,
            "flag_below": ls.flow_flag_below,
            "min_runs": ls.flow_flag_min_runs,
        }

    def _from_rows(self, conn: Connection, rows: Sequence[Any]) -> builtins.list[Flow]:
        ids = [r["id"] for r in rows]
        outcomes: dict[int, builtins.list[bool]] = {i: [] for i in ids}
        last: dict[int, float] = {}
        for fid, outcome, at in conn.flow_runs.outcomes(ids):
            outcomes[fid].append(outcome == "pass")
            last[fid] = at
        fs = self._stats_settings()
        return [
            Flow(
                r["id"],
                r["name"],
                r["domain"],
                r["agent"],
                load_json(r["triggers"], []),
                bool(r["needs_approval"]),
                load_json(r["steps"], []),
                r["status"],
                r["description"],
                r["created_at"],
                flow_stats(outcomes[r["id"]], last.get(r["id"]), **fs),
            )
            for r in rows
        ]

    @staticmethod
    def _row(conn: Connection, name_or_id: str | int) -> Any:
        if isinstance(name_or_id, int) or (isinstance(name_or_id, str) and name_or_id.isdigit()):
            r = conn.flows.row(int(name_or_id))
            if r is not None:
                return r
        r = conn.flows.named(str(name_or_id))
        if r is None:
            raise NotFound(f"no flow named {cut(name_or_id)}")
        return r

    # -- reads ---------------------------------------------------------------------------------------
    def list(
        self,
        *,
        domain: str | None = None,
        agent: str | None = None,
        status: FlowStatus | None = None,
        flagged: bool | None = None,
    ) -> builtins.list[Flow]:
        """Every flow with its counts, effectiveness and trend, by name."""
        with self.ctx.store.reading() as c:
            rows = c.lifecycle_queries.flows(domain=domain, agent=agent, status=status)
            flows = self._from_rows(c, rows)
        return [f for f in flows if flagged is None or f.stats.flagged == flagged]

    def get(self, name_or_id: str | int) -> Flow:
        with self.ctx.store.reading() as c:
            return self._from_rows(c, [self._row(c, name_or_id)])[0]

    def detail(self, name_or_id: str | int, runs: int = 200) -> FlowDetail:
        """A flow, its runs (newest first) and its effectiveness after each run (oldest first)."""
        with self.ctx.store.reading() as c:
            row = self._row(c, name_or_id)
            flow = self._from_rows(c, [row])[0]
            all_runs = c.flow_runs.of_flow(row["id"])
        rolling, passes = [], 0
        start = all_runs[0]["at"] if all_runs else 0.0
        for i, r in enumerate(all_runs, 1):
            passes += r["outcome"] == "pass"
            rolling.append(CurvePoint(round((r["at"] - start) / DAY, 4), r["at"], round(passes / i, 4)))
        recent = [
            FlowRun(r["id"], r["flow_id"], r["outcome"], r["note"], r["agent"], r["at"])
            for r in reversed(all_runs[-int(runs) :])
        ]
        return FlowDetail(flow, recent, rolling)

    def check(self, text: str, *, agent: str | None = None, limit: int = 5) -> builtins.list[FlowMatch]:
        """Flows for an intended action: trigger phrases contained in the text first, then
        full-text matches over name, description, triggers and steps. Disabled flows are skipped."""
        text = check_text(text, "action text", limit=10_000)
        low = " ".join(text.lower().split())
        words = set(terms(text))
        with self.ctx.store.reading() as c:
            rows = c.lifecycle_queries.flows(status="active", for_agent=agent or None)
            by_id = {r["id"]: r for r in rows}
            scored: dict[int, tuple[str, builtins.list[str], float]] = {}
            for r in rows:
                hits = [
                    t
                    for t in load_json(r["triggers"], [])
                    if " ".join(t.lower().split()) in low or (set(terms(t)) and set(terms(t)) <= words)
                ]
                if hits:
                    scored[r["id"]] = ("trigger", hits, 10.0 + max(len(h) for h in hits) / 100)
            p = plan(text)
            if p.index == "words" and by_id:
                for fid, rank in self._keyword.match_ids(c, "flows", p.match or "", TEXT_MATCHES):
                    if fid in by_id and fid not in scored:
                        body = " ".join(
                            [
                                by_id[fid]["name"],
                                by_id[fid]["description"],
                                by_id[fid]["triggers"],
                                by_id[fid]["steps"],
                            ]
                        ).lower()
                        matched = [t for t in p.terms if t in body] or builtins.list(p.terms)
                        scored[fid] = ("text", matched, round(-float(rank), 4))
            keep = sorted(scored, key=lambda i: (-scored[i][2], by_id[i]["name"]))[: max(1, int(limit))]
            flows = {f.id: f for f in self._from_rows(c, [by_id[i] for i in keep])}
        return [FlowMatch(flows[i], scored[i][0], scored[i][1], scored[i][2]) for i in keep]

    # -- writes --------------------------------------------------------------------------------------
    def add(
        self,
        name: str,
        steps: Sequence[str],
        *,
        triggers: Sequence[str] | None = None,
        domain: str = "",
        agent: str = "",
        needs_approval: bool = False,
        description: str = "",
        status: FlowStatus = "active",
        replace: bool = False,
        created_at: float | None = None,
        reason: str = "",
        metadata: dict[str, Any] | None = None,
    ) -> Flow:
        """A new flow (unique name). With `replace`, an existing flow of that name is updated
        in place and keeps its runs. `metadata` (an importer's provenance) is stored with sorted
        keys, so an unchanged re-import compares equal."""
        name = check_text(name, "flow name", limit=200).strip()
        step_list = _text_list(steps, "steps")
        if not step_list:
            raise InvalidInput(f"flow {cut(name)} needs at least one step")
        trigger_list = _text_list(triggers, "triggers")
        if status not in FLOW_STATUSES:
            raise InvalidInput(f"unknown flow status {cut(status)}; use one of {', '.join(FLOW_STATUSES)}")
        domain = check_text(domain or "", "domain", allow_empty=True, limit=200)
        agent = check_text(agent or "", "agent", allow_empty=True, limit=200)
        description = check_text(description or "", "description", allow_empty=True, limit=10_000)
        actor, now = self.ctx.actor, self.ctx.clock.now()
        vals = {
            "domain": domain,
            "agent": agent,
            "triggers": json.dumps(trigger_list, ensure_ascii=False),
            "needs_approval": 1 if needs_approval else 0,
            "steps": json.dumps(step_list, ensure_ascii=False),
            "status": status,
            "description": description,
        }
        if metadata is not None:
            vals["metadata"] = json.dumps(metadata, ensure_ascii=False, sort_keys=True)

        def write(conn: Connection) -> int:
            old = conn.flows.named(name)
            if old is not None and not replace:
                raise InvalidInput(f"a flow named {cut(name)} already exists (use replace to update it)")
            if old is not None:
                conn.flows.update(old["id"], vals, now)
                fid, action = int(old["id"]), "flow-update"
            else:
                at = float(created_at) if created_at is not None else now
                fid = conn.flows.insert({"name": name, **vals, "created_at": at, "updated_at": now})
                action = "flow-add"
            audit.append(
                conn,
                at=now,
                actor=actor,
                action=action,
                target_kind="flow",
                target_id=fid,
                reason=reason,
                summary={
                    "name": name,
                    "steps": len(step_list),
                    "triggers": trigger_list,
                    "needs_approval": bool(needs_approval),
                },
            )
            return fid

        return self.get(self.ctx.store.write(write))

    def add_doc(self, doc: dict, *, replace: bool = False) -> Flow:
        """add() from a JSON document {name, steps, triggers, domain, agent, needs_approval,
        description, status}; unknown keys are an error."""
        if not isinstance(doc, dict):
            raise InvalidInput("a flow document is a JSON object")
        unknown = set(doc) - _FIELDS
        if unknown:
            raise InvalidInput(f"unknown flow field(s): {', '.join(sorted(unknown))}")
        if "name" not in doc or "steps" not in doc:
            raise InvalidInput("a flow document needs a name and steps")
        rest = {k: v for k, v in doc.items() if k not in ("name", "steps")}
        return self.add(doc["name"], doc["steps"], replace=replace, **rest)

    def record_run(
        self,
        name_or_id: str | int,
        outcome: FlowOutcome,
        *,
        note: str = "",
        agent: str = "",
        at: float | None = None,
    ) -> FlowRun:
        """Record one run (pass | fail) of a flow; `at` defaults to now."""
        if outcome not in FLOW_OUTCOMES:
            raise InvalidInput(f"a run's outcome is pass or fail, not {cut(outcome)}")
        note = check_text(note or "", "note", allow_empty=True, limit=10_000)
        agent = check_text(agent or "", "agent", allow_empty=True, limit=200)
        actor, now = self.ctx.actor, self.ctx.clock.now()
        when = float(at) if at is not None else now

        def write(conn: Connection) -> FlowRun:
            row = self._row(conn, name_or_id)
            rid = conn.flow_runs.insert(row["id"], outcome, note, agent, when)
            audit.append(
                conn,
                at=now,
                actor=actor,
                action="flow-run",
                target_kind="flow",
                target_id=row["id"],
                summary={"name": row["name"], "outcome": outcome, "run": rid, "at": when},
            )
            return FlowRun(rid, row["id"], outcome, note, agent, when)

        return self.ctx.store.write(write)

    def set_status(self, name_or_id: str | int, status: FlowStatus, reason: str = "") -> Flow:
        """Enable or disable a flow (disabled flows are not offered by check())."""
        if status not in FLOW_STATUSES:
            raise InvalidInput(f"unknown flow status {cut(status)}; use one of {', '.join(FLOW_STATUSES)}")
        actor, now = self.ctx.actor, self.ctx.clock.now()

        def write(conn: Connection) -> int:
            row = self._row(conn, name_or_id)
            conn.flows.update(row["id"], {"status": status}, now)
            audit.append(
                conn,
                at=now,
                actor=actor,
                action="flow-status",
                target_kind="flow",
                target_id=row["id"],
                reason=reason,
                summary={"status": [row["status"], status]},
            )
            return int(row["id"])

        return self.get(self.ctx.store.write(write))
