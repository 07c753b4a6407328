"""The table gateways in SQLite's SQL (the port's engine/storage/gateways/); bound to a connection by
bindings.py."""
