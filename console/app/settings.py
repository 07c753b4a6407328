"""The console's own settings: the `[keymap]` section of config.toml, binding id -> keys, e.g.
`"app.quit" = "ctrl+q"`, `"search.pin" = "P"` (`?` in the console lists every binding's id).

The file is the engine's (`$MEMCONSOLE_CONFIG`, else `<config dir>/memconsole/config.toml`); the
engine's settings (engine/config.py) leave this section to the console.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ConsoleSettings:
    keymap: dict[str, str] = field(default_factory=dict)


def load_console_settings(path: str | os.PathLike | None = None) -> ConsoleSettings:
    """Defaults, overlaid with the file's `[keymap]` if there is one. A bad file or a key bound to
    something other than a string is one clear InvalidInput naming the file and the key."""
    from engine.config import read_config
    from engine.errors import InvalidInput

    p, data = read_config(path)
    if data is None:
        return ConsoleSettings()
    keymap = data.get("keymap", {})
    if not isinstance(keymap, dict):
        raise InvalidInput(f"{p}: keymap must be a table of values (got {_got(keymap)})")
    for k, v in keymap.items():
        if not isinstance(v, str):
            raise InvalidInput(f"{p}: keymap.{k} must be a string of keys (got {_got(v)})")
    return ConsoleSettings(keymap=dict(keymap))


def _got(v: object) -> str:
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."
