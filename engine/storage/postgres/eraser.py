"""PostgreSQL side of a forget: what a server lets a client prove, in levels (engine/forget/levels.py).

- *logical* (always): every text column of memconsole's tables, and the planner's statistics of
  them (`pg_stats` keeps sampled values), read through SQL. A value comes back detoasted and
  decompressed, so TOAST compression cannot hide a copy from this level.
- *host files* (only when this process runs on the database's host and can read its data
  directory, proven by the system identifier in `global/pg_control`): after `VACUUM (FULL,
  ANALYZE)` of memconsole's tables and `VACUUM FULL pg_statistic` (dead row versions and stale
  samples are not copied into the new files) and a `CHECKPOINT` (old files are unlinked, dirty pages
  written), the files of those relations (their TOAST tables and indexes too) and every WAL segment
  are scanned for the bytes. Compression: VACUUM FULL drops deleted rows whole, so the data files
  hold no compressed copy of a forgotten value; the WAL can (an insert record of a value that was
  stored pglz/lz4-compressed). A byte scan cannot see inside those, so the forget counts, before it
  deletes, how many of the values it removes were stored compressed (`compressed`), and the WAL is
  then reported as not provable rather than clean. WAL segments are recycled, not wiped: a segment
  still holding the text is residue until the server overwrites it.
- *out of reach*: replicas, WAL archives, replication slots' retained WAL, backups and dumps are
  named, never checked.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg

from engine.storage.erasure import scrubbed_key
from engine.storage.postgres import replicas
from engine.storage.postgres.connection import raw_of
from engine.storage.postgres.gateways.tombstones import FORGET_LOCK
from engine.storage.reach import Reach, Settled

if TYPE_CHECKING:
    from engine.storage.port import Connection
    from engine.storage.postgres.store import PgStore

TEXT_TYPES = ("text", "character varying", "character", "json", "jsonb")
_WAL = re.compile(r"^[0-9A-F]{24}$")
LOCK_TIMEOUT_MS = 2000  # one try's wait for a table's exclusive lock (VACUUM FULL needs it)

# The selected records' columns a forget reads its texts from (content and metadata strings),
# whose stored form may be compressed (see the docstring).
_CONTENT = (
    ("memories", ("content", "metadata")),
    ("messages", ("content", "metadata")),
    ("rules", ("text", "metadata")),
    ("sessions", ("title", "metadata")),
    ("flows", ("name", "description", "triggers", "steps", "metadata")),
)


class PgEraser:
    def __init__(self, store: PgStore) -> None:
        self._store = store

    # -- the Eraser port ---------------------------------------------------------------------------
    @property
    def server(self) -> PgEraser:
        """A server: verification goes in levels (the methods below, engine/storage/reach.py)."""
        return self

    def purge_indexes(self, conn: Connection) -> None:
        """Nothing inside the write: the keyword index is plain tables whose rows of the deleted
        records go with them (keyword_upkeep.py, at commit); their bytes go at `settle`'s VACUUM FULL."""

    def truncate_log(self, tries: int, pause: float) -> bool:
        return self.settle(tries, pause).rewritten

    def files(self) -> list[Path]:
        return [f for group in self.host_files().values() for f in group]

    def live_texts(self, conn: Connection, shortest: int) -> list[str]:
        return [blob for _, blob in self._column_texts(conn, shortest)]

    def quoting(self, conn: Connection, table: str, column: str, shortest: int) -> list[tuple[Any, str]]:
        key = scrubbed_key(table, column)
        rows = conn.execute(
            f"SELECT {key}, {column} FROM {table} WHERE {column} IS NOT NULL AND length({column}) >= %s",
            (int(shortest),),
        ).fetchall()
        return [(r[0], r[1]) for r in rows if isinstance(r[1], str)]

    def overwrite(self, conn: Connection, table: str, column: str, key: Any, value: str) -> None:
        conn.execute(
            f"UPDATE {table} SET {column} = %s WHERE {scrubbed_key(table, column)} = %s", (value, key)
        )

    @contextmanager
    def tolerant(self, conn: Connection) -> Iterator[None]:
        """A UTF8 server never hands back invalid text: nothing to tolerate. Inside a write (a
        forget's preview or deletion), remembers are held back first: the forget lock exclusive
        (gateways/tombstones.py), so the case sees every remember that got in before it and none
        gets in until its tombstones are committed. Reads and other writes never wait on it."""
        if self._store.in_write:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (FORGET_LOCK,)).fetchone()
        yield

    # -- levels ------------------------------------------------------------------------------------
    def settle(self, tries: int, pause: float) -> Settled:
        """VACUUM (FULL, ANALYZE) each of memconsole's tables, VACUUM FULL pg_statistic, CHECKPOINT
        (outside any transaction). A rewrite is proven by the relation's new file node: VACUUM
        skips a table this role may not maintain with a mere warning. A table locked by others
        is tried `tries` times; what did not happen is said in `notes`."""
        notes: list[str] = []
        with self._store.pool.connection() as raw:
            raw.execute(f"SET lock_timeout = {int(LOCK_TIMEOUT_MS)}")
            tables = [r[0] for r in raw.execute(
                "SELECT c.relname FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace"
                " AND c.relkind = 'r' ORDER BY c.relname").fetchall()]  # fmt: skip
            rewritten = all(
                [self._rewrite(raw, f'"{t}"', "(FULL, ANALYZE)", tries, pause, notes) for t in tables]
            )
            statistics = self._rewrite(raw, "pg_statistic", "FULL", tries, pause, notes)
            checkpointed = True
            try:
                raw.execute("CHECKPOINT")
            except psycopg.Error as exc:
                checkpointed = False
                notes.append(f"CHECKPOINT: {str(exc).strip().splitlines()[0]}")
            raw.execute("RESET lock_timeout")
        return Settled(rewritten, statistics, checkpointed, notes)

    @staticmethod
    def _rewrite(raw: Any, rel: str, how: str, tries: int, pause: float, notes: list[str]) -> bool:
        import time

        before = _one(raw, f"SELECT pg_relation_filenode('{rel}'::regclass)")
        for i in range(max(1, tries)):
            try:
                raw.execute(f"VACUUM {how} {rel}")
                break
            except psycopg.errors.LockNotAvailable:
                if i + 1 == max(1, tries):
                    notes.append(f"VACUUM FULL {rel}: other sessions held it through {tries} tries")
                    return False
                time.sleep(pause)
            except psycopg.Error as exc:
                notes.append(f"VACUUM FULL {rel}: {str(exc).strip().splitlines()[0]}")
                return False
        if before is not None and _one(raw, f"SELECT pg_relation_filenode('{rel}'::regclass)") == before:
            notes.append(f"VACUUM FULL {rel} was skipped (this role may not maintain it)")
            return False
        return True

    def reach(self) -> Reach:
        """Can this process read the server's files? And what lies beyond any check from here."""
        with self._store.pool.connection() as raw:
            out_of_reach = self._out_of_reach(raw)
            wal_compression = _setting(raw, "wal_compression") or "off"
            data_dir = self._data_directory(raw)
            ident = _one(raw, "SELECT system_identifier FROM pg_control_system()")
        caveats = []
        if wal_compression not in ("off", "false", "0"):
            caveats.append(
                f"wal_compression is {wal_compression}: full-page images in the WAL are compressed"
            )
        if data_dir is None:
            return Reach(
                False, "the server does not show this role its data directory", out_of_reach, caveats
            )
        home = Path(data_dir)
        control = home / "global" / "pg_control"
        try:
            with open(control, "rb") as f:
                on_disk = struct.unpack("<Q", f.read(8))[0]
        except OSError:
            why = f"its data directory {data_dir} is not readable on this machine (the server runs elsewhere)"
            return Reach(False, why, out_of_reach, caveats)
        if ident is None or int(ident) != on_disk:
            why = f"{data_dir} on this machine belongs to another server (system identifier differs)"
            return Reach(False, why, out_of_reach, caveats)
        return Reach(True, f"data directory {data_dir} read on this host", out_of_reach, caveats, home)

    def host_files(self) -> dict[str, list[Path]]:
        """{"data files": the relation files of memconsole's tables (TOAST and indexes too) and
        pg_statistic, "WAL": every segment in pg_wal} — empty when not on the host."""
        reach = self.reach()
        if not reach.on_host or reach.data_dir is None:
            return {}
        home = reach.data_dir
        with self._store.pool.connection() as raw:
            rels = [r[0] for r in raw.execute(_RELATIONS).fetchall() if r[0]]
        data: list[Path] = []
        for rel in rels:
            base = home / rel
            data.append(base)
            n = 1
            while (seg := Path(f"{base}.{n}")).exists():  # 1 GB segments of a big relation
                data.append(seg)
                n += 1
        wal_dir = home / "pg_wal"
        wal = sorted(p for p in wal_dir.iterdir() if _WAL.match(p.name)) if wal_dir.is_dir() else []
        return {"data files": data, "WAL": wal}

    def logical_hits(self, conn: Connection, texts: list[str]) -> dict[str, int]:
        """{table.column: occurrences} of any of `texts` whole (NFKC and case-folded on both sides,
        and as JSON escapes it) in the live rows of memconsole's tables and in their statistics."""
        import json
        import unicodedata

        def fold(x: str) -> str:  # engine/forget/fold.py's normalisation: NFKC, case-folded
            return unicodedata.normalize("NFC", unicodedata.normalize("NFKC", x).casefold())

        needles = set()
        for t in texts:
            for v in (t, " ".join(t.split())):
                if v:  # compared folded, as written and as a JSON string holds it
                    needles.add(fold(v))
                    needles.add(fold(json.dumps(v)[1:-1]))
        hits: dict[str, int] = {}
        for label, blob in self._column_texts(conn, 1):
            low = fold(blob)
            n = sum(low.count(x) for x in needles)
            if n:
                hits[label] = n
        return hits

    def compressed(self, conn: Connection, selected: dict[str, list[int]]) -> int:
        """How many of the records about to be deleted hold a text value stored compressed."""
        n = 0
        for table, cols in _CONTENT:
            ids = list(selected.get(table, []))  # sessions are known by text ids
            if ids:
                packed = " OR ".join(f'pg_column_compression("{c}") IS NOT NULL' for c in cols)
                row = (
                    raw_of(conn)
                    .execute(f'SELECT count(*) FROM "{table}" WHERE id = ANY(%s) AND ({packed})', [ids])
                    .fetchone()
                )
                n += int(row[0]) if row else 0
        return n

    # -- configured read replicas and the nodes holding data (engine/forget/replicas.py) -----------
    def wal_position(self) -> tuple[str, int | None]:
        with self._store.pool.connection() as raw:
            return replicas.wal_position(raw)

    def standby_state(self) -> tuple[bool, int | None, str | None]:
        with self._store.pool.connection() as raw:
            return replicas.standby_state(raw)

    def wait_replayed(self, position: str, timeout: float) -> tuple[bool, str | None]:
        with self._store.pool.connection() as raw:
            return replicas.wait_replayed(raw, position, timeout)

    def data_nodes(self) -> list[str]:
        with self._store.pool.connection() as raw:
            return replicas.data_nodes(raw)

    # -- helpers ---------------------------------------------------------------------------------
    @staticmethod
    def _data_directory(raw: Any) -> str | None:
        return _setting(raw, "data_directory")

    @staticmethod
    def _out_of_reach(raw: Any) -> list[str]:
        out = []
        replicas = _one(raw, "SELECT count(*) FROM pg_stat_replication")
        slots = _one(raw, "SELECT count(*) FROM pg_replication_slots")
        out.append(f"replicas ({replicas if replicas is not None else 'unknown'} streaming now)")
        out.append(f"replication slots' retained WAL ({slots if slots is not None else 'unknown'} slots)")
        archive = _setting(raw, "archive_mode") or "unknown"
        out.append(f"WAL archives (archive_mode {archive})")
        out.append("base backups, snapshots and dumps taken before the forget")
        return out

    def _column_texts(self, conn: Connection, shortest: int) -> list[tuple[str, str]]:
        """(table.column, its live values of `shortest`+ characters joined) for every text column
        of memconsole's tables, the schema's own words, and the sampled values in pg_stats."""
        raw = raw_of(conn) if hasattr(conn, "raw") else conn
        cols = raw.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema ="
            " current_schema() AND data_type = ANY(%s) ORDER BY table_name, ordinal_position",
            [list(TEXT_TYPES)],
        ).fetchall()
        out = [("schema", "\n".join(f"{r[0]} {r[1]}" for r in cols))]
        for table, col in cols:
            row = raw.execute(
                f'SELECT string_agg(c, E\'\\n\') FROM (SELECT "{col}"::text AS c FROM "{table}") s'
                " WHERE length(c) >= %s",
                [int(shortest)],
            ).fetchone()
            if row and row[0]:
                out.append((f"{table}.{col}", row[0]))
        row = raw.execute(
            "SELECT string_agg(concat_ws(E'\\n', most_common_vals::text, histogram_bounds::text), E'\\n')"
            " FROM pg_stats WHERE schemaname = current_schema()"
        ).fetchone()
        if row and row[0]:
            out.append(("statistics (pg_stats)", row[0]))
        return out


_RELATIONS = """
WITH ours AS (
    SELECT oid, reltoastrelid FROM pg_class
    WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'm')
), heaps AS (
    SELECT oid FROM ours
    UNION SELECT reltoastrelid FROM ours WHERE reltoastrelid <> 0
    UNION SELECT 'pg_statistic'::regclass::oid
)
SELECT pg_relation_filepath(oid) FROM heaps
UNION SELECT pg_relation_filepath(indexrelid) FROM pg_index WHERE indrelid IN (SELECT oid FROM heaps)
"""


def _setting(raw: Any, name: str) -> str | None:
    try:
        row = raw.execute("SELECT current_setting(%s, true)", [name]).fetchone()
    except psycopg.Error:
        return None
    return None if row is None or row[0] in (None, "") else str(row[0])


def _one(raw: Any, sql: str) -> Any:
    try:
        row = raw.execute(sql).fetchone()
    except psycopg.Error:
        return None
    return None if row is None else row[0]
