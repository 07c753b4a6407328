"""The curator's files: `run.json` (for machines) and `REPORT.md` (for people), written 0600 in a
0700 folder `curator/<YYYYMMDD-HHMMSS>/` beside the database. Forget redacts them (forget_verify).
Every folder and file is reached through checked descriptors (engine/paths.py): a symlinked
`curator/`, or a link inside it, is refused with one line, never written through."""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from engine.clock import iso
from engine.paths import check_entry, home_of, open_dir, read_at, write_at
from engine.types import to_json

PREVIEW = 160


def curator_root(db_path: Path) -> Path:
    """Beside a SQLite file; under the state dir for a server (engine/paths.py home_of)."""
    return home_of(db_path) / "curator"


def report_dir_for(db_path: Path, started_at: float) -> Path:
    """A fresh folder name for a run; a second run in the same second gets a suffix. Checks (and
    creates, 0700) the curator folder first, so an unsafe one is refused before the run writes."""
    root = curator_root(db_path)
    stamp = datetime.fromtimestamp(started_at, tz=UTC).strftime("%Y%m%d-%H%M%S")
    fd = open_dir(root)
    try:
        name, n = stamp, 2
        while _exists(name, fd):
            name, n = f"{stamp}-{n}", n + 1
    finally:
        os.close(fd)
    return root / name


def _exists(name: str, at: int) -> bool:
    try:
        os.stat(name, dir_fd=at, follow_symlinks=False)
        return True
    except FileNotFoundError:
        return False


def write_report(folder: Path, run, members_text: dict) -> None:
    """`run` is a CuratorRun; `members_text` maps (target_kind, id) -> text, for the people's report."""
    doc = {
        "run_id": run.id,
        "started_at": iso(run.started_at),
        "finished_at": iso(run.finished_at),
        "dry_run": run.dry_run,
        "counts": run.counts,
        "timings": run.timings,
        "auto_applied": run.auto_applied,
        "proposals": to_json(run.proposals),
    }
    root = open_dir(folder.parent)
    try:
        fd = open_dir(folder.name, at=root, label=folder)
        try:
            for name, text in (
                ("run.json", json.dumps(doc, ensure_ascii=False, indent=2)),
                ("REPORT.md", markdown(run, members_text)),
            ):
                write_at(fd, name, text.encode("utf-8", "surrogatepass"), label=folder / name)
        finally:
            os.close(fd)
    finally:
        os.close(root)


def markdown(run, members_text: dict) -> str:
    c = run.counts
    lines = [
        f"# Curator run {run.id} — {iso(run.started_at)}",
        "",
        "Nothing below has changed any memory or rule: each proposal waits for an operator "
        "(`memconsole proposal approve ID` / `proposal reject ID --reason R`).",
        "",
        "| kind | proposed |",
        "|---|---|",
    ]
    for kind in ("merge", "archive", "promote", "retire"):
        lines.append(f"| {kind} | {c.get('proposed', {}).get(kind, 0)} |")
    lines += [
        "",
        f"- compared {c.get('compared', 0)} new or changed memories against "
        f"{c.get('vectors', 0)} mergeable ones" + (" (incremental)" if c.get("incremental") else " (full)"),
        f"- stale (idle past the stale window, not yet archivable): {c.get('stale', 0)}",
        f"- skipped as already proposed, rejected or undone: {c.get('skipped', 0)}",
        "- timings (s): " + ", ".join(f"{k} {v}" for k, v in run.timings.items()),
        "",
    ]
    for p in run.proposals:
        lines.append(f"## Proposal {p.id}: {p.kind} {p.target_kind} {', '.join(map(str, p.members))}")
        ev = p.evidence
        if p.kind == "merge":
            lines.append(f"Survivor text (from {p.target_kind} {ev.get('survivor_id')}):")
            lines.append(f"> {_one_line(p.survivor_text or '')}")
            lines.append("")
            for m in p.members:
                lines.append(f"- {p.target_kind} {m}: {_one_line(members_text.get((p.target_kind, m), ''))}")
            if ev.get("similarities"):
                lines.append(
                    f"- lowest pairwise cosine: {ev.get('min_similarity', _min_sim(ev['similarities']))}"
                )
        elif p.kind == "archive":
            lines.append(
                f"- idle {ev.get('idle_days')} days: "
                f"{_one_line(members_text.get(('memory', p.members[0]), ''))}"
            )
        elif p.kind == "promote":
            lines.append(
                f"- reinforced {ev.get('reinforcements')} times; becomes a rule at score "
                f"{ev.get('rule_score')}: {_one_line(p.survivor_text or '')}"
            )
        elif p.kind == "retire":
            lines.append(
                f"- dormant, unreinforced {ev.get('idle_days')} days (score {ev.get('score')}): "
                f"{_one_line(members_text.get(('rule', p.members[0]), ''))}"
            )
        lines.append("")
    return "\n".join(lines) + "\n"


