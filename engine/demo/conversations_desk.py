"""The demo's trading, research and support agents: their conversations."""

# Demo prose: one line per message reads better than strings split for width.
# ruff: noqa: E501

from engine.demo.shapes import Conversation

TRADER_SCOUT_CONCIERGE: list[Conversation] = [
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
