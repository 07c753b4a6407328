"""Markdown memory files (MEMORY.md style): entries separated by a line holding only `§`, or by
blank lines; a block that is a bulleted list gives one entry per top-level bullet. Also the
small Markdown reading that skills need (steps from a body)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.audit import log as audit
from engine.errors import ImportFailed, InvalidInput
from engine.importers.common import (
    ImportSummary,
    Progress,
    embed_new,
    forgotten_content,
    insert_memory,
    memory_exists,
    tick,
)  # fmt: skip
from engine.importers.files import read_regular
from engine.memory_input import check_text, normalize_item

if TYPE_CHECKING:
    from engine.importers.service import Importers
    from engine.storage.port import Connection

_BULLET = re.compile(r"^[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^\s{0,3}\d+[.)]\s+(.*)$")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
PREFERENCE = re.compile(
    r"\b(prefers?|preferred|likes?|dislikes?|loves?|hates?|wants?|favou?rite|"
    r"rather|always|never|please|don'?t)\b",
    re.I,
)


def split_entries(text: str, separator: str | None = None) -> list[tuple[int, str]]:
    """(first line number, entry text) for every entry. `separator="§"` forces Hermes mode;
    otherwise a file containing a lone `§` line uses it, and anything else splits on blank lines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    lines = text.split("\n")
    use_mark = separator == "§" or any(line.strip() == "§" for line in lines)
    out: list[tuple[int, str]] = []
    block: list[str] = []
    start = 1

    def flush():
        if not use_mark:
            out.extend(_split_block(start, block))
        else:
            entry = "\n".join(block).strip()
            if entry:
                out.append((start + _leading_blank(block), entry))

    for no, line in enumerate(lines, 1):
        boundary = line.strip() == "§" if use_mark else not line.strip()
        if boundary:
            flush()
            block, start = [], no + 1
        else:
            block.append(line)
    flush()
    return out


def _leading_blank(block: list[str]) -> int:
    n = 0
    for line in block:
        if line.strip():
            break
        n += 1
    return n


def _split_block(start: int, block: list[str]) -> list[tuple[int, str]]:
    """A blank-line block: headings alone are not memories; a list is one memory per bullet."""
    if not block:
        return []
    if len(block) == 1 and _HEADING.match(block[0].strip()):
        return []
    if not _BULLET.match(block[0]):
        return [(start, "\n".join(block).strip())]
    items: list[tuple[int, list[str]]] = []
    for i, line in enumerate(block):
        m = _BULLET.match(line)
        if m:
            items.append((start + i, [m.group(1)]))
        elif items:
            items[-1][1].append(line.strip())  # continuation or a nested bullet
    return [(no, "\n".join(parts).strip()) for no, parts in items if "\n".join(parts).strip()]


def looks_like_preference(text: str) -> bool:
    return bool(PREFERENCE.search(text))


def _plain(s: str) -> str:
    s = re.sub(r"`([^`]*)`", r"\1", s)
    s = re.sub(r"\*\*([^*]+)\*\*|__([^_]+)__", lambda m: m.group(1) or m.group(2), s)
    return " ".join(s.split())


def steps_from_body(body: str) -> list[str]:
    """The ordered steps of a skill: its numbered items; else its second-level headings; else
    its top-level bullets. Code blocks are skipped."""
    numbered, headings, bullets = [], [], []
    in_code = False
    for line in body.replace("\r\n", "\n").split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
            continue
        if in_code:
            continue
        if m := _NUMBERED.match(line):
            numbered.append(_plain(m.group(1)))
        elif line.startswith("## ") and (m := _HEADING.match(line)):
            headings.append(_plain(m.group(1)))
        elif m := _BULLET.match(line):
            bullets.append(_plain(m.group(1)))
    steps = numbered or headings or bullets
    return [s for s in steps if s][:50]


# -- importing a file ----------------------------------------------------------------------------
def import_file(
    imp: Importers,
    path: str | Path,
    *,
    agent: str,
    user: str = "",
    kind: str = "semantic",
    category: str | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> ImportSummary:
    """Each entry becomes a memory of `agent`; entries already stored for that agent are skipped,
    so importing a file again adds only what was written since. A file named USER.md holds facts
    about the user: its entries are preferences or facts."""
    ctx = imp.ctx
    path = Path(path)
    agent = check_text(agent, "agent", limit=200)  # a memory file must belong to someone
    try:
        text = read_regular(path, avoid=imp.own_files()).decode("utf-8")  # never a FIFO or a device
    except UnicodeDecodeError as exc:
        raise ImportFailed(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    about_user = path.name.upper() == "USER.MD"
    items: list[dict[str, Any]] = []
    for no, entry in split_entries(text):
        cat = category or (
            ("preference" if looks_like_preference(entry) else "fact") if about_user else "general"
        )
        item = dict(
            content=entry,
            kind=kind,
            category=cat,
            agent=agent,
            user=user,
            metadata={"source": "markdown", "file": path.name, "line": no},
        )
        try:
            normalize_item(item)
        except InvalidInput as exc:
            raise ImportFailed(f"{path}:{no}: {exc}") from None
        items.append(item)
    step = tick(progress, len(items))

    def write(conn: Connection) -> ImportSummary:
        s = ImportSummary(source=str(path), format="markdown", dry_run=dry_run)
        now, ids = ctx.clock.now(), []
        for item in items:
            step(1)
            if memory_exists(conn, agent, item["content"]):
                s.skip("entry already stored for this agent")
                continue
            if forgotten_content(conn, item["content"]):
                s.skip("entry was forgotten here (tombstone)")
                continue
            ids.append(
                insert_memory(conn, item, actor=ctx.actor, now=now, reason=f"imported from {path.name}")
            )
            s.add("memories")
        s.vectors = embed_new(ctx, conn, ids)
        audit.append(
            conn,
            at=now,
            actor=ctx.actor,
            action="import",
            target_kind="markdown",
            target_id=path.name,
            summary={"agent": agent, "added": s.added, "skipped": s.skipped},
        )
        return s

    return ctx.store.dry_run(write) if dry_run else ctx.store.write(write)
