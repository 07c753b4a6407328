"""`doctor`: does the file agree with itself? SQLite's own integrity check, every full-text index
against its table, vectors against memories, references that point nowhere, and the audit hash
chain (audit.verify_chain). `repair` rebuilds only what is derived (FTS indexes, vectors, vec0
metadata); it never touches records, and an audit break is evidence: reported, never "fixed"."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.audit import log as audit
from engine.health import rows as doctor_rows
from engine.storage.sqlite import schema
from engine.errors import EngineError
from engine.storage.sqlite.store import DatabaseDamaged
from engine.storage.sqlite.store import Error as SqlError

SAMPLE = 20  # offending ids shown per check
PENDING_SAMPLE = 100  # pending-vector ids listed in a report

# (FTS table, its content table): identifiers from the schema module only, never from input.
FTS_TABLES = tuple(
    (v.name, m.group(1))
    for v in schema.VIRTUALS
    if "USING fts5" in v.sql and (m := re.search(r"content='(\w+)'", v.sql))
)
VEC_META = ("tier", "kind", "category", "agent", "user")

# (name, SQL selecting offending ids, what it means)
ORPHANS = (
    (
        "orphans:messages",
        "SELECT m.id FROM messages m LEFT JOIN sessions s ON s.id = m.session_id WHERE s.id IS NULL",
        "messages whose session does not exist",
    ),
    (
        "orphans:absorbed_into",
        "SELECT m.id FROM memories m LEFT JOIN memories t ON t.id = "
        "m.absorbed_into WHERE m.absorbed_into IS NOT NULL AND t.id IS NULL",
        "memories absorbed into a memory that does not exist",
    ),
    (
        "orphans:rule_absorbed_into",
        "SELECT r.id FROM rules r LEFT JOIN rules t ON t.id = "
        "r.absorbed_into WHERE r.absorbed_into IS NOT NULL AND t.id IS NULL",
        "rules absorbed into a rule that does not exist",
    ),
    (
        "orphans:rule_history",
        "SELECT h.id FROM rule_history h LEFT JOIN rules r ON r.id = h.rule_id WHERE r.id IS NULL",
        "rule history rows whose rule does not exist",
    ),
    (
        "orphans:flow_runs",
        "SELECT f.id FROM flow_runs f LEFT JOIN flows w ON w.id = f.flow_id WHERE w.id IS NULL",
        "flow runs whose flow does not exist",
    ),
)


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


def _ids(conn, sql: str, params=()) -> tuple[int, list]:
    rows = conn.execute(sql, params).fetchall()
    return len(rows), [r[0] for r in rows[:SAMPLE]]


def _guard(checks: list, name: str, fn) -> None:
    """Run one check; a damaged file makes it a finding, never a traceback."""
    try:
        got = fn()
    except SqlError as exc:
        checks.append(DoctorCheck(name, False, f"could not be checked: {exc}", 1))
        return
    if isinstance(got, DoctorCheck):
        checks.append(got)
    elif isinstance(got, list) and all(isinstance(x, DoctorCheck) for x in got):
        checks.extend(got)


def _orphans(c, name: str, sql: str, what: str) -> DoctorCheck:
    n, ids = _ids(c, sql)
    return DoctorCheck(name, n == 0, f"{n} {what}" if n else "none", n, ids)


def _chain(c) -> DoctorCheck:
    chain = audit.verify_chain(c, limit_problems=SAMPLE)
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


def _malformed(c) -> list[DoctorCheck]:
    """One finding per malformed row (table, id, column); one ok line per kind when clean."""
    out: list[DoctorCheck] = []
    for kind, find, clean in (
        ("numbers", doctor_rows.number_findings, "every number is finite"),
        ("json", doctor_rows.json_findings, "every JSON column parses"),
        ("vectors", doctor_rows.vector_findings, f"every vector has {schema.EMBED_DIM} finite dimensions"),
    ):
        found = find(c)
        out.extend(
            DoctorCheck(f"malformed:{table}", False, f"{table} id {ident}: {what}", 1, [ident])
            for table, ident, what in found
        )
        if not found:
            out.append(DoctorCheck(f"rows:{kind}", True, clean))
    return out


def doctor_file(path) -> DoctorReport:
    """For a file too damaged to open as a database (its schema unreadable): SQLite's own
    integrity check through a read-only, immutable connection, so the operator gets the finding
    (and nothing is written, not even a -wal)."""
    import sqlean

    from engine.storage.sqlite.identity import uri

    checks: list[DoctorCheck] = []
    try:
        c = sqlean.connect(uri(path, mode="ro", immutable="1"), uri=True)
    except SqlError as exc:
        checks.append(DoctorCheck("sqlite-readable", False, f"the file cannot be opened ({exc})", 1))
    else:
        try:
            DoctorMixin._integrity(c, checks)
        finally:
            c.close()
    checks.append(
        DoctorCheck("schema", False, "the database could not be opened; nothing else was checked", 1)
    )
    return DoctorReport(False, checks, {}, [])


class DoctorMixin:
    def doctor(self, repair: bool = False) -> DoctorReport:
        """Check the database; with `repair`, rebuild derived indexes first and report what
        was done (then check again, so the report describes the file as it is now)."""
        repaired: list[str] = []
        if repair:
            try:
                repaired = self._doctor_repair()
            except (SqlError, EngineError) as exc:  # a damaged or read-only file: say so
                repaired = [f"repair stopped: {exc}"]
        report = self._doctor_check()
        report.repaired = repaired
        return report

    # -- checks ----------------------------------------------------------------------------------
    def _doctor_check(self) -> DoctorReport:
        checks: list[DoctorCheck] = []
        counts: dict = {}
        pending: list[int] = []
        try:
            with self.store.reading() as c:
                sound = self._integrity(c, checks)
                for t in dict.fromkeys(
                    (
                        "memories",
                        "messages",
                        "sessions",
                        "rules",
                        "audit",
                        *(table for _, table in FTS_TABLES),
                    )
                ):
                    _guard(
                        checks,
                        f"count:{t}",
                        lambda t=t: counts.__setitem__(
                            t, c.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                        ),
                    )
                for fts, table in FTS_TABLES:
                    _guard(checks, f"fts-ids:{fts}", lambda f=fts, t=table: self._fts_ids(c, f, t, counts))
                _guard(checks, "vectors", lambda: self._vector_checks(c, counts))
                _guard(checks, "pending-vectors", lambda: pending.extend(self._pending(c, counts)))
                for name, sql, what in ORPHANS:
                    _guard(checks, name, lambda name=name, sql=sql, what=what: _orphans(c, name, sql, what))
                _guard(checks, "audit-chain", lambda: _chain(c))
                _guard(checks, "malformed-rows", lambda: _malformed(c))
        except SqlError as exc:  # the file cannot even be read as far as a snapshot: a finding
            checks.append(DoctorCheck("sqlite-readable", False, f"the file cannot be read ({exc})", 1))
            sound = False
        # FTS5's own check (the index against its content) is an INSERT statement, so it takes
        # the write lock; it changes nothing, hence no audit row. A file already found damaged is
        # not written to at all.
        if sound:
            for fts, _ in FTS_TABLES:
                checks.append(self._fts_integrity(fts))
        return DoctorReport(all(ch.ok for ch in checks), checks, counts, pending)

    @staticmethod
    def _integrity(c, checks: list) -> bool:
        try:
            res = [r[0] for r in c.execute("PRAGMA integrity_check").fetchall()]
        except SqlError as exc:
            res = [str(exc)]
        sound = res == ["ok"]
        checks.append(
            DoctorCheck(
                "sqlite-integrity", sound, "ok" if sound else "; ".join(res[:5]), 0 if sound else len(res)
            )
        )
        return sound

    @staticmethod
    def _pending(c, counts: dict) -> list[int]:
        counts["pending_vectors"] = c.execute("SELECT count(*) FROM memories WHERE embedded = 0").fetchone()[
            0
        ]
        return [
            r[0]
            for r in c.execute(
                "SELECT id FROM memories WHERE embedded = 0 ORDER BY id LIMIT ?", (PENDING_SAMPLE,)
            )
        ]

    def _fts_ids(self, c, fts: str, table: str, counts: dict) -> DoctorCheck:
        # An external-content FTS5 table reads rows from its table; its docsize shadow table is
        # what the index itself holds.
        n_idx = c.execute(f"SELECT count(*) FROM {fts}_docsize").fetchone()[0]
        counts[fts] = n_idx
        missing, mids = _ids(c, f"SELECT id FROM {table} WHERE id NOT IN (SELECT id FROM {fts}_docsize)")
        extra, eids = _ids(c, f"SELECT id FROM {fts}_docsize WHERE id NOT IN (SELECT id FROM {table})")
        ok = missing == 0 and extra == 0
        detail = (
            f"{n_idx} indexed = {counts.get(table, '?')} rows"
            if ok
            else f"{missing} {table} not indexed, {extra} indexed rows with no {table} row"
        )
        return DoctorCheck(f"fts-ids:{fts}", ok, detail, missing + extra, mids + eids)

    def _fts_integrity(self, fts: str) -> DoctorCheck:
        sql = f"INSERT INTO {fts}({fts}, rank) VALUES ('integrity-check', 1)"
        try:
            self.store.write(lambda c: c.execute(sql))
            return DoctorCheck(f"fts-integrity:{fts}", True, "ok")
        except DatabaseDamaged as exc:  # FTS5 reports a mismatch as SQLITE_CORRUPT_VTAB
            return DoctorCheck(f"fts-integrity:{fts}", False, f"index disagrees with its table ({exc})", 1)
        except EngineError as exc:  # a read-only file: FTS5 checks through an INSERT, so skip it
            return DoctorCheck(f"fts-integrity:{fts}", True, f"not checked: {exc}")
        except SqlError as exc:
            return DoctorCheck(f"fts-integrity:{fts}", False, f"index disagrees with its table ({exc})", 1)

    def _vector_checks(self, c, counts: dict) -> list[DoctorCheck]:
        counts["memories_vec"] = c.execute("SELECT count(*) FROM memories_vec").fetchone()[0]
        out = []
        n, ids = _ids(
            c, "SELECT id FROM memories WHERE embedded = 1 AND id NOT IN (SELECT memory_id FROM memories_vec)"
        )
        out.append(
            DoctorCheck(
                "vectors:missing",
                n == 0,
                f"{n} memories marked embedded have no vector" if n else "every embedded memory has a vector",
                n,
                ids,
            )
        )
        n, ids = _ids(
            c, "SELECT memory_id FROM memories_vec WHERE memory_id NOT IN (SELECT id FROM memories)"
        )
        out.append(
            DoctorCheck(
                "vectors:orphans",
                n == 0,
                f"{n} vectors of memories that do not exist" if n else "none",
                n,
                ids,
            )
        )
        differs = " OR ".join(f"v.{col} IS NOT m.{col}" for col in VEC_META)
        n, ids = _ids(
            c,
            "SELECT m.id FROM memories m JOIN memories_vec v ON v.memory_id = m.id "
            f"WHERE m.embedded = 1 AND ({differs})",
        )
        out.append(
            DoctorCheck(
                "vectors:metadata",
                n == 0,
                f"{n} vectors with stale filter fields (tier, kind, ...)" if n else "in step",
                n,
                ids,
            )
        )
        return out

    # -- repair ----------------------------------------------------------------------------------
    def _doctor_repair(self) -> list[str]:
        """Rebuild what is derived from the records; audited. Returns what was done."""
        from engine.errors import EngineError

        done: list[str] = []
        now = self.clock.now()

        def write(conn) -> list[str]:
            acts = []
            for fts, _ in FTS_TABLES:
                conn.execute(f"INSERT INTO {fts}({fts}) VALUES ('rebuild')")
            acts.append("rebuilt full-text indexes")
            n = conn.execute(
                "DELETE FROM memories_vec WHERE memory_id NOT IN (SELECT id FROM memories)"
            ).rowcount
            if n:
                acts.append(f"removed {n} orphan vectors")
            n = conn.execute(
                "UPDATE memories SET embedded = 0 WHERE embedded = 1 AND id NOT IN "
                "(SELECT memory_id FROM memories_vec)"
            ).rowcount
            if n:
                acts.append(f"{n} memories without a vector marked pending")
            differs = " OR ".join(f"v.{col} IS NOT m.{col}" for col in VEC_META)
            stale = conn.execute(
                "SELECT m.id, m.tier, m.kind, m.category, m.agent, m.user FROM memories m JOIN "
                f"memories_vec v ON v.memory_id = m.id WHERE m.embedded = 1 AND ({differs})"
            ).fetchall()
            for r in stale:
                conn.execute(
                    "UPDATE memories_vec SET tier = ?, kind = ?, category = ?, agent = ?, "
                    "user = ? WHERE memory_id = ?",
                    (r[1], r[2], r[3], r[4] or "", r[5] or "", r[0]),
                )
            if stale:
                acts.append(f"resynced filter fields of {len(stale)} vectors")
            audit.append(
                conn,
                at=now,
                actor=self.actor,
                action="doctor-repair",
                target_kind="database",
                target_id="",
                summary={"done": acts},
            )
            return acts

        done.extend(self.store.write(write))
        if self.pending_vectors():
            if self.embedder.state == "none" or not self.embedder.wait():
                done.append(
                    f"{self.pending_vectors()} memories still wait for a vector "
                    "(no embedding model available)"
                )
            else:
                try:
                    n = self.backfill_vectors()
                    done.append(f"embedded {n} memories")
                except EngineError as exc:
                    done.append(f"backfill stopped: {exc}")
        return done
