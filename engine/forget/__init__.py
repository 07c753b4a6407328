"""Forget cases: what a case reaches (select), the service that opens, previews, executes and
verifies them (service), redaction of what stays (scrub), tombstones, sealed texts for resuming
(seal), the byte scan in a child process (scan, verify) and the audit head each case records
(heads)."""
