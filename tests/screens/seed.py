"""A small, fixed memory database for console tests: the same rows every run (FixedClock,
HashEmbedder), so Pilot tests can assert on them and snapshots stay stable."""

from __future__ import annotations

from engine import FixedClock, HashEmbedder, open_engine
from engine.clock import DAY, parse_time

T0 = "2026-01-01T00:00:00Z"
HOUR = 3600.0


def seed(eng, curator: bool = True) -> dict:
    """Sessions with lineage, transcripts (tool calls, CJK), memories derived from messages."""
    t0 = parse_time(T0)
    ids: dict = {}
    eng.sessions.add(
        "s-deploy",
        agent="atlas",
        user="dana",
        source="cli",
        model="gpt-x",
        title="Migrate CI from Jenkins to GitHub Actions",
        started_at=t0 - 3 * DAY,
    )
    m = eng.sessions.add_messages(
        "s-deploy",
        [
            dict(role="user", content="Please move our CI from Jenkins to GitHub Actions.", at=t0 - 3 * DAY),
            dict(
                role="assistant",
                content="I will port the pipeline and keep the deploy gate.",
                at=t0 - 3 * DAY + 60,
            ),
            dict(
                role="tool",
                tool_name="shell",
                content="gh workflow list → ci.yml, deploy.yml",
                at=t0 - 3 * DAY + 120,
            ),
            dict(
                role="user",
                content="Remember: never deploy on Fridays, and rollbacks need a ticket.",
                at=t0 - 3 * DAY + 180,
            ),
        ],
    )
    ids["deploy_msgs"] = m
    eng.sessions.add(
        "s-deploy-2",
        agent="atlas",
        user="dana",
        source="cli",
        model="gpt-x",
        title="CI migration, part two",
        started_at=t0 - 2 * DAY,
        parent_session_id="s-deploy",
    )
    ids["deploy2_msgs"] = eng.sessions.add_messages(
        "s-deploy-2",
        [
            dict(role="user", content="Continue the CI migration; the cache step is slow.", at=t0 - 2 * DAY),
            dict(
                role="assistant", content="Added actions/cache keyed on the lockfile.", at=t0 - 2 * DAY + 90
            ),
        ],
    )
    eng.sessions.add(
        "s-trip",
        agent="scout",
        user="omar",
        source="web",
        model="gpt-x",
        title="大别山旅游资料",
        started_at=t0 - 1 * DAY,
    )
    ids["trip_msgs"] = eng.sessions.add_messages(
        "s-trip",
        [
            dict(role="user", content="帮我整理大别山的旅游资料，包括交通和住宿。", at=t0 - DAY),
            dict(role="assistant", content="大别山位于湖北、河南、安徽交界，主峰白马尖。", at=t0 - DAY + 30),
        ],
    )
    eng.sessions.add(
        "s-brief",
        agent="hermes",
        user="sam",
        source="cron",
        model="gpt-x",
        title="Pre-market brief",
        started_at=t0 - 5 * HOUR,
    )
    ids["brief_msgs"] = eng.sessions.add_messages(
        "s-brief",
        [
            dict(role="system", content="Scheduled pre-market brief", at=t0 - 5 * HOUR),
            dict(
                role="assistant",
                content="Crude inventories at 10:30 ET; watch energy names.",
                at=t0 - 5 * HOUR + 10,
            ),
        ],
    )
    mem = {}
    mem["fridays"] = eng.add_memory(
        "Never deploy on Fridays",
        kind="procedural",
        category="decision",
        agent="atlas",
        user="dana",
        importance=0.9,
        session_id="s-deploy",
        message_id=m[3],
    )
    mem["ticket"] = eng.add_memory(
        "Rollbacks need a ticket before they run",
        kind="procedural",
        category="decision",
        agent="atlas",
        user="dana",
        importance=0.7,
        session_id="s-deploy",
        message_id=m[3],
    )
    mem["actions"] = eng.add_memory(
        "CI runs on GitHub Actions; Jenkins is retired",
        kind="semantic",
        category="fact",
        agent="atlas",
        user="dana",
        importance=0.6,
        session_id="s-deploy",
        message_id=m[1],
    )
    mem["cache"] = eng.add_memory(
        "The CI cache step is keyed on the lockfile",
        kind="semantic",
        category="discovery",
        agent="atlas",
        user="dana",
        importance=0.4,
        session_id="s-deploy-2",
        message_id=ids["deploy2_msgs"][1],
    )
    mem["dark"] = eng.add_memory(
        "The user prefers dark mode in every editor",
        kind="semantic",
        category="preference",
        agent="atlas",
        user="dana",
        importance=0.5,
        tier="core",
    )
    mem["dabie"] = eng.add_memory(
        "大别山主峰是白马尖",
        kind="semantic",
        category="fact",
        agent="scout",
        user="omar",
        importance=0.5,
        session_id="s-trip",
        message_id=ids["trip_msgs"][1],
    )
    mem["crude"] = eng.add_memory(
        "Crude inventories are published Wednesdays at 10:30 ET",
        kind="semantic",
        category="fact",
        agent="hermes",
        user="sam",
        importance=0.6,
        session_id="s-brief",
        message_id=ids["brief_msgs"][1],
    )
    mem["old_deploy"] = eng.add_memory(
        "Deploys used to go through Jenkins job deploy-prod",
        kind="episodic",
        category="context",
        agent="atlas",
        user="dana",
        importance=0.2,
        tier="archived",
    )
    mem["sizing"] = eng.add_memory(
        "Position sizing is capped at 2% of the book per trade",
        kind="procedural",
        category="decision",
        agent="hermes",
        user="sam",
        importance=0.8,
    )
    # Curator material: a near-duplicate pair (merge) and a memory idle for 90 days (archive).
    mem["staging"] = eng.add_memory(
        "The staging database is refreshed every night from production",
        agent="atlas",
        user="dana",
        category="fact",
        dedup=False,
    )
    mem["staging2"] = eng.add_memory(
        "The staging database is refreshed every night from a production snapshot",
        agent="atlas",
        user="dana",
        category="fact",
        dedup=False,
    )
    mem["vpn"] = eng.add_memories(
        [
            dict(
                content="Old note: the VPN config lives in the wiki",
                agent="atlas",
                user="dana",
                category="context",
                created_at=t0 - 90 * DAY,
            )
        ]
    )[0]
    ids["mem"] = mem
    if curator:
        run = eng.curator.run()
        ids["proposals"] = {p.kind: p.id for p in run.proposals}
    return ids


def make_engine(path, *, embedder="hash", clock=None, actor="tester", seeded=True):
    """Open (and on first use seed) the test database. embedder="hash" → HashEmbedder()."""
    emb = HashEmbedder() if embedder == "hash" else embedder
    eng = open_engine(path, embedder=emb, clock=clock or FixedClock(T0), actor=actor)
    return eng


def seeded_engine(path, **kw):
    eng = make_engine(path, **kw)
    ids = seed(eng)
    return eng, ids
