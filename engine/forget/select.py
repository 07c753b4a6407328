"""What a forget request reaches: the scope's own records, then the cascade to everything derived
from them (merged memories, promoted rules, proposals quoting them). Runs inside a transaction.

A query matches a record by any field that holds its text: memories by content or metadata,
messages by content, tool name or metadata (tool calls, reasoning), rules by text or metadata,
flows by name, description, triggers, steps or metadata. Those records go whole; text the query
finds in records that stay (session metadata and system prompts, rule history, flow run notes, ...)
is redacted by engine/forget_scrub.py. Malformed JSON in any row never stops a forget."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine.errors import InvalidInput, NotFound, cut
from engine.forget.match import DEFAULT_MODE, Matcher
from engine.forget.tombstones import flow_text
from engine.forget.verify import rows_containing

if TYPE_CHECKING:
    from engine.storage.port import Connection

DERIVED = "derived: merged from forgotten memory"
SOURCE = "source of a forgotten merged memory"
PROMOTED = "rule promoted from forgotten memory"


def _members(raw) -> set:
    """A proposal's member ids; a malformed list is treated as empty (it cannot stop a forget)."""
    try:
        val = json.loads(raw or "[]")
    except (ValueError, TypeError):
        return set()
    return {v for v in val if isinstance(v, int)} if isinstance(val, list) else set()


def _strings(raw) -> list[str]:
    """Every string inside a JSON column (or the raw text when it is not JSON)."""
    try:
        doc = json.loads(raw) if raw else None
    except (ValueError, TypeError):
        return [raw] if isinstance(raw, str) else []
    out: list[str] = []

    def walk(v):
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    walk(doc)
    return out


def _holds(raw: Any, matcher: Matcher) -> bool:
    """Does a column's value match, compared folded (JSON strings read unescaped)?"""
    if not isinstance(raw, str) or not raw:
        return False
    texts = [raw] + (_strings(raw) if raw[:1] in '[{"' else [])
    return any(matcher.matches(t) for t in texts)


def _like(q: str) -> str:
    return "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _patterns(q: str) -> list[str]:
    """LIKE patterns of a query: as typed, and as it reads inside a JSON string (escaped)."""
    forms = {q, json.dumps(q)[1:-1], json.dumps(q, ensure_ascii=False)[1:-1]}
    return [_like(f) for f in sorted(forms)]


# The kinds an operator may drop from a previewed case, and the Selection field holding each.
EXCLUDABLE = {
    "memory": "memories",
    "message": "messages",
    "rule": "rules",
    "session": "sessions",
    "flow": "flows",
}


