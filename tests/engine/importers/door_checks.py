"""What the import-door tests share (test_import_input_checks, test_import_bounds,
test_export_targets): a deadline for what could block, row counts, the CLI on a scratch database."""

from __future__ import annotations

import signal
from contextlib import contextmanager

from console.cli import main
from tests.direct_sql import direct

T = 1767000000.0
HEADER = '{"type":"header","format":"memconsole-jsonl","version":1}\n'


@contextmanager
def deadline(seconds: int):
    """A test that would block forever (a FIFO opened for reading) fails instead."""

    def boom(*_):
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def counts(eng) -> tuple:
    return tuple(
        direct(eng.store).one(f"SELECT count(*) FROM {t}")[0]
        for t in ("sessions", "messages", "memories", "rules", "flows", "audit")
    )


def cli(tmp_path, capsys, *args):
    code = main(["--db", str(tmp_path / "cli.db"), *args])
    out, err = capsys.readouterr()
    return code, out, err
