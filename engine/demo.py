"""The demo database (placeholder until the demo content lands)."""
from __future__ import annotations


def write_demo(eng) -> dict:
    sid = eng.add_session(agent="atlas", user="dana", source="cli", title="Editor preferences")
    eng.add_message(sid, "user", "I like dark mode in every editor, please remember that.")
    eng.add_memory("The user prefers dark mode in every editor", agent="atlas", user="dana",
                   category="preference", session_id=sid)
    return {"sessions": 1, "memories": 1}
