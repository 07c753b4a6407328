"""What every importer shares: the summary it returns, watermarks, and the small row writers
(memories with their provenance, flows) that run inside the importer's one transaction."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.audit import log as audit
from engine.forget import tombstones
from engine.memory_input import normalize_item

if TYPE_CHECKING:
    from engine.context import Context
    from engine.lifecycle.flows import Flows
    from engine.lifecycle.types import FlowStatus
    from engine.storage.port import Connection

# progress(advance, total): called with how many items were just done and how many there are.
Progress = Callable[[int, int], None]


@dataclass
class ImportSummary:
    source: str
    format: str  # hermes | markdown | jsonl
    added: dict[str, int] = field(default_factory=dict)  # record type -> rows added
    updated: dict[str, int] = field(default_factory=dict)  # record type -> rows changed
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> count
    warnings: list[str] = field(default_factory=list)
    vectors: int = 0  # memories embedded during the import
    dry_run: bool = False

    def add(self, kind: str, n: int = 1) -> None:
        if n:
            self.added[kind] = self.added.get(kind, 0) + n

    def update(self, kind: str, n: int = 1) -> None:
        if n:
            self.updated[kind] = self.updated.get(kind, 0) + n

    def skip(self, reason: str, n: int = 1) -> None:
        if n:
            self.skipped[reason] = self.skipped.get(reason, 0) + n

    @property
    def total_added(self) -> int:
        return sum(self.added.values())


@dataclass
class ExportSummary:
    path: str
    records: dict[str, int]  # record type -> rows written
    vectors: int
    bytes: int


def tick(progress: Progress | None, total: int) -> Callable[[int], None]:
    """`step(n)`: report n more items done of `total` (nothing without a `progress`)."""

    def step(n: int = 1) -> None:
        if progress is not None:
            progress(n, total)

    return step


# -- watermarks ----------------------------------------------------------------------------------
def get_watermark(conn: Connection, source: str, default=None):
    text = conn.import_watermarks.value(source)
    if text is None:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


def set_watermark(conn: Connection, source: str, value, now: float) -> None:
    conn.import_watermarks.put(source, json.dumps(value, ensure_ascii=False, sort_keys=True), now)


# -- forgotten things stay forgotten -------------------------------------------------------------
# Tombstones (engine/tombstones.py) hold keyed hashes of a forgotten record's source identity and
# content: the same record from the same source, a copy of that source elsewhere, or an export
# written before the forget are all recognised, and no text is kept to recognise them by.
def forgotten(conn: Connection, kind: str, *, ident: str | None = None, texts=()) -> bool:
    """A tombstone of `kind` matches the identity or any of the texts."""
    if ident is not None and tombstones.is_forgotten(conn, kind=kind, ident=str(ident)):
        return True
    return any(
        isinstance(t, str) and t.strip() and tombstones.is_forgotten(conn, kind=kind, text=t) for t in texts
    )


def forgotten_session(conn: Connection, session_id: str) -> bool:
    return forgotten(conn, "session", ident=session_id)


def forgotten_content(conn: Connection, content: str, kind: str = "memory") -> bool:
    """A record of `kind` with this content was forgotten here."""
    return forgotten(conn, kind, texts=(content,))


# -- memories ------------------------------------------------------------------------------------
def memory_exists(conn: Connection, agent: str, content: str) -> bool:
    return conn.imports_queries.memory_exists(agent, content)


def insert_memory(
    conn: Connection,
    item: dict,
    *,
    actor: str,
    now: float,
    reason: str,
    last_active: float | None = None,
    access_count: int = 0,
) -> int:
    """Insert one imported memory (validated like any other) and audit it. Its vector is added
    by `embed_new` if a model is already loaded; otherwise backfill does it later."""
    n = normalize_item(item)
    created = float(n["created_at"]) if n["created_at"] is not None else now
    anchor = float(last_active) if last_active is not None else created
    mid = conn.memories.insert(
        n, created=created, now=now, anchor=anchor, access_count=access_count, last_accessed=last_active
    )
    audit.append(
        conn,
        at=now,
        actor=actor,
        action="import",
        target_kind="memory",
        target_id=mid,
        reason=reason,
        summary={
            "kind": n["kind"],
            "category": n["category"],
            "tier": n["tier"],
            "agent": n["agent"],
            "preview": audit.preview(n["content"]),
        },
    )
    return mid


def embed_new(ctx: Context, conn: Connection, ids: list[int]) -> int:
    """Vectors for just-inserted memories, only if a model is loaded now (never wait for one)."""
    emb = ctx.embedder.get()
    if emb is None or not ids:
        return 0
    rows = [conn.memories.row(i) for i in ids]
    vecs = emb.embed([r["content"] for r in rows])
    for r, v in zip(rows, vecs, strict=True):
        ctx.vectors.put(conn, r["id"], v, r)
    return len(rows)


# -- flows ---------------------------------------------------------------------------------------
def upsert_flow(
    flows: Flows,
    conn: Connection,
    *,
    name: str,
    agent: str,
    description: str,
    steps: list[str],
    triggers: list[str],
    status: FlowStatus,
    domain: str,
    metadata: dict,
    created_at: float | None = None,
) -> tuple[int, str]:
    """Write a flow keyed by (name, agent); returns (id, "added" | "updated" | "same").

    Goes through `flows.add` (engine/lifecycle/flows.py), so flows imported here obey the same
    rules as any other; the importer's provenance goes in `metadata`. Flow names are unique
    across agents, so another agent's flow of the same name makes this one `agent/name`."""
    row = conn.imports_queries.flow_named(name)
    if row is not None and row["agent"] != agent:
        name = f"{agent}/{name}"
        row = conn.imports_queries.flow_named(name)
    steps_json = json.dumps(steps, ensure_ascii=False)
    trig_json = json.dumps(triggers, ensure_ascii=False)
    meta_json = json.dumps(metadata, ensure_ascii=False, sort_keys=True)
    if row is not None and (
        row["steps"],
        row["triggers"],
        row["status"],
        row["description"],
        row["domain"],
        row["metadata"],
    ) == (steps_json, trig_json, status, description, domain, meta_json):
        return int(row["id"]), "same"
    fid = flows.add(
        name,
        steps,
        triggers=triggers,
        domain=domain,
        agent=agent,
        description=description,
        status=status,
        replace=row is not None,
        created_at=created_at,
        reason="imported",
        metadata=metadata,
    ).id
    return fid, "updated" if row is not None else "added"
