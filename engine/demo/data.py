"""Content for the demo database: four agents, their conversations and what they learned.

Plain data, no logic: engine/demo/build.py turns it into sessions, messages and memories.
"""
# Demo prose: one line per message reads better than strings split for width.
# ruff: noqa: E501

AGENTS = {
    "atlas": "coding assistant for the platform team",
    "hermes-trader": "trading desk assistant",
    "scout": "research agent",
    "concierge": "customer-support agent",
}

# (agent, user, source, title, turns [(role, text, tool)], memories [(content, kind, category, importance)])
Turn = tuple[str, str, str | None]  # role, text, tool name
Learned = tuple[str, str, str, float]  # content, kind, category, importance
# agent, user, source, title, turns, what was learned from them
CONVERSATIONS: list[tuple[str, str, str, str, list[Turn], list[Learned]]] = [
    (
        "atlas",
        "dana",
        "cli",
        "Set up the editor and terminal",
        [
            ("user", "I like dark mode in every editor I use, and please keep the font at 14pt.", None),
            (
                "assistant",
                "Noted: dark theme everywhere and a 14pt font. Want me to apply it to VS Code and the terminal now?",
                None,
            ),
            (
                "tool",
                "Updated settings.json: workbench.colorTheme = 'One Dark Pro', editor.fontSize = 14",
                "edit_file",
            ),
            ("user", "Yes, and use JetBrains Mono.", None),
            ("assistant", "Done. VS Code and kitty now use JetBrains Mono 14pt on One Dark Pro.", None),
        ],
        [
            ("The user prefers dark mode in every editor", "semantic", "preference", 0.8),
            ("Dana's editor font is JetBrains Mono at 14pt", "semantic", "preference", 0.6),
        ],
    ),
    (
        "atlas",
        "dana",
        "cli",
        "Migrate CI from Jenkins to GitHub Actions",
        [
            ("user", "We're dropping Jenkins. Move the build and test jobs to GitHub Actions.", None),
            (
                "assistant",
                "I'll port the Jenkinsfile stages: lint, unit tests, integration tests, image build.",
                None,
            ),
            ("tool", "Created .github/workflows/ci.yml with 4 jobs; matrix python 3.11/3.12", "write_file"),
            ("user", "Integration tests need the Postgres service container, don't mock it.", None),
            (
                "assistant",
                "Added a postgres:16 service container with a health check; integration tests now run against it.",
                None,
            ),
            ("user", "Good. We decided: no more Jenkins after March 31.", None),
        ],
        [
            (
                "Decision: Jenkins is retired after March 31; CI runs on GitHub Actions",
                "semantic",
                "decision",
                0.9,
            ),
            (
                "Integration tests must run against a real Postgres service container, never mocks",
                "procedural",
                "learning",
                0.8,
            ),
            (
                "CI workflow lives in .github/workflows/ci.yml with lint, unit, integration and image jobs",
                "semantic",
                "fact",
                0.5,
            ),
        ],
    ),
    (
        "atlas",
        "dana",
        "cli",
        "Flaky integration test in payments",
        [
            ("user", "test_refund_idempotency fails one run in five. Find out why.", None),
            (
                "tool",
                "pytest -k refund_idempotency --count 50: 9 failures, all with 'duplicate key value violates unique constraint'",
                "run_tests",
            ),
            (
                "assistant",
                "The test reuses a fixed idempotency key across parallel workers. With pytest-xdist two workers collide.",
                None,
            ),
            ("user", "Fix it by generating the key per test.", None),
            ("assistant", "Switched to uuid4 keys per test; 200 consecutive runs pass.", None),
        ],
        [
            (
                "Flaky refund test was caused by a shared idempotency key under pytest-xdist; keys are now per-test uuid4",
                "episodic",
                "discovery",
                0.6,
            ),
            ("Generate idempotency keys per test when tests run in parallel", "procedural", "learning", 0.7),
        ],
    ),
    (
        "atlas",
        "lee",
        "slack",
        "Release checklist for v2.4",
        [
            ("user", "What's left before we tag v2.4?", None),
            (
                "assistant",
                "Changelog, the migration dry-run on staging, and sign-off from the payments team.",
                None,
            ),
            ("user", "Do the staging dry-run now.", None),
            (
                "tool",
                "alembic upgrade head --sql against staging snapshot: 3 migrations, no locks over 2s",
                "run_command",
            ),
            (
                "assistant",
                "Dry-run clean: three migrations, longest lock 1.4 s. Remaining: changelog and payments sign-off.",
                None,
            ),
        ],
        [
            (
                "Task: v2.4 release still needs the changelog and payments team sign-off",
                "episodic",
                "task",
                0.7,
            ),
            (
                "Always dry-run database migrations against a staging snapshot before tagging a release",
                "procedural",
                "learning",
                0.8,
            ),
        ],
    ),
    (
        "atlas",
        "lee",
        "slack",
        "Proposal to adopt a monorepo",
        [
            ("user", "Should we move all services into one monorepo with Bazel?", None),
            (
                "assistant",
                "It would unify builds but Bazel migration is months of work for a team of five.",
                None,
            ),
            ("user", "Agreed, the team said no. Don't bring Bazel up again.", None),
        ],
        [
            (
                "The team rejected moving to a Bazel monorepo; do not propose it again",
                "semantic",
                "rejected",
                0.9,
            ),
        ],
    ),
    (
        "atlas",
        "dana",
        "cli",
        "Speed up the Docker build",
        [
            ("user", "The image build takes 11 minutes. Can you get it under 4?", None),
            (
                "tool",
                "docker buildx build --progress=plain: 7m40s spent in pip install (no cache mount)",
                "run_command",
            ),
            (
                "assistant",
                "Pip reinstalls everything each build. I'll add a cache mount and order layers so requirements come first.",
                None,
            ),
            (
                "tool",
                "Rebuilt with --mount=type=cache,target=/root/.cache/pip: 3m12s cold, 48s warm",
                "run_command",
            ),
            ("assistant", "Now 3m12s cold and 48s warm.", None),
        ],
        [
            (
                "Docker builds use a pip cache mount and copy requirements before source; cold build 3m12s",
                "semantic",
                "discovery",
                0.5,
            ),
        ],
    ),
    (
        "hermes-trader",
        "sam",
        "telegram",
        "Overnight risk on the ES position",
        [
            ("user", "I'm holding 3 ES contracts into the weekend. Thoughts?", None),
            (
                "assistant",
                "There's no stop on the position. Weekend gap risk on 3 contracts is about $9k at a 1% move.",
                None,
            ),
            ("user", "Never let me hold overnight without a stop loss again. That's a hard rule.", None),
            ("assistant", "Understood. I'll refuse to confirm any overnight hold without a stop.", None),
        ],
        [
            ("Never hold overnight without a stop loss", "semantic", "rejected", 1.0),
            ("Sam holds ES futures; typical size is 2 to 3 contracts", "semantic", "fact", 0.5),
        ],
    ),
    (
        "hermes-trader",
        "sam",
        "telegram",
        "FOMC day plan",
        [
            ("user", "FOMC minutes at 2pm. What's the plan?", None),
            ("assistant", "Flatten before 1:55pm, no new entries until 2:30pm, widen alerts.", None),
            ("user", "Right. And no trading during the minutes, I got burned last time.", None),
        ],
        [
            (
                "Do not trade during FOMC minutes; flatten five minutes before the release",
                "semantic",
                "rejected",
                0.95,
            ),
            ("FOMC days: no new entries until 30 minutes after the release", "procedural", "learning", 0.8),
        ],
    ),
    (
        "hermes-trader",
        "sam",
        "telegram",
        "Weekly P&L review",
        [
            ("user", "How did the week go?", None),
            (
                "tool",
                "pnl_report(week=47): +$4,120 realised, 11 trades, 7 winners, max drawdown $1,850",
                "pnl_report",
            ),
            (
                "assistant",
                "Up $4,120 on 11 trades, 7 winners. Worst drawdown $1,850 on Wednesday's CPI reaction.",
                None,
            ),
            ("user", "Note that CPI mornings are where I lose money.", None),
        ],
        [
            ("Week 47: +$4,120 realised over 11 trades, max drawdown $1,850", "episodic", "context", 0.4),
            ("Sam's largest drawdowns happen on CPI release mornings", "semantic", "discovery", 0.7),
        ],
    ),
    (
        "hermes-trader",
        "sam",
        "cron",
        "Pre-market brief",
        [
            ("system", "Scheduled pre-market brief", None),
            ("tool", "fetch_calendar(): CPI 08:30 ET; crude inventories 10:30 ET", "fetch_calendar"),
            (
                "assistant",
                "CPI at 8:30 ET and crude inventories at 10:30. Per your notes, CPI mornings are risky: consider sitting out until 9:00.",
                None,
            ),
        ],
        [
            ("Pre-market brief runs at 07:30 ET on trading days", "procedural", "fact", 0.4),
        ],
    ),
    (
        "hermes-trader",
        "sam",
        "telegram",
        "Position sizing rule",
        [
            ("user", "From now on risk at most 1% of the account per trade.", None),
            (
                "assistant",
                "Got it: max risk 1% of account equity per trade, I'll size stops accordingly.",
                None,
            ),
        ],
        [
            ("Risk at most 1% of account equity on any single trade", "semantic", "decision", 0.9),
        ],
    ),
    (
        "scout",
        "priya",
        "web",
        "Literature scan: retrieval-augmented memory",
        [
            ("user", "Summarise recent work on long-term memory for LLM agents.", None),
            ("tool", "search_papers('long-term conversational memory agents'): 23 results", "search_papers"),
            (
                "assistant",
                "Three threads: episodic stores with reflection (Generative Agents), hierarchical paging (MemGPT), and benchmark work like LoCoMo showing long-range recall is still weak.",
                None,
            ),
            ("user", "Keep LoCoMo in mind as our evaluation set.", None),
        ],
        [
            (
                "LoCoMo is the team's evaluation set for long-term conversational recall",
                "semantic",
                "decision",
                0.8,
            ),
            (
                "MemGPT pages memory hierarchically; Generative Agents use reflection over an episodic stream",
                "semantic",
                "fact",
                0.5,
            ),
        ],
    ),
    (
        "scout",
        "priya",
        "web",
        "Compare vector databases",
        [
            ("user", "Compare pgvector, sqlite-vec and Qdrant for a 1M-vector workload.", None),
            (
                "assistant",
                "pgvector with HNSW is the safe server choice; sqlite-vec is brute force but embeds in one file; Qdrant is fastest but another service to run.",
                None,
            ),
            ("user", "We'll stay embedded for now. SQLite it is.", None),
        ],
        [
            (
                "Decision: keep agent memory embedded in SQLite with sqlite-vec for now",
                "semantic",
                "decision",
                0.8,
            ),
            (
                "sqlite-vec does brute-force KNN; pgvector HNSW is the fallback for server deployments",
                "semantic",
                "discovery",
                0.6,
            ),
        ],
    ),
    (
        "scout",
        "priya",
        "web",
        "Competitor pricing research",
        [
            ("user", "What do the memory-layer vendors charge?", None),
            ("tool", "browse(pricing pages): 4 vendors", "browse"),
            (
                "assistant",
                "Mostly usage-based: per memory operation or per stored memory, with free tiers around 10k memories.",
                None,
            ),
        ],
        [
            (
                "Memory-layer vendors price per operation or per stored memory, free tiers near 10k memories",
                "episodic",
                "context",
                0.4,
            ),
        ],
    ),
    (
        "scout",
        "omar",
        "web",
        "大别山旅游资料",
        [
            ("user", "帮我找一些大别山的旅游资料", None),
            ("assistant", "大别山位于湖北、河南、安徽三省交界，主峰白马尖海拔1777米，秋季红叶最有名。", None),
            ("user", "记住我喜欢秋天去爬山。", None),
        ],
        [
            ("用户喜欢秋天去大别山爬山", "semantic", "preference", 0.6),
        ],
    ),
    (
        "concierge",
        "guest-4411",
        "web",
        "Refund for a double charge",
        [
            ("user", "I was charged twice for my March subscription.", None),
            ("tool", "billing.lookup(customer=4411): two charges of $29 on 2026-03-01", "billing_lookup"),
            (
                "assistant",
                "I see two $29 charges on March 1st. I've refunded the duplicate; it will show in 3–5 business days.",
                None,
            ),
            ("tool", "billing.refund(charge=ch_8812, amount=29.00): ok", "billing_refund"),
        ],
        [
            (
                "Duplicate charges are refunded immediately without escalation when under $100",
                "procedural",
                "learning",
                0.7,
            ),
            ("Customer 4411 was double-charged on March 1 and refunded", "episodic", "context", 0.3),
        ],
    ),
    (
        "concierge",
        "guest-2087",
        "web",
        "Cancel and export data",
        [
            ("user", "Cancel my account and send me all my data.", None),
            (
                "assistant",
                "I've started the export; you'll get a download link within 24 hours, then the account closes.",
                None,
            ),
            ("tool", "privacy.export(customer=2087): job exp_551 queued", "privacy_export"),
        ],
        [
            (
                "Account cancellation starts a data export first; the account closes after the link is sent",
                "procedural",
                "learning",
                0.7,
            ),
        ],
    ),
    (
        "concierge",
        "guest-1290",
        "email",
        "Shipping delay complaint",
        [
            ("user", "My order is two weeks late. This is ridiculous.", None),
            (
                "assistant",
                "I'm sorry. The carrier shows it stuck at the Memphis hub; I've reshipped with express at no cost.",
                None,
            ),
            ("user", "Don't offer me store credit, I want it shipped.", None),
        ],
        [
            ("Customer 1290 does not want store credit as compensation", "semantic", "preference", 0.5),
            (
                "Orders stuck at a carrier hub over 7 days are reshipped express at no cost",
                "procedural",
                "decision",
                0.7,
            ),
        ],
    ),
]

