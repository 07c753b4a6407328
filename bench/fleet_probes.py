"""What bench/fleet.py measures besides the calls' own times: where the CPU went (the bench
PostgreSQL server's processes, one process such as the MCP server), the server's connections and
lock waits, console freshness, percentiles, and two agent switches (FLEET_WARM, FLEET_PROFILE). Issue #24."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any


def warm(eng: Any) -> None:
    """FLEET_WARM=1: search until any in-memory matrices this engine loads on its own are loaded
    (a long-lived agent's steady state; without it a short run measures the loads too)."""
    for _ in range(5):
        eng.search("warm up deploy", k=5, record_access=False)
    end = time.monotonic() + 120
    r = eng.retrieval
    while time.monotonic() < end and (r.keyword.loader.loading or eng.vectors.loader.loading):
        time.sleep(0.05)


def profiler(name: str) -> Any:
    """FLEET_PROFILE=/tmp/p: agent-00 writes a cProfile of its loop to /tmp/p.agent-00 (the
    others run unprofiled, so the fleet's load is as it would be)."""
    if not os.environ.get("FLEET_PROFILE") or name != "agent-00":
        return None
    import cProfile

    prof = cProfile.Profile()
    prof.enable()
    return prof


def pg_connections(url: str, stop: threading.Event, peak: list[int], waits: list[tuple[int, int]]) -> None:
    """Every 0.25 s: the connections in use (peak) and the sessions waiting on a lock (advisory
    locks apart: a global writers' lock shows there)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as c:
        while not stop.is_set():
            n = c.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            ).fetchone()
            peak[0] = max(peak[0], int(n[0]) - 1)  # not this sampler's own
            w = c.execute(
                "SELECT count(DISTINCT pid) FILTER (WHERE locktype = 'advisory'),"
                " count(DISTINCT pid) FILTER (WHERE locktype <> 'advisory') FROM pg_locks WHERE NOT granted"
            ).fetchone()
            waits.append((int(w[0]), int(w[1])))
            stop.wait(0.25)


def server_cpu(pg_dir: Path, stop: threading.Event, out: list[float]) -> None:
    """Every 0.2 s until `stop`: the CPU seconds the bench's PostgreSQL server used since this
    started — its postmaster and every process it forked (backends, WAL writer, ...), not other
    servers on the machine. Per process, so a backend that exits keeps what it used."""
    try:
        pm = int((pg_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    hz, first, last, sweep = os.sysconf("SC_CLK_TCK"), {}, {}, 0
    while True:
        sweep += 1
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
                    st = f.read()
            except OSError:
                continue
            fields = st[st.rindex(")") + 2 :].split()
            if int(pid) == pm or int(fields[1]) == pm:
                used = int(fields[11]) + int(fields[12])
                first.setdefault(pid, used if sweep == 1 else 0)  # born later: all of it
                last[pid] = used
        out[:] = [sum(last[p] - first[p] for p in last) / hz]
        if stop.wait(0.2):
            return


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) one process used so far (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def freshness(committed: list[tuple[int, float]], seen: list[tuple[float, int]]) -> list[float]:
    """For each write: when the reader first saw an id at least as new, after its commit."""
    out = []
    seen = sorted(seen)
    for mid, at in committed:
        t = next((ts for ts, top in seen if top >= mid and ts >= at - 0.001), None)
        if t is not None:
            out.append(max(0.0, t - at))
    return out


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q / 100 * (len(s) - 1))))]
