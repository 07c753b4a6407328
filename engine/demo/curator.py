"""The demo's curator queue and forget cases: pending proposals of every kind, one applied and one
undone, an open and a verified forget request. Called by engine/demo/build.py after the other parts."""

from __future__ import annotations

from engine.clock import DAY

MERGE_PENDING = (
    "Staging deploys need the VPN connected before the pipeline starts",
    "Staging deploys need the VPN connected before the pipeline starts.",
)
MERGE_APPLIED = (
    "The on-call rotation hands over every Monday at 09:00 UTC",
    "The on-call rotation hands over every Monday at 09:00 UTC.",
)
IDLE = (
    "The old build server was called hopper-02 before the migration",
    "Team lunch used to be ordered from the Thai place on Fridays",
)
LEARNING = "Run the database migrations before the smoke tests, never after"
RULES = (
    "Never deploy to production on a Friday afternoon without a rollback plan",
    "Never deploy to production on a Friday afternoon unless the on-call agrees",
)
DORMANT = "Prefer tabs over spaces in the legacy billing repository"
PHONE = "Dana's previous phone number was 555-0142 (no longer in use)"
BADGE = "Temporary note: the contractor's badge code for the east door is 4417"


def write_curator_demo(eng, agent: str = "atlas", user: str = "dana") -> dict:
    now = eng.clock.now()
    if eng.embedder.state != "none" and eng.wait_for_embedder(120):
        eng.memories.backfill_vectors()  # merges are found from stored vectors
    ids = eng.add_memories(
        [
            {"content": t, "agent": agent, "user": user, "category": "context"}
            for t in MERGE_PENDING + MERGE_APPLIED
        ]
        + [{"content": t, "agent": agent, "user": user, "created_at": now - 45 * DAY} for t in IDLE],
        dedup=False,
    )
    learning = eng.add_memory(
        LEARNING, agent=agent, user=user, category="learning", importance=0.8, dedup=False
    )
    for _ in range(3):
        eng.memories.reinforce(learning, reason="demo: proved useful again")
    _rules(eng, agent, now)
    run = eng.curator.run()
    by_members = {tuple(p.members): p for p in run.proposals}
    applied = by_members.get((ids[2], ids[3]))
    if applied:
        eng.curator.approve(applied.id, reason="demo: the same fact twice")
    undone = by_members.get((ids[5],))
    if undone:
        eng.curator.approve(undone.id, reason="demo: idle for weeks")
        eng.curator.undo(undone.id, reason="demo: still referenced by the lunch bot")
    phone = eng.add_memory(PHONE, agent=agent, user=user, category="fact", dedup=False)
    verified = eng.forget.run("query", "555-0142", "demo: the user asked us to delete their old number")
    badge = eng.add_memory(BADGE, agent=agent, user=user, dedup=False)
    opened = eng.forget.open("memory", [badge], "demo: contractor left; remove by the deadline")
    kinds = sorted({p.kind for p in eng.curator.list(status="pending")})
    return {
        "curator_run": run.id,
        "pending_kinds": kinds,
        "pending_proposals": len(eng.curator.list(status="pending")),
        "applied": 1 if applied else 0,
        "undone": 1 if undone else 0,
        "forget_verified": verified.request_id if verified.status == "verified" else None,
        "forget_open": opened.id,
        "forgotten_memory": phone,
    }


def _rules(eng, agent: str, now: float) -> None:
    """Two near-duplicate rules and a dormant one, through the rules service (which records
    their history and audit rows)."""
    for text, score in ((RULES[0], 7.0), (RULES[1], 6.0)):
        eng.rules.add(text, score=score, agent=agent)
    eng.rules.add(DORMANT, score=3.5, agent=agent, created_at=now - 90 * DAY)  # unreinforced for 90 days
