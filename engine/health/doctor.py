"""`doctor`: does the file agree with itself? The database's own integrity check, every keyword
index against its table, vectors against memories, references that point nowhere, the audit hash
chain (audit.verify_chain), the heads forget cases recorded, and after-commit hooks that failed
(a refused move of the audit anchor). `repair` rebuilds only what is derived (keyword indexes,
vectors, their filter fields); it never touches records, and an audit break is evidence: reported,
never "fixed". What differs by backend is the store's health checks (engine/storage/health.py)."""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from engine.audit import log as audit
from engine.audit.verify import verify_chain
from engine.errors import EngineError
from engine.forget.heads import check_case_heads
from engine.health import rows as doctor_rows
from engine.storage import file_integrity
from engine.storage.health import HealthChecks, Offenders
from engine.storage.port import Connection
from engine.storage.queries.health import ORPHAN_CHECKS

if TYPE_CHECKING:
    from engine.context import Context
    from engine.memories import MemoriesService

SAMPLE = 20  # offending ids shown per check
PENDING_SAMPLE = 100  # pending-vector ids listed in a report


@dataclass
class DoctorCheck:
    name: str
    ok: bool
    detail: str
    count: int = 0  # how many things are wrong
    ids: list = field(default_factory=list)  # the first few offending ids


@dataclass
class DoctorReport:
    ok: bool
    checks: list[DoctorCheck]
    counts: dict
    pending_vectors: list[int]  # memories waiting for a vector (first PENDING_SAMPLE)
    repaired: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[DoctorCheck]:
        return [c for c in self.checks if not c.ok]


def _orphans(c: Connection, check: str, what: str) -> DoctorCheck:
    ids = c.health_queries.orphans(check)
    o = Offenders(len(ids), ids[:SAMPLE])
    return DoctorCheck(
        f"orphans:{check}", o.count == 0, f"{o.count} {what}" if o.count else "none", o.count, o.ids
    )


def _chain(c: Connection) -> DoctorCheck:
    chain = verify_chain(c, limit_problems=SAMPLE)
    bad = list(dict.fromkeys(int(m.group(1)) for p in chain.problems if (m := re.match(r"row (\d+):", p))))
    return DoctorCheck(
        "audit-chain",
        chain.ok,
        chain.message
        if chain.ok
        else f"{chain.message}: {chain.problems[0]}"
        + (f" (+{len(chain.problems) - 1} more)" if len(chain.problems) > 1 else ""),
        len(chain.problems),
        bad,
    )


def _case_heads(c: Connection) -> list[DoctorCheck]:
    """One finding per forget case whose recorded audit head was cut or rewritten."""
    found = check_case_heads(c)
    if not found:
        return [DoctorCheck("forget-heads", True, "every forget case's audit head is in the log")]
    return [DoctorCheck("forget-heads", False, problem, 1) for problem in found]


def _integrity(problems: list[str], name: str = "sqlite-integrity") -> DoctorCheck:
    sound = not problems
    return DoctorCheck(name, sound, "ok" if sound else "; ".join(problems[:5]), len(problems))


def doctor_file(path: str | os.PathLike) -> DoctorReport:
    """For a file too damaged to open as a database (its schema unreadable): SQLite's own
    integrity check through a read-only, immutable connection, so the operator gets the finding
    (and nothing is written, not even a -wal)."""
    checks: list[DoctorCheck] = []
    unopened, problems = file_integrity(path)
    if unopened is not None:
        checks.append(DoctorCheck("sqlite-readable", False, f"the file cannot be opened ({unopened})", 1))
    else:
        checks.append(_integrity(problems))
    checks.append(
        DoctorCheck("schema", False, "the database could not be opened; nothing else was checked", 1)
    )
    return DoctorReport(False, checks, {}, [])