@dataclass
class Selection:
    memories: dict[int, str] = field(default_factory=dict)  # id -> why
    messages: dict[int, str] = field(default_factory=dict)
    rules: dict[int, str] = field(default_factory=dict)
    sessions: dict[str, str] = field(default_factory=dict)  # deleted whole
    titles: dict[str, str] = field(default_factory=dict)  # session titles blanked (query scope)
    revive: set[int] = field(default_factory=set)  # other sources of a derived merge
    proposals: set[int] = field(default_factory=set)
    flows: dict[int, str] = field(default_factory=dict)

    @classmethod
    def from_ids(cls, d: dict) -> Selection:
        s = cls()
        s.memories = {int(i): "selected" for i in d.get("memories", [])}
        s.messages = {int(i): "selected" for i in d.get("messages", [])}
        s.rules = {int(i): "selected" for i in d.get("rules", [])}
        s.sessions = {str(i): "selected" for i in d.get("sessions", [])}
        s.titles = {str(i): "title matches" for i in d.get("titles", [])}
        s.flows = {int(i): "selected" for i in d.get("flows", [])}
        return s

    def as_ids(self) -> dict:
        return {
            "memories": sorted(self.memories),
            "messages": sorted(self.messages),
            "rules": sorted(self.rules),
            "sessions": sorted(self.sessions),
            "titles": sorted(self.titles),
            "flows": sorted(self.flows),
        }

    def narrowed(self, memory_ids, message_ids) -> Selection:
        """Keep only the operator's chosen part of a previewed set."""
        for name, chosen in (("memories", memory_ids), ("messages", message_ids)):
            if chosen is None:
                continue
            have = getattr(self, name)
            chosen = {int(i) for i in chosen}
            extra = chosen - set(have)
            if extra:
                raise InvalidInput(f"{name} {sorted(extra)} are not in this request's preview")
            setattr(self, name, {i: w for i, w in have.items() if i in chosen})
        return self

    def without(self, excluded: dict) -> Selection:
        """The selection less the records the operator dropped from the case (kind -> ids)."""
        for kind, name in EXCLUDABLE.items():
            drop = {str(i) for i in excluded.get(kind, [])}
            if drop:
                have = getattr(self, name)
                setattr(self, name, {k: w for k, w in have.items() if str(k) not in drop})
                if kind == "session":
                    self.titles = {k: w for k, w in self.titles.items() if str(k) not in drop}
        return self

    def counts(self) -> dict:
        mem = self.memories.values()
        return {
            "memories": sum(1 for w in mem if w not in (DERIVED, SOURCE)),
            "derived_memories": sum(1 for w in mem if w == DERIVED),
            "merged_sources": sum(1 for w in mem if w == SOURCE),
            "revived_sources": len(self.revive),
            "messages": len(self.messages),
            "rules": len(self.rules),
            "sessions": len(self.sessions),
            "session_titles": len(self.titles),
            "proposals": len(self.proposals),
            "flows": len(self.flows),
        }

    def listing(self, kind: str) -> list[tuple]:
        src: dict[Any, str]
        if kind == "session":
            src = {**self.titles, **self.sessions}
        else:
            src = {"memory": self.memories, "message": self.messages, "rule": self.rules, "flow": self.flows}[
                kind
            ]
        return sorted(src.items(), key=lambda kv: str(kv[0]))

    # -- content (for tombstones, redaction and verification; never stored) -----------------------
    def _rows(self, conn: Connection, table: str, col: str, ids: Iterable[Any]) -> list[tuple]:
        return [(r[0], r[1] or "") for r in conn.forget_queries.column_of(table, col, list(ids))]

    def texts(self, conn: Connection) -> list[str]:
        """The forgotten texts themselves: redacted wherever a copy of them lies, and scanned for."""
        out = []
        for table, col, ids in (
            ("memories", "content", self.memories),
            ("messages", "content", self.messages),
            ("rules", "text", self.rules),
            ("sessions", "title", {**self.sessions, **self.titles}),
        ):
            out += [t for _, t in self._rows(conn, table, col, ids) if t.strip()]
        for _, name, desc, trig, steps in self._flow_rows(conn):
            out += [t for t in [name, desc, *_strings(trig), *_strings(steps)] if t.strip()]
        return out

    def extra_texts(self, conn: Connection) -> list[str]:
        """Strings held in the deleted records' metadata (tool calls, reasoning, system prompts):
        scanned for by verification (where no live record still holds them), never used to redact
        other records (a shared system prompt or file name must stay where it is live)."""
        out = []
        for table, ids in (
            ("memories", self.memories),
            ("messages", self.messages),
            ("rules", self.rules),
            ("sessions", self.sessions),
            ("flows", self.flows),
        ):
            for _, raw in self._rows(conn, table, "metadata", ids):
                out += [t for t in _strings(raw) if len(t.strip()) >= 12]
        return out

    def _flow_rows(self, conn: Connection) -> list:
        out = conn.forget_queries.flows_of(sorted(self.flows))
        return [tuple("" if v is None else v for v in r) for r in out]

    def stones(self, conn: Connection) -> list[tuple[str, object, str | None, str | None]]:
        """(kind, id, source identity, content) of every removed record, for its tombstone."""
        out = []
        for kind, table, col, ids in (
            ("memory", "memories", "content", self.memories),
            ("message", "messages", "content", self.messages),
            ("rule", "rules", "text", self.rules),
        ):
            rows = self._rows(conn, table, col, ids)
            skills = {}
            if kind == "memory":  # a Hermes skill's memory is known by the skill's name too
                for i, raw in self._rows(conn, table, "metadata", ids):
                    try:
                        name = json.loads(raw).get("hermes_skill") if raw else None
                    except (ValueError, TypeError, AttributeError):
                        name = None
                    if isinstance(name, str) and name:
                        skills[i] = f"hermes_skill:{name}"
            if kind == "message" and self.sessions:
                # A message that goes with its whole session is known by the session's id; hashing
                # its content too would keep every later "thanks!" anywhere from being imported.
                inside = {
                    i for i, sid in self._rows(conn, "messages", "session_id", ids) if sid in self.sessions
                }
                rows = [(i, None if i in inside else t) for i, t in rows]
            out += [(kind, i, skills.get(i), t) for i, t in rows]
        out += [("session", sid, sid, None) for sid in sorted(self.sessions)]
        out += [
            ("flow", fid, name, flow_text(desc, _strings(steps)))
            for fid, name, desc, _, steps in self._flow_rows(conn)
        ]
        return out

    # -- removal --------------------------------------------------------------------------------------
    def delete(self, conn: Connection, texts: list[str]) -> dict:
        rows = conn.forget_queries.proposal_texts()
        for i in rows_containing(["\n".join(x or "" for x in (r[1], r[2], r[3])) for r in rows], texts):
            self.proposals.add(int(rows[i][0]))
        counts = self.counts()
        conn.proposals.delete(self.proposals)
        if self.revive:
            conn.memories.unabsorb(sorted(self.revive))
        conn.memories.delete(sorted(self.memories))
        conn.rules.delete(sorted(self.rules))
        conn.flows.delete(sorted(self.flows))
        if self.messages:
            conn.memories.unlink("message_id", sorted(self.messages))
            conn.messages.delete(self.messages)
        if self.sessions:
            sids = sorted(self.sessions)
            conn.messages.delete_of(sids)
            conn.memories.unlink("session_id", sids)
            conn.sessions.delete(sids)
        if self.titles:
            conn.sessions.clear_titles(sorted(self.titles))
        return counts


