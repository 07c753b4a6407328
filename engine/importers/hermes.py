"""Read a Hermes agent's `state.db` (format notes: shared/formats/HERMES.md) without touching it.

A live WAL database can fail short reads, and opening it would write its -shm: so the file is
copied with its -wal and -shm into a temporary folder (index first, database last, retried until
nothing changed during the copy) and only the copy is opened, read-only. Core columns are always
read; later columns only when `PRAGMA table_info` shows them. Derived search tables are never read.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import sqlean as sqlite3

from engine.clock import parse_time
from engine.errors import ImportFailed, InvalidInput, cut
from engine.importers import validate
from engine.importers.files import inside

KNOWN_VERSION = 30
CORE_SESSION = (
    "id",
    "source",
    "user_id",
    "model",
    "model_config",
    "system_prompt",
    "parent_session_id",
    "started_at",
    "ended_at",
    "end_reason",
    "message_count",
    "tool_call_count",
    "input_tokens",
    "output_tokens",
)
OPT_SESSION = (
    "title",
    "display_name",
    "cwd",
    "git_branch",
    "estimated_cost_usd",
    "actual_cost_usd",
    "archived",
    "pinned",
    "hidden",
    "last_activity_at",
    "system_prompt_hash",
)
CORE_MESSAGE = (
    "id",
    "session_id",
    "role",
    "content",
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "timestamp",
    "token_count",
    "finish_reason",
)
OPT_MESSAGE = ("active", "display_kind", "reasoning")
# Only id/started_at and id/session_id/role/timestamp are needed to make sense of a row.
REQUIRED_SESSION = ("id", "started_at")
REQUIRED_MESSAGE = ("id", "session_id", "role", "timestamp")
ROLES = ("user", "assistant", "system", "tool")


@dataclass
class HermesSession:
    id: str
    user: str
    source: str
    model: str
    title: str
    started_at: float
    ended_at: float | None
    parent_session_id: str | None
    metadata: dict


@dataclass
class HermesMessage:
    id: int
    session_id: str
    role: str
    content: str
    tool_name: str | None
    at: float
    token_count: int | None
    metadata: dict


@dataclass
class StateData:
    version: int | None
    sessions: list[HermesSession] = field(default_factory=list)
    messages: list[HermesMessage] = field(default_factory=list)  # only ids > the watermark
    max_message_id: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    optional_columns: list[str] = field(default_factory=list)


def _sig(path: Path) -> tuple:
    out: list[tuple[str, int | None, int | None]] = []
    for suffix in ("", "-wal", "-shm"):
        p = path.with_name(path.name + suffix)
        try:
            st = p.stat()
            out.append((suffix, st.st_size, st.st_mtime_ns))
        except FileNotFoundError:
            out.append((suffix, None, None))
    return tuple(out)


def snapshot(
    src: Path, dest_dir: Path, tries: int = 5, *, avoid: Collection[tuple[int, int]] = frozenset()
) -> Path:
    """Copy state.db (+ -wal, -shm) into dest_dir; only reads the source, and never one of the
    memory database's own files (`avoid`: opening one would drop this process's locks on it)."""
    dst = dest_dir / "state.db"
    for _ in range(tries):
        before = _sig(src)
        # The index first and the database last: a copied index never promises WAL frames the
        # copied WAL lacks, and a checkpoint during the copy shows up as a changed signature.
        for suffix in ("-shm", "-wal", ""):
            s = src.with_name(src.name + suffix)
            d = dst.with_name(dst.name + suffix)
            if d.exists():
                d.unlink()
            try:
                st = os.stat(s)
                if not stat.S_ISREG(st.st_mode):  # a FIFO blocks, a device never ends
                    raise ImportFailed(f"{s}: not a regular file; not read")
                if (st.st_dev, st.st_ino) in avoid:
                    raise ImportFailed(f"{s}: this memory database's own file; not read")
                if not inside(src.parent.resolve(), s):  # -wal/-shm pointing elsewhere
                    raise ImportFailed(f"{s}: a symlink that leaves {src.parent}; not read")
                shutil.copyfile(s, d)
            except FileNotFoundError:
                if suffix == "":
                    raise ImportFailed(f"{src}: no such file") from None
            except OSError as exc:
                raise ImportFailed(f"{src}{suffix}: cannot read ({exc.strerror})") from None
        if _sig(src) == before:
            return dst
    raise ImportFailed(f"{src}: kept changing while being copied; retry when the agent is idle")


def _open_copy(path: Path, label: Path):
    try:
        # Percent-encoded: a temp folder under a TMPDIR holding "#", "?" or "%" is still a path.
        conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)
        conn.text_factory = lambda b: b.decode("utf-8", "replace")  # never fail on odd bytes
        conn.row_factory = sqlite3.Row
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise ImportFailed(f"{label}: not a readable SQLite database ({exc})") from None
    return conn


def _columns(conn, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def _json(text, default=None):
    if text is None or text == "":
        return default
    try:
        return validate.loads(text)
    except (TypeError, ValueError):
        return text  # keep what was there (as text) rather than lose it or store NaN


def read_state(copy: Path, label: Path, *, after_message_id: int = 0) -> StateData:
    """Sessions (all of them: cheap, and ended_at/title may have changed) and messages newer
    than `after_message_id`. `label` is the source path used in messages."""
    conn = _open_copy(copy, label)
    try:
        return _read(conn, label, after_message_id)
    except sqlite3.DatabaseError as exc:
        raise ImportFailed(f"{label}: cannot read ({exc})") from None
    finally:
        conn.close()


def _read(conn, label: Path, after: int) -> StateData:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    missing = [t for t in ("sessions", "messages") if t not in tables]
    if missing:
        raise ImportFailed(
            f"{label}: unknown schema: no {' or '.join(missing)} table (is this a Hermes state.db?)"
        )
    version = None
    if "schema_version" in tables:
        row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
        version = int(row[0]) if row and row[0] is not None else None
    if version is not None and version < 2:
        raise ImportFailed(
            f"{label}: unknown schema: version {version} predates the supported "
            f"versions (2 to {KNOWN_VERSION})"
        )
    scols, mcols = _columns(conn, "sessions"), _columns(conn, "messages")
    for table, have, need in (("sessions", scols, REQUIRED_SESSION), ("messages", mcols, REQUIRED_MESSAGE)):
        lack = [c for c in need if c not in have]
        if lack:
            raise ImportFailed(f"{label}: unknown schema: {table} has no column(s) {', '.join(lack)}")
    out = StateData(version=version)
    if version is not None and version > KNOWN_VERSION:
        out.warnings.append(
            f"schema version {version} is newer than {KNOWN_VERSION}: read the known columns only"
        )
    s_sel = [c for c in CORE_SESSION + OPT_SESSION if c in scols]
    m_sel = [c for c in CORE_MESSAGE + OPT_MESSAGE if c in mcols]
    out.optional_columns = [f"sessions.{c}" for c in OPT_SESSION if c in scols] + [
        f"messages.{c}" for c in OPT_MESSAGE if c in mcols
    ]
    prompts: dict[str, str] = {}
    if "system_prompt_hash" in scols and "system_prompts" in tables:
        pcols = _columns(conn, "system_prompts")
        if "hash" in pcols and "prompt" in pcols:
            prompts = {r[0]: r[1] for r in conn.execute("SELECT hash, prompt FROM system_prompts")}

    for r in conn.execute(f"SELECT {', '.join(s_sel)} FROM sessions ORDER BY started_at, rowid"):
        d = dict(zip(s_sel, r, strict=True))
        out.sessions.append(_checked(label, "session", d["id"], _session, d, prompts))
    known = {s.id for s in out.sessions}

    row = conn.execute("SELECT max(id) FROM messages").fetchone()
    out.max_message_id = max(after, int(row[0] or 0))
    if row[0] is not None and int(row[0]) < after:
        out.warnings.append(
            f"message ids went back to {row[0]} (below the last import's {after}): "
            f"the database may have been replaced; no older messages re-imported"
        )
    for r in conn.execute(f"SELECT {', '.join(m_sel)} FROM messages WHERE id > ? ORDER BY id", (after,)):
        d = dict(zip(m_sel, r, strict=True))
        reason = _skip_reason(d, known)
        if reason:
            out.skipped[reason] = out.skipped.get(reason, 0) + 1
            continue
        out.messages.append(_checked(label, "message", d["id"], _message, d))
    return out


def _checked(label: Path, what: str, ident, build, *args):
    """Build one record and hold it to what the memory database stores (finite times in range,
    counts in 64 bits, JSON without NaN): one bad row refuses the import before anything is
    written, naming the row."""
    try:
        rec = build(*args)
        for name in ("started_at", "ended_at", "at"):
            v = getattr(rec, name, None)
            if v is not None:
                validate.epoch(v, name)
        if getattr(rec, "token_count", None) is not None:
            validate.number(rec.token_count, "token_count", 0, validate.INT_MAX, integer=True)
        if isinstance(getattr(rec, "id", None), int):
            validate.number(rec.id, "id", 1, validate.INT_MAX, integer=True)
        validate.finite_json(rec.metadata, "metadata")
    except (InvalidInput, OverflowError, ValueError) as exc:
        raise ImportFailed(f"{label}: {what} {cut(ident)}: {exc}") from None
    return rec


def _skip_reason(d: dict, known: set[str]) -> str | None:
    if _int(d.get("active")) == 0:
        return "message superseded (active = 0)"
    if d.get("display_kind") == "hidden":
        return "message hidden (display_kind = hidden)"
    if d["session_id"] not in known:
        return "message of a session not in state.db"
    return None


def _session(d: dict, prompts: dict[str, str]) -> HermesSession:
    meta: dict = {
        "hermes": {
            k: d[k]
            for k in (
                "end_reason",
                "message_count",
                "tool_call_count",
                "input_tokens",
                "output_tokens",
                "cwd",
                "git_branch",
                "estimated_cost_usd",
                "actual_cost_usd",
                "archived",
                "pinned",
                "hidden",
                "last_activity_at",
                "display_name",
            )
            if d.get(k) is not None
        }
    }
    cfg = _json(d.get("model_config"))
    if cfg is not None:
        meta["hermes"]["model_config"] = cfg
    prompt = prompts.get(d.get("system_prompt_hash") or "") or d.get("system_prompt")
    if prompt:
        meta["hermes"]["system_prompt"] = prompt
    title = d.get("title") or d.get("display_name") or ""
    return HermesSession(
        id=str(d["id"]),
        user=_text(d.get("user_id")),
        source=_text(d.get("source")),
        model=_text(d.get("model")),
        title=_text(title),
        started_at=_epoch(d["started_at"]) or 0.0,
        ended_at=_epoch(d.get("ended_at")),
        parent_session_id=d.get("parent_session_id") or None,
        metadata=meta,
    )


def _message(d: dict) -> HermesMessage:
    meta: dict = {"hermes_id": d["id"]}
    role = d["role"] or "user"
    if role not in ROLES:
        meta["hermes_role"] = role
        role = "system"
    for k in ("tool_call_id", "finish_reason", "reasoning"):
        if d.get(k):
            meta[k] = d[k]
    calls = _json(_text(d.get("tool_calls")))
    if calls:
        meta["tool_calls"] = calls
    content = _text(d.get("content")).replace("\x00", "")
    return HermesMessage(
        id=int(d["id"]),
        session_id=str(d["session_id"]),
        role=role,
        content=content,
        tool_name=d.get("tool_name") or None,
        at=_epoch(d["timestamp"]) or 0.0,
        token_count=_int(d.get("token_count")),
        metadata=meta,
    )


def _epoch(v) -> float | None:
    """Epoch seconds as Hermes stores them (REAL); ISO text is accepted too."""
    if v is None or v == "":
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        try:
            return parse_time(str(v))
        except InvalidInput:
            return None


def _int(v) -> int | None:
    try:
        return None if v is None else int(v)
    except (TypeError, ValueError):
        return None


def _text(v) -> str:
    """Text as stored, whatever SQLite's loose typing left in the column."""
    if v is None:
        return ""
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)
