"""ImportMixin: the engine's doors in and out for what agents wrote elsewhere.

`import_hermes` (a Hermes agent home), `import_markdown` (MEMORY.md-style files), and the
full-fidelity pair `import_jsonl` / `export_jsonl`. Each import validates its input before
writing, writes in one transaction (a bad input leaves nothing behind), is audited, and returns
an ImportSummary (added / updated by type, skipped by reason). `progress(advance, total)` is
called as items are done."""
from __future__ import annotations

from pathlib import Path

from engine.importers import hermes_import, jsonl_io, markdown
from engine.importers.common import ExportSummary, ImportSummary, Progress


class ImportMixin:
    def import_hermes(self, home: str | Path, *, agent: str | None = None, dry_run: bool = False,
                      include_bundled: bool = False,
                      progress: Progress | None = None) -> ImportSummary:
        """Import a Hermes home (`~/.hermes` or a profile folder) without writing to it."""
        return hermes_import.import_home(self, home, agent=agent, dry_run=dry_run,
                                         include_bundled=include_bundled, progress=progress)

    def import_markdown(self, path: str | Path, *, agent: str, user: str = "",
                        kind: str = "semantic", category: str | None = None,
                        dry_run: bool = False, progress: Progress | None = None) -> ImportSummary:
        return markdown.import_file(self, path, agent=agent, user=user, kind=kind,
                                    category=category, dry_run=dry_run, progress=progress)

    def import_jsonl(self, path: str | Path, *, dry_run: bool = False,
                     progress: Progress | None = None) -> ImportSummary:
        """Restore a full-fidelity export (see engine/importers/jsonl_io.py)."""
        return jsonl_io.import_file(self, path, dry_run=dry_run, progress=progress)

    def export_jsonl(self, path: str | Path, *, vectors: bool = True, overwrite: bool = True,
                     progress: Progress | None = None) -> ExportSummary:
        """Write every record of the database to `path` (0600), vectors included by default.
        Only a regular file is replaced (and only with `overwrite`)."""
        return jsonl_io.export_file(self, path, vectors=vectors, overwrite=overwrite,
                                    progress=progress)

    def export_records(self, *, vectors: bool = True):
        """The export as an iterator of records (header first): what `export_jsonl` writes."""
        return jsonl_io.export_records(self, vectors=vectors)