# Standalone memories per agent: (content, kind, category)
FACTS = {
    "atlas": [
        ("Production runs on Kubernetes 1.29 in eu-west-1", "semantic", "fact"),
        (
            "The staging database is refreshed from a masked production snapshot every Sunday",
            "semantic",
            "fact",
        ),
        ("Use ruff for linting and formatting; black was removed in January", "semantic", "decision"),
        (
            "Feature flags live in LaunchDarkly; never hard-code a flag default to on",
            "procedural",
            "learning",
        ),
        (
            "Payments service owners are the payments team; get their review for schema changes",
            "semantic",
            "fact",
        ),
        ("Rotate the deploy key every 90 days", "procedural", "task"),
        ("Lee prefers short pull requests under 400 lines", "semantic", "preference"),
        ("The API gateway times out requests after 30 seconds", "semantic", "fact"),
        ("Logging goes to Loki; traces to Tempo", "semantic", "fact"),
        ("Pin Python dependencies with uv lock files", "semantic", "decision"),
        ("Onboarding doc is in docs/onboarding.md and is out of date", "semantic", "discovery"),
        ("Never run database migrations during business hours", "procedural", "rejected"),
        ("Nightly backups are verified by restoring into a scratch instance", "procedural", "fact"),
        ("Dana works in Berlin (CET) and prefers async updates", "semantic", "preference"),
        ("The search service uses OpenSearch 2.11", "semantic", "fact"),
        ("Rate limits: 600 requests per minute per API token", "semantic", "fact"),
        ("Cron jobs are defined in infra/cron.yaml, not crontab", "semantic", "fact"),
        ("Type-check with mypy in strict mode for new modules", "procedural", "decision"),
    ],
    "hermes-trader": [
        ("Sam trades ES and NQ futures, rarely equities", "semantic", "fact"),
        ("Broker is Interactive Brokers; data feed from CME", "semantic", "fact"),
        ("Trading hours for Sam: 9:30 to 11:30 ET only", "semantic", "preference"),
        ("Do not average down into a losing position", "semantic", "rejected"),
        ("Daily loss limit is $2,500; stop trading for the day when hit", "semantic", "decision"),
        ("Journal every trade with entry reason and exit reason", "procedural", "task"),
        ("Sam dislikes alerts after 8pm", "semantic", "preference"),
        ("Earnings season increases NQ overnight gaps", "semantic", "discovery"),
        ("VIX above 25 means halve position size", "procedural", "learning"),
        ("Quarterly roll for ES happens 8 days before expiry", "semantic", "fact"),
        ("Tax lots are reported to the accountant every quarter", "procedural", "task"),
        ("Stop orders go in as stop-limit with 2 ticks of slippage", "procedural", "decision"),
    ],
    "scout": [
        ("Priya wants summaries under 300 words with sources", "semantic", "preference"),
        ("Cite arXiv IDs, not blog posts, when a paper exists", "procedural", "learning"),
        ("Semantic Scholar API is the preferred paper search", "semantic", "fact"),
        ("RRF with k=60 is the default fusion in most hybrid search systems", "semantic", "discovery"),
        ("BM25 beats small dense models on keyword-heavy questions", "semantic", "discovery"),
        ("Omar reads Chinese sources; answer him in Chinese", "semantic", "preference"),
        ("Do not paywall-bypass articles", "semantic", "rejected"),
        ("Weekly digest goes out Friday at noon", "procedural", "task"),
        ("MiniLM-L6 encodes about 450 sentences per second on two CPU cores", "semantic", "fact"),
        ("Cross-encoders improve precision at the top but cost 50x the latency", "semantic", "learning"),
    ],
    "concierge": [
        ("Support hours are 8am to 8pm CET on weekdays", "semantic", "fact"),
        ("Refunds over $100 need a supervisor's approval", "procedural", "decision"),
        ("Never promise delivery dates the carrier has not confirmed", "procedural", "rejected"),
        ("Tone: apologise once, then solve; no scripted empathy", "semantic", "learning"),
        ("Escalate legal threats to the legal queue within one hour", "procedural", "task"),
        ("GDPR export requests must complete within 30 days", "semantic", "fact"),
        ("Customers on the Pro plan get phone support", "semantic", "fact"),
        ("Discount codes cannot be applied retroactively", "semantic", "fact"),
        ("Carrier delays at the Memphis hub spiked in March", "episodic", "discovery"),
        ("Use the customer's first name once, at the start", "semantic", "preference"),
    ],
}

