"""SQLite's operator directory: `<db>.operators.toml` beside the database.

    # memconsole operators: OS user = role, or [roles] (viewer, curator, forget, admin)
    [operators]
    alice = "curator"
    bob = ["curator", "forget"]

Trusted only when it is owned by the database file's owner and no one else may read or write it
(mode 0600); otherwise every call needing a role is refused with one line saying why. Without the
file, the database file's owner is admin and every other OS user a viewer. The owner is admin
either way: they own the file and could edit anything in it, so the engine says so.
"""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path

from engine.errors import InvalidInput, NotFound, Refused
from engine.identity import owner_name
from engine.storage.operators import OperatorEntry

SUFFIX = ".operators.toml"
HEADER = "# memconsole operators: OS user = role, or [roles] (viewer, curator, forget, admin)\n"


def operators_path(db: Path) -> Path:
    return db.with_name(db.name + SUFFIX)


class FileOperators:
    def __init__(self, db: Path) -> None:
        self.db = db
        self.file = operators_path(db)
        self.where = str(self.file)
        self._cache: tuple[tuple, dict[str, frozenset[str]]] | None = None

    def connection_user(self) -> str | None:
        return None

    def owner(self) -> str:
        try:
            return owner_name(self.db.stat().st_uid)
        except OSError:  # not created yet: whoever creates it will own it
            return owner_name(os.getuid())

    def _table(self) -> dict[str, frozenset[str]]:
        """The file's {user: roles}, re-read when it changes; Refused when it is not trusted."""
        try:
            st = self.file.stat()
        except FileNotFoundError:
            return {}
        key = (st.st_ino, st.st_mtime_ns, st.st_size, st.st_mode, st.st_uid)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        db_uid = self.db.stat().st_uid
        if st.st_uid != db_uid or stat.S_IMODE(st.st_mode) & 0o077 or not stat.S_ISREG(st.st_mode):
            raise Refused(
                f"operators file {self.file} is not trusted (it must be a file owned by"
                f" {owner_name(db_uid)}, the database's owner, with mode 0600): no role is granted"
            )
        try:
            doc = tomllib.loads(self.file.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise Refused(f"operators file {self.file} cannot be read ({exc}): no role is granted") from None
        table: dict[str, frozenset[str]] = {}
        for name, roles in (doc.get("operators") or {}).items():
            words = [roles] if isinstance(roles, str) else roles if isinstance(roles, list) else []
            table[str(name)] = frozenset(str(w).strip().lower() for w in words if isinstance(w, str))
        self._cache = (key, table)
        return table

    def roles_of(self, name: str) -> tuple[frozenset[str], str]:
        owner = self.owner()
        if name == owner:
            return frozenset({"admin"}), f"owner of {self.db.name}"
        table = self._table()
        if name in table:
            return table[name], f"operators file {self.file.name}"
        return frozenset({"viewer"}), "not in the operators file" if table else "not the database's owner"

    def list(self) -> list[OperatorEntry]:
        owner = self.owner()
        out = [OperatorEntry(owner, ("admin",), f"owner of {self.db.name}")]
        out += [
            OperatorEntry(n, tuple(sorted(r)), f"operators file {self.file.name}")
            for n, r in sorted(self._table().items())
            if n != owner
        ]
        return out

    def grant(self, name: str, role: str) -> None:
        table = dict(self._table())
        table[name] = table.get(name, frozenset()) | {role}
        self._write(table)

    def revoke(self, name: str, role: str) -> None:
        table = dict(self._table())
        if role not in table.get(name, frozenset()):
            raise NotFound(f"{name} does not hold the {role} role in {self.file.name}")
        table[name] = table[name] - {role}
        if not table[name]:
            del table[name]
        self._write(table)

    def _write(self, table: dict[str, frozenset[str]]) -> None:
        """Atomically, 0600, owned by the database's owner (a root admin hands it over)."""
        lines = [HEADER, "[operators]\n"]
        for n, roles in sorted(table.items()):
            if '"' in n or "\\" in n or "\n" in n:
                raise InvalidInput(f"operator name {n!r} cannot be written to the operators file")
            words = ", ".join(f'"{r}"' for r in sorted(roles))
            lines.append(f'"{n}" = [{words}]\n')
        tmp = self.file.with_name(self.file.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchmod(fd, 0o600)
            db_uid = self.db.stat().st_uid
            if os.getuid() == 0 and db_uid != 0:
                os.fchown(fd, db_uid, -1)
            os.write(fd, "".join(lines).encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.file)
        self._cache = None
