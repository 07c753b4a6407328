"""The small HTML pages in front of the console: sign in, sign in with a one-time link, signed out.
Every value placed in a page is HTML-escaped."""

from __future__ import annotations

from html import escape

STYLE = """
body { background: #0c181f; color: #e6edf3; font-family: menlo, monospace; display: flex;
       justify-content: center; align-items: center; min-height: 90vh; }
form, .box { background: #12232d; padding: 2em 3em; border: 1px solid #2d4656; min-width: 22em; }
h1 { font-size: 1.2em; margin-top: 0; }
label { display: block; margin-top: 1em; }
input[type=text], input[type=password] { width: 100%; padding: .4em; background: #0c181f;
       color: #e6edf3; border: 1px solid #2d4656; font-family: inherit; }
button { margin-top: 1.5em; padding: .5em 2em; background: #5e0ba7; color: white; border: none;
       font-family: inherit; }
.error { color: #ff7b72; margin-top: 1em; }
.hint { color: #8b949e; font-size: .85em; margin-top: 1em; }
"""


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>{body}</body></html>"
    )


def login_page(csrf: str, db_label: str, error: str = "", name: str = "") -> str:
    err = f"<div class='error' id='error'>{escape(error)}</div>" if error else ""
    return _page(
        "memconsole: sign in",
        "<form method='post' action='/login' id='login'>"
        f"<h1>memconsole</h1><div class='hint'>{escape(db_label)}</div>"
        f"<input type='hidden' name='csrf' value='{escape(csrf)}'>"
        "<label>Operator <input type='text' name='name' id='name' autocomplete='username' "
        f"autofocus value='{escape(name)}'></label>"
        "<label>Password <input type='password' name='password' id='password' "
        "autocomplete='current-password'></label>"
        f"<button type='submit' id='sign-in'>Sign in</button>{err}"
        "<div class='hint'>Each operator's console runs as that operator; every change it makes "
        "is audited under their name.</div></form>",
    )


def link_page(csrf: str, token: str) -> str:
    return _page(
        "memconsole: one-time sign in",
        "<form method='post' action='/login/link' id='login'>"
        "<h1>memconsole: one-time sign in</h1>"
        f"<input type='hidden' name='csrf' value='{escape(csrf)}'>"
        f"<input type='hidden' name='token' value='{escape(token)}'>"
        "<div class='hint'>This link works once; set a password with "
        "<code>memconsole serve-user passwd</code> for later sign-ins.</div>"
        "<button type='submit' id='sign-in'>Sign in</button></form>",
    )


def message_page(title: str, text: str) -> str:
    return _page(
        f"memconsole: {title}",
        f"<div class='box'><h1>{escape(title)}</h1><p>{escape(text)}</p>"
        "<p><a href='/login' style='color:#79c0ff'>Sign in</a></p></div>",
    )