# Episodic log lines, expanded with dates and services into many memories.
EPISODES = [
    (
        "atlas",
        "Deploy of {svc} {ver} to production {outcome}",
        ["api", "billing", "search", "worker", "gateway"],
        [
            "succeeded",
            "rolled back after a 5xx spike",
            "succeeded after one retry",
            "was paused for a migration lock",
        ],
    ),
    (
        "atlas",
        "On-call page for {svc}: {outcome}",
        ["api", "billing", "search", "queue"],
        [
            "disk filled by debug logs",
            "certificate expired",
            "connection pool exhausted",
            "false alarm from a flapping probe",
        ],
    ),
    (
        "hermes-trader",
        "Trade log {svc}: {outcome}",
        ["ES", "NQ", "CL"],
        [
            "long at the open, stopped out for -8 ticks",
            "short after CPI, +14 ticks",
            "scratch trade, flat",
            "long breakout, +22 ticks",
        ],
    ),
    (
        "concierge",
        "Ticket about {svc}: {outcome}",
        ["billing", "shipping", "login", "export"],
        ["resolved in one reply", "escalated to tier 2", "refund issued", "customer did not reply"],
    ),
    (
        "scout",
        "Reading note on {svc}: {outcome}",
        ["ColBERT", "HNSW", "BM25F", "SPLADE"],
        ["strong on exact terms", "memory hungry at scale", "needs tuning per corpus", "worth a prototype"],
    ),
    (
        "atlas",
        "Code review of the {svc} change: {outcome}",
        ["auth", "billing", "search", "scheduler", "exporter"],
        [
            "approved with two nits",
            "blocked on missing tests",
            "asked to split into smaller PRs",
            "approved after a benchmark",
        ],
    ),
    (
        "concierge",
        "Chat with a {svc} customer: {outcome}",
        ["Pro plan", "Free plan", "Team plan", "Enterprise"],
        [
            "asked for an invoice copy",
            "wanted to change the billing email",
            "reported a login loop on Safari",
            "asked about data retention",
        ],
    ),
    (
        "scout",
        "Benchmark run of {svc}: {outcome}",
        ["hybrid search", "dense retrieval", "keyword search", "reranking"],
        [
            "R@10 improved by 4 points",
            "latency doubled",
            "no change within noise",
            "regressed on temporal questions",
        ],
    ),
    (
        "hermes-trader",
        "Weekly review {svc}: {outcome}",
        ["week 38", "week 40", "week 42", "week 44", "week 46"],
        [
            "green week, followed the plan",
            "red week, broke the daily loss limit once",
            "flat, too few setups",
            "green week, best day was a CPI fade",
        ],
    ),
]
