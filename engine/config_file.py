"""Reading the settings file (engine/config.py has the settings): `read_config` finds and parses the
TOML, `load_settings` lays it over the defaults and checks every value; a bad file is one clear
InvalidInput naming the file and the key."""

from __future__ import annotations

import os
import tomllib
from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.config import Settings


class ConfigError(ValueError):
    """A value in the config file is wrong; the message names the key."""


def _got(v) -> str:
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _apply(obj, data: dict, where: str = ""):
    known = {f.name: f for f in fields(obj)}
    changes = {}
    for k, v in data.items():
        key = f"{where}{k}"
        if k not in known:
            raise ConfigError(f"unknown setting {key}")
        cur = getattr(obj, k)
        if hasattr(cur, "__dataclass_fields__"):
            if not isinstance(v, dict):
                raise ConfigError(f"{key} must be a table ([{key}]), not {_got(v)}")
            changes[k] = _apply(cur, v, key + ".")
        elif isinstance(cur, dict):
            if not isinstance(v, dict):
                raise ConfigError(f"{key} must be a table of values (got {_got(v)})")
            changes[k] = {**cur, **v}
        elif isinstance(cur, tuple):
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise ConfigError(f"{key} must be a list of names (got {_got(v)})")
            changes[k] = tuple(v)
        else:
            changes[k] = v
    return replace(obj, **changes)


def read_config(path: str | os.PathLike | None = None) -> tuple[Path, dict[str, Any] | None]:
    """(the config file, its TOML tables — None when there is no file): `path`, else
    `$MEMCONSOLE_CONFIG`, else the user config dir's. One reader for the engine's settings and the
    console's; a bad file is one clear InvalidInput naming it."""
    from engine.errors import InvalidInput

    if path is None:
        env = os.environ.get("MEMCONSOLE_CONFIG")
        if env:
            path = env
        else:
            from engine.paths import config_file

            path = config_file()
    p = Path(path)
    if not p.exists():
        return p, None
    try:
        return p, tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{p}: not valid TOML ({exc})") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{p}: cannot read the configuration ({exc})") from exc


def load_settings(path: str | os.PathLike | None = None) -> Settings:
    """Defaults, overlaid with the TOML file if there is one, every value checked. A bad file is
    one clear InvalidInput naming the file and the key."""
    from engine.config import CONSOLE_SECTION, Settings, validate
    from engine.errors import InvalidInput

    p, data = read_config(path)
    if data is None:
        return Settings()
    data.pop(CONSOLE_SECTION, None)
    try:
        return validate(_apply(Settings(), data))
    except (ConfigError, TypeError) as exc:
        raise InvalidInput(f"{p}: {exc}") from exc
