"""Hermes skills, written into the memory database: each skill a procedural memory (updated when
its SKILL.md changed) and, when it has steps, a flow."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from engine.audit import log as audit
from engine.forget.tombstones import flow_text
from engine.importers.common import (
    ImportSummary,
    forgotten,
    insert_memory,
    upsert_flow,
)
from engine.importers.hermes_files import Skill
from engine.importers.hermes_sessions import json_object

if TYPE_CHECKING:
    from engine.importers.service import Importers
    from engine.storage.port import Connection


def _skill_content(k: Skill) -> str:
    head = f"{k.name}: {k.description}" if k.description else k.name
    return head + "".join(f"\n{i}. {st}" for i, st in enumerate(k.steps, 1))


def import_skills(
    imp: Importers,
    conn: Connection,
    s: ImportSummary,
    skills: list[Skill],
    agent: str,
    key: str,
    now: float,
    step,
) -> list[int]:
    live = {k.name for k in skills if not k.archived}
    ids = []
    for k in skills:
        step(1)
        if k.archived and k.name in live:
            s.skip("archived copy of a live skill")
            continue
        tier = "archived" if k.state == "archived" else "active"
        meta = {
            "source": "hermes",
            "hermes_skill": k.name,
            "skill_path": f"skills/{k.path}",
            "skill_category": k.category,
            "state": k.state,
            "origin": k.origin,
            "usage": k.usage,
            "sha256": k.sha256,
            "imported_from": key,
        }
        content = _skill_content(k)
        row = conn.imports_queries.skill_memory(agent, k.name)
        # A forgotten skill is known by its name (the memory's and the flow's tombstones) or by
        # its content; either keeps it out, here or from a copy of the home.
        if row is None and (
            forgotten(conn, "memory", ident=f"hermes_skill:{k.name}", texts=(content,))
            or forgotten(conn, "flow", ident=k.name)
        ):
            s.skip("skill was forgotten here (tombstone)")
            continue
        if row is None:
            mid = insert_memory(
                conn,
                dict(
                    content=content,
                    kind="procedural",
                    category="task",
                    tier=tier,
                    agent=agent,
                    pinned=k.pinned,
                    metadata=meta,
                    created_at=k.created_at or k.last_activity,
                ),
                actor=imp.ctx.actor,
                now=now,
                reason="imported from a Hermes skill",
                last_active=k.last_activity,
                access_count=int(k.usage.get("use_count") or 0),
            )
            ids.append(mid)
            s.add("skills")
        else:
            mid = int(row["id"])
            meta_json = json.dumps(meta, ensure_ascii=False)
            held = json_object(row["metadata"])
            # The same SKILL.md as last time: unchanged, even where a forget scrubbed the row.
            same_file = (
                held.get("sha256") == k.sha256
                and held.get("state") == k.state
                and held.get("usage") == k.usage
            )
            if (
                same_file
                and (row["tier"], bool(row["pinned"])) == (tier, k.pinned)
                or (row["content"], row["tier"], bool(row["pinned"]), row["metadata"])
                == (content, tier, k.pinned, meta_json)
            ):
                s.skip("skill unchanged")
            else:
                changes = {
                    "content": content,
                    "tier": tier,
                    "pinned": int(k.pinned),
                    "metadata": meta_json,
                    "embedded": 0,
                }
                if k.last_activity is not None:
                    changes["last_reinforced_at"] = k.last_activity
                conn.memories.update(mid, changes, now)
                imp.ctx.vectors.backend.delete(conn, [mid])
                audit.append(
                    conn,
                    at=now,
                    actor=imp.ctx.actor,
                    action="import-update",
                    target_kind="memory",
                    target_id=mid,
                    reason="Hermes skill changed",
                    summary={"skill": k.name, "tier": tier, "pinned": k.pinned},
                )
                ids.append(mid)
                s.update("skills")
        if not k.steps:  # a flow is an ordered list of steps: none, no flow
            s.skip("skill without steps (memory only, no flow)")
            continue
        if forgotten(conn, "flow", ident=k.name, texts=(flow_text(k.description, k.steps),)):
            s.skip("flow was forgotten here (tombstone)")
            continue
        _, how = upsert_flow(
            imp.flows,
            conn,
            name=k.name,
            agent=agent,
            description=k.description,
            steps=k.steps,
            triggers=k.triggers or [k.name.replace("-", " ")],
            status="disabled" if tier == "archived" else "active",
            domain=k.category,
            metadata={
                "source": "hermes",
                "memory_id": mid,
                "state": k.state,
                "pinned": k.pinned,
                "skill_path": f"skills/{k.path}",
            },
            created_at=k.created_at,
        )
        if how == "added":
            s.add("flows")
        elif how == "updated":
            s.update("flows")
    return ids
