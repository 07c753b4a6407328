"""The bulk copy against the row-by-row JSONL restore at N (2,500) memories and 20 sessions on
PostgreSQL (~60 s of per-row writes on a loaded machine). `make test` compares them at N_SMALL in
tests/postgres/test_pg_migrate_bulk.py::test_the_bulk_copy_leaves_what_the_row_by_row_restore_leaves."""

from __future__ import annotations

from tests.postgres.test_pg_migrate_bulk import N, build_source, bulk_equals_row_by_row


def test_the_bulk_copy_leaves_what_the_row_by_row_restore_leaves_at_n(pg_url, pg_server, tmp_path):
    source = build_source(tmp_path / "source.db", N)
    bulk_equals_row_by_row(source, pg_url, pg_server, tmp_path)
