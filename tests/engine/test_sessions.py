"""Sessions, transcripts, lineage, and message search in both tokenizers."""

import pytest

from engine import InvalidInput, NotFound

pytestmark = pytest.mark.backends


@pytest.fixture
def convo(eng):
    p = eng.sessions.add("s1", agent="atlas", user="dana", source="cli", title="Editor setup")
    eng.sessions.add_messages(
        p,
        [
            {"role": "user", "content": "Please remember I like dark themes"},
            {"role": "tool", "content": "settings.json updated", "tool_name": "edit_file"},
            {"role": "assistant", "content": "Remembered: dark themes running everywhere"},
        ],
    )
    c = eng.sessions.add("s2", agent="atlas", user="dana", title="Continued", parent_session_id="s1")
    eng.sessions.add_message(c, "user", "帮我找一些大别山的旅游资料")
    eng.sessions.add_message(c, "user", "山很高")
    return eng


def test_transcript_and_lineage(convo):
    d = convo.sessions.get("s1")
    assert [m.role for m in d.messages] == ["user", "tool", "assistant"]
    assert d.messages[1].tool_name == "edit_file"
    assert [c.id for c in d.children] == ["s2"] and d.parent is None
    assert convo.sessions.get("s2").parent.id == "s1"
    assert convo.sessions.list(agent="atlas")[0].message_count in (2, 3)
    with pytest.raises(NotFound):
        convo.sessions.get("nope")


def test_word_search_uses_stemming(convo):
    hits = convo.sessions.search_messages("run")  # porter: "running" matches "run"
    assert [h.message.session_id for h in hits] == ["s1"]


def test_cjk_goes_to_trigram_and_short_cjk_to_like(convo):
    assert [h.message.content for h in convo.sessions.search_messages("大别山")] == [
        "帮我找一些大别山的旅游资料"
    ]
    short = {h.message.content for h in convo.sessions.search_messages("山")}
    assert short == {"帮我找一些大别山的旅游资料", "山很高"}


@pytest.mark.parametrize("q", ['"unbalanced', "AND", "NOT", "(x", "*", "a\x00b", "x\ud800", "", "   "])
def test_message_search_never_raises(convo, q):
    assert isinstance(convo.sessions.search_messages(q), list)


def test_messages_need_a_session_and_a_known_role(eng):
    with pytest.raises(NotFound):
        eng.sessions.add_message("ghost", "user", "hello")
    eng.sessions.add("s", title="t")
    with pytest.raises(InvalidInput):
        eng.sessions.add_message("s", "robot", "hello")
    with pytest.raises(InvalidInput):
        eng.sessions.add("s")
