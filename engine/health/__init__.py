"""Health: `doctor` (does the file agree with itself?) and the row checks that find malformed
values (rows)."""
