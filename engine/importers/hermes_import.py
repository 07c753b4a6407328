"""Write what a Hermes home holds into the memory database, in one transaction.

Sessions keep their Hermes ids (operators recognise them) and their lineage; messages come in
above a per-home watermark (Hermes message ids only grow); memory entries and skills are matched
on what is already stored, so importing the same home twice adds nothing and a home the agent
has written more into brings in only what is new (and skills it changed)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from engine.audit import log as audit
from engine.errors import ImportFailed, InvalidInput
from engine.forget.tombstones import flow_text
from engine.importers.common import (
    ImportSummary,
    Progress,
    embed_new,
    forgotten,
    forgotten_content,
    forgotten_session,
    get_watermark,
    insert_memory,
    memory_exists,
    set_watermark,
    tick,
    upsert_flow,
)  # fmt: skip
from engine.importers.files import regular_file
from engine.importers.hermes import StateData, read_state, snapshot
from engine.importers.hermes_files import FilesData, Skill, read_files
from engine.importers.markdown import looks_like_preference
from engine.keys import keyed_hash
from engine.memory_input import MAX_CONTENT
from engine.tables import memories as memories_table

if TYPE_CHECKING:
    from engine.importers.service import Importers

CURATOR_ACTOR = "hermes-curator"


def default_agent(home: Path) -> str:
    """`~/.hermes/profiles/<name>` is agent <name>; the main home is agent "hermes"."""
    return home.name if home.parent.name == "profiles" else "hermes"


def import_home(
    imp: Importers,
    home: str | Path,
    *,
    agent: str | None = None,
    dry_run: bool = False,
    include_bundled: bool = False,
    progress: Progress | None = None,
) -> ImportSummary:
    ctx = imp.ctx
    avoid = imp.own_files()
    home = Path(home).expanduser()
    if not home.is_dir():
        raise ImportFailed(f"{home}: not a folder")
    db = home / "state.db"
    if not db.exists() and not (home / "memories").is_dir() and not (home / "skills").is_dir():
        raise ImportFailed(f"{home}: not a Hermes home (no state.db, memories/ or skills/)")
    key = f"hermes:{home.resolve()}"
    agent = agent or default_agent(home)
    state = StateData(version=None)
    # A FIFO, a device or a symlink out of the home is skipped with a warning, never opened.
    use_db = (db.exists() or db.is_symlink()) and regular_file(home.resolve(), db, state.warnings.append)
    if use_db:
        wm = ctx.store.read_one("SELECT value FROM import_watermarks WHERE source = ?", (key + "#state.db",))
        after = int(json.loads(wm[0]).get("message_id", 0)) if wm else 0
        with tempfile.TemporaryDirectory(prefix="memconsole-hermes-") as tmp:  # 0700
            state = read_state(snapshot(db, Path(tmp), avoid=avoid), db, after_message_id=after)
    files = read_files(home, include_bundled=include_bundled, avoid=avoid)
    total = (
        len(state.sessions)
        + len(state.messages)
        + len(files.memory)
        + len(files.user)
        + len(files.skills)
        + len(files.runs)
    )
    step = tick(progress, total)

    def write(conn) -> ImportSummary:
        s = ImportSummary(source=str(home), format="hermes", dry_run=dry_run)
        for src in (state, files):
            for reason, n in src.skipped.items():
                s.skip(reason, n)
            s.warnings.extend(src.warnings)
        now = ctx.clock.now()
        new_ids: list[int] = []
        wm = get_watermark(conn, key + "#state.db", {}) or {}
        fresh: set[str] = set()
        blocked = _sessions(imp, conn, s, state, agent, key, now, step, fresh)
        _messages(imp, conn, s, state, int(wm.get("message_id", 0)), blocked, fresh, step)
        new_ids += _memories(imp, conn, s, files, state, agent, key, now, step)
        new_ids += _skills(imp, conn, s, files.skills, agent, key, now, step)
        _curator(conn, s, files, key, now, step)
        if use_db:
            set_watermark(
                conn,
                key + "#state.db",
                {
                    "message_id": max(state.max_message_id, int(wm.get("message_id", 0))),
                    "schema_version": state.version,
                },
                now,
            )
        s.vectors = embed_new(ctx, conn, new_ids)
        audit.append(
            conn,
            at=now,
            actor=ctx.actor,
            action="import",
            target_kind="hermes-home",
            target_id=str(home),
            summary={"agent": agent, "added": s.added, "updated": s.updated, "skipped": s.skipped},
        )
        return s

    return ctx.store.dry_run(write) if dry_run else ctx.store.write(write)


def _sessions(
    imp: Importers,
    conn,
    s: ImportSummary,
    state: StateData,
    agent: str,
    key: str,
    now: float,
    step,
    fresh: set[str],
) -> set[str]:
    """Add new sessions (their ids go in `fresh`), refresh changed ones; returns the ids not to
    write into (held by another agent, or forgotten)."""
    blocked: set[str] = set()
    for hs in state.sessions:
        step(1)
        row = conn.execute(
            "SELECT agent, title, ended_at, metadata FROM sessions WHERE id = ?", (hs.id,)
        ).fetchone()
        if row is None and forgotten_session(conn, hs.id):
            blocked.add(hs.id)
            s.skip("session was forgotten here (tombstone)")
            continue
        # Only what changed in the source since the last import is written: a kept session a
        # forget scrubbed (its title, its system prompt) is not rewritten from an unchanged
        # source, and a copy of the home elsewhere changes nothing. The first import's source
        # stays its provenance.
        live_meta = _loads(row["metadata"]) if row is not None else {}
        sync = _sync(hs)
        meta = {**hs.metadata, "imported_from": live_meta.get("imported_from") or key, "hermes_sync": sync}
        if row is None:
            try:
                imp.sessions.add(
                    hs.id,
                    agent=agent,
                    user=hs.user,
                    source=hs.source,
                    model=hs.model,
                    title=hs.title,
                    started_at=hs.started_at,
                    ended_at=hs.ended_at,
                    parent_session_id=hs.parent_session_id,
                    metadata=meta,
                )
            except InvalidInput as exc:
                raise ImportFailed(f"state.db session {hs.id!r}: {exc}") from None
            s.add("sessions")
            fresh.add(hs.id)
            continue
        if row["agent"] != agent:
            blocked.add(hs.id)
            s.skip("session id already used by another agent")
            continue
        synced = live_meta.get("hermes_sync")
        was: dict = synced if isinstance(synced, dict) else {}
        title = row["title"] if was.get("title") == sync["title"] else hs.title
        meta["hermes"] = _merge(
            live_meta.get("hermes"), hs.metadata.get("hermes") or {}, was.get("hermes"), sync["hermes"]
        )
        meta_json = json.dumps(meta, ensure_ascii=False)
        if (row["title"], row["ended_at"], row["metadata"]) == (title, hs.ended_at, meta_json):
            s.skip("session already imported")
            continue
        conn.execute(
            "UPDATE sessions SET title = ?, ended_at = ?, metadata = ? WHERE id = ?",
            (title, hs.ended_at, meta_json, hs.id),
        )
        audit.append(
            conn,
            at=now,
            actor=imp.ctx.actor,
            action="import-update",
            target_kind="session",
            target_id=hs.id,
            summary={"ended_at": hs.ended_at},
        )
        s.update("sessions")
    return blocked


def _loads(text) -> dict:
    try:
        v = json.loads(text or "{}")
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


def _digest(value) -> str:
    return keyed_hash("hermes-sync", json.dumps(value, sort_keys=True, ensure_ascii=False))


def _sync(hs) -> dict:
    """Keyed hashes of the source's title and of each of its Hermes fields as last imported
    (never the text): a later import rewrites a field only when the source's own value changed,
    so a field a forget scrubbed stays scrubbed while the message counts move on."""
    return {
        "title": _digest(hs.title),
        "hermes": {k: _digest(v) for k, v in (hs.metadata.get("hermes") or {}).items()},
    }


def _merge(live, source: dict, was, now: dict) -> dict:
    live = live if isinstance(live, dict) else {}
    was = was if isinstance(was, dict) else {}
    return {k: live[k] if k in live and was.get(k) == now[k] else v for k, v in source.items()}


def _imported_ids(conn, session_id: str, cache: dict[str, set]) -> set:
    """Hermes message ids this session already holds (a copy of the home, or another path to
    it, has its own watermark: without this its messages would come in twice)."""
    if session_id not in cache:
        cache[session_id] = {
            r[0]
            for r in conn.execute(
                "SELECT json_extract(metadata, '$.hermes_id') FROM messages WHERE session_id = ?",
                (session_id,),
            )
        }
    return cache[session_id]


def _messages(
    imp: Importers,
    conn,
    s: ImportSummary,
    state: StateData,
    after: int,
    blocked: set[str],
    fresh: set[str],
    step,
) -> None:
    by_session: dict[str, list[dict]] = {}
    held: dict[str, set] = {}
    for m in state.messages:
        step(1)
        if m.id <= after:  # another import got here first
            s.skip("message already imported")
            continue
        if m.session_id in blocked:
            s.skip("message of a session held by another agent or forgotten")
            continue
        if m.id in _imported_ids(conn, m.session_id, held):
            s.skip("message already imported")
            continue
        # In a session this database already holds, a message missing here with a forgotten
        # message's content is that message. A session new here is a conversation the forget
        # never saw: its "thanks" is not the "thanks" of a forgotten session (a forget by session,
        # agent or user keeps a content hash of every message it removed).
        if m.session_id not in fresh and forgotten(conn, "message", texts=(m.content,)):
            s.skip("message was forgotten here (tombstone)")
            continue
        content, meta = m.content, m.metadata
        if len(content) > MAX_CONTENT:  # a huge tool dump: keep its head, say so
            content, meta = content[:MAX_CONTENT], {**meta, "truncated_from": len(content)}
            s.warnings.append(f"message {m.id} truncated to {MAX_CONTENT:,} characters")
        by_session.setdefault(m.session_id, []).append(
            dict(
                role=m.role,
                content=content,
                tool_name=m.tool_name,
                at=m.at,
                token_count=m.token_count,
                metadata=meta,
            )
        )
    for sid, ms in by_session.items():
        imp.sessions.add_messages(sid, ms)
        s.add("messages", len(ms))


def _memories(
    imp: Importers,
    conn,
    s: ImportSummary,
    files: FilesData,
    state: StateData,
    agent: str,
    key: str,
    now: float,
    step,
) -> list[int]:
    users = {hs.user for hs in state.sessions if hs.user}
    user = users.pop() if len(users) == 1 else ""  # USER.md is about the one user, if known
    ids = []
    for fname, entries in (("MEMORY.md", files.memory), ("USER.md", files.user)):
        for text in entries:
            step(1)
            if memory_exists(conn, agent, text):
                s.skip("memory entry already imported")
                continue
            if forgotten_content(conn, text):
                s.skip("memory entry was forgotten here (tombstone)")
                continue
            about_user = fname == "USER.md"
            category = ("preference" if looks_like_preference(text) else "fact") if about_user else "learning"
            ids.append(
                insert_memory(
                    conn,
                    dict(
                        content=text,
                        kind="semantic",
                        category=category,
                        agent=agent,
                        user=user if about_user else "",
                        metadata={"source": "hermes", "file": f"memories/{fname}", "imported_from": key},
                    ),
                    actor=imp.ctx.actor,
                    now=now,
                    reason=f"imported from Hermes memories/{fname}",
                )
            )
            s.add("memories")
    return ids


def _skill_content(k: Skill) -> str:
    head = f"{k.name}: {k.description}" if k.description else k.name
    return head + "".join(f"\n{i}. {st}" for i, st in enumerate(k.steps, 1))


def _skills(
    imp: Importers, conn, s: ImportSummary, skills: list[Skill], agent: str, key: str, now: float, step
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
        row = conn.execute(
            "SELECT id, content, tier, pinned, metadata FROM memories WHERE agent = ? AND"
            " kind = 'procedural' AND json_extract(metadata, '$.hermes_skill') = ?",
            (agent, k.name),
        ).fetchone()
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
            held = _loads(row["metadata"])
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
                memories_table.update(conn, mid, changes, now)
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


_ITEMS = (
    ("archived", "curator-archive"),
    ("consolidated", "curator-consolidate"),
    ("pruned", "curator-prune"),
    ("state_transitions", "curator-transition"),
)


def _curator(conn, s: ImportSummary, files: FilesData, key: str, now: float, step) -> None:
    """Each report becomes one audit row for the run and one per change it made, by
    `hermes-curator`, dated when the run started. A merge stays a merge, never a prune."""
    done = set(get_watermark(conn, key + "#curator", []) or [])
    for run in files.runs:
        step(1)
        if (
            run.id in done
            or conn.execute(
                "SELECT 1 FROM audit WHERE target_kind = 'hermes-curator-run' AND target_id = ?"
                " AND actor = ? LIMIT 1",
                (run.id, CURATOR_ACTOR),
            ).fetchone()
        ):
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
            reason=audit.snippet(str(d.get("llm_summary") or ""), 200),
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
