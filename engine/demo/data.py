"""Content for the demo database: four agents, their conversations and what they learned.

Plain data, no logic: engine/demo/build.py turns it into sessions, messages and memories. The
conversations live one module per group of agents (conversations_atlas, conversations_desk), the
standalone memories and episodes in facts; this module joins them in the demo's order.
"""

from engine.demo.conversations_atlas import ATLAS
from engine.demo.conversations_desk import TRADER_SCOUT_CONCIERGE
from engine.demo.facts import EPISODES, FACTS
from engine.demo.shapes import Conversation, Learned, Turn

__all__ = ["AGENTS", "CONVERSATIONS", "EPISODES", "FACTS", "Conversation", "Learned", "Turn"]

AGENTS = {
    "atlas": "coding assistant for the platform team",
    "hermes-trader": "trading desk assistant",
    "scout": "research agent",
    "concierge": "customer-support agent",
}

# (agent, user, source, title, turns [(role, text, tool)], memories [(content, kind, category, importance)])
CONVERSATIONS: list[Conversation] = ATLAS + TRADER_SCOUT_CONCIERGE
