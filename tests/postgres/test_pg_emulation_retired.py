"""Retiring the SQLite imitation (issue #23): with `schema.EMULATION` False a reconciled database
holds none of the emulation's functions, operators or aggregate — a new one never gets them, and
an older one (reconciled while they were made) loses them to `schema.RETIRED`. With EMULATION True
(until every service writes PostgreSQL's own SQL) they are all there, which is what makes the
catalog queries below mean something."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from engine.storage.postgres import schema
from engine.storage.postgres.store import PgStore

FUNCTIONS = [
    "json_extract(text, text)",
    "json_valid(text)",
    "instr(text, text)",
    "json_type(text, text)",
    *(f"{f}({', '.join(['double precision'] * n)})" for f in ("max", "min") for n in (2, 3, 4)),
    "mc_sum_bool(bigint, boolean)",
]
NUMBERS = ("bigint", "integer", "smallint", "double precision")
OPERATORS = [f"{op}(text, {t})" for t in NUMBERS for op in ("=", "<>", "<", "<=", ">", ">=")]


def _emulation(url: str) -> dict[str, Any]:
    """What the catalogs hold of the emulation in the database's own schema."""
    with psycopg.connect(url, autocommit=True) as conn:
        ours = "(SELECT oid FROM pg_namespace WHERE nspname = current_schema())"
        functions = [
            f for f in FUNCTIONS if conn.execute("SELECT to_regprocedure(%s)", [f]).fetchone()[0] is not None
        ]
        support = [
            r[0]
            for r in conn.execute(
                f"SELECT proname FROM pg_proc WHERE pronamespace = {ours} AND proname LIKE 'mc\\_text\\_%'"
            ).fetchall()
        ]
        operators = [
            r[0]
            for r in conn.execute(
                "SELECT oprname || '(' || format_type(oprleft, NULL) || ', ' || format_type(oprright, NULL)"
                f" || ')' FROM pg_operator WHERE oprnamespace = {ours} AND oprleft = 'text'::regtype"
            ).fetchall()
        ]
        aggregates = [
            r[0]
            for r in conn.execute(
                "SELECT p.oid::regprocedure::text FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid"
                f" WHERE p.pronamespace = {ours} AND NOT EXISTS (SELECT 1 FROM pg_depend d"
                " WHERE d.objid = p.oid AND d.deptype = 'e')"  # an extension's own (pgvector's avg, sum)
            ).fetchall()
        ]
    return {"functions": functions, "support": support, "operators": operators, "aggregates": aggregates}


def _reconcile(url: str) -> None:
    store = PgStore(url, pool_size=1)
    try:
        store.reconcile()
    finally:
        store.close()


def test_the_retired_list_drops_every_emulation_object_by_signature():
    drops = set(schema.RETIRED)
    for f in FUNCTIONS:
        assert f"DROP FUNCTION IF EXISTS {f}" in drops, f
    for op in OPERATORS:
        name, args = op.split("(", 1)
        assert f"DROP OPERATOR IF EXISTS {name} ({args[:-1]})" in drops, op
    assert "DROP AGGREGATE IF EXISTS sum(boolean)" in drops
    assert len([d for d in schema.RETIRED if d.startswith("DROP OPERATOR")]) == 24
    # Dependents go first: the operators and the aggregate before the functions behind them.
    first_support = min(i for i, d in enumerate(schema.RETIRED) if "mc_" in d)
    assert all(not d.startswith(("DROP OPERATOR", "DROP AGGREGATE")) for d in schema.RETIRED[first_support:])


def test_with_the_emulation_on_a_reconciled_database_has_it_all(pg_db):
    got = _emulation(pg_db)
    assert sorted(got["functions"]) == sorted(FUNCTIONS)
    assert len(got["support"]) == 24
    assert sorted(got["operators"]) == sorted(OPERATORS)
    assert got["aggregates"] == ["sum(boolean)"]


def test_with_the_emulation_off_an_older_database_loses_it(pg_server, monkeypatch):
    url = pg_server.fresh()  # reconciled with the emulation (the template)
    try:
        assert _emulation(url)["operators"]
        monkeypatch.setattr(schema, "EMULATION", False)
        _reconcile(url)  # another schema hash: reconciling runs, RETIRED with it
        assert _emulation(url) == {"functions": [], "support": [], "operators": [], "aggregates": []}
        _reconcile(url)  # and again: nothing left to drop, nothing fails
        with psycopg.connect(url, autocommit=True) as conn:
            pg_schema = conn.execute("SELECT value FROM meta WHERE key = 'pg_schema'").fetchone()[0]
        assert pg_schema == schema.schema_hash()
    finally:
        pg_server.drop(url)


def test_with_the_emulation_off_a_new_database_never_gets_it(pg_url, monkeypatch):
    monkeypatch.setattr(schema, "EMULATION", False)
    assert not any("CREATE OPERATOR" in s or "json_extract" in s for s in schema.create_statements())
    _reconcile(pg_url)
    assert _emulation(pg_url) == {"functions": [], "support": [], "operators": [], "aggregates": []}
    with psycopg.connect(pg_url, autocommit=True) as conn:
        have = {
            r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        }
    assert {t.name for t in schema.PG_TABLES} | set(schema.EXTRA_TABLE_NAMES) <= have


@pytest.mark.parametrize("emulation", [True, False])
def test_the_schema_hash_tells_the_two_apart(monkeypatch, emulation):
    monkeypatch.setattr(schema, "EMULATION", emulation)
    on_off = schema.schema_hash()
    monkeypatch.setattr(schema, "EMULATION", not emulation)
    assert schema.schema_hash() != on_off
