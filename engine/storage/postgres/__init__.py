"""The PostgreSQL adapter of the storage port (psycopg 3, psycopg_pool, pgvector): a first slice.

What it covers and what it refuses is listed in store.py; anything outside the slice raises
`EngineError("not supported on PostgreSQL yet: ...")`."""
