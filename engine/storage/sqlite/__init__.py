"""The SQLite adapter: the only place SQLite-only SQL lives (FTS5, vec0, PRAGMA, sqlite_master, rowid)."""
