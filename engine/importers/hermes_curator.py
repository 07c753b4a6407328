"""Hermes curator reports as audit rows: one for each run and one per change it made, by
`hermes-curator`, dated when the run started."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.audit import log as audit
from engine.importers.common import ImportSummary, get_watermark, set_watermark
from engine.importers.hermes_files import FilesData

if TYPE_CHECKING:
    from engine.storage.port import Connection

CURATOR_ACTOR = "hermes-curator"

_ITEMS = (
    ("archived", "curator-archive"),
    ("consolidated", "curator-consolidate"),
    ("pruned", "curator-prune"),
    ("state_transitions", "curator-transition"),
)


def import_curator_runs(
    conn: Connection, s: ImportSummary, files: FilesData, key: str, now: float, step
) -> None:
    """Each report becomes one audit row for the run and one per change it made, by
    `hermes-curator`, dated when the run started. A merge stays a merge, never a prune."""
    done = set(get_watermark(conn, key + "#curator", []) or [])
    for run in files.runs:
        step(1)
        if run.id in done or conn.imports_queries.audited("hermes-curator-run", run.id, CURATOR_ACTOR):
            s.skip("curator run already imported")
            continue
        d, at = run.data, run.started_at if run.started_at is not None else now
        audit.append(
            conn,
            at=at,
            actor=CURATOR_ACTOR,
            action="curator-run",
            target_kind="hermes-curator-run",
            target_id=run.id,
            reason=audit.preview(str(d.get("llm_summary") or ""), 200),
            summary={
                k: d.get(k)
                for k in ("duration_seconds", "model", "provider", "auto_transitions", "counts")
                if k in d
            },
        )
        rows = 1
        for field_name, action in _ITEMS:
            for item in d.get(field_name) or []:
                if isinstance(item, str):
                    item = {"name": item}
                if not isinstance(item, dict):
                    continue
                extra = {k: v for k, v in item.items() if k not in ("name", "reason")}
                audit.append(
                    conn,
                    at=at,
                    actor=CURATOR_ACTOR,
                    action=action,
                    target_kind="skill",
                    target_id=str(item.get("name") or ""),
                    reason=str(item.get("reason") or ""),
                    summary={"run": run.id, **extra},
                )
                rows += 1
        done.add(run.id)
        s.add("curator runs")
        s.add("curator audit rows", rows)
    if files.runs:
        set_watermark(conn, key + "#curator", sorted(done), now)
