"""The SQLite adapter: sqlean + sqlite-vec. Every SQLite-only construct (FTS5 MATCH/bm25, vec0,
PRAGMA, rowid, json_each, INSERT OR ...) lives in this package; services pass portable SQL."""
