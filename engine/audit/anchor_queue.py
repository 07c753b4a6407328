"""Writers queued on the audit anchor's lock share one anchor move (issue #24): a move records when
it read the log (`covers`: this boot's id and a monotonic time); a writer that asked for the lock
before that read is already anchored and reads nothing. engine/audit/anchor.py uses these."""

from __future__ import annotations


def boot_id() -> str:
    """This boot of this machine (Linux), so monotonic times in anchors compare only within it."""
    global _BOOT
    if _BOOT is None:
        try:
            with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
                _BOOT = f.read(64).strip()
        except OSError:
            _BOOT = ""
    return _BOOT


_BOOT: str | None = None
COVERS = "covers"  # [boot id, time.monotonic() before the reads under the lock that made it]


def covered(old: dict | None, asked: float, version: int) -> bool:
    """Did the anchor's last move read the log after `asked` (when this process, its commit done,
    asked for the lock)? Then that read saw this process's rows (each statement of the hook's
    autocommit connection sees every commit before it) and the anchor already holds them: a
    queue of writers needs one anchor move, not one each (the fleet's 16 agents spent ~60% of
    their time waiting on this lock, issue #24)."""
    c = (old or {}).get(COVERS)
    boot = boot_id()
    return (
        bool(boot)
        and isinstance(c, list)
        and len(c) == 2
        and c[0] == boot
        and isinstance(c[1], float)
        and c[1] > asked
        and (old or {}).get("version") == version
    )
