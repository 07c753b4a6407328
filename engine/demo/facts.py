"""The demo's standalone memories per agent and the episodic log lines build expands."""

# Demo prose: one line per message reads better than strings split for width.
# ruff: noqa: E501

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
