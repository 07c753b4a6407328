"""Where memconsole keeps things, in one place (platformdirs; env vars point it elsewhere)."""
from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_config_dir, user_data_dir


def default_db() -> Path:
    env = os.environ.get("MEMCONSOLE_DB")
    if env:
        return Path(env)
    return Path(user_data_dir("memconsole", appauthor=False)) / "memory.db"


def state_dir() -> Path:
    """Where the installation's key and audit anchors live (outside every database)."""
    env = os.environ.get("MEMCONSOLE_STATE")
    if env:
        return Path(env)
    return Path(user_config_dir("memconsole", appauthor=False))


def config_file() -> Path:
    return Path(user_config_dir("memconsole", appauthor=False)) / "config.toml"


def private_dir(path: Path) -> Path:
    """Create (0700) a folder for reports and exports beside the database."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def private_write(path: Path, text: str) -> None:
    """Write a report or export file created 0600."""
    private_dir(path.parent)
    fd = os.open(path, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
