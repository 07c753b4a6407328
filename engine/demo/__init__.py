"""The demo database (`memconsole demo`): content (data), the lifecycle's rules and flows
(lifecycle), the curator queue and forget cases (curator), all written by build."""
