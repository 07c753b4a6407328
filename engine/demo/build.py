"""`memconsole demo`: a realistic demo database — four agents, their sessions and transcripts,
hundreds of memories across kinds, categories, tiers and ages. Deterministic (seeded), and dated
relative to the engine's clock so decay curves have shape whenever it is written."""

from __future__ import annotations

import random
from typing import Any

from engine.clock import DAY
from engine.demo.data import AGENTS, CONVERSATIONS, EPISODES, FACTS


def write_demo(eng, seed: int = 7) -> dict:
    rng = random.Random(seed)
    now = eng.clock.now()
    counts: dict[str, Any] = {"agents": len(AGENTS), "sessions": 0, "messages": 0, "memories": 0}
    items: list[dict] = []

    # Conversations, spread over the last 60 days, each with the memories derived from it.
    for n, (agent, user, source, title, turns, mems) in enumerate(CONVERSATIONS):
        start = now - rng.uniform(2, 60) * DAY
        sid = eng.sessions.add(
            f"demo-{n:03d}",
            agent=agent,
            user=user,
            source=source,
            title=title,
            model="gpt-4.1" if agent != "scout" else "claude-sonnet-4",
            started_at=start,
            ended_at=start + 60 * len(turns),
            metadata={"demo": True},
        )
        msgs = [
            {"role": role, "content": text, "tool_name": tool, "at": start + 60 * i}
            for i, (role, text, tool) in enumerate(turns)
        ]
        ids = eng.sessions.add_messages(sid, msgs)
        counts["sessions"] += 1
        counts["messages"] += len(ids)
        user_turn = next((mid for mid, m in zip(ids, msgs, strict=True) if m["role"] == "user"), ids[0])
        for content, kind, category, importance in mems:
            items.append(
                dict(
                    content=content,
                    kind=kind,
                    category=category,
                    agent=agent,
                    user=user,
                    importance=importance,
                    session_id=sid,
                    message_id=user_turn,
                    created_at=start + 300,
                    tier="core" if importance >= 0.95 else "active",
                    pinned=category == "rejected" and importance >= 0.95,
                )
            )
        # A continuation session for longer conversations (lineage: compression).
        if len(turns) >= 5:
            child = eng.sessions.add(
                f"demo-{n:03d}-cont",
                agent=agent,
                user=user,
                source=source,
                title=f"{title} (continued)",
                started_at=start + 3600,
                ended_at=start + 4200,
                parent_session_id=sid,
                metadata={"demo": True, "parent_end_reason": "compression"},
            )
            eng.sessions.add_messages(
                child,
                [
                    {
                        "role": "system",
                        "content": f"Continuing after context compression: {title}.",
                        "at": start + 3600,
                    },
                    {"role": "user", "content": "Thanks, that's all for now.", "at": start + 3660},
                    {
                        "role": "assistant",
                        "content": "Great. I've saved what we decided.",
                        "at": start + 3720,
                    },
                ],
            )
            counts["sessions"] += 1
            counts["messages"] += 3

    # Daily scheduled briefs: many small cron sessions.
    for d in range(14):
        start = now - (d + 1) * DAY + 7.5 * 3600 % DAY
        sid = eng.sessions.add(
            f"demo-brief-{d:02d}",
            agent="hermes-trader",
            user="sam",
            source="cron",
            title="Pre-market brief",
            started_at=start,
            ended_at=start + 30,
            metadata={"demo": True},
        )
        eng.sessions.add_messages(
            sid,
            [
                {"role": "system", "content": "Scheduled pre-market brief", "at": start},
                {
                    "role": "assistant",
                    "content": rng.choice(
                        [
                            "Quiet calendar today; normal size.",
                            "CPI at 8:30 ET: consider sitting out until 9:00.",
                            "Jobs report at 8:30 ET; expect a volatile open.",
                            "FOMC minutes at 2pm: flatten by 1:55pm.",
                            "Crude inventories at 10:30 ET.",
                        ]
                    ),
                    "at": start + 20,
                },
            ],
        )
        counts["sessions"] += 1
        counts["messages"] += 2

    for agent, facts in FACTS.items():
        for content, kind, category in facts:
            age = rng.uniform(0, 120)
            items.append(
                dict(
                    content=content,
                    kind=kind,
                    category=category,
                    agent=agent,
                    importance=round(rng.uniform(0.3, 0.9), 2),
                    created_at=now - age * DAY,
                    tier="archived" if age > 100 and category not in ("rejected", "decision") else "active",
                )
            )

    for agent, template, subjects, outcomes in EPISODES:
        for s in subjects:
            for o in outcomes:
                age = rng.uniform(0, 90)
                text = template.format(svc=s, ver=f"v2.{rng.randint(0, 9)}.{rng.randint(0, 20)}", outcome=o)
                items.append(
                    dict(
                        content=text,
                        kind="episodic",
                        category="context",
                        agent=agent,
                        importance=round(rng.uniform(0.1, 0.5), 2),
                        created_at=now - age * DAY,
                        tier="archived" if age > 60 else "active",
                    )
                )

    # Near-twins the curator should notice (same agent, different wording).
    twins = [
        ("atlas", "The user prefers dark mode in all editors"),
        ("atlas", "Integration tests must run against a real Postgres service container and never mocks"),
        ("hermes-trader", "Never hold a position overnight without a stop loss"),
        ("concierge", "Refunds above $100 need a supervisor's approval"),
    ]
    for agent, text in twins:
        items.append(
            dict(
                content=text,
                kind="semantic",
                category="learning",
                agent=agent,
                importance=0.5,
                created_at=now - rng.uniform(1, 20) * DAY,
            )
        )

    results = eng.memories.add_many_ex(items, dedup=False, reason="demo")
    counts["memories"] = len(results)
    # lifecycle demo (issue 3) and curator/forget demo (issue 4) are added below.
    from engine.demo.lifecycle import write_lifecycle_demo

    counts["lifecycle"] = write_lifecycle_demo(eng)
    from engine.demo.curator import write_curator_demo

    counts["curator"] = write_curator_demo(eng)
    return counts
