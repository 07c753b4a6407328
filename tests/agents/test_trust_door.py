"""The agents' door against hostile and greedy callers (issue #22): the real `memconsole mcp
--http` process, real sockets, the SDK's own client.

- more sockets than `ulimit -n`, each with half-sent headers, never end the process, and an
  authenticated call is served meanwhile (the finding: EMFILE at accept used to stop the server);
- sessions per token are capped and expire; calls per token are capped;
- a recall of megabytes is refused in one line; a read-only token's flood delays a writer by at
  most about one bounded call;
- the token file is re-read when it changes and on SIGHUP, which never stops the server;
- bound to a non-loopback address, Host and Origin are checked against the allow-list.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import statistics
import sys
import time
from pathlib import Path

import httpx2
import pytest

from .conftest import RO_TOKEN, RW_TOKEN, TOKENS, free_port, write_tokens
from .door_helpers import INIT, auth, client, door_server, error_of, stderr_of

NOFILE = 256
HALF_SENT = 400  # sockets held open at once, each mid-headers: more than NOFILE
OTHER = "other-token-0123456789abcdef"


def _alive(proc) -> bool:
    return proc.poll() is None


async def test_more_half_sent_sockets_than_ulimit_and_an_authenticated_call_is_served(
    tmp_path: Path, db: Path
) -> None:
    port = free_port()
    tokens = write_tokens(tmp_path / "tokens", TOKENS)
    with door_server(db, tokens, port, nofile=NOFILE) as proc:  # default limits
        held: list[socket.socket] = []
        for _ in range(HALF_SENT):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")  # and never more
            held.append(s)
        await asyncio.sleep(0.5)
        assert _alive(proc), stderr_of(proc)
        open_fds = len(os.listdir(f"/proc/{proc.pid}/fd"))
        assert open_fds < NOFILE, open_fds
        url = f"http://127.0.0.1:{port}/mcp"
        async with client(url, RW_TOKEN) as c:  # while every one of those sockets is still held
            r = await c.call_tool("remember", {"content": "served under a socket flood"})
            assert not r.is_error
            hit = await c.call_tool("recall", {"query": "socket flood"})
            assert hit.structured_content and hit.structured_content["hits"]
        for s in held:
            s.close()
        assert _alive(proc)
        async with client(url, RW_TOKEN) as c:
            assert not (await c.call_tool("recall", {"query": "flood"})).is_error
    err = stderr_of(proc)
    assert "Traceback" not in err and "Too many open files: '" not in err, err


async def test_slow_clients_are_dropped_after_the_request_timeout(tmp_path: Path, db: Path) -> None:
    port = free_port()
    tokens = write_tokens(tmp_path / "tokens", TOKENS)
    with door_server(db, tokens, port, config="[mcp]\nrequest_timeout = 1\n") as proc:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        t0 = time.monotonic()
        s.settimeout(5)
        assert s.recv(100) == b""  # closed by the server, not by us
        assert 0.8 < time.monotonic() - t0 < 4
        s.close()
        assert _alive(proc)


async def test_sessions_per_token_are_capped_and_expire(tmp_path: Path, db: Path) -> None:
    port = free_port()
    tokens = write_tokens(tmp_path / "tokens", TOKENS + f"{OTHER} other\n")
    url = f"http://127.0.0.1:{port}/mcp"
    cfg = "[mcp]\nsessions_per_token = 2\nsession_idle = 2\n"
    with door_server(db, tokens, port, config=cfg) as proc:
        async with httpx2.AsyncClient(timeout=30) as raw:
            sids = []
            for _ in range(2):
                r = await raw.post(url, json=INIT, headers=auth(RW_TOKEN))
                assert r.status_code == 200
                sids.append(r.headers["mcp-session-id"])
            third = await raw.post(url, json=INIT, headers=auth(RW_TOKEN))
            assert third.status_code == 429 and "\n" not in error_of(third)
            assert "2 sessions (the limit)" in error_of(third)
            # Another token is not held up by this one's sessions ...
            assert (await raw.post(url, json=INIT, headers=auth(OTHER))).status_code == 200
            # ... and cannot use them.
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            stolen = await raw.post(url, json=ping, headers=auth(OTHER, **{"mcp-session-id": sids[0]}))
            assert stolen.status_code == 404
            own = await raw.post(url, json=ping, headers=auth(RW_TOKEN, **{"mcp-session-id": sids[0]}))
            assert own.status_code == 200
            await asyncio.sleep(2.5)  # both sessions idle past session_idle
            gone = await raw.post(url, json=ping, headers=auth(RW_TOKEN, **{"mcp-session-id": sids[0]}))
            assert gone.status_code == 404 and "expired" in error_of(gone)
            assert (await raw.post(url, json=INIT, headers=auth(RW_TOKEN))).status_code == 200
        assert _alive(proc)


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory):
    """One server for the limit tests: the database seeded with 400 memories."""
    from engine import HashEmbedder, open_engine

    tmp = tmp_path_factory.mktemp("door")
    db = tmp / "memory.db"
    with open_engine(db, embedder=HashEmbedder(), actor="seed") as eng:
        eng.add_memories(
            [{"content": f"deploy note {i}: the {('blue', 'green', 'red')[i % 3]} pipeline runs step {i}"}
             for i in range(400)], dedup=False,
        )  # fmt: skip
    port = free_port()
    tokens = write_tokens(tmp / "tokens", TOKENS)
    with door_server(db, tokens, port) as proc:
        yield f"http://127.0.0.1:{port}/mcp", proc


async def test_a_recall_of_megabytes_is_refused_in_one_line(door) -> None:
    url, proc = door
    async with client(url, RW_TOKEN) as c:
        big = await c.call_tool("recall", {"query": "pipeline " * 12_000})  # 108,000 characters
        assert big.is_error
        text = big.content[0].text  # type: ignore[union-attr]
        assert text == "recall: query is 108,000 characters; the limit is 32,000 ([mcp] max_text)"
        with pytest.raises(Exception) as exc:
            await c.call_tool("recall", {"query": "x" * 3_000_000})  # a 3 MB body: refused unread
        assert "bytes; the limit is 1,000,000" in str(exc.value) and "\n" not in str(exc.value)
        assert not (await c.call_tool("recall", {"query": "blue pipeline"})).is_error
    assert _alive(proc)


async def test_calls_in_flight_are_capped_per_token(door) -> None:
    url, _ = door
    async with client(url, RO_TOKEN) as ro:
        results = await asyncio.gather(
            *[ro.call_tool("recall", {"query": f"pipeline step {i}", "k": 50}) for i in range(40)],
            return_exceptions=True,
        )
    refused = [r for r in results if isinstance(r, Exception)]
    served = [r for r in results if not isinstance(r, Exception)]
    assert refused and served  # 1 running + 8 waiting for a read-only token; the rest refused
    assert all("too many calls in flight" in str(r) for r in refused)


FLOOD = """
import asyncio, sys, time
sys.path.insert(0, sys.argv[3])
from tests.agents.door_helpers import client
async def main(url, token, until):
    async with client(url, token) as ro:
        served = refused = 0
        while time.time() < until:
            got = await asyncio.gather(*[ro.call_tool("recall", {"query": "blue green pipeline step", "k": 200})
                                         for _ in range(12)], return_exceptions=True)
            refused += sum(isinstance(g, Exception) for g in got)
            served += sum(not isinstance(g, Exception) for g in got)
        print(served, refused)
