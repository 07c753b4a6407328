"""Write the memconsole memory provider into a Hermes home (`hermes install-provider`)."""

from __future__ import annotations

import json
import os
import site
import sys
from pathlib import Path
from typing import Any

from .provider import CONFIG

PROVIDER_SOURCE = Path(__file__).with_name("plugin.py")  # a shim importing console.hermes.provider
PLUGIN_YAML = (
    "name: memconsole\ndescription: memconsole shared memory (SQLite engine the operator's console reads)\n"
)


class ProviderExists(Exception):
    """A different provider file is already installed there (use --force)."""


def import_paths() -> list[str]:
    """Folders Hermes' Python needs on sys.path to import memconsole and its dependencies here:
    the project (engine/, console/) and this interpreter's site-packages (appended after Hermes'
    own, so Hermes' versions of shared packages win)."""
    import engine

    root = str(Path(engine.__file__).resolve().parent.parent)
    paths = [root]
    for p in [*site.getsitepackages(), site.getusersitepackages()]:
        if p not in paths and Path(p).is_dir():
            paths.append(p)
    return paths


def install(
    home: Path,
    *,
    db: str,
    actor: str | None = None,
    agent: str | None = None,
    force: bool = False,
    python: str | None = None,
) -> dict[str, Any]:
    """Write HOME/plugins/memconsole/{__init__.py, memconsole.json, plugin.yaml}; 0700 folder,
    0600 files (the config names the database). Re-installing the same version is a no-op
    rewrite; a provider file that differs is replaced only with `force`."""
    home = home.expanduser()
    if home.exists() and not home.is_dir():
        raise ProviderExists(f"{home}: not a folder")
    dest = home / "plugins" / "memconsole"
    source = PROVIDER_SOURCE.read_text(encoding="utf-8")
    target = dest / "__init__.py"
    if target.is_symlink():
        raise ProviderExists(f"{target}: is a symlink; remove it first")
    if target.exists() and target.read_text(encoding="utf-8", errors="replace") != source and not force:
        raise ProviderExists(f"{target}: a different provider is installed; use --force to replace it")
    dest.mkdir(parents=True, exist_ok=True, mode=0o700)
    config = {
        "db": str(Path(db).expanduser().absolute()) if "://" not in db else db,
        "actor": actor,
        "agent": agent,
        "paths": import_paths(),
        "python": python or sys.executable,
        "prefetch_chars": 2400,
        "recall_k": 5,
    }
    _write(target, source)
    _write(dest / CONFIG, json.dumps(config, indent=2) + "\n")
    _write(dest / "plugin.yaml", PLUGIN_YAML)
    return {
        "path": str(target),
        "home": str(home),
        "db": config["db"],
        "config": str(dest / CONFIG),
        "config_yaml": "memory:\n  provider: memconsole",
        "paths": config["paths"],
    }


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
