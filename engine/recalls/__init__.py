"""What agents asked: the recall log (log.py), replaying a logged recall against today's store
(replay.py), and the retrieval checks operators pin (checks.py)."""
