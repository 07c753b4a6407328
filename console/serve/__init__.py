"""The browser face: `memconsole serve` (the console behind a login) and its operator accounts."""
