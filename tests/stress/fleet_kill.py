"""A fleet with casualties (issue #24): N agent processes alternating `remember` and `recall`
(recording access: audited writes) on one database, K of them SIGKILLed mid-run at staggered
moments. Each agent appends a line per acknowledged write to its own file (one os.write per line,
so a kill cuts at most the line being written, which the reader drops); afterwards every
acknowledged write must be present with its content, no error may have reached a surviving
caller, and `memconsole audit --verify` must report the chain intact (a killed agent's half-done
transaction leaves an id gap that is not a chain gap).

Agents are forked from the test process (engine already imported: 64 fresh interpreters would
spend a minute of CPU importing on a loaded machine) before any engine is open in it."""

from __future__ import annotations

import hashlib
import multiprocessing as mp
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WORDS = [
    "deploy",
    "key",
    "rotates",
    "mondays",
    "staging",
    "cluster",
    "paging",
    "alert",
    "runbook",
    "invoice",
    "cache",
    "schema",
    "backup",
]


def sha(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def agent(url: str, name: str, ack_path: str, ready: Any, go: Any, seconds: float) -> None:
    """One agent: remember, recall (records access), ... for `seconds`; an ack line per write."""
    from engine import HashEmbedder, open_engine

    fd = os.open(ack_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def say(line: str) -> None:
        os.write(fd, (line + "\n").encode())

    rng = random.Random(name)
    try:
        eng = open_engine(url, embedder=HashEmbedder(), actor=name, load="now")
    except Exception as exc:  # noqa: BLE001 - reported to the test
        say(f"E open: {type(exc).__name__}: {exc}".replace("\n", " ")[:300])
        ready.put(name)
        return
    say("READY")
    ready.put(name)
    go.wait()
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        i += 1
        text = f"{name} note {i}: " + " ".join(rng.choice(WORDS) for _ in range(8))
        try:
            mid = eng.add_memory(text, agent=name, dedup=False)
            say(f"M {mid} {sha(text)}")
        except Exception as exc:  # noqa: BLE001 - an error that reached a caller
            say(f"E remember: {type(exc).__name__}: {exc}".replace("\n", " ")[:300])
        try:
            eng.search(" ".join(rng.choice(WORDS) for _ in range(3)), k=5, agent=name)
            say("R")
        except Exception as exc:  # noqa: BLE001
            say(f"E recall: {type(exc).__name__}: {exc}".replace("\n", " ")[:300])
    eng.close()
    say("DONE")
    os.close(fd)


@dataclass
class AgentAcks:
    ready: bool = False
    done: bool = False
    writes: dict[int, str] = field(default_factory=dict)  # memory id -> content sha1
    recalls: int = 0
    errors: list[str] = field(default_factory=list)
    last: str = ""  # the last complete line
    lines: int = 0


def read_acks(path: Path) -> AgentAcks:
    a = AgentAcks()
    if not path.exists():
        return a
    for line in path.read_bytes().decode("utf-8", "replace").split("\n")[:-1]:  # complete lines only
        a.lines += 1
        a.last = line
        tag, _, rest = line.partition(" ")
        if tag == "READY":
            a.ready = True
        elif tag == "DONE":
            a.done = True
        elif tag == "M":
            mid, digest = rest.split()
            a.writes[int(mid)] = digest
        elif tag == "R":
            a.recalls += 1
        elif tag == "E":
            a.errors.append(rest)
    return a


@dataclass
class FleetOutcome:
    acks: dict[str, AgentAcks]
    killed: list[str]
    kill_times: list[float]
    wall: float

    @property
    def acknowledged(self) -> dict[int, str]:
        return {mid: d for a in self.acks.values() for mid, d in a.writes.items()}


def run_fleet(
    url: str, folder: Path, *, agents: int, kill: int, seconds: float, seed: int = 24
) -> FleetOutcome:
    """Start `agents` forked agents, let them run `seconds`, SIGKILL `kill` of them at staggered
    moments between 25% and 75% of the run; wait for the rest."""
    ctx = mp.get_context("fork")
    ready, go = ctx.Queue(), ctx.Event()
    names = [f"agent-{i:02d}" for i in range(agents)]
    procs = {
        n: ctx.Process(
            target=agent, args=(url, n, str(folder / f"{n}.acks"), ready, go, seconds), daemon=True
        )
        for n in names
    }
    for p in procs.values():
        p.start()
    for _ in names:
        ready.get(timeout=600)
    rng = random.Random(seed)
    victims = rng.sample(names, kill)
    moments = sorted(rng.uniform(0.25 * seconds, 0.75 * seconds) for _ in victims)
    t0 = time.monotonic()
    go.set()
    kill_times = []
    for name, at in zip(victims, moments, strict=True):
        time.sleep(max(0.0, at - (time.monotonic() - t0)))
        procs[name].kill()  # SIGKILL: no cleanup, maybe mid-transaction
        kill_times.append(round(time.monotonic() - t0, 2))
    for p in procs.values():
        p.join(seconds + 300)
    wall = time.monotonic() - t0
    acks = {n: read_acks(folder / f"{n}.acks") for n in names}
    return FleetOutcome(acks, victims, kill_times, wall)


def missing_writes(url: str, acknowledged: dict[int, str]) -> list[str]:
    """Acknowledged writes that are absent or whose content changed."""
    from engine import HashEmbedder, open_engine
    from engine.errors import NotFound

    bad = []
    eng = open_engine(url, embedder=HashEmbedder(), actor="checker", load="now")
    try:
        for mid, digest in sorted(acknowledged.items()):
            try:
                got = eng.memories.get(mid)
            except NotFound:
                bad.append(f"memory {mid}: absent")
                continue
            if sha(got.content) != digest:
                bad.append(f"memory {mid}: content changed")
    finally:
        eng.close()
    return bad


def audit_verify(url: str) -> tuple[int, str]:
    """`memconsole audit --verify --json` in a fresh process, as an operator would run it."""
    exe = Path(sys.executable).with_name("memconsole")
    env = {**os.environ, "MEMCONSOLE_EMBEDDER": "hash", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(
        [str(exe), "--db", url, "audit", "--verify", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    return done.returncode, (done.stdout + done.stderr).strip()
