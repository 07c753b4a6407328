"""What the Curator pane writes, as rich Text or plain words: a word diff, what approving will
change (the confirmation's body), a proposal's detail, its evidence in short and a run's summary.
Pure functions of the engine's dataclasses (a confirmation's words come from the engine's plan:
screens/curator/confirm.py)."""

from __future__ import annotations

import difflib
from pathlib import Path

from rich.text import Text

from console.app.widgets.fmt import when
from engine.curator.risky import risk_of
from engine.curator.types import CuratorRun, ProposalDetail, ProposalRow

MARK = "✓"  # a marked row (space)


def word_diff(old: str, new: str) -> Text:
    """`old` → `new` word by word: removed words struck red, added words green."""
    a, b = old.split(), new.split()
    out = Text()
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(" ".join(a[i1:i2]) + " ")
        if op in ("delete", "replace"):
            out.append(" ".join(a[i1:i2]) + " ", style="strike red")
        if op in ("insert", "replace"):
            out.append(" ".join(b[j1:j2]) + " ", style="bold green")
    return out


def stale_title(n: int) -> str:
    return f"Reject {n} stale proposal{'' if n == 1 else 's'}?"


def stale_body(stale: dict[int, str]) -> str:
    """What `S` will reject: each stale proposal with why approval would refuse it."""
    lines = [f"#{pid}: {why}" for pid, why in sorted(stale.items())[:12]]
    more = f"\n… and {len(stale) - 12} more" if len(stale) > 12 else ""
    return (
        f"Reject these {len(stale)} pending proposal(s): a member changed since each was proposed, "
        "so approval would refuse them. Each rejection is audited with the reason you give next; "
        "run the curator again (r) to propose afresh.\n\n" + "\n".join(lines) + more
    )


def proposal_text(d: ProposalDetail, stale: str | None = None) -> Text:
    """One proposal as the detail panel shows it: its state, the proposed survivor, each member
    with a word diff against the survivor, the similarity matrix and the rest of the evidence."""
    p = d.proposal
    t = Text()
    t.append(f"#{p.id} {p.kind} · {p.target_kind} · {p.status}", style="bold")
    if p.decided_by:
        t.append(f" · decided by {p.decided_by} {when(p.decided_at)}", style="dim")
    if p.reason:
        t.append(f" · reason: {p.reason}", style="dim")
    if p.result_id:
        t.append(f" · result #{p.result_id}", style="dim")
    t.append("\n")
    if stale and p.status == "pending":
        t.append(
            f"\nSTALE: {stale}. Approval would refuse it; S rejects every stale one.\n", style="bold red"
        )
    if why := risk_of(p.evidence):
        t.append(f"\n⚠ RISKY: {why}\n", style="bold yellow")
    if p.survivor_text is not None:
        t.append("\nproposed survivor", style="bold cyan")
        if d.survivor_id:
            t.append(f" (text of #{d.survivor_id})", style="dim")
        t.append(f":\n  {p.survivor_text}\n")
    t.append("\nmembers", style="bold")
    if p.survivor_text is not None:
        t.append("  (diff: member → survivor)", style="dim")
    t.append("\n")
    for m in d.members:
        mark = " ★" if m.id == d.survivor_id else ""
        t.append(f"#{m.id}{mark} ", style="bold")
        t.append(
            f"{m.state} · {'strength' if m.kind == 'memory' else 'score'} {m.strength:g} · "
            f"{m.agent or '–'}{'' if m.exists else ' · GONE'}\n",
            style="dim",
        )
        t.append("  ")
        t.append_text(word_diff(m.text, p.survivor_text) if p.survivor_text is not None else Text(m.text))
        t.append("\n")
    if len(d.members) > 1 and d.similarities:
        t.append("\nsimilarity (cosine)\n", style="bold")
        t.append("      " + "".join(f"{'#' + str(m):>8}" for m in p.members) + "\n", style="dim")
        for mid, row in zip(p.members, d.similarities, strict=False):
            t.append(f"{'#' + str(mid):>6}")
            for v in row:
                t.append(
                    f"{'–' if v is None else format(v, '.3f'):>8}",
                    style="green" if v is not None and v >= 0.9 else "",
                )
            t.append("\n")
    hidden = (
        "similarities",
        "survivor_id",
        "member_state",
        "audit_mark",
        "risky",
        "risky_reason",
    )  # shown above, or internal
    extra = {k: v for k, v in p.evidence.items() if k not in hidden}
    if extra:
        t.append("\nevidence: ", style="bold")
        t.append(
            ", ".join(
                f"{k} {when(v) if k.startswith('last') and isinstance(v, (int, float)) else v}"
                for k, v in extra.items()
            )
        )
    return t


def evidence_short(p) -> str:
    e = p.evidence or {}
    if "min_similarity" in e:
        return ("⚠ risky · " if risk_of(e) else "") + f"cos ≥ {e['min_similarity']:.3f}"
    if "idle_days" in e:
        return f"idle {e['idle_days']:g} d"
    return ", ".join(f"{k} {v}" for k, v in list(e.items())[:2] if not isinstance(v, (list, dict)))[:40]


def run_text(run: CuratorRun | None) -> Text:
    if run is None:
        return Text("No curator run yet. Press r to run it (D for a dry run).", style="dim")
    t = Text()
    label = "dry run" if run.dry_run else f"run #{run.id}"
    t.append(f"{label} at {when(run.started_at)}", style="bold")
    c = run.counts
    proposed = c.get("proposed", {})
    t.append(" · proposed " + ", ".join(f"{k} {v}" for k, v in proposed.items()))
    t.append(
        f" · compared {c.get('compared', 0)} · stale {c.get('stale', 0)} · skipped {c.get('skipped', 0)}"
    )
    if c.get("malformed"):
        t.append(f" · {c['malformed']} malformed row(s) skipped (doctor)", style="yellow")
    if run.report_dir:
        t.append(f" · report {Path(run.report_dir).name}/REPORT.md (v)", style="dim")
    for p in run.proposals[:8]:
        t.append(f"\n  #{p.id or '-'} {p.kind} {', '.join(f'#{m}' for m in p.members)} · {p.status}")
    return t


