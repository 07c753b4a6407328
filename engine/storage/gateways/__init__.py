"""The port's table gateways: one class per table, the only writer of that table's rows, reached as
`conn.<table>` on the connection a read or write function receives. Each class here holds the
operations and their Python logic (checks, chunking); the SQL of each is an adapter's own
(engine/storage/sqlite/gateways/, engine/storage/postgres/gateways/). No SQL in this package."""
