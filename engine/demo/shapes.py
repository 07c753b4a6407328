"""The shapes of the demo content: a conversation's turns and what its agent learned."""

Turn = tuple[str, str, str | None]  # role, text, tool name
Learned = tuple[str, str, str, float]  # content, kind, category, importance
# agent, user, source, title, turns, what was learned from them
Conversation = tuple[str, str, str, str, list[Turn], list[Learned]]