# -- bulk decisions ----------------------------------------------------------------------------------
def kinds_count(proposals) -> str:
    """ "9 merge, 3 archive": how many of each kind, most first."""
    counts: dict[str, int] = {}
    for p in proposals:
        counts[p.kind] = counts.get(p.kind, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def bulk_targets(
    shown, marked: list[int], skip_risky: bool = False, stale: dict[int, str] | None = None
) -> tuple[list, int, int, int]:
    """The marked rows (or, none marked, every row shown) that are pending; how many of those rows
    are not pending (left alone); how many risky merges were left out (`skip_risky` and none
    marked: marking a risky merge includes it); how many stale ones were left out (`stale` given:
    approval would refuse them, so they are not offered)."""
    rows = [p for p in shown if p.id in marked] if marked else list(shown)
    pending = [p for p in rows if p.status == "pending"]
    fresh = [p for p in pending if not (stale and p.id in stale)]
    todo = [p for p in fresh if not (skip_risky and not marked and risk_of(p.evidence))]
    return todo, len(rows) - len(pending), len(fresh) - len(todo), len(pending) - len(fresh)


def bulk_title(verb: str, proposals) -> str:
    """ "Approve 12 proposals: 9 merge, 3 archive"."""
    n = len(proposals)
    return f"{verb} {n} proposal{'' if n == 1 else 's'}: {kinds_count(proposals)}"


def bulk_body(
    verb: str, proposals, left_out: int, marked: bool, risky_skipped: int = 0, stale_skipped: int = 0
) -> str:
    """What a bulk decision will change, in words (the confirmation's body)."""
    ids = ", ".join(f"#{p.id}" for p in proposals[:20]) + (" …" if len(proposals) > 20 else "")
    src = "the marked rows" if marked else "every row the current filter shows"
    body = (
        f"{verb} {ids} ({src}). Each is decided in its own transaction; a stale one is refused and reported."
    )
    if verb.startswith("Approve"):
        body += " Approving applies each at once (merges make one new memory, archives archive, …)."
    if left_out:
        body += f" {left_out} shown row(s) are not pending and are left alone."
    if risky_skipped:
        body += (
            f" {risky_skipped} risky merge(s) (members differ only in numbers or dates) are skipped:"
            " mark them with space to include them."
        )
    if stale_skipped:
        body += (
            f" {stale_skipped} STALE proposal(s) (a member changed since proposed) are skipped:"
            " S rejects every stale one with a reason."
        )
    if n := sum(1 for p in proposals if risk_of(p.evidence)):
        body += f" Includes {n} RISKY merge(s) you marked (members differ only in numbers or dates)."
    return body


def bulk_result(verb: str, outcomes) -> str:
    """One notice for a bulk decision: how many went through, which were refused and why."""
    ok = [o for o in outcomes if o.ok]
    bad = [o for o in outcomes if not o.ok]
    msg = f"{verb} {len(ok)} of {len(outcomes)} proposal(s)."
    if skipped := [o for o in bad if o.skipped]:
        msg += f" {len(skipped)} risky skipped."
        bad = [o for o in bad if not o.skipped]
    if stale := [o for o in bad if o.stale]:
        msg += f" {len(stale)} stale skipped (S rejects them)."
        bad = [o for o in bad if not o.stale]
    if bad:
        msg += " Refused: " + "; ".join(f"#{o.id} {o.error}" for o in bad[:3])
        msg += " …" if len(bad) > 3 else ""
    return msg


def row_cells(r: ProposalRow, marked: bool) -> list:
    """One row of the queue: mark, id, kind, the text it is about (fourth: on screen at 80 columns),
    state, agents, members, evidence."""
    p = r.proposal
    return [
        MARK if marked else "",
        p.id,
        f"{p.kind} {p.target_kind}",
        " ".join(r.text.split()),  # the whole text, one line: the column cuts it to the width
        "STALE" if r.stale else p.status,  # a word, not a colour: approval would refuse it
        ", ".join(r.agents),
        ", ".join(f"#{m}" for m in p.members[:6]) + ("…" if len(p.members) > 6 else ""),
        evidence_short(p),
        when(p.created_at)[:10],
    ]


def impact_text(rows) -> Text:
    """Which searches' top k approving would change (a dry run, rolled back): each changed one
    with the hits that leave and enter; the unchanged ones counted."""
    t = Text()
    changed = [r for r in rows if r.changed]
    t.append(
        f"impact (dry run, nothing written): {len(changed)} of {len(rows)} searches' top k change\n",
        style="bold",
    )

    def ids(xs) -> str:
        return ", ".join("the merged memory" if i == 0 else f"#{i}" for i in xs)

    for r in changed:
        q = " ".join(r.query.split())
        t.append(f"  {r.label} “{q[:50]}{'…' if len(q) > 50 else ''}” k={r.k}: ")
        if r.left:
            t.append(f"leaves {ids(r.left)}", style="red")
        if r.left and r.entered:
            t.append("; ")
        if r.entered:
            t.append(f"enters {ids(r.entered)}", style="green")
        if not r.left and not r.entered:
            t.append("same hits, new order", style="dim")
        t.append("\n")
    return t
