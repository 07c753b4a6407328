"""tests/stress is slow (minutes): only `make stress` (pytest tests/stress) collects it; a plain
`pytest` / `make test` over tests/ skips this folder. Small versions live in tests/engine."""

from __future__ import annotations

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _asked_for(config) -> bool:
    for arg in config.args:
        p = Path(arg.split("::")[0]).resolve()
        if p == HERE or HERE in p.parents:
            return True
    return bool(os.environ.get("MEMCONSOLE_STRESS"))


def pytest_ignore_collect(collection_path, config):
    if (
        collection_path.suffix == ".py"
        and collection_path.name.startswith("test_")
        and not _asked_for(config)
    ):
        return True
    return None
