"""Ingest a JSONL file of sessions, messages and memories (format in the README).

One record a line, each with "type": "session" | "message" | "memory". Times are ISO-8601 or
epoch seconds. The whole file is validated before anything is written, so a bad line names its
file and line number and nothing is half-written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.audit import log as audit
from engine.clock import parse_time
from engine.context import Context
from engine.errors import ImportFailed, InvalidInput, cut
from engine.forget import tombstones
from engine.importers import validate
from engine.importers.common import forgotten as is_forgotten
from engine.importers.files import FileIds, open_regular
from engine.importers.ingest_dedup import new_messages
from engine.memory_input import MAX_CONTENT, check_text, normalize_item
from engine.sessions import ROLES

if TYPE_CHECKING:
    from engine.importers.service import Importers
    from engine.storage.port import Connection

_TIME_FIELDS = ("started_at", "ended_at", "at", "created_at")


def count_lines(path: Path, *, avoid: FileIds = frozenset()) -> int:
    """Non-blank lines (for a progress bar); 0 for anything but a readable regular file, which
    the ingest itself then refuses with one clear line."""
    try:
        f = open_regular(path, avoid=avoid)
    except ImportFailed:
        return 0
    with f:
        return sum(1 for line in f if line.strip())


def _time(v, where: str):
    if v is None or isinstance(v, (int, float)):
        return v
    if isinstance(v, str):
        try:
            return parse_time(v)
        except InvalidInput as exc:
            raise ImportFailed(f"{where}: {exc}") from None
    raise ImportFailed(f"{where}: a time must be ISO-8601 text or epoch seconds")


def json_lines(path: Path, *, avoid: FileIds = frozenset()) -> Iterator[tuple[int, str, dict]]:
    """Yield (line number, "FILE:LINE", object) for each non-blank line of a JSONL file. Anything
    unreadable — the file, a line that is not JSON or not an object, a number that is not finite
    or an integer beyond 64 bits, bytes that are not UTF-8 — is an ImportFailed naming the file
    and line. Only a regular file is opened (a FIFO would block, a device never ends), never one
    of the database's own files (`avoid`)."""
    with open_regular(path, avoid=avoid) as f:
        for no, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            where = f"{path}:{no}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ImportFailed(f"{where}: not UTF-8 text ({exc.reason})") from None
            try:
                rec = validate.loads(line)
            except InvalidInput as exc:
                raise ImportFailed(f"{where}: {exc}") from None
            except ValueError as exc:
                raise ImportFailed(f"{where}: not valid JSON ({getattr(exc, 'msg', None) or exc})") from None
            if not isinstance(rec, dict):
                raise ImportFailed(f"{where}: each line must be a JSON object")
            yield no, where, rec


def read_records(path: Path, *, avoid: FileIds = frozenset()) -> list[tuple[int, dict]]:
    out = []
    for no, where, rec in json_lines(path, avoid=avoid):
        if rec.get("type") not in ("session", "message", "memory"):
            raise ImportFailed(f'{where}: each line must be an object with "type" session, message or memory')
        for k in _TIME_FIELDS:
            if k in rec:
                rec[k] = _time(rec[k], where)
        out.append((no, rec))
    return out


_TEXT, _NUM, _INT, _OBJ = (str,), (int, float), (int,), (dict,)
_WANT: dict[tuple[type, ...], str] = {
    _TEXT: "text",
    _NUM: "a number",
    _INT: "a whole number",
    _OBJ: "an object",
}
# What add_session accepts (checked here so a long title fails before anything is written).
_LIMITS = {
    "id": 200,
    "session_id": 200,
    "parent_session_id": 200,
    "agent": 10_000,
    "user": 10_000,
    "source": 10_000,
    "model": 10_000,
    "title": 10_000,
    "tool_name": 10_000,
}
# The shape each record's fields must have, checked before anything is written.
_SHAPES: dict[str, dict[str, tuple[type, ...]]] = {
    "session": {
        "id": _TEXT,
        "agent": _TEXT,
        "user": _TEXT,
        "source": _TEXT,
        "model": _TEXT,
        "title": _TEXT,
        "parent_session_id": _TEXT,
        "started_at": _NUM,
        "ended_at": _NUM,
        "metadata": _OBJ,
    },
    "message": {
        "session_id": _TEXT,
        "role": _TEXT,
        "content": _TEXT,
        "tool_name": _TEXT,
        "at": _NUM,
        "token_count": _INT,
        "metadata": _OBJ,
    },
    "memory": {"session_id": _TEXT, "message_id": _INT, "created_at": _NUM},
}


def _check_shape(kind: str, rec: dict) -> None:
    """Refuse a field of the wrong JSON type (a list for an id, text for a count...), and text
    that cannot be stored (lone surrogates, NUL), before anything is written."""
    for key, types in _SHAPES[kind].items():
        v = rec.get(key)
        if v is None:
            continue
        if not isinstance(v, types) or (isinstance(v, bool) and types is not _OBJ):
            want = _WANT[types]
            raise InvalidInput(f'"{key}" must be {want}, not {type(v).__name__}')
        if types is _TEXT:
            check_text(
                v, key, allow_empty=key not in ("id", "session_id"), limit=_LIMITS.get(key, MAX_CONTENT)
            )
        elif key in _TIME_FIELDS:
            validate.epoch(v, key)
        elif types is _INT:
            validate.number(v, key, 0 if key == "token_count" else 1, validate.INT_MAX, integer=True)
    if kind == "message" and rec.get("role") not in (None, "", *ROLES):
        raise InvalidInput(f"unknown role {cut(rec['role'])}; use one of {', '.join(ROLES)}")
    try:
        json.dumps(rec, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, ValueError) as exc:
        raise InvalidInput(f"not storable text ({exc})") from None


