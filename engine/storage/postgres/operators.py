"""PostgreSQL's operator directory: roles are database roles, enforced by GRANTs.

    memconsole_viewer   SELECT on every table of the schema (+ INSERT on audit and the write
                        bookkeeping, VIEWER_WRITES: a refusal is audited, and a forged row cannot
                        carry the chain's keyed hash, which `audit --verify` checks)
    memconsole_curator  SELECT, INSERT, UPDATE, DELETE on every table, the sequences
    memconsole_forget   the same (forget rewrites and deletes across tables)
    memconsole_admin    the same, and the engine lets it grant and revoke

A login role granted only memconsole_viewer cannot write a memory even with psql in hand. The
superuser, the owner of the schema's tables and members of memconsole_admin are admin; any other
login is a viewer to the engine (what it may do to the tables is what its GRANTs say).
"""

from __future__ import annotations

import time
from typing import Any

from psycopg import sql

from engine.errors import EngineError, NotFound
from engine.storage.operators import OperatorEntry

GROUPS = {
    "viewer": "memconsole_viewer",
    "curator": "memconsole_curator",
    "forget": "memconsole_forget",
    "admin": "memconsole_admin",
}
_WORD = {v: k for k, v in GROUPS.items()}
# A viewer writes its refusals in the audit trail and the outcome of a check it runs, with the
# bookkeeping every write does (the keyword queue the store empties before commit; the change
# sequence is granted to every group).
VIEWER_WRITES = {"audit": "INSERT", "fts_pending": "INSERT, DELETE", "retrieval_checks": "UPDATE"}
VIEWER_WRITES["audit_heads"] = "INSERT, UPDATE"  # an append locks its partition's head (FOR UPDATE, #24)

_ROLES_OF = """
SELECT r.rolsuper,
       EXISTS (SELECT 1 FROM pg_class c
                WHERE c.relname = 'memories' AND c.relnamespace = current_schema()::regnamespace
                  AND pg_has_role(r.oid, c.relowner, 'MEMBER')) AS owner,
       ARRAY(SELECT g.rolname FROM pg_roles g
              WHERE g.rolname = ANY(%s) AND pg_has_role(r.oid, g.oid, 'MEMBER')) AS groups
  FROM pg_roles r WHERE r.rolname = %s
"""

_MEMBERS = """
SELECT m.rolname, g.rolname FROM pg_auth_members a
  JOIN pg_roles g ON g.oid = a.roleid JOIN pg_roles m ON m.oid = a.member
 WHERE g.rolname = ANY(%s) ORDER BY 1, 2
"""


class PgOperators:
    where = "PostgreSQL roles"

    CACHE_S = 2.0  # a busy writer asks the catalog at most every 2 s; a grant here is seen at once

    def __init__(self, store: Any) -> None:
        self.store = store
        self._cache: dict[str, tuple[float, tuple[frozenset[str], str]]] = {}

    def connection_user(self) -> str | None:
        return str(self.store.query(lambda c: c.execute("SELECT current_user").fetchone()[0]))

    def roles_of(self, name: str) -> tuple[frozenset[str], str]:
        hit = self._cache.get(name)
        if hit is not None and time.monotonic() - hit[0] < self.CACHE_S:
            return hit[1]
        found = self._roles_of(name)
        self._cache[name] = (time.monotonic(), found)
        return found

    def _roles_of(self, name: str) -> tuple[frozenset[str], str]:
        row = self.store.query(lambda c: c.execute(_ROLES_OF, (list(GROUPS.values()), name)).fetchone())
        if row is None:
            return frozenset({"viewer"}), "no PostgreSQL role of that name"
        superuser, owner, groups = row[0], row[1], list(row[2] or [])
        if superuser:
            return frozenset({"admin"}), "PostgreSQL superuser"
        if owner:
            return frozenset({"admin"}), "owner of the memconsole tables"
        if groups:
            return frozenset(_WORD[g] for g in groups), "PostgreSQL roles " + ", ".join(sorted(groups))
        return frozenset({"viewer"}), "no memconsole_* role"

    def list(self) -> list[OperatorEntry]:
        rows = self.store.query(lambda c: c.execute(_MEMBERS, (list(GROUPS.values()),)).fetchall())
        by: dict[str, list[str]] = {}
        for member, group in rows:
            by.setdefault(str(member), []).append(_WORD[str(group)])
        return [OperatorEntry(n, tuple(sorted(r)), "PostgreSQL roles") for n, r in sorted(by.items())]

    def ensure_groups(self) -> None:
        """Create the four group roles (NOLOGIN) and give each its GRANTs on the current schema,
        now and for tables this role creates later. Idempotent."""

        def run(c: Any) -> None:
            have = {
                r[0]
                for r in c.execute(
                    "SELECT rolname FROM pg_roles WHERE rolname = ANY(%s)", (list(GROUPS.values()),)
                )
            }
            schema = c.execute("SELECT current_schema()").fetchone()[0]
            s = sql.Identifier(schema)
            for group in GROUPS.values():
                g = sql.Identifier(group)
                if group not in have:
                    c.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(g))
                c.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(s, g))
                c.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(s, g))
                c.execute(
                    sql.SQL("ALTER DEFAULT PRIVILEGES IN SCHEMA {} GRANT SELECT ON TABLES TO {}").format(s, g)
                )
                c.execute(sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {} TO {}").format(s, g))
                if group == GROUPS["viewer"]:  # only what writing its own refusal down takes
                    for table, privileges in VIEWER_WRITES.items():
                        c.execute(
                            sql.SQL("GRANT " + privileges + " ON TABLE {}.{} TO {}").format(
                                s, sql.Identifier(table), g
                            )
                        )
                    continue
                c.execute(
                    sql.SQL("GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {} TO {}").format(s, g)
                )
                c.execute(sql.SQL("GRANT UPDATE ON ALL SEQUENCES IN SCHEMA {} TO {}").format(s, g))
                c.execute(
                    sql.SQL(
                        "ALTER DEFAULT PRIVILEGES IN SCHEMA {} GRANT INSERT, UPDATE, DELETE ON TABLES TO {}"
                    ).format(s, g)
                )

        self._ddl(run)

    def grant(self, name: str, role: str) -> None:
        self.ensure_groups()
        self._must_exist(name)
        self._ddl(
            lambda c: c.execute(
                sql.SQL("GRANT {} TO {}").format(sql.Identifier(GROUPS[role]), sql.Identifier(name))
            )
        )

    def revoke(self, name: str, role: str) -> None:
        self._must_exist(name)
        roles, _ = self.roles_of(name)
        if role not in roles:
            raise NotFound(f"{name} does not hold the {role} role ({GROUPS[role]})")
        self._ddl(
            lambda c: c.execute(
                sql.SQL("REVOKE {} FROM {}").format(sql.Identifier(GROUPS[role]), sql.Identifier(name))
            )
        )

    def _must_exist(self, name: str) -> None:
        found = self.store.query(
            lambda c: c.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
        )
        if found is None:
            raise NotFound(f"no PostgreSQL role named {name!r} (create it first: CREATE ROLE ... LOGIN)")

    def _ddl(self, fn: Any) -> None:
        self._cache.clear()
        try:
            self.store.query(fn)
        except EngineError:
            raise
        except Exception as exc:  # psycopg's InsufficientPrivilege and friends: one line
            raise EngineError(
                f"PostgreSQL refused the role change: {str(exc).strip().splitlines()[0]}"
            ) from None
