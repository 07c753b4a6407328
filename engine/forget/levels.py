"""Verification in levels, for a database on a server (an eraser's `server`, engine/storage/reach.py).

A server's files are the server's: what a forget can prove depends on where it runs.
- *logical* (always): no live row of memconsole's tables (nor the planner's sampled statistics)
  holds a forgotten text whole, read through SQL, so compressed or TOASTed values are seen as text.
  A record outside the case that says the same thing word for word counts: the operator decides.
- *engine files* (always): the curator reports this installation keeps for the server.
- *host files* (only on the database's host, its data directory proven to be this server's): after
  the tables are rewritten without their dead rows and a checkpoint, the relation files and every
  WAL segment are scanned for the bytes, the same scan as a SQLite file's. A WAL segment still
  holding the text is residue (the server recycles segments, it does not wipe them); values that
  were stored compressed cannot be seen by a byte scan and count as unproven residue of the WAL.
- *out of reach* (never checked): replicas, WAL archives, slots' retained WAL, backups — named.

The case is `verified` only when every level that was checked found nothing; the levels, recorded
in the case and its audit row, say what that covers.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.forget.scan import scan_files
from engine.forget.types import Level
from engine.forget.verify import MIN_PIECE, MIN_WHOLE, targets
from engine.storage.reach import ServerEraser


def server_levels(
    eraser: ServerEraser,
    reading: Callable[[], Any],
    texts: list[str],
    main: int,
    strict: list[str],
    reports: list[Path],
    compressed: int,
    tries: int,
    pause: float,
    host: bool = True,
    replicas: Callable[[list[str]], list[Level]] | None = None,
) -> tuple[list[Level], dict[str, int], int, bool]:
    """(levels, files scanned -> hits, substrings searched for, tables rewritten). `host`: the
    forget.host_files setting (false: the host level is not checked, and says so). `replicas`:
    the configured read replicas' levels for the texts looked for whole (engine/forget/replicas.py)."""
    if not texts and not strict:  # nothing to look for: no level may say "clean" (issue #24)
        return _nothing_to_check(eraser, replicas), {}, 0, False
    settled = eraser.settle(tries, pause)
    wholes = [t for t in texts[:main] + strict if len(t.strip()) >= MIN_WHOLE]
    with reading() as conn:
        hits = eraser.logical_hits(conn, wholes)
        tg = targets(lambda: eraser.live_texts(conn, MIN_PIECE), texts, strict)
    levels = [
        Level("logical", True, sum(hits.values()), hits,
              f"{len(wholes)} texts looked for whole in every text column of memconsole's tables and "
              "their statistics, read through SQL (TOASTed and compressed values as text)"),
    ]  # fmt: skip
    levels[0].note += "; nodes holding data: " + ", ".join(eraser.data_nodes())
    reach = eraser.reach()
    groups = eraser.host_files() if host and reach.on_host and settled.checkpointed else {}
    scan = [p for g in groups.values() for p in g] + reports
    searched = tg.count
    found = (scan_files(scan, tg.wins, tg.short, tg.terms, pieces=tg.pieces) if searched
             else {str(p): 0 for p in scan})  # fmt: skip
    rep = {p.name if p.parent.name == "curator" else str(p): found.get(str(p), 0) for p in reports}
    levels.append(Level("engine files", True, sum(rep.values()), {k: v for k, v in rep.items() if v},
                        f"{len(reports)} curator report files of this installation scanned"))  # fmt: skip
    files: dict[str, int] = {f"report {k}": v for k, v in rep.items()}
    if groups:
        per = {g: sum(found.get(str(p), 0) for p in ps) for g, ps in groups.items()}
        where = {
            _rel(reach.data_dir, p): found[str(p)] for ps in groups.values() for p in ps if found.get(str(p))
        }
        counted = f"{len(groups.get('data files', []))} relation files and {len(groups.get('WAL', []))}"
        note = f"{reach.why}; {counted} WAL segments scanned after VACUUM FULL and CHECKPOINT"
        if per.get("WAL"):
            note += "; WAL segments still hold the text until the server recycles and overwrites them"
        residue = sum(per.values())
        if compressed:
            where["WAL: values stored compressed, unseen by a byte scan"] = compressed
            note += f"; {compressed} forgotten values were stored compressed: the WAL is not provable"
            residue += compressed
        for c in reach.caveats:
            note += f"; {c}"
        if not settled.statistics:
            note += "; the statistics catalog was not rewritten"
        levels.append(Level("host files", True, residue, where, note))
        files.update({f"{g} ({len(groups[g])})": n for g, n in per.items()})
    else:
        why = (
            "turned off (forget.host_files = false)" if not host
            else reach.why if not reach.on_host
            else "no CHECKPOINT: " + "; ".join(settled.notes)
        )  # fmt: skip
        levels.append(Level("host files", False, 0, {}, f"not checked: {why}"))
    levels += replicas(wholes) if replicas is not None else []
    levels += _pieces(tg.unchecked)
    levels.append(Level("out of reach", False, 0, {}, "not checked: " + "; ".join(reach.out_of_reach)))
    if settled.notes:
        levels[0].note += "; " + "; ".join(settled.notes)
    return levels, files, searched, settled.rewritten


