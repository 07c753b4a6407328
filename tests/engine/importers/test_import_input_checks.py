"""Issue 12 "Trust", imports: input checked at the door (finite numbers, schema-shaped rows, FILE:LINE,
nothing written). Bounded imports are in test_import_bounds, safe export in test_export_targets."""

from __future__ import annotations

import json
import os

import pytest

from engine import ImportFailed
from tests.engine.hermes_fixture import HermesHome
from tests.engine.importers.door_checks import HEADER, T, cli, counts, deadline

pytestmark = pytest.mark.backends


# -- 1/5: every number finite, every row schema-shaped, FILE:LINE, nothing written ---------------
@pytest.mark.parametrize(
    "bad, what",
    [
        ('{"type":"memory","content":"x","importance":1e999}', "finite"),
        ('{"type":"memory","content":"x","importance":NaN}', "NaN"),
        ('{"type":"memory","content":"x","created_at":Infinity}', "Infinity"),
        ('{"type":"memory","content":"x","created_at":-Infinity}', "Infinity"),
        ('{"type":"memory","content":"x","message_id":1180591620717411303424}', "64 bits"),
        ('{"type":"memory","content":"x","created_at":1e300}', "between"),
        ('{"type":"memory","content":"x","metadata":{"n":NaN}}', "NaN"),
        ('{"type":"memory","content":"x","metadata":{"n":1180591620717411303424}}', "64 bits"),
        ('{"type":"message","session_id":"ok","content":"x","token_count":-3}', "between"),
        ('{"type":"message","session_id":"ok","content":"x","at":1e999}', "finite"),
        ('{"type":"session","id":"s2","started_at":"NaN"}', "s2|time|NaN"),
        ('{"type":"session","id":"s2","title":"' + "t" * 10_001 + '"}', "limit"),
    ],
    ids=lambda v: v[:48],
)
def test_ingest_refuses_bad_numbers_with_file_line_and_writes_nothing(eng, tmp_path, bad, what):
    p = tmp_path / "in.jsonl"
    p.write_text(
        '{"type":"session","id":"ok","agent":"a"}\n'
        '{"type":"memory","content":"a good line","agent":"a"}\n' + bad + "\n"
    )
    before = counts(eng)
    with pytest.raises(ImportFailed, match=rf"in\.jsonl:3: .*({what})"):
        eng.importers.ingest(p)
    assert counts(eng) == before


def test_ingest_cli_error_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    p = tmp_path / "in.jsonl"
    p.write_text('{"type":"memory","content":"ok"}\n{"type":"memory","content":"x","importance":1e999}\n')
    code, out, err = cli(tmp_path, capsys, "ingest", str(p))
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "in.jsonl:2:" in err


def test_cli_refuses_a_fifo_and_a_bad_export_line_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(HEADER + '{"type":"memory","row":{"id":7,"content":"v","importance":NaN}}\n')
    with deadline(60):
        for args in (
            ("ingest", str(fifo)),
            ("import", "jsonl", str(fifo)),
            ("import", "markdown", str(fifo), "--agent", "a"),
            ("import", "jsonl", str(bad)),
        ):
            code, _, err = cli(tmp_path, capsys, *args)
            assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, args
    assert "bad.jsonl:2:" in err and "NaN" in err
    h = HermesHome(tmp_path / "hermes", version=2)
    h.session("inf", started=float("inf"))
    h.close()
    code, _, err = cli(tmp_path, capsys, "import", "hermes", str(tmp_path / "hermes"))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "session 'inf'" in err


def test_a_hermes_row_with_an_infinite_time_refuses_the_import_naming_it(eng, tmp_path):
    h = HermesHome(tmp_path / "hermes", version=2)
    h.session("ok", started=T)
    h.message("ok", "user", "fine", T + 1)
    h.session("inf", started=float("inf"))
    h.close()
    before = counts(eng)
    with pytest.raises(ImportFailed, match=r"state\.db: session 'inf': .*started_at"):
        eng.importers.hermes(tmp_path / "hermes")
    assert counts(eng) == before


def _export_line(rtype: str, row: dict, **extra) -> str:
    return json.dumps({"type": rtype, "row": row, **extra})


_VEC_NAN = __import__("base64").b64encode(b"\x00\x00\xc0\x7f" * 384).decode()
_VEC_ZERO = __import__("base64").b64encode(b"\x00" * 4 * 384).decode()
_VEC_SHORT = __import__("base64").b64encode(b"\x00\x00\x80\x3f" * 383).decode()


@pytest.mark.parametrize(
    "line, what",
    [
        ('{"type":"memory","row":{"id":7,"content":"v","importance":1e999}}', "finite"),
        ('{"type":"memory","row":{"id":7,"content":"v","importance":2}}', "importance.*between 0 and 1"),
        ('{"type":"memory","row":{"id":7,"content":"v","strength":NaN}}', "NaN"),
        ('{"type":"memory","row":{"id":1180591620717411303424,"content":"v"}}', "64 bits"),
        ('{"type":"memory","row":{"id":7,"content":"v","metadata":"not json"}}', "metadata.*not valid JSON"),
        ('{"type":"memory","row":{"id":7,"content":"v","metadata":"[1]"}}', "metadata.*object"),
        ('{"type":"memory","row":{"id":7,"content":"v","metadata":"{\\"a\\": NaN}"}}', "metadata.*NaN"),
        ('{"type":"memory","row":{"id":7,"content":"v","created_at":1e300}}', "created_at.*between"),
        ('{"type":"memory","row":{"id":7,"content":"v","access_count":-1}}', "access_count"),
        ('{"type":"memory","row":{"id":7,"content":"v","pinned":5}}', "pinned"),
        ('{"type":"memory","row":{"id":7,"content":"v","kind":"weird"}}', "kind"),
        ('{"type":"memory","row":{"id":7,"content":null}}', "null"),
        ('{"type":"memory","row":{"id":7,"content":["v"]}}', "text"),
        (_export_line("memory", {"id": 7, "content": "v"}, vector=_VEC_NAN), "NaN or infinite"),
        (_export_line("memory", {"id": 7, "content": "v"}, vector=_VEC_ZERO), "all zeros"),
        (_export_line("memory", {"id": 7, "content": "v"}, vector=_VEC_SHORT), "384 float32"),
        ('{"type":"flow","row":{"id":3,"name":"f","steps":"\\"x\\""}}', "steps.*list"),
        ('{"type":"message","row":{"id":5,"session_id":"ok","role":"hacker"}}', "role"),
        ('{"type":"rule","row":{"id":2,"text":"r","score":11}}', "score"),
        ('{"type":"audit","row":{"id":9,"at":Infinity,"actor":"x","action":"y"}}', "Infinity"),
    ],
    ids=lambda v: v[:64],
)
def test_jsonl_import_holds_every_row_to_the_schema(eng, tmp_path, line, what):
    p = tmp_path / "bad.jsonl"
    p.write_text(HEADER + '{"type":"session","row":{"id":"ok","agent":"a"}}\n' + line + "\n")
    before = counts(eng)
    with pytest.raises(ImportFailed, match=rf"bad\.jsonl:3: .*{what}"):
        eng.importers.jsonl(p)
    assert counts(eng) == before
