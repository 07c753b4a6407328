"""What approving (or undoing) a proposal will do, as one typed plan built once, shown to the
operator and then executed: the confirmation cannot say one thing while the apply does another
(issue #25: a rule merge was announced as "into ONE new rule" while the apply kept #80).

`build_plan` reads the members as they are now and decides everything the apply decides: which
member survives, whether a new record is made or the survivor is kept under its own id, the text
it ends with, what happens to each other member, and the risks of the merge. `Applier.apply`
(engine/curator/apply.py) builds the same plan inside its transaction, refuses if it differs from
the one the operator confirmed, and then acts only on the plan's fields.

`undo_plan` reads an applied proposal's snapshot: what undo restores (and which columns go back)
and what it deletes; `apply.undo` executes exactly those lists.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.curator import state as curator_state
from engine.curator.risky import merge_risks
from engine.errors import InvalidInput
from engine.storage.port import Connection
from engine.types import load_json


@dataclass(frozen=True)
class MemberChange:
    id: int
    text: str  # the member's text now
    change: str  # what happens to it, in words


@dataclass(frozen=True)
class ApplyPlan:
    proposal_id: int
    kind: str  # merge | archive | promote | retire
    target_kind: str  # memory | rule
    members: tuple[int, ...]
    survivor_id: int | None  # merge: the member whose text and settings are kept
    keeps_id: int | None  # the record that remains under its own id (rule merge: the survivor)
    creates: str | None  # "memory" (memory merge) or "rule" (promote): a new record is made
    text: str | None  # the text the kept or new record ends with
    edited: bool  # the text is the operator's, not the proposal's
    changes: tuple[MemberChange, ...]
    risks: tuple[str, ...] = field(default=())  # why this merge may lose meaning (risky.py)

    def describe(self) -> str:
        """The plan in words: the confirmation's body (pane and CLI)."""
        ids = ", ".join(f"#{m}" for m in self.members)
        noun = "memories" if self.target_kind == "memory" else "rules"
        lines: list[str] = []
        if self.kind == "merge" and self.creates:
            lines.append(
                f"Merge {noun} {ids}: a NEW {self.target_kind} is made with the text, kind, category, "
                f"agent and metadata of #{self.survivor_id} (the survivor)"
                + (" and YOUR edited text" if self.edited else "")
                + f":\n\n“{self.text}”\n"
            )
        elif self.kind == "merge":
            lines.append(
                f"Merge {noun} {ids} into {self.target_kind} #{self.keeps_id} (kept under its own id), "
                + ("whose text becomes YOUR edited text" if self.edited else "whose text becomes")
                + f":\n\n“{self.text}”\n"
            )
        elif self.kind == "promote":
            lines.append(f"Promote memory {ids} to a NEW rule with the text:\n\n“{self.text}”\n")
        else:
            lines.append(f"{self.kind.capitalize()} {noun} {ids}:")
        lines += [f"#{c.id}: {c.change}" for c in self.changes]
        lines.append("Nothing is deleted. Undo (u) restores exactly the state before.")
        if self.risks:
            lines.append("\nRISKY: " + "; ".join(self.risks))
        return "\n".join(lines)


def _rows(conn: Connection, table: str, ids: list[int], pid: int) -> list[dict]:
    out = []
    for m in ids:
        r = conn.curator_queries.touched_row(table, m)
        if r is None:
            raise InvalidInput(f"proposal {pid} is stale: {table[:-1]} {m} no longer exists")
        out.append(r)
    return out


def _survivor(evidence: dict, rows: list[dict]) -> dict:
    sid = int(evidence.get("survivor_id") or rows[0]["id"])
    return next((r for r in rows if r["id"] == sid), rows[0])


