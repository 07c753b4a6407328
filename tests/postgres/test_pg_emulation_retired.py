"""The SQLite imitation is retired (issue #23): a reconciled database holds none of the functions,
operators or aggregate older versions installed so SQLite-flavoured SQL ran here — a new one never
gets them, and an older one loses them to `schema.RETIRED` when it is reconciled. The catalog
queries are shown to see such objects by planting a sample of the old ones first."""

from __future__ import annotations

from typing import Any

import psycopg

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


# A sample of what older versions created (their exact DDL), so the catalog check has something to
# find and RETIRED something to drop.
OLD = (
    "CREATE FUNCTION json_extract(doc text, path text) RETURNS text LANGUAGE sql IMMUTABLE AS $$"
    " SELECT (doc::jsonb) #>> string_to_array(regexp_replace(path, '^\\$\\.?', ''), '.') $$",
    "CREATE FUNCTION instr(hay text, needle text) RETURNS integer LANGUAGE sql IMMUTABLE AS $$"
    " SELECT strpos(hay, needle) $$",
    "CREATE FUNCTION max(a double precision, b double precision) RETURNS double precision LANGUAGE sql"
    " IMMUTABLE AS $$ SELECT CASE WHEN a IS NULL OR b IS NULL THEN NULL ELSE greatest(a, b) END $$",
    "CREATE FUNCTION mc_sum_bool(acc bigint, v boolean) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$"
    " SELECT CASE WHEN v IS NULL THEN acc ELSE coalesce(acc, 0) + v::int END $$",
    "CREATE AGGREGATE sum(boolean) (SFUNC = mc_sum_bool, STYPE = bigint)",
    "CREATE FUNCTION mc_text_ge_i8(a text, b bigint) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$"
    " SELECT CASE WHEN a ~ '^-?[0-9]+$' THEN a::numeric >= b::numeric ELSE true END $$",
    "CREATE OPERATOR >= (LEFTARG = text, RIGHTARG = bigint, FUNCTION = mc_text_ge_i8)",
)
NONE: dict[str, list[str]] = {"functions": [], "support": [], "operators": [], "aggregates": []}


def test_a_new_database_has_none_of_it(pg_db):
    assert not any("CREATE OPERATOR" in s or "json_extract" in s for s in schema.create_statements())
    assert _emulation(pg_db) == NONE


def test_an_older_database_loses_it_when_reconciled(pg_db):
    with psycopg.connect(pg_db, autocommit=True) as conn:
        for stmt in OLD:
            conn.execute(stmt)
        conn.execute("UPDATE meta SET value = 'an-older-schema' WHERE key = 'pg_schema'")
    got = _emulation(pg_db)
    assert sorted(got["functions"]) == sorted(["json_extract(text, text)", "instr(text, text)",
                                               "max(double precision, double precision)",
                                               "mc_sum_bool(bigint, boolean)"])  # fmt: skip
    assert got["support"] == ["mc_text_ge_i8"] and got["operators"] == [">=(text, bigint)"]
    assert got["aggregates"] == ["sum(boolean)"]
    _reconcile(pg_db)  # another schema hash: reconciling runs, RETIRED with it
    assert _emulation(pg_db) == NONE
    _reconcile(pg_db)  # and again: nothing left to drop, nothing fails
    with psycopg.connect(pg_db, autocommit=True) as conn:
        recorded = conn.execute("SELECT value FROM meta WHERE key = 'pg_schema'").fetchone()[0]
    assert recorded == schema.schema_hash()