def resolve(
    conn: Connection, kind: str, value: str, mode: str = DEFAULT_MODE, excluded: dict | None = None
) -> Selection:
    """The scope's own records, less those the operator dropped (`excluded`: kind -> ids). A query
    matches in `mode` (engine/forget/match.py: word, phrase or substring)."""
    s = _resolve(conn, kind, value, mode)
    return s.without(excluded) if excluded else s


def _resolve(conn: Connection, kind: str, value: str, mode: str) -> Selection:
    q = conn.forget_queries
    s = Selection()
    if kind == "memory":
        ids = [int(v) for v in value.split(",") if v]
        found = q.existing_memories(ids)
        missing = sorted(set(ids) - found)
        if missing:
            raise NotFound(f"no memory with id {', '.join(map(str, missing))}")
        s.memories = {i: "selected" for i in ids}
    elif kind == "session":
        if not q.session_exists(value):
            raise NotFound(f"no session with id {cut(value)}")
        s.sessions = {value: "selected"}
        s.messages = {i: "in session" for i in q.ids_by("messages", "session_id", [value])}
        s.memories = {i: "derived from session" for i in q.ids_by("memories", "session_id", [value])}
    elif kind in ("agent", "user"):
        col = kind  # fixed column name, never user input
        s.sessions = {i: f"{kind}'s session" for i in q.ids_by("sessions", col, [value])}
        sids = sorted(s.sessions)
        s.messages.update({i: f"in {kind}'s session" for i in q.ids_by("messages", "session_id", sids)})
        s.memories.update({i: f"from {kind}'s session" for i in q.ids_by("memories", "session_id", sids)})
        s.memories.update({i: f"{kind}'s memory" for i in q.ids_by("memories", col, [value])})
        if kind == "agent":
            s.rules = {i: "agent's rule" for i in q.ids_by("rules", "agent", [value])}
            s.flows = {i: "agent's flow" for i in q.ids_by("flows", "agent", [value])}
        if not (s.sessions or s.memories or s.rules or s.flows):
            raise NotFound(f"nothing belongs to {kind} {cut(value)}")
    elif kind == "query":
        matcher = Matcher(value, mode)  # refuses a query with nothing to match before any row is read
        why = {"word": "words match", "phrase": "phrase matches"}.get(mode, "text matches")

        def match(table: str, cols: tuple[str, ...]) -> dict:
            # SQL's LIKE finds the ASCII-case substring hits at once (substring mode); every row is
            # then compared folded by the one matcher (engine/forget/match.py), which decides: so
            # "ZOË MÜLLER" is in the scope of "Zoë Müller", and "sample" is not in that of "Sam".
            found = {}
            if mode == "substring":
                found = {i: why for i in q.text_matches(table, cols, _patterns(value))}
            for r in q.text_rows(table, cols):
                if r[0] not in found and any(_holds(v, matcher) for v in r[1:]):
                    found[r[0]] = why
            return found

        s.memories = match("memories", ("content", "metadata"))
        s.messages = match("messages", ("content", "tool_name", "metadata"))
        s.rules = match("rules", ("text", "metadata"))
        s.flows = match("flows", ("name", "description", "triggers", "steps", "metadata"))
        s.titles = match("sessions", ("title",))
    else:
        raise InvalidInput(f"unknown scope {cut(kind)}")
    return s


def close_over(conn: Connection, sel: Selection, cascade_sources: bool = False) -> Selection:
    """Add what is derived from the selection: merged memories built from it (forgotten too), rules
    promoted from it, and proposals naming any of it. The other sources of a forgotten merged
    memory are revived (so only the forgotten part is lost), unless `cascade_sources` (an operator
    named the merged memory itself by id): then they are forgotten with it."""
    out = Selection(
        dict(sel.memories),
        dict(sel.messages),
        dict(sel.rules),
        dict(sel.sessions),
        dict(sel.titles),
        flows=dict(sel.flows),
    )
    q = conn.forget_queries
    explicit = set(out.memories)
    todo = list(out.memories)
    while todo:
        mid = todo.pop()
        into = q.absorbed_into(mid)
        if into is not None and into not in out.memories:
            out.memories[into] = DERIVED
            todo.append(into)
        if cascade_sources and mid in explicit:
            for src in q.sources_of(mid):
                if src not in out.memories:
                    out.memories[int(src)] = SOURCE
                    explicit.add(int(src))
                    todo.append(int(src))
    for mid in list(out.memories):
        out.revive |= {src for src in q.sources_of(mid) if src not in out.memories}
    out.rules.update({i: PROMOTED for i in q.promoted_from(sorted(out.memories)) if i not in out.rules})
    mem, rules = set(out.memories), set(out.rules)
    for r in q.proposal_links():
        members = _members(r[2])
        pool = mem if r[1] == "memory" else rules
        result_pool = rules if (r[4] == "promote" or r[1] == "rule") else mem
        if members & pool or (r[3] is not None and r[3] in result_pool):
            out.proposals.add(int(r[0]))
    return out
