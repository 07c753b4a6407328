"""A seeded store and the hybrid top 10 of a fixed set of recalls on it, for
test_ranking_unchanged.py (issue #24: the agent path was made cheaper without moving a single rank).

The corpus exercises every part of the ranking the CPU work touched: speakers in a leading
"Name:" and in metadata, metadata dates and created_at days (the named boosts), sessions in
created_at order (session context), agents (filters), near-equal texts (ties), and both paths of
each retriever (the store's SQL, and the in-memory matrices). Hits are named by their seed index
(`#i` at the start of each text), so the golden file does not depend on a backend's ids.

    PYTHONPATH=/work/main python tests/engine/retrieval/ranking_golden.py  # rewrite the golden
    file from that tree's engine (it was written from main at d1a7049, before the #24 CPU work)
"""

from __future__ import annotations

import json
import random
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).with_name("golden") / "hybrid_top10.json"
T0 = 1_700_000_000.0
SPEAKERS = ["Caroline", "Melanie", "Jon", "Gina", "Nate"]
AGENTS = ["atlas", "borealis", "cirrus"]
WORDS = (  # noqa: SIM905 - a paragraph of words reads better than a column
    "deploy staging vault key rotate database snapshot backup nightly production review pull request "
    "incident pager escalate runbook release notes flag launch cache latency queue retry timeout "
    "payments refund ledger invoice customer tenant region cluster node disk alert dashboard metric "
    "trace retention policy audit token secret support group painting camping adoption pottery"
).split()
TIMES = ["yesterday", "last week", "in June", "two years ago", "on Monday", "", "", ""]
QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("rotate the staging vault key", {}),
    ("payments refund queue retry", {}),
    ("what did Caroline say about the support group", {}),
    ("when did Melanie go camping", {}),
    ("Jon painting in June 2023", {}),
    ("deploy in March 2023", {}),
    ("what year did Gina start pottery", {}),
    ("incident escalate to the pager", {"agent": "atlas"}),
    ("cluster node disk alert", {"agent": "borealis"}),
    ("Nate adoption", {"agent": "cirrus"}),
    ("release notes for the launch", {"tier": ["core", "active", "archived"]}),
    ("audit retention policy token", {"kind": "semantic"}),
]


def items() -> list[dict[str, Any]]:
    rng = random.Random(24)
    out = []
    for i in range(400):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12)))
        when = rng.choice(TIMES)
        speaker = SPEAKERS[i % len(SPEAKERS)]
        style = i % 4
        text = f"#{i} {body} {when}".strip()
        md: dict[str, Any] = {}
        if style == 0:  # a plain ingest: "Name: text"
            text = f"{speaker}: #{i} {body} {when}".strip()
        elif style == 1:  # benchmark-style metadata
            md = {"speaker": speaker, "date": f"{2022 + i % 3}-{1 + i % 12:02d}-{1 + i % 28:02d}"}
        out.append(
            {
                "content": text,
                "agent": AGENTS[i % len(AGENTS)],
                "kind": "semantic" if i % 5 else "episodic",
                "importance": round(0.3 + 0.1 * (i % 6), 2),
                "metadata": md,
                "session_id": f"s{i // 8}",
                "created_at": T0 - 86_400 * (400 - i) + 60 * (i % 8),
            }
        )
    return out


def seed(eng: Any) -> None:
    eng.add_memories(items(), dedup=False)


def no_auto_matrices(settings: Any) -> Any:
    """Settings under which searches use the store's SQL until a matrix is asked for."""
    return replace(settings, search=replace(settings.search, matrix_after=0, keyword_matrix_after=0))


_SEED = re.compile(r"#(\d+)\b")


def top10(eng: Any) -> dict[str, list[list[Any]]]:
    """{query: [[seed index, final score, vector rank, bm25 rank, boost, context], ...]}."""
    out: dict[str, list[list[Any]]] = {}
    for q, kw in QUERIES:
        res = eng.search(q, k=10, record_access=False, **kw)
        key = q + (" " + json.dumps(kw, sort_keys=True) if kw else "")
        rows = []
        for h in res.hits:
            b = h.breakdown
            m = _SEED.search(h.content)
            rows.append(
                [int(m.group(1)) if m else -1, b.final, b.vector_rank, b.bm25_rank, b.boost, b.context]
            )
        out[key] = rows
    return out


def both_paths(eng: Any) -> dict[str, Any]:
    """The top 10 through the store's SQL, then through the in-memory matrices."""
    sql = top10(eng)
    eng.vectors.keep_in_memory()
    eng.retrieval.keyword.keep_in_memory()
    assert eng.vectors.matrix is not None and eng.retrieval.keyword.matrix is not None
    return {"sql": sql, "matrix": top10(eng)}


def main() -> int:  # pragma: no cover - writes the golden file
    import tempfile

    import engine  # the tree on PYTHONPATH: the one whose ranking is recorded
    from engine import FixedClock, HashEmbedder, open_engine
    from engine.config import load_settings

    print(f"recording the ranking of {Path(engine.__file__).parent}")

    sys.path.append(str(Path(__file__).resolve().parents[2]))
    from pg_server import PgServer, _pgserver  # the suite's server (tests/pg_server.py)

    golden: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        server = _pgserver().get_server(str(Path(tmp) / "pg"), cleanup_mode="stop")
        pg = PgServer(server)
        targets = {"sqlite": str(Path(tmp) / "memory.db"), "postgres": pg.fresh()}
        for backend, where in targets.items():
            eng = open_engine(
                where,
                embedder=HashEmbedder(),
                clock=FixedClock(T0),
                actor="tester",
                settings=no_auto_matrices(load_settings()),
            )
            seed(eng)
            golden[backend] = both_paths(eng)
            eng.close()
        pg.close()
        server.cleanup()
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(golden, indent=1) + "\n")
    print(f"wrote {GOLDEN}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
