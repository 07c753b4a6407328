"""The token file: its format, and the server refusing an unsafe one before it listens."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from console.cli import main
from console.cli.agents import parse_listen
from console.mcp.auth import TokenFileError, parse_tokens, read_token_file

from .conftest import RO_TOKEN, RW_TOKEN, TOKENS, write_tokens


def test_format_maps_token_to_actor_and_access(tmp_path: Path) -> None:
    tm = read_token_file(write_tokens(tmp_path / "t", TOKENS))
    rw, ro = tm.lookup(RW_TOKEN), tm.lookup(RO_TOKEN)
    assert rw is not None and (rw.actor, rw.read_only, rw.agents) == ("laptop", False, {"laptop"})
    assert ro is not None and (ro.actor, ro.read_only, ro.agents) == ("viewer", True, {"viewer"})
    assert tm.lookup(RW_TOKEN[:-1]) is None and tm.lookup("") is None


@pytest.mark.parametrize(
    "text, why",
    [
        ("short laptop\n", "at least 16"),
        (f"{RW_TOKEN}\n", "TOKEN ACTOR"),
        (f"{RW_TOKEN} a b c\n", "TOKEN ACTOR"),
        (f"{RW_TOKEN} laptop admin\n", "read-only"),
        (f"{RW_TOKEN} a\n{RW_TOKEN} b\n", "twice"),
        ("# only a comment\n", "no tokens"),
    ],
)
def test_malformed(text: str, why: str) -> None:
    with pytest.raises(TokenFileError, match=why):
        parse_tokens(text)


def test_unsafe_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(TokenFileError, match="chmod 600"):
        read_token_file(write_tokens(tmp_path / "open", TOKENS, 0o644))
    real = write_tokens(tmp_path / "real", TOKENS)
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(TokenFileError, match="symlink"):
        read_token_file(tmp_path / "link")
    os.mkfifo(tmp_path / "fifo", 0o600)
    with pytest.raises(TokenFileError, match="not a regular file"):
        read_token_file(tmp_path / "fifo")
    with pytest.raises(TokenFileError, match="cannot open"):
        read_token_file(tmp_path / "missing")
    (tmp_path / "dir").mkdir(mode=0o700)
    with pytest.raises(TokenFileError):
        read_token_file(tmp_path / "dir")


def test_cli_refuses_before_listening(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "m.db")
    loose = write_tokens(tmp_path / "loose", TOKENS, 0o640)
    assert main(["--db", db, "mcp", "--http", "127.0.0.1:1", "--token-file", str(loose)]) == 2
    assert "chmod 600" in capsys.readouterr().err
    assert main(["--db", db, "mcp", "--http", "127.0.0.1:9"]) == 2
    assert "--token-file" in capsys.readouterr().err
    assert main(["--db", db, "mcp", "--http", "127.0.0.1:99999", "--token-file", str(loose)]) == 2
    assert not (tmp_path / "m.db").exists()  # nothing opened


def test_listen_address() -> None:
    assert parse_listen("8765") == ("127.0.0.1", 8765)
    assert parse_listen(":8765") == ("127.0.0.1", 8765)
    assert parse_listen("0.0.0.0:80") == ("0.0.0.0", 80)
    assert parse_listen("[::1]:8765") == ("::1", 8765)