class Health:
    """`eng.health.doctor()`: findings about the file, and repair of what is derived."""

    def __init__(self, ctx: Context, memories: MemoriesService) -> None:
        self.ctx = ctx
        self.memories = memories

    @property
    def checks(self) -> HealthChecks:
        return self.ctx.store.health

    def doctor(self, repair: bool = False) -> DoctorReport:
        """Check the database; with `repair`, rebuild derived indexes first and report what
        was done (then check again, so the report describes the file as it is now)."""
        repaired: list[str] = []
        if repair:
            stops: tuple[type[BaseException], ...] = (*self.checks.errors, EngineError)
            try:
                repaired = self._repair()
            except stops as exc:  # a damaged or read-only file: say so
                repaired = [f"repair stopped: {exc}"]
        report = self._check()
        report.repaired = repaired
        return report

    # -- checks ----------------------------------------------------------------------------------
    def _guard(self, checks: list[DoctorCheck], name: str, fn: Callable[[], object]) -> None:
        """Run one check; a damaged file makes it a finding, never a traceback."""
        try:
            got = fn()
        except self.checks.errors as exc:
            checks.append(DoctorCheck(name, False, f"could not be checked: {exc}", 1))
            return
        if isinstance(got, DoctorCheck):
            checks.append(got)
        elif isinstance(got, list) and all(isinstance(x, DoctorCheck) for x in got):
            checks.extend(got)

    def _check(self) -> DoctorReport:
        h = self.checks
        checks: list[DoctorCheck] = []
        counts: dict = {}
        pending: list[int] = []
        indexes = h.keyword_indexes()
        try:
            with self.ctx.store.reading() as c:
                # A server's checks (PostgreSQL) are one finding per problem, under the store's name.
                name = getattr(h, "integrity_name", "sqlite-integrity")
                found = h.integrity(c)
                checks.extend(
                    [_integrity([p], name) for p in found]
                    if name != "sqlite-integrity" and found
                    else [_integrity(found, name)]
                )
                sound = not found
                # Which way the server serves what it can serve more than one way (PostgreSQL).
                for p_name, p_ok, p_line in getattr(h, "paths", lambda _c: [])(c):
                    checks.append(DoctorCheck(p_name, p_ok, p_line, 0 if p_ok else 1))
                for t in dict.fromkeys(
                    ("memories", "messages", "sessions", "rules", "audit", *(table for _, table in indexes))
                ):
                    self._guard(checks, f"count:{t}", partial(_count, c, t, counts))
                for index, table in indexes:
                    self._guard(checks, f"fts-ids:{index}", partial(_coverage, h, c, index, table, counts))
                self._guard(checks, "vectors", lambda: _vectors(h, c, counts))
                self._guard(checks, "pending-vectors", lambda: pending.extend(_pending(c, counts)))
                for check, what in ORPHAN_CHECKS.items():
                    self._guard(checks, f"orphans:{check}", partial(_orphans, c, check, what))
                self._guard(checks, "audit-chain", lambda: _chain(c))
                self._guard(checks, "forget-heads", lambda: _case_heads(c))
                self._guard(checks, "malformed-rows", lambda: _malformed(h, c))
        except h.errors as exc:  # the file cannot even be read as far as a snapshot: a finding
            checks.append(DoctorCheck("sqlite-readable", False, f"the file cannot be read ({exc})", 1))
            sound = False
        # The index's own check may take the write lock; a file already found damaged is not
        # written to at all.
        if sound:
            for index, _ in indexes:
                ok, detail = h.index_integrity(index)
                checks.append(DoctorCheck(f"fts-integrity:{index}", ok, detail, 0 if ok else 1))
        checks.extend(_hook_errors(self.ctx.store.hook_errors))  # this check's own writes included
        return DoctorReport(all(ch.ok for ch in checks), checks, counts, pending)

    # -- repair ----------------------------------------------------------------------------------
    def _repair(self) -> list[str]:
        """Rebuild what is derived from the records; audited. Returns what was done."""
        done: list[str] = []
        now = self.ctx.clock.now()
        actor = self.ctx.actor
        h = self.checks

        def write(conn: Connection) -> list[str]:
            acts = h.repair(conn)
            audit.append(
                conn,
                at=now,
                actor=actor,
                action="doctor-repair",
                target_kind="database",
                target_id="",
                summary={"done": acts},
            )
            return acts

        done.extend(self.ctx.store.write(write))
        if self.memories.pending_vectors():
            embedder = self.ctx.embedder
            if embedder.state == "none" or not embedder.wait():
                done.append(
                    f"{self.memories.pending_vectors()} memories still wait for a vector "
                    "(no embedding model available)"
                )
            else:
                try:
                    n = self.memories.backfill_vectors()
                    done.append(f"embedded {n} memories")
                except EngineError as exc:
                    done.append(f"backfill stopped: {exc}")
        return done


