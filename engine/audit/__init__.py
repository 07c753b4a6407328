"""The audit trail: the one writer of audit rows (log), its keyed hash chain (hashing), the head anchored outside the database (anchor) and the checks that read them (verify)."""