asyncio.run(main(sys.argv[1], sys.argv[2], time.time() + float(sys.argv[4])))
"""


async def test_a_read_only_flood_delays_a_writer_by_at_most_one_bounded_call(door) -> None:
    """The flood comes from another process (its client's parsing must not share the writer's
    event loop): 12 recalls of 200 hits at a time, again and again, from one read-only token."""
    url, _ = door
    query = {"query": "blue green pipeline step", "k": 200}
    root = str(Path(__file__).resolve().parents[2])
    async with client(url, RW_TOKEN) as rw, client(url, RO_TOKEN) as ro:

        async def write(n: int, tag: str) -> list[float]:
            out = []
            for i in range(n):
                t0 = time.perf_counter()
                r = await rw.call_tool("remember", {"content": f"writer {tag} {i}", "category": "bench"})
                out.append(time.perf_counter() - t0)
                assert not r.is_error
            return out

        quiet = await write(15, "quiet")
        one_call = []
        for _ in range(5):
            t0 = time.perf_counter()
            await ro.call_tool("recall", query)
            one_call.append(time.perf_counter() - t0)
        flood = await asyncio.create_subprocess_exec(
            sys.executable, "-c", FLOOD, url, RO_TOKEN, root, "6",
            stdout=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONPATH": root},
        )  # fmt: skip
        await asyncio.sleep(1.5)  # the flood's client is up and calling
        loud = await write(20, "loud")
        served, refused = map(int, (await flood.communicate())[0].split() or (0, 0))
    bound = max(quiet) + max(one_call) + 0.15  # one read-only call, and scheduling noise
    report = (
        f"writer p50 {statistics.median(quiet) * 1000:.0f} ms / max {max(quiet) * 1000:.0f} ms quiet;"
        f" p50 {statistics.median(loud) * 1000:.0f} ms / max {max(loud) * 1000:.0f} ms under a flood"
        f" of {served} read-only recalls served ({refused} refused); one recall {max(one_call) * 1000:.0f} ms"
    )
    print(report)
    assert served > 0 and max(loud) <= bound, report


async def test_the_token_file_is_reread_on_change_and_on_sighup(tmp_path: Path, db: Path) -> None:
    port = free_port()
    path = write_tokens(tmp_path / "tokens", TOKENS)
    url = f"http://127.0.0.1:{port}/mcp"
    with door_server(db, path, port) as proc:
        async with httpx2.AsyncClient(timeout=30) as raw:

            async def status(token: str) -> int:
                return (await raw.post(url, json=INIT, headers=auth(token))).status_code

            assert await status(OTHER) == 403
            new = tmp_path / "tokens.new"
            write_tokens(new, f"{RO_TOKEN} viewer read-only\n{OTHER} other\n")
            new.replace(path)  # added OTHER, revoked RW_TOKEN: no restart
            await asyncio.sleep(1.2)
            assert await status(OTHER) == 200 and await status(RW_TOKEN) == 403
            # SIGHUP re-reads at once and never stops the server.
            write_tokens(path, TOKENS)
            os.utime(path, ns=(0, 0))  # the same size and an old mtime: only SIGHUP notices
            proc.send_signal(signal.SIGHUP)
            await asyncio.sleep(0.3)
            assert _alive(proc) and await status(RW_TOKEN) == 200
            # A bad new file keeps the old tokens (and says so in one line).
            path.chmod(0o644)
            proc.send_signal(signal.SIGHUP)
            await asyncio.sleep(0.3)
            assert _alive(proc) and await status(RW_TOKEN) == 200
    assert "token file not reloaded, the old tokens stay" in stderr_of(proc)


async def test_host_and_origin_are_checked_off_loopback(tmp_path: Path, db: Path) -> None:
    from console.cli import main

    tokens = write_tokens(tmp_path / "tokens", TOKENS)
    port = free_port()
    # No allow-list off loopback: the server refuses to start, saying what to add.
    assert main(["--db", str(db), "mcp", "--http", f"0.0.0.0:{port}", "--token-file", str(tokens)]) == 2
    args = ("--allow-host", f"mem.test:{port}", "--allow-origin", "https://agents.test")
    with door_server(db, tokens, port, listen="0.0.0.0", args=args):
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx2.AsyncClient(timeout=30) as raw:

            async def status(**h: str) -> int:
                return (await raw.post(url, json=INIT, headers=auth(RW_TOKEN, **h))).status_code

            assert await status() == 421  # Host 127.0.0.1:port is not on the list
            assert await status(Host=f"evil.test:{port}") == 421
            assert await status(Host=f"mem.test:{port}") == 200
            assert await status(Host=f"mem.test:{port}", Origin="https://evil.test") == 403
            assert await status(Host=f"mem.test:{port}", Origin="https://agents.test") == 200
