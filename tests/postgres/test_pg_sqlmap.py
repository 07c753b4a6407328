"""The services' SQL as psycopg takes it: parameters translated outside literals only."""

from __future__ import annotations

from engine.storage.postgres.sqlmap import translate


def test_positional_and_named_parameters():
    assert translate("SELECT * FROM m WHERE id = ? AND tier IN (?, ?)") == (
        "SELECT * FROM m WHERE id = %s AND tier IN (%s, %s)",
        False,
    )
    assert translate("UPDATE m SET s = :s WHERE at < :now") == (
        "UPDATE m SET s = %(s)s WHERE at < %(now)s",
        True,
    )


def test_literals_comments_casts_and_percent_are_left_alone():
    sql, named = translate(
        "SELECT '?', 'it''s :x %', \"a?\", x::text, 5 % 2 FROM t -- why? 100%\n WHERE a = ?"
    )
    assert sql == "SELECT '?', 'it''s :x %%', \"a?\", x::text, 5 %% 2 FROM t -- why? 100%%\n WHERE a = %s"
    assert not named


def test_sqlite_isms_with_silent_differences_are_bridged():
    assert translate("SELECT user, m.user FROM memories m WHERE content LIKE ? ESCAPE '\\'")[0] == (
        'SELECT "user", m."user" FROM memories m WHERE content ILIKE %s ESCAPE \'\\\''
    )
    assert translate("SELECT username, user_id FROM t")[0] == "SELECT username, user_id FROM t"
