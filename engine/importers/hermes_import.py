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
from engine.errors import ImportFailed
from engine.importers.common import (
    ImportSummary,
    Progress,
    embed_new,
    forgotten_content,
    get_watermark,
    insert_memory,
    memory_exists,
    set_watermark,
    tick,
)  # fmt: skip
from engine.importers.files import regular_file
from engine.importers.hermes import StateData, read_state, snapshot
from engine.importers.hermes_curator import import_curator_runs
from engine.importers.hermes_files import FilesData, read_files
from engine.importers.hermes_sessions import import_messages, import_sessions
from engine.importers.hermes_skills import import_skills
from engine.importers.markdown import looks_like_preference

if TYPE_CHECKING:
    from engine.importers.service import Importers
    from engine.storage.port import Connection


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
        wm = ctx.store.query(lambda c: c.import_watermarks.value(key + "#state.db"))
        after = int(json.loads(wm).get("message_id", 0)) if wm is not None else 0
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

    def write(conn: Connection) -> ImportSummary:
        s = ImportSummary(source=str(home), format="hermes", dry_run=dry_run)
        for src in (state, files):
            for reason, n in src.skipped.items():
                s.skip(reason, n)
            s.warnings.extend(src.warnings)
        now = ctx.clock.now()
        new_ids: list[int] = []
        wm = get_watermark(conn, key + "#state.db", {}) or {}
        fresh: set[str] = set()
        blocked = import_sessions(imp, conn, s, state, agent, key, now, step, fresh)
        import_messages(imp, conn, s, state, int(wm.get("message_id", 0)), blocked, fresh, step)
        new_ids += _memories(imp, conn, s, files, state, agent, key, now, step)
        new_ids += import_skills(imp, conn, s, files.skills, agent, key, now, step)
        import_curator_runs(conn, s, files, key, now, step)
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


def _memories(
    imp: Importers,
    conn: Connection,
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