def _count(c: Connection, table: str, counts: dict) -> None:
    counts[table] = c.health_queries.count(table)


def _coverage(h: HealthChecks, c: Connection, index: str, table: str, counts: dict) -> DoctorCheck:
    cov = h.coverage(c, index, table, SAMPLE)
    counts[index] = cov.indexed
    ok = cov.missing.count == 0 and cov.extra.count == 0
    detail = (
        f"{cov.indexed} indexed = {counts.get(table, '?')} rows"
        if ok
        else f"{cov.missing.count} {table} not indexed, {cov.extra.count} indexed rows with no {table} row"
    )
    return DoctorCheck(
        f"fts-ids:{index}", ok, detail, cov.missing.count + cov.extra.count, cov.missing.ids + cov.extra.ids
    )


def _vectors(h: HealthChecks, c: Connection, counts: dict) -> list[DoctorCheck]:
    g = h.vector_gaps(c, SAMPLE)
    counts["memories_vec"] = g.stored
    n = g.missing.count
    out = [
        DoctorCheck(
            "vectors:missing",
            n == 0,
            f"{n} memories marked embedded have no vector" if n else "every embedded memory has a vector",
            n,
            g.missing.ids,
        )
    ]
    n = g.orphans.count
    out.append(
        DoctorCheck(
            "vectors:orphans",
            n == 0,
            f"{n} vectors of memories that do not exist" if n else "none",
            n,
            g.orphans.ids,
        )
    )
    n = g.stale.count
    out.append(
        DoctorCheck(
            "vectors:metadata",
            n == 0,
            f"{n} vectors with stale filter fields (tier, kind, ...)" if n else "in step",
            n,
            g.stale.ids,
        )
    )
    return out


def _pending(c: Connection, counts: dict) -> list[int]:
    counts["pending_vectors"], ids = c.health_queries.pending_vectors(PENDING_SAMPLE)
    return ids


def _malformed(h: HealthChecks, c: Connection) -> list[DoctorCheck]:
    """One finding per malformed row (table, id, column); one ok line per kind when clean."""
    out: list[DoctorCheck] = []
    for kind, find, clean in (
        ("numbers", doctor_rows.number_findings, "every number is finite"),
        ("json", doctor_rows.json_findings, "every JSON column parses"),
        ("vectors", doctor_rows.vector_findings, f"every vector has {h.dimensions} finite dimensions"),
    ):
        found = find(h, c)
        out.extend(
            DoctorCheck(f"malformed:{table}", False, f"{table} id {ident}: {what}", 1, [ident])
            for table, ident, what in found
        )
        if not found:
            out.append(DoctorCheck(f"rows:{kind}", True, clean))
    return out


def _hook_errors(errors: list[str]) -> list[DoctorCheck]:
    """After-commit hooks that failed in this process (e.g. the audit anchor refused to move):
    the write committed, but what should follow it did not. One finding per distinct failure,
    counting how often it happened."""
    seen = Counter(errors)
    return [
        DoctorCheck("after-commit", False, e if n == 1 else f"{e} ({n} times)", n) for e, n in seen.items()
    ]