def ingest_file(
    imp: Importers, path: Path, *, dedup: bool = True, progress: Callable[[int], object] | None = None
) -> dict[str, Any]:
    """Validate every line, drop what was forgotten here, then write sessions and messages in
    one transaction and the memories through the memories service (dedup, vectors)."""
    ctx = imp.ctx
    records = read_records(path, avoid=imp.own_files())
    sessions: list[dict] = []
    messages: list[tuple[str, dict]] = []
    memories: list[dict] = []
    for no, rec in records:
        where = f"{path}:{no}"
        t = rec.pop("type")
        try:
            _check_shape(t, rec)
            if t == "session":
                if not rec.get("id"):
                    raise InvalidInput('a session needs an "id"')
                sessions.append(rec)
            elif t == "message":
                if not rec.get("session_id"):
                    raise InvalidInput('a message needs a "session_id"')
                messages.append((where, rec))
            else:
                normalize_item(rec)  # validate now; written below
                memories.append(rec)
        except InvalidInput as exc:
            raise ImportFailed(f"{where}: {exc}") from None
    sessions, messages, memories, forgotten = _drop_forgotten(ctx, sessions, messages, memories)
    known = {s["id"] for s in sessions}
    others = {m["session_id"] for _, m in messages} - known
    missing = ctx.store.query(lambda c: {sid for sid in others if not c.imports_queries.session_exists(sid)})
    for where, m in messages:
        if m["session_id"] in missing:
            raise ImportFailed(f"{where}: message refers to unknown session {cut(m['session_id'])}")
    added = {"sessions": 0, "messages": 0, "memories": 0}
    skipped = 0
    held = {"messages": 0}  # already in their session (a re-ingest): not added twice

    def write_log(conn: Connection) -> int:
        """Sessions and messages in one transaction (nested writes join it)."""
        skipped = 0
        held["messages"] = added["sessions"] = added["messages"] = 0  # it may run again (busy retry)
        for s in sessions:
            if conn.imports_queries.session_exists(s["id"]):
                skipped += 1
            else:
                sid = s["id"]
                imp.sessions.add(
                    sid,
                    **{
                        k: v
                        for k, v in s.items()
                        if k
                        in (
                            "agent",
                            "user",
                            "source",
                            "model",
                            "title",
                            "started_at",
                            "ended_at",
                            "parent_session_id",
                            "metadata",
                        )
                    },
                )
                added["sessions"] += 1
            if progress:
                progress(1)
        by_session: dict[str, list[dict]] = {}
        for _, m in messages:
            by_session.setdefault(m["session_id"], []).append(
                {k: v for k, v in m.items() if k != "session_id"}
            )
        for sid, ms in by_session.items():
            fresh, already = new_messages(conn, sid, ms)
            held["messages"] += already
            if fresh:
                imp.sessions.add_messages(sid, fresh)
            added["messages"] += len(fresh)
            if progress:
                progress(len(ms))
        return skipped

    if sessions or messages:
        skipped = ctx.store.write(write_log)
    results = imp.memories.add_many_ex(memories, dedup=dedup, progress=progress) if memories else []
    added["memories"] = sum(1 for r in results if not r.deduplicated)
    dups = sum(1 for r in results if r.deduplicated)
    ctx.store.write(
        lambda c: audit.append(
            c,
            at=ctx.clock.now(),
            actor=ctx.actor,
            action="import",
            target_kind="file",
            target_id=path.name,
            summary={
                "added": added,
                "deduplicated": dups,
                "skipped": skipped,
                "held": held["messages"],
                "forgotten": forgotten,
            },  # fmt: skip
        )
    )
    return {
        "file": str(path),
        "added": added,
        "deduplicated": dups,
        "skipped_existing_sessions": skipped,
        "skipped_existing_messages": held["messages"],
        "skipped_forgotten": forgotten,
    }


def _drop_forgotten(
    ctx: Context, sessions: list[dict], messages: list[tuple[str, dict]], memories: list[dict]
):
    """What a forget removed here does not come back through ingest either: sessions by id,
    messages by their session or content, memories by content (engine/forget/tombstones.py)."""
    with ctx.store.reading() as conn:
        gone = {s["id"] for s in sessions if is_forgotten(conn, "session", ident=s["id"])}
        gone |= {
            m["session_id"]
            for _, m in messages
            if m["session_id"] not in gone and is_forgotten(conn, "session", ident=m["session_id"])
        }
        keep_s = [s for s in sessions if s["id"] not in gone]
        # Content is checked in sessions this database holds (a session new here is a
        # conversation the forget never saw; see importers/hermes_sessions.import_messages).
        held = {
            sid for sid in {m["session_id"] for _, m in messages} if conn.imports_queries.session_exists(sid)
        }
        keep_m = [
            (w, m)
            for w, m in messages
            if m["session_id"] not in gone
            and not (m["session_id"] in held and is_forgotten(conn, "message", texts=(m.get("content"),)))
        ]
        # the same check as `remember` (a text forgotten as a message or a rule stays out too)
        gone_k = set(tombstones.any_forgotten(conn, [str(k.get("content") or "") for k in memories]))
        keep_k = [
            k
            for i, k in enumerate(memories)
            if i not in gone_k and not is_forgotten(conn, "memory", texts=(k.get("content"),))
        ]
    n = len(sessions) - len(keep_s) + len(messages) - len(keep_m) + len(memories) - len(keep_k)
    return keep_s, keep_m, keep_k, n
