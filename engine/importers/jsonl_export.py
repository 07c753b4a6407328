"""Writing a full-fidelity JSONL export (engine/importers/jsonl_io.py): the records from one
snapshot, and the file written atomically and privately, never over anything but a regular file."""

from __future__ import annotations

import base64
import contextlib
import glob
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine import tempfiles
from engine.embedding import tag as model_tag
from engine.errors import EngineError, ImportFailed, InvalidInput
from engine.importers.common import ExportSummary, Progress, tick
from engine.importers.files import database_files, kind_of
from engine.importers.jsonl_format import FORMAT, TYPE_OF, VERSION, dumps, enc, only, tables
from engine.importers.jsonl_guard import database_id
from engine.paths import home_of, private_dir

if TYPE_CHECKING:
    from engine.importers.service import Importers


def export_records(imp: Importers, *, vectors: bool = True) -> Iterator[dict[str, Any]]:
    """Yield every record (the header first), all read from one snapshot of the file."""
    dump = imp.ctx.store.dump
    with imp.ctx.store.reading() as conn:
        tabs = tables(dump, conn)
        counts = {TYPE_OF.get(t, t): dump.count(conn, t, leave_out=only(t)) for t, _, _ in tabs}
        yield {
            "type": "header",
            "format": FORMAT,
            "version": VERSION,
            "generation": dump.generation,
            "exported_at": imp.ctx.clock.now(),
            "records": counts,
            "vectors": bool(vectors),
            "database_id": database_id(conn),
            # which model made the vectors (issue #26): an import into a store of another model
            # drops them (those memories are embedded again there)
            "vector_model": model_tag.read(conn).model,
        }
        for t, cols, _ in tabs:
            rtype = TYPE_OF.get(t, t)
            with_vectors = t == "memories" and vectors
            rows = (
                dump.memories_with_vectors(conn, cols)
                if with_vectors
                else dump.rows(conn, t, cols, leave_out=only(t))
            )
            for r in rows:
                rec = {"type": rtype, "row": {c: enc(r[i]) for i, c in enumerate(cols)}}
                if with_vectors and r[len(cols)] is not None:
                    rec["vector"] = base64.b64encode(bytes(r[len(cols)])).decode("ascii")
                yield rec


def export_file(
    imp: Importers,
    path: str | Path,
    *,
    vectors: bool = True,
    overwrite: bool = True,
    progress: Progress | None = None,
) -> ExportSummary:
    """Write the export atomically (a new temp file, then rename), private to the owner (0600).
    Only a regular file is ever replaced (and only with `overwrite`): never a symlink (its target
    would stay, the link would go), a device, a FIFO, or the database's own files."""
    path = Path(path)
    check_target(path, overwrite, database=imp.ctx.path)
    with contextlib.ExitStack() as stack:
        tmp = _temp_name(stack, home_of(imp.ctx.path), path)
        return _write_export(imp, path, tmp, vectors, overwrite, progress)
    raise AssertionError("unreachable")  # pragma: no cover - mypy: the with always returns


def _temp_name(stack: contextlib.ExitStack, home: Path, path: Path) -> Path:
    """Where the export is written before its rename: inside a private folder of the database's
    home (engine/tempfiles.py: removed on every exit, swept at next start, scanned by a forget)
    when that is on the target's filesystem; else beside the target, as `.<name>.tmp-<pid>`, whose
    leftovers of dead processes the next export to the same place removes."""
    with contextlib.suppress(OSError, EngineError):
        private_dir(home / tempfiles.FOLDER)
        if os.stat(home / tempfiles.FOLDER).st_dev == os.stat(path.parent).st_dev:
            return stack.enter_context(tempfiles.private_folder(home)) / path.name
    for old in path.parent.glob(f".{glob.escape(path.name)}.tmp-*"):
        pid = old.name.rpartition("-")[2]
        if pid.isdigit() and not tempfiles.alive(int(pid)) and old.is_file() and not old.is_symlink():
            old.unlink(missing_ok=True)
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


def _write_export(
    imp: Importers, path: Path, tmp: Path, vectors: bool, overwrite: bool, progress: Progress | None
) -> ExportSummary:
    counts: dict[str, int] = {}
    nvec = 0
    try:
        # O_EXCL|O_NOFOLLOW: never through a planted symlink or into someone else's file.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise ImportFailed(f"{path}: cannot write ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), 0o600)  # whatever the umask
            step = tick(None, 0)
            for rec in export_records(imp, vectors=vectors):
                if rec["type"] == "header":
                    step = tick(progress, sum(rec["records"].values()))
                else:
                    counts[rec["type"]] = counts.get(rec["type"], 0) + 1
                    nvec += "vector" in rec
                    step(1)
                f.write(dumps(rec) + "\n")
        check_target(path, overwrite, database=imp.ctx.path)  # nothing swapped in meanwhile
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return ExportSummary(str(path), counts, nvec, os.stat(path).st_size)


def check_target(path: Path, overwrite: bool, *, database: Path | None = None) -> None:
    """Refuse to replace anything but a regular file, a regular file unless `overwrite`, and ever
    the live `database` or its -wal/-shm (by name, or by inode for another link to one)."""
    if database is not None and _is_database_file(path, database):
        raise InvalidInput(f"{path} is the memory database's own file; export writes elsewhere")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ImportFailed(f"{path}: cannot write ({exc.strerror})") from None
    if database is not None and (st.st_dev, st.st_ino) in database_files(database):
        raise InvalidInput(f"{path} is the memory database's own file; export writes elsewhere")
    if stat.S_ISLNK(st.st_mode):
        raise InvalidInput(f"{path} is a symlink; export writes only to a regular file (give the real path)")
    if not stat.S_ISREG(st.st_mode):
        raise InvalidInput(f"{path} is {kind_of(st.st_mode)}; export replaces only a regular file")
    if not overwrite:
        raise InvalidInput(f"{path} exists; use --force to overwrite it")


def _is_database_file(path: Path, database: Path) -> bool:
    """`path` names the database or its -wal/-shm (folders resolved: another spelling counts)."""
    try:
        where = path.absolute().parent.resolve() / path.name
        db = database.absolute().parent.resolve() / database.name
    except (OSError, RuntimeError):
        return False
    return where in {db.with_name(db.name + suffix) for suffix in ("", "-wal", "-shm")}
