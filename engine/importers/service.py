"""Importers: the engine's doors in and out for what agents wrote elsewhere.

`hermes` (a Hermes agent home), `markdown` (MEMORY.md-style files), `ingest` (the simple
hand-written JSONL format), and the full-fidelity pair `jsonl` / `export_jsonl`. Each import
validates its input before writing, writes in one transaction (a bad input leaves nothing behind),
is audited, and returns an ImportSummary (added / updated by type, skipped by reason).
`progress(advance, total)` is called as items are done. No import ever opens the memory
database's own files (importers/files.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from engine.context import Context
from engine.importers import hermes_import, ingest, jsonl_io, markdown
from engine.importers.common import ExportSummary, ImportSummary, Progress
from engine.importers.files import database_files
from engine.recalls.checks import mark_due

if TYPE_CHECKING:
    from engine.lifecycle.flows import Flows
    from engine.memories import MemoriesService
    from engine.sessions import SessionsService

T = TypeVar("T")


class Importers:
    def __init__(
        self, ctx: Context, memories: MemoriesService, sessions: SessionsService, flows: Flows
    ) -> None:
        self.ctx = ctx
        self.memories = memories
        self.sessions = sessions
        self.flows = flows

    def _checks_due(self, dry_run: bool, result: T) -> T:
        """After an import, every retrieval check runs again on its next look: new memories may
        outrank a pinned one (engine/recalls/checks.py)."""
        if not dry_run:
            self.ctx.store.write(lambda c: mark_due(c, None))
        return result

    def own_files(self) -> frozenset[tuple[int, int]]:
        """(device, inode) of the live database, -wal and -shm: what an import never opens
        and an export never replaces (stat at each call: the -wal comes and goes)."""
        return database_files(self.ctx.path)

    def hermes(
        self,
        home: str | Path,
        *,
        agent: str | None = None,
        dry_run: bool = False,
        include_bundled: bool = False,
        progress: Progress | None = None,
    ) -> ImportSummary:
        """Import a Hermes home (`~/.hermes` or a profile folder) without writing to it."""
        return self._checks_due(
            dry_run,
            hermes_import.import_home(
                self, home, agent=agent, dry_run=dry_run, include_bundled=include_bundled, progress=progress
            ),
        )

    def markdown(
        self,
        path: str | Path,
        *,
        agent: str,
        user: str = "",
        kind: str = "semantic",
        category: str | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> ImportSummary:
        return self._checks_due(
            dry_run,
            markdown.import_file(
                self,
                path,
                agent=agent,
                user=user,
                kind=kind,
                category=category,
                dry_run=dry_run,
                progress=progress,
            ),
        )

    def ingest(
        self, path: str | Path, *, dedup: bool = True, progress: Callable[[int], object] | None = None
    ) -> dict[str, Any]:
        """Sessions, messages and memories from a hand-written JSONL file (engine/importers/ingest.py)."""
        return self._checks_due(False, ingest.ingest_file(self, Path(path), dedup=dedup, progress=progress))

    def jsonl(
        self, path: str | Path, *, dry_run: bool = False, progress: Progress | None = None
    ) -> ImportSummary:
        """Restore a full-fidelity export (see engine/importers/jsonl_io.py)."""
        return self._checks_due(dry_run, jsonl_io.import_file(self, path, dry_run=dry_run, progress=progress))

    def export_jsonl(
        self,
        path: str | Path,
        *,
        vectors: bool = True,
        overwrite: bool = True,
        progress: Progress | None = None,
    ) -> ExportSummary:
        """Write every record of the database to `path` (0600), vectors included by default.
        Only a regular file is replaced (and only with `overwrite`), never the database's own."""
        return jsonl_io.export_file(self, path, vectors=vectors, overwrite=overwrite, progress=progress)

    def export_records(self, *, vectors: bool = True) -> Iterator[dict[str, Any]]:
        """The export as an iterator of records (header first): what `export_jsonl` writes."""
        return jsonl_io.export_records(self, vectors=vectors)
