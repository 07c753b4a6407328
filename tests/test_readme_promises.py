"""Every promise in the README names the test that holds it: each `test_…` name cited under
"What memconsole promises" must be a test function (or module) that exists in tests/ (a renamed or deleted
test would otherwise leave a promise held by nothing)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def promises_section(readme: str) -> str:
    start = readme.index("## What memconsole promises")
    end = readme.find("\n## ", start + 1)
    return readme[start : end if end > 0 else None]


def cited(text: str) -> set[str]:
    return set(re.findall(r"\b(test_\w+)\b(?!\*)", text))  # `test_trust_*.py` is a pattern, not a name


def defined(tests: Path) -> set[str]:
    names: set[str] = set()
    for f in tests.rglob("*.py"):
        names.add(f.stem)  # a promise may name a whole module of tests
        names.update(re.findall(r"^\s*(?:async\s+)?def (test_\w+)", f.read_text(encoding="utf-8"), re.M))
    return names


def test_every_test_a_promise_names_exists():
    names = cited(promises_section((ROOT / "README.md").read_text(encoding="utf-8")))
    assert len(names) > 50  # the section names its tests; an empty match would prove nothing
    missing = sorted(names - defined(ROOT / "tests"))
    assert missing == []


def test_the_check_catches_a_missing_name(tmp_path):
    (tmp_path / "test_x.py").write_text("def test_here():\n    pass\n")
    text = "## What memconsole promises\n- held (`test_here`, `test_gone`)\n## Next\n`test_other`"
    assert cited(promises_section(text)) - defined(tmp_path) == {"test_gone"}
