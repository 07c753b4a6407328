"""The PostgreSQL schema's function housekeeping (schema.py puts the statements together): what
older versions installed to imitate SQLite (`RETIRED`, dropped on reconcile) and every trigger
function's pinned search_path (Citus-ready)."""

from __future__ import annotations

from engine.storage.postgres.schema_triggers import TRIGGER_NAMES

# What older versions installed so that SQLite-flavoured SQL ran here (json_extract, json_valid,
# instr, json_type, scalar max/min, sum(boolean), text-vs-number comparison operators). Every
# statement is PostgreSQL's own now: none is created, and reconciling drops them from a database
# that has them, dependents first (the operators and the aggregate before their functions). IF
# EXISTS: a database that never had them reconciles the same.
_OPS = {"=": "eq", "<>": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
_RTYPES = {"bigint": "i8", "integer": "i4", "smallint": "i2", "double precision": "f8"}
RETIRED: tuple[str, ...] = (
    *(
        f"DROP FUNCTION IF EXISTS {f}"
        for f in (
            "json_extract(text, text)",
            "json_valid(text)",
            "instr(text, text)",
            "json_type(text, text)",
        )
    ),
    *(
        f"DROP FUNCTION IF EXISTS {f}({', '.join(['double precision'] * n)})"
        for f in ("max", "min")
        for n in (2, 3, 4)
    ),
    *(f"DROP OPERATOR IF EXISTS {op} (text, {rt})" for rt in _RTYPES for op in _OPS),
    "DROP AGGREGATE IF EXISTS sum(boolean)",
    "DROP FUNCTION IF EXISTS mc_sum_bool(bigint, boolean)",
    *(
        f"DROP FUNCTION IF EXISTS mc_text_{name}_{short}(text, {rt})"
        for rt, short in _RTYPES.items()
        for name in _OPS.values()
    ),
)


# Citus-ready (issue #24): every function the schema creates (each trigger's `<trigger>_fn`) runs
# with a fixed search_path, pinned to the schema it was created in (current_schema() at reconcile:
# schema-based sharding puts each agent group's tables in a schema of their own), pg_catalog
# first (no object of ours shadows a built-in) and pg_temp last (no session's temporary table
# shadows ours). A trigger fired by a session whose search_path differs (another schema, a Citus
# worker running a shard's trigger) then still finds its tables. One statement after the
# functions exist, because CREATE OR REPLACE FUNCTION resets what ALTER FUNCTION set.
ENGINE_FUNCTIONS = tuple(f"{t}_fn" for t in TRIGGER_NAMES)
PIN_SEARCH_PATH = (
    "DO $pin$ DECLARE f text; BEGIN FOREACH f IN ARRAY ARRAY["
    + ", ".join(f"'{f}'" for f in ENGINE_FUNCTIONS)
    + "] LOOP EXECUTE format('ALTER FUNCTION %I.%I() SET search_path = pg_catalog, %I, pg_temp',"
    " current_schema(), f, current_schema()); END LOOP; END $pin$"
)
