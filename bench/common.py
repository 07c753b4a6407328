"""Helpers shared by the benchmarks: a disk-cached embedder, percentiles, machine facts and the
BENCHMARKS.md section writer. Benchmarks are scripts, never tests; outputs go under bench/out/."""

from __future__ import annotations

import hashlib
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
BENCHMARKS = ROOT / "BENCHMARKS.md"
sys.path.insert(0, str(ROOT))


def out_dir(*parts: str) -> Path:
    p = OUT.joinpath(*parts)
    p.mkdir(parents=True, exist_ok=True)
    return p


class CachedEmbedder:
    """The real MiniLM, with every vector it computes kept in an .npz keyed by the text's hash, so
    re-running a benchmark costs SQLite time, not model time. Loads the model only on a miss."""

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._cache: dict[str, np.ndarray] = {}
        self._model = None
        self._dirty = False
        self.computed = 0
        if self.path.exists():
            with np.load(self.path) as z:
                self._cache = {k: z[k] for k in z.files}

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()

    def embed(self, texts):
        keys = [self.key(t) for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in self._cache]
        if missing:
            if self._model is None:
                from engine.embed import MiniLMEmbedder

                self._model = MiniLMEmbedder()
            vecs = self._model.embed([texts[i] for i in missing])
            for i, v in zip(missing, vecs, strict=True):
                self._cache[keys[i]] = v
            self.computed += len(missing)
            self._dirty = True
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._cache[k] for k in keys]).astype(np.float32)

    def save(self) -> None:
        if self._dirty:
            tmp = self.path.with_suffix(".tmp.npz")
            np.savez(tmp, **self._cache)
            os.replace(tmp, self.path)
            self._dirty = False


def pct(values, q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=float), q)) if len(values) else float("nan")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


class Timer:
    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.s = time.perf_counter() - self.t0


def locomo_path() -> Path:
    """locomo_dev.json: $MEMCONSOLE_LOCOMO (the file or its folder), else ../shared/data/locomo
    beside the project. Missing, it is one clear line, not a traceback."""
    env = os.environ.get("MEMCONSOLE_LOCOMO")
    p = Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo"
    if p.is_dir():
        p = p / "locomo_dev.json"
    if not p.is_file():
        raise SystemExit(
            f"LoCoMo data not found at {p}: set MEMCONSOLE_LOCOMO to locomo_dev.json "
            f"(or its folder); the project expects it in ../shared/data/locomo"
        )
    return p


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} cores ({cpu}), no GPU, Python {platform.python_version()}, "
        f"load average {load} when written; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    )


def write_section(name: str, body: str) -> None:
    """Replace (or append) the block between `<!-- bench:NAME -->` markers in BENCHMARKS.md, so
    each benchmark rewrites only its own section."""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    text = BENCHMARKS.read_text(encoding="utf-8") if BENCHMARKS.exists() else "# Benchmarks\n"
    block = f"{start}\n{body.rstrip()}\n{end}"
    if start in text and end in text:
        a, b = text.index(start), text.index(end) + len(end)
        text = text[:a] + block + text[b:]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    BENCHMARKS.write_text(text, encoding="utf-8")


# -- a synthetic fleet memory for scale benchmarks -------------------------------------------------
AGENTS = ("planner", "coder", "reviewer", "ops", "support", "research", "billing", "triage")
CATS = ("decision", "task", "rejected", "discovery", "learning", "context", "preference", "fact")
_VOCAB_SEED = [
    "deploy",
    "release",
    "build",
    "cache",
    "test",
    "flaky",
    "retry",
    "timeout",
    "database",
    "index",
    "query",
    "schema",
    "migration",
    "backup",
    "restore",
    "user",
    "customer",
    "invoice",
    "refund",
    "ticket",
    "priority",
    "bug",
    "crash",
    "memory",
    "leak",
    "latency",
    "throughput",
    "queue",
    "worker",
    "cron",
    "schedule",
    "token",
    "budget",
    "prompt",
    "model",
    "embedding",
    "vector",
    "search",
    "rank",
    "fusion",
    "keyword",
    "agent",
    "session",
    "transcript",
    "summary",
    "note",
    "decision",
    "reason",
    "policy",
    "rule",
    "review",
    "approve",
    "reject",
    "merge",
    "branch",
    "commit",
    "pipeline",
    "docker",
    "kubernetes",
    "node",
    "cluster",
    "region",
    "outage",
    "incident",
    "alert",
    "pager",
    "dashboard",
    "metric",
    "log",
    "trace",
    "span",
    "error",
    "warning",
    "config",
    "secret",
    "key",
    "rotate",
    "certificate",
    "expiry",
    "domain",
    "dns",
    "email",
    "slack",
    "channel",
    "meeting",
    "standup",
    "sprint",
    "roadmap",
    "feature",
    "flag",
    "rollout",
    "canary",
    "python",
    "rust",
    "typescript",
    "sql",
    "sqlite",
    "postgres",
    "redis",
    "kafka",
    "s3",
    "bucket",
    "lambda",
    "api",
    "endpoint",
    "rate",
    "limit",
    "auth",
    "oauth",
    "login",
    "password",
    "reset",
    "profile",
    "preference",
    "dark",
    "mode",
    "theme",
    "editor",
    "keyboard",
    "shortcut",
    "terminal",
    "console",
    "pane",
    "table",
    "filter",
    "sort",
    "export",
    "import",
    "csv",
    "json",
]


