"""The PostgreSQL tests' server and databases come from tests/pg_server.py (through tests/conftest.py,
so tests/engine can run on the same server): `pg_server`, `pg_url` (empty) and `pg_db` (schema in)."""
