"""The audit trail: the one writer of audit rows (log), its keyed hash chain (hashing), the head
anchored outside the database (anchor), the checks that read them (verify) and the service."""
