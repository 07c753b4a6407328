"""A first run a newcomer can trust: `make install` says what each step does and lets pip show its
progress, and a venv left broken by an interrupted install (no pip, a python that fails) is
rebuilt instead of failing every later `make`. Run on a copy of the Makefile in a scratch folder,
with a stand-in python whose `-m venv` makes a venv of scripts (no network, well under a second)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FAKE_PY = """#!/bin/sh
# A stand-in for python3: `-m venv DIR` writes a venv whose python answers `-m pip --version`
# and whose pip records what it was asked to install.
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
  mkdir -p "$3/bin"
  printf '#!/bin/sh\\nexit 0\\n' > "$3/bin/python"
  printf '#!/bin/sh\\necho "$@" >> "%s/pip.log"\\n' "$(cd "$3" && pwd)" > "$3/bin/pip"
  chmod +x "$3/bin/python" "$3/bin/pip"
  exit 0
fi
exit 1
"""


def _exe(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def scratch(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("no make on PATH")
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    _exe(bin_dir / "python-standin", FAKE_PY)
    _exe(bin_dir / "chromium", "#!/bin/sh\nexit 0\n")  # the browser step finds one and moves on
    _exe(bin_dir / "pgbouncer", "#!/bin/sh\nexit 0\n")  # so does the pgbouncer step (never apt-get here)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    return tmp_path, env, bin_dir / "python-standin"


def _make(where: Path, env: dict, py: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", "install", f"PY={py}"],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_broken_venv_is_rebuilt_not_tripped_over(scratch):
    where, env, py = scratch
    venv = where / ".venv"
    (venv / "bin").mkdir(parents=True)
    _exe(venv / "bin" / "python", "#!/bin/sh\nexit 1\n")  # an interrupted install: no pip, python fails
    (venv / ".installed").touch()  # even a stamp left behind is not trusted
    os.utime(where / "pyproject.toml", (1, 1))

    r = _make(where, env, py)
    assert r.returncode == 0, r.stdout + r.stderr
    assert ".venv is broken" in r.stdout
    calls = (venv / "pip.log").read_text().splitlines()
    assert [c.split()[-1] for c in calls] == ["pip", "torch==2.13.0", ".[test]"]
    assert all("--quiet" not in c and "--progress-bar on" in c for c in calls)
    assert (venv / ".installed").exists()

    again = _make(where, env, py)  # installed and healthy: nothing to do, no pip call
    assert again.returncode == 0 and "broken" not in again.stdout
    assert len((venv / "pip.log").read_text().splitlines()) == 3


def test_each_install_step_says_what_it_does(scratch):
    where, env, py = scratch
    r = _make(where, env, py)
    assert r.returncode == 0, r.stdout + r.stderr
    steps = [line for line in r.stdout.splitlines() if line.startswith("==> [")]
    assert [s[:9] for s in steps] == ["==> [1/5]", "==> [2/5]", "==> [3/5]", "==> [4/5]", "==> [5/5]"]
    assert "first run ~4 min" in steps[0]