def vocab(n: int = 4000) -> list[str]:
    """A Zipf-ish vocabulary: real words first (frequent), then made-up rare terms."""
    rng = np.random.default_rng(1)
    extra = [
        "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), int(rng.integers(4, 10))))
        for _ in range(n - len(_VOCAB_SEED))
    ]
    return list(_VOCAB_SEED) + extra


class SyntheticCorpus:
    """Deterministic memories (text, agent, category, tier) and clustered unit vectors, so scale
    benchmarks need no model: text for FTS5 drawn from a Zipf vocabulary, vectors around 512
    topic centroids (KNN over them behaves like real embeddings do, with near neighbours)."""

    def __init__(self, dim: int = 384, seed: int = 0) -> None:
        self.dim = dim
        self.words = vocab()
        rng = np.random.default_rng(seed)
        c = rng.standard_normal((512, dim)).astype(np.float32)
        self.centroids = c / np.linalg.norm(c, axis=1, keepdims=True)
        ranks = np.arange(1, len(self.words) + 1)
        p = 1.0 / ranks**1.05
        self.p = p / p.sum()

    def texts(self, start: int, n: int) -> list[str]:
        rng = np.random.default_rng(10_000 + start)
        lens = rng.integers(8, 24, n)
        flat = rng.choice(len(self.words), int(lens.sum()), p=self.p)
        out, i = [], 0
        for j, L in enumerate(lens):
            out.append(" ".join(self.words[w] for w in flat[i : i + L]) + f" #{start + j}")
            i += L
        return out

    def vectors(self, start: int, n: int) -> np.ndarray:
        rng = np.random.default_rng(20_000 + start)
        topic = rng.integers(0, len(self.centroids), n)
        v = self.centroids[topic] + rng.standard_normal((n, self.dim)).astype(np.float32) / np.sqrt(self.dim)
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)

    def items(self, start: int, n: int) -> list[dict]:
        rng = np.random.default_rng(30_000 + start)
        tiers = rng.choice(["active", "active", "active", "core", "archived"], n)
        return [
            {
                "content": t,
                "agent": AGENTS[int(a)],
                "category": CATS[int(c)],
                "tier": str(tr),
                "kind": "semantic",
            }
            for t, a, c, tr in zip(
                self.texts(start, n),
                rng.integers(0, len(AGENTS), n),
                rng.integers(0, len(CATS), n),
                tiers,
                strict=True,
            )
        ]

    def queries(self, n: int) -> list[str]:
        rng = np.random.default_rng(99)
        return [
            " ".join(self.words[w] for w in rng.choice(len(self.words), int(rng.integers(2, 6)), p=self.p))
            for _ in range(n)
        ]


class TableEmbedder:
    """Returns vectors registered for exact texts (else a hash-seeded one): the embedder for scale
    benchmarks, so what is timed is the engine, not the model."""

    name = "table"
    dim = 384

    def __init__(self) -> None:
        self.table: dict[str, np.ndarray] = {}

    def register(self, texts, vecs) -> None:
        for t, v in zip(texts, vecs, strict=True):
            self.table[t] = v

    def embed(self, texts):
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            v = self.table.get(t)
            if v is None:
                rng = np.random.default_rng(
                    int(hashlib.blake2b(t.encode("utf-8", "replace"), digest_size=8).hexdigest(), 16)
                )
                v = rng.standard_normal(self.dim).astype(np.float32)
                v /= np.linalg.norm(v)
            out[i] = v
        return out