def _one_line(text: str) -> str:
    t = " ".join(text.split())
    return t if len(t) <= PREVIEW else t[: PREVIEW - 1] + "…"


def _min_sim(sims) -> float | None:
    vals = [v for i, r in enumerate(sims) for j, v in enumerate(r) if i != j and v is not None]
    return min(vals) if vals else None


MAX_DEPTH = 4


def _db_inodes(db_path: Path) -> set[tuple[int, int]]:
    """(device, inode) of the database's files, by stat (which opens nothing)."""
    out = set()
    for suffix in ("", "-wal", "-shm"):
        try:
            st = os.stat(f"{db_path}{suffix}")
            out.add((st.st_dev, st.st_ino))
        except OSError:
            pass
    return out


@contextmanager
def _walk(db_path: Path):
    """Yields a list of (folder descriptor, name, path) of every report file, each checked: a
    symlink, a hard link, a special file or a database file anywhere in curator/ is refused."""
    root = curator_root(db_path)
    if not os.path.lexists(root):
        yield []
        return
    avoid = _db_inodes(db_path)
    fds: list[int] = []
    out: list[tuple[int, str, Path]] = []
    try:

        def visit(fd: int, path: Path, depth: int) -> None:
            fds.append(fd)
            for e in sorted(os.scandir(fd), key=lambda e: e.name):
                if e.is_dir(follow_symlinks=False) and depth < MAX_DEPTH:
                    visit(
                        open_dir(e.name, at=fd, label=path / e.name, create=False), path / e.name, depth + 1
                    )
                else:
                    check_entry(e.name, at=fd, label=path / e.name, avoid=avoid)
                    out.append((fd, e.name, path / e.name))

        visit(open_dir(root, create=False), root, 0)
        yield out
    finally:
        for fd in fds:
            os.close(fd)


def report_files(db_path: Path) -> list[Path]:
    """Every file the curator wrote beside this database (forget scans and redacts these)."""
    with _walk(db_path) as entries:
        return [p for _, _, p in entries]


def rewrite_reports(db_path: Path, fn) -> int:
    """Apply `fn(path, text) -> text` to every report; rewrite (in place, checked) those it changes."""
    changed = 0
    with _walk(db_path) as entries:
        for fd, name, path in entries:
            try:
                raw = read_at(fd, name).decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            new = fn(path, raw)
            if new != raw:
                write_at(fd, name, new.encode("utf-8", "surrogatepass"), label=path, create=False)
                changed += 1
    return changed


def boilerplate() -> str:
    """The words every report holds whatever it reports (headings, labels, JSON keys): live text,
    so a forgotten memory that shares a phrase with them is not mistaken for residue."""
    from engine.curator.types import CuratorRun, Proposal, ProposalKind, TargetKind

    kinds: list[tuple[ProposalKind, TargetKind]] = [
        ("merge", "memory"),
        ("merge", "rule"),
        ("archive", "memory"),
        ("promote", "memory"),
        ("retire", "rule"),
    ]

    props = [
        Proposal(
            0,
            k,
            t,
            "pending",
            [0],
            "",
            {
                "survivor_id": 0,
                "similarities": [[1.0]],
                "min_similarity": 1.0,
                "idle_days": 0,
                "reinforcements": 0,
                "rule_score": 0,
                "score": 0,
                "same_prefix": 0,
                "scores": 0,
                "agent": 0,
                "category": 0,
                "archive_days": 0,
                "last_activity": 0,
                "retire_days": 0,
            },
            0.0,
        )
        for k, t in kinds
    ]
    run = CuratorRun(0, False, 0.0, 0.0, {"proposed": {}}, {"total": 0}, props)
    doc = {
        "run_id": 0,
        "started_at": "",
        "finished_at": "",
        "dry_run": False,
        "counts": {},
        "timings": {},
        "auto_applied": [],
        "proposals": to_json(props),
    }
    return "\n".join(
        [markdown(run, {}), json.dumps(doc, ensure_ascii=False, indent=2), "(incremental)", "[forgotten]"]
    )
