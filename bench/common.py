"""Helpers shared by the benchmarks: a disk-cached embedder, percentiles, machine facts and the
BENCHMARKS.md section writer. Benchmarks are scripts, never tests; outputs go under bench/out/."""
from __future__ import annotations

import hashlib
import os
import platform
import sys
import time
from datetime import datetime, timezone
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
            for i, v in zip(missing, vecs):
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


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{os.cpu_count()} cores ({cpu}), no GPU, Python {platform.python_version()}, "
            f"shared with other jobs; {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC")


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
