"""The port's read models: views that join several tables (what the panes, the CLI and the services
list), one class per area, reached as `conn.<area>_queries`. Read-only; the SQL is each adapter's own
(engine/storage/sqlite/queries/, engine/storage/postgres/queries/). No SQL in this package."""
