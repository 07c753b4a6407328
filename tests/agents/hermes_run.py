"""Run by hermes-agent 0.19.0's own Python (a separate venv): load the installed memconsole
provider through Hermes' real loader and exercise every hook; print what happened as JSON.
Usage: python hermes_run.py HERMES_HOME (HERMES_HOME also set in the environment)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from agent.memory_manager import MemoryManager, build_memory_context_block, sanitize_context
from hermes_state import SessionDB
from plugins.memory import load_memory_provider

home = Path(sys.argv[1])
out: dict = {}
state = SessionDB(home / "state.db")
state.create_session("h-1", source="telegram", user_id="dana")

p = load_memory_provider("memconsole")
out["loaded"] = type(p).__module__ if p else None
out["available"] = p.is_available()
mm = MemoryManager()
mm.add_provider(p)
mm.initialize_all(
    "h-1",
    hermes_home=str(home),
    platform="telegram",
    agent_identity="default",
    agent_context="primary",
    user_id="dana",
)
out["tools"] = sorted(s["name"] for s in mm.get_all_tool_schemas())

# a turn: Hermes persists it first, then syncs the providers in the background
state.append_message("h-1", "user", "Which colour theme do I like?")
state.append_message(
    "h-1",
    "assistant",
    None,
    tool_calls=[{"id": "c1", "type": "function", "function": {"name": "recall", "arguments": "{}"}}],
)
state.append_message("h-1", "tool", "[]", tool_call_id="c1", tool_name="recall")
state.append_message("h-1", "assistant", "You like dark mode.")
t0 = time.perf_counter()
p.sync_turn("Which colour theme do I like?", "You like dark mode.", session_id="h-1")
out["sync_turn_ms"] = (time.perf_counter() - t0) * 1000
mm.on_memory_write("add", "user", "Dana prefers dark mode in every editor", metadata={"session_id": "h-1"})
mm.on_memory_write("add", "memory", "Staging deploys need a change ticket")
mm.on_memory_write(
    "replace",
    "memory",
    "Staging deploys need an approved change ticket",
    metadata={"old_text": "Staging deploys need a change ticket"},
)

out["remember"] = json.loads(mm.handle_tool_call("remember", {"content": "Dana's cat is called Miso"}))
out["bad"] = json.loads(mm.handle_tool_call("recall", {"query": "x", "k": "lots"}))
out["reject"] = json.loads(mm.handle_tool_call("reject", {"text": "Never deploy on Fridays"}))
p.flush()
out["prefetch"] = mm.prefetch_all("what theme does dana like for the editor")
out["prefetch_clean"] = sanitize_context(out["prefetch"]) == out["prefetch"]  # not pre-wrapped
out["fenced"] = build_memory_context_block(out["prefetch"])  # what Hermes injects
p.queue_prefetch("cat name", session_id="h-1")
p.flush()
out["queued_prefetch"] = p.prefetch("cat name", session_id="h-1")

msgs = [
    {"role": "user", "content": "Which colour theme do I like?"},
    {"role": "assistant", "content": "You like dark mode."},
]
out["pre_compress"] = mm.on_pre_compress(msgs)
state.end_session("h-1", "compression")
state.create_session("h-2", source="telegram", user_id="dana", parent_session_id="h-1")
state.append_message("h-2", "user", "Thanks!")
state.append_message("h-2", "assistant", "Any time.")
mm.on_session_switch("h-2", parent_session_id="h-1")
p.sync_turn("Thanks!", "Any time.", session_id="h-2")
mm.on_session_end(msgs)
p.flush()
out["failures"] = p.failures
out["last_error"] = p.last_error
mm.shutdown_all()
out["closed"] = p.eng is None
print(json.dumps(out))
