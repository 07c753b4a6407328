"""memconsole's Hermes `MemoryProvider`: the file `memconsole hermes install-provider` writes to
`HERMES_HOME/plugins/memconsole/__init__.py`. (Hermes lists a user plugin folder as a memory
provider only if this file's text names `MemoryProvider`: keep the word.)

A shim: the provider is `console.hermes.provider` in the memconsole installation. This file puts
that installation on sys.path (the folders memconsole.json beside it records, after Hermes' own
packages, so Hermes' versions of shared packages win) and subclasses the provider here, so Hermes'
loader finds it in this module and it reads its config from this folder.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _add_paths() -> None:
    try:
        config = json.loads((HERE / "memconsole.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    for extra in config.get("paths") or []:
        if extra not in sys.path:
            sys.path.append(extra)


_add_paths()

from console.hermes import provider as _provider  # noqa: E402


class MemconsoleProvider(_provider.MemconsoleProvider):
    def __init__(self, config_dir: str | os.PathLike | None = None) -> None:
        super().__init__(config_dir or HERE)