def _nothing_to_check(
    eraser: ServerEraser, replicas: Callable[[list[str]], list[Level]] | None
) -> list[Level]:
    """A verification with no text to look for (the case's sealed texts are not at this place:
    verified already, sealed by another installation, or read through a replica's URL)."""
    why = "not checked: 0 texts scanned (the case's sealed texts are not here)"
    levels = [Level("logical", False, 0, {}, why), Level("host files", False, 0, {}, why)]
    levels += replicas([]) if replicas is not None else []
    return levels + [
        Level("out of reach", False, 0, {}, "not checked: " + "; ".join(eraser.reach().out_of_reach))
    ]


def file_levels(residue: int, files: dict[str, int], unchecked: list[str] | None = None) -> list[Level]:
    """A database file on this machine (SQLite): its bytes are all there is, all scanned (but for
    pieces too short to tell from other bytes: `unchecked`, a level of their own)."""
    return [
        Level("files", True, residue, {k: v for k, v in files.items() if v},
              "the database's files and the curator reports, byte for byte"),
        *_pieces(unchecked or []),
        Level("out of reach", False, 0, {}, "not checked: copies and backups of the database file"),
    ]  # fmt: skip


def _pieces(unchecked: list[str]) -> list[Level]:
    """The pieces no scan could look for without false hits (1-2 characters, or held live)."""
    return [Level("short pieces", False, 0, {}, "; ".join(unchecked))] if unchecked else []


def summary(levels: list[Level]) -> dict[str, str]:
    """One line per level, for the case's counts and its audit row (no text, no file names)."""
    out = {}
    for lv in levels:
        if not lv.checked:
            out[lv.name] = lv.note
        else:
            out[lv.name] = (
                "clean"
                if lv.residue == 0
                else f"residue {lv.residue}"
                + (" (" + ", ".join(f"{k} {v}" for k, v in lv.found.items()) + ")" if lv.found else "")
            )
    return out  # fmt: skip


def readable(counts: dict, levels: list[Level] | None = None) -> list[dict]:
    """Every level as JSON: name, whether it was checked, residue, its one line and what it
    checked (or why not). From a fresh verification's `levels`, else from what the case recorded."""
    if levels:
        said_of = summary(levels)
        return [{"name": lv.name, "checked": lv.checked, "residue": lv.residue, "line": said_of[lv.name],
                 "checked_what": lv.note, "found": lv.found} for lv in levels]  # fmt: skip
    got, said = counts.get("levels"), counts.get("level_notes")
    lines: dict = got if isinstance(got, dict) else {}
    notes: dict = said if isinstance(said, dict) else {}
    out = []
    for name, line in lines.items():
        checked = not str(line).startswith("not checked")
        residue = int(str(line).split()[1]) if str(line).startswith("residue ") else 0
        out.append({"name": name, "checked": checked, "residue": residue, "line": line,
                    "checked_what": notes.get(name, line)})  # fmt: skip
    return out


def why_not(status: str, levels: list[dict], wal_truncated: bool | None = None) -> str:
    """One line: why a case is not `verified` (empty when it is)."""
    if status == "verified":
        return ""
    if status in ("open", "previewed", "withdrawn"):
        return f"the case is {status}: nothing was removed"
    bad = [f"{lv['name']}: {lv['line']}" for lv in levels if lv["checked"] and lv["residue"]]
    if bad:
        return "residue found at " + "; ".join(bad)
    if wal_truncated is False:
        return "the log could not be truncated (another reader holds it open); verify again later"
    if not levels:
        return "not verified yet: run forget-request ID --verify"
    return "verification did not finish; run forget-request ID --verify"


def _rel(home: Path | None, p: Path) -> str:
    try:
        return str(p.relative_to(home)) if home else str(p)
    except ValueError:
        return str(p)
