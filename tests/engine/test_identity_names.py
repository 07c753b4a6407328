"""Actor names: NFKC, no control/format/zero-width characters, no mixed-script lookalikes (unless
configured), one function used by the token file, `--actor` and the audit filter."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import HashEmbedder, open_engine
from engine.config import Settings
from engine.errors import InvalidInput
from engine.identity_names import actor_filter, actor_name

CYRILLIC_A = "\u0430"  # а, drawn like Latin a


@pytest.mark.parametrize(
    "raw, normal",
    [
        ("dana", "dana"),
        ("  dana ", "dana"),
        ("ｄａｎａ", "dana"),  # full-width: NFKC
        ("ﬁona", "fiona"),  # a ligature: NFKC
        ("agent-7.prod_2", "agent-7.prod_2"),
        ("Zoë", "Zoë"),
        ("Zoe\u0308", "Zoë"),  # a combining diaeresis composes
        ("дана", "дана"),  # one script (Cyrillic) is a name like any other
        ("山田太郎", "山田太郎"),
        ("やまだ_tarō", "やまだ_tarō"),  # Japanese with Latin: one writing system
        ("김민준", "김민준"),
    ],
)
def test_normal_forms(raw: str, normal: str) -> None:
    assert actor_name(raw) == normal


@pytest.mark.parametrize(
    "raw, why",
    [
        ("d" + CYRILLIC_A + "na", "mixes scripts"),
        ("pаypal", "mixes scripts"),
        ("dana\u200b", "invisible or control"),  # zero-width space
        ("da\u200dna", "invisible or control"),  # zero-width joiner
        ("da\u2060na", "invisible or control"),  # word joiner
        ("\ufeffdana", "invisible or control"),
        ("dana\ufe0f", "invisible or control"),  # variation selector
        ("da\u3164na", "invisible or control"),  # Hangul filler
        ("\u202edana", "invisible or control"),  # bidi override
        ("da\x1bna", "invisible or control"),
        ("da\nna", "invisible or control"),
        ("", "empty"),
        ("\u200b", "invisible"),
        ("x" * 201, "longer than 200"),
    ],
)
def test_refused(raw: str, why: str) -> None:
    with pytest.raises(InvalidInput, match=why) as exc:
        actor_name(raw)
    assert "\n" not in str(exc.value)


def test_mixed_scripts_when_configured() -> None:
    assert actor_name("d" + CYRILLIC_A + "na", allow_mixed_script=True) == "d" + CYRILLIC_A + "na"
    with pytest.raises(InvalidInput):  # invisible characters are never allowed
        actor_name("dana\u200b", allow_mixed_script=True)


def test_engine_actor_and_audit_filter_use_the_normal_form(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with pytest.raises(InvalidInput, match="mixes scripts"):
        open_engine(db, embedder=HashEmbedder(), actor="d" + CYRILLIC_A + "na")
    with open_engine(db, embedder=HashEmbedder(), actor="ｄａｎａ") as eng:
        assert eng.actor == "dana"
        eng.add_memory("written by dana", dedup=False)
        with eng.acting_as("ｂｏｂ"):
            eng.add_memory("written by bob", dedup=False)
        with pytest.raises(InvalidInput):
            eng.actor = "dana\u200b"
        assert {e.actor for e in eng.audit.log(actor="ｄａｎａ")} == {"dana"}  # finds everything Dana did
        assert eng.audit.log(actor="dana") and eng.audit.log(actor="bob")
        assert eng.audit.log(actor="d" + CYRILLIC_A + "na") == []  # and nothing that looks like her
        assert eng.audit.log(actor="dana\u200b") == []
    assert actor_filter(" ｄａｎａ ") == "dana"


def test_mixed_scripts_setting_is_checked() -> None:
    from engine.config import ConfigError, validate

    with pytest.raises(ConfigError, match="actor_mixed_scripts"):
        validate(Settings(actor_mixed_scripts="yes"))  # type: ignore[arg-type]