def build_plan(conn: Connection, row, text: str | None = None) -> ApplyPlan:
    """The plan of approving the proposal `row` (a proposals row) with `text` (None: the
    proposal's own), from the members as they are now. Reads only."""
    pid, kind, target = int(row["id"]), str(row["kind"]), str(row["target_kind"])
    members = curator_state.parse_members(row["members"])
    if not members:
        raise InvalidInput(f"proposal {pid} has no readable member list; reject it and run the curator again")
    evidence = load_json(row["evidence"])
    evidence = evidence if isinstance(evidence, dict) else {}
    table = "memories" if target == "memory" else "rules"
    rows = _rows(conn, table, members, pid)
    body = "content" if target == "memory" else "text"
    texts = {int(r["id"]): str(r[body] or "") for r in rows}
    edited = text is not None
    if kind == "merge":
        surv = _survivor(evidence, rows)
        sid = int(surv["id"])
        final = text if text is not None else str(row["survivor_text"] or surv[body])
        if target == "memory":
            changes = tuple(
                MemberChange(
                    m,
                    texts[m],
                    "archived, absorbed_into → the new memory (kept; its access count carried over)",
                )
                for m in members
            )
            return ApplyPlan(
                pid, kind, target, tuple(members), sid, None, "memory", final, edited, changes,
                tuple(merge_risks(list(texts.values()), final)),
            )  # fmt: skip
        changes = tuple(
            MemberChange(
                m,
                texts[m],
                "kept: text, score and status updated" if m == sid else f"retired, absorbed_into → #{sid}",
            )
            for m in members
        )
        return ApplyPlan(
            pid, kind, target, tuple(members), sid, sid, None, final, edited, changes,
            tuple(merge_risks(list(texts.values()), final)),
        )  # fmt: skip
    first = members[0]
    if kind == "promote":
        final = text if text is not None else str(row["survivor_text"] or texts[first])
        changes = (MemberChange(first, texts[first], "stays as it is; the new rule names it as its source"),)
        return ApplyPlan(pid, kind, target, (first,), None, first, "rule", final, edited, changes)
    what = {
        "archive": "tier → archived (leaves default searches)",
        "retire": "status → retired (no longer loaded at boot)",
    }
    if kind not in what:
        raise InvalidInput(f"proposal {pid}: unknown kind {kind}/{target}")
    changes = tuple(MemberChange(m, texts[m], what[kind]) for m in members[:1])
    return ApplyPlan(pid, kind, target, (first,), None, first, None, None, False, changes)


_ONE = {"memories": "memory", "rules": "rule"}


@dataclass(frozen=True)
class UndoPlan:
    proposal_id: int
    restores: dict[str, dict[int, list[str]]]  # table -> {id: the columns that go back}
    deletes: dict[str, list[int]]  # table -> ids it created and undo deletes

    def describe(self) -> str:
        lines = [f"Undo proposal #{self.proposal_id}:"]
        for table, rows in self.restores.items():
            for rid, cols in sorted(rows.items()):
                what = ", ".join(cols) if cols else "nothing changed"
                lines.append(f"restore {_ONE[table]} #{rid} as it was before ({what} back)")
        made = [(t, i) for t in ("memories", "rules") for i in self.deletes.get(t, [])]
        if made:
            lines.append(
                "delete " + ", ".join(f"{_ONE[t]} #{i}" for t, i in made) + ", which the apply created"
            )
        else:
            lines.append("delete no memory or rule: the apply created none")
        lines.append("Refused if any of them changed since it was applied.")
        return "\n".join(lines)


def undo_plan(row) -> UndoPlan:
    """What undoing the applied proposal `row` restores and deletes, from its snapshot."""
    snap = load_json(row["snapshot"])
    if not snap:
        raise InvalidInput(f"proposal {row['id']} has no snapshot to undo")
    restores: dict[str, dict[int, list[str]]] = {}
    for table, rows in snap.get("before", {}).items():
        if table not in ("memories", "rules"):
            raise InvalidInput(f"proposal {row['id']}'s snapshot names an unknown table")
        after = snap.get("after", {}).get(table, {})
        skip = {"updated_at"}
        restores[table] = {
            int(rid): [c for c in before if c not in skip and (after.get(rid) or {}).get(c) != before[c]]
            for rid, before in rows.items()
        }
    created = snap.get("created", {})
    deletes = {t: [int(i) for i in created.get(t, [])] for t in ("memories", "rules", "rule_history")}
    return UndoPlan(int(row["id"]), restores, deletes)
