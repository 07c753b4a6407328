"""The micro-batcher (engine/embedding/batcher.py, issues #24/#26): concurrent embed calls share
forward passes of the real numpy MiniLM and get the vectors a call of their own gets (max abs
diff < 1e-5); a lone call waits at most the window; a full batch does not wait for it; a failing
pass fails every caller it held; the engine's model is batched unless `[embed_batch] enabled =
false`."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

from engine.embed import HashEmbedder
from engine.embedding.batcher import BatchingEmbedder, length_groups

TEXTS = [
    "what did Caroline say about the adoption agency?",
    "x",
    "",
    "   padded with spaces   ",
    "大别山 is a mountain range; 東京 — Tōkyō, naïve café, emoji 😀",
    "Melanie painted a sunrise over the lake last summer and hung it in the kitchen. " * 6,
    "word " * 400,  # past max_seq_length: truncated the same way in a batch as alone
    "when is the charity race?",
    "Short. " + "A longer sentence follows, with punctuation, numbers 1,234.5 and CAPS. " * 3,
]


class Counting:
    """The hash embedder, counting its calls (and optionally slow, or failing)."""

    def __init__(self, delay: float = 0.0, fail: bool = False) -> None:
        self.inner = HashEmbedder(64)
        self.name, self.dim = "counting", 64
        self.calls: list[int] = []
        self.delay, self.fail = delay, fail
        self.lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self.lock:
            self.calls.append(len(texts))
        time.sleep(self.delay)
        if self.fail:
            raise RuntimeError("the model broke")
        return self.inner.embed(texts)


def run_together(n: int, fn) -> list:
    """`fn(i)` in n threads released at once; their results (or exceptions) by i."""
    out: list = [None] * n
    gate = threading.Barrier(n)

    def one(i: int) -> None:
        gate.wait()
        try:
            out[i] = fn(i)
        except Exception as exc:  # noqa: BLE001 - returned for the test to look at
            out[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out


@pytest.fixture(scope="module")
def numpy_minilm():
    from engine.embed_numpy import shared_numpy_minilm

    try:
        return shared_numpy_minilm()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"the numpy MiniLM cannot load: {exc}")


@pytest.mark.model
def test_concurrent_calls_share_passes_and_get_their_own_vectors(numpy_minilm):
    b = BatchingEmbedder(numpy_minilm, window=0.2, max_batch=32)  # wide: a loaded machine
    texts = [f"{t} #{i}" if i % 2 else t for i, t in enumerate(TEXTS * 2)]
    alone = [numpy_minilm.embed([t]) for t in texts]
    pair = numpy_minilm.embed(texts[:2])  # a call of two texts keeps its rows in order
    got = run_together(
        len(texts) + 1, lambda i: b.embed(texts[i : i + 1]) if i < len(texts) else b.embed(texts[:2])
    )
    diff = max(float(np.abs(g - a).max()) for g, a in zip(got, alone, strict=False))
    assert diff < 1e-5, diff
    assert float(np.abs(got[-1] - pair).max()) < 1e-5
    assert all(g.shape == (1, 384) and g.dtype == np.float32 for g in got[:-1])
    s = b.stats
    assert s.calls == len(texts) + 1 and s.batches < s.calls / 2, s  # calls did share passes
    assert s.largest > 1


def test_a_lone_call_waits_at_most_the_window():
    b = BatchingEmbedder(Counting(), window=0.3, max_batch=32)
    t = time.monotonic()
    v = b.embed(["alone"])
    took = time.monotonic() - t
    assert 0.3 <= took < 3.0, took
    assert np.array_equal(v, HashEmbedder(64).embed(["alone"]))
    zero = BatchingEmbedder(Counting(), window=0.0, max_batch=32)
    t = time.monotonic()
    zero.embed(["alone"])
    assert time.monotonic() - t < 0.2  # no window: no wait (a loaded machine's scheduling aside)


def test_a_full_batch_runs_before_the_window_and_bulk_calls_go_straight_through():
    inner = Counting()
    b = BatchingEmbedder(inner, window=30.0, max_batch=4)
    t = time.monotonic()
    got = run_together(4, lambda i: b.embed([f"text {i}"]))
    assert time.monotonic() - t < 10, "a full batch waited for the 30 s window"
    assert inner.calls == [4] and b.stats.batches == 1
    for i, g in enumerate(got):
        assert np.array_equal(g, HashEmbedder(64).embed([f"text {i}"]))
    bulk = [f"memory {i}" for i in range(10)]
    assert np.array_equal(b.embed(bulk), HashEmbedder(64).embed(bulk))
    assert inner.calls[-1] == 10 and b.stats.direct == 1


def test_calls_arriving_during_a_pass_form_the_next_batch_without_a_window():
    inner = Counting(delay=1.0)
    b = BatchingEmbedder(inner, window=0.0, max_batch=32)
    first = threading.Thread(target=b.embed, args=(["first"],))
    first.start()
    while not inner.calls:  # the first pass is running: these queue behind it
        time.sleep(0.005)
    got = run_together(6, lambda i: b.embed([f"q{i}", f"r{i}"]))
    first.join()
    assert inner.calls == [1, 12], inner.calls
    for i, g in enumerate(got):
        assert np.array_equal(g, HashEmbedder(64).embed([f"q{i}", f"r{i}"]))


def test_a_failing_pass_fails_every_caller_it_held_and_the_next_call_runs():
    inner = Counting(fail=True)
    b = BatchingEmbedder(inner, window=0.05, max_batch=32)
    got = run_together(5, lambda i: b.embed([f"t{i}"]))
    assert all(isinstance(g, RuntimeError) and "broke" in str(g) for g in got), got
    inner.fail = False
    assert b.embed(["fine"]).shape == (1, 64)


def test_many_threads_many_calls_each_get_exactly_their_rows():
    inner = Counting()
    b = BatchingEmbedder(inner, window=0.001, max_batch=8)
    ref = HashEmbedder(64)

    def agent(i: int) -> bool:
        for j in range(40):
            texts = [f"agent {i} call {j} text {k}" * (1 + (i + k) % 4) for k in range(1 + (i + j) % 3)]
            if not np.array_equal(b.embed(texts), ref.embed(texts)):
                return False
        return True

    assert run_together(12, agent) == [True] * 12
    assert sum(inner.calls) == b.stats.texts and max(inner.calls) <= 8


def test_length_groups_keep_short_queries_apart_from_long_memories():
    texts = ["a" * 30, "b" * 2000, "c" * 40, "d" * 25, "e" * 1800]
    groups = length_groups(texts)
    assert sorted(i for g in groups for i in g) == [0, 1, 2, 3, 4]
    assert [sorted(g) for g in groups] == [[0, 2, 3], [1, 4]]


@pytest.mark.model
def test_the_engine_batches_its_model_unless_the_setting_is_off(tmp_path, numpy_minilm):
    from dataclasses import replace

    from engine import open_engine
    from engine.config import Settings

    on = open_engine(tmp_path / "on.db", embedder="numpy", actor="tester", load="now")
    try:
        emb = on.embedder.get()
        assert isinstance(emb, BatchingEmbedder) and emb.inner is numpy_minilm
        on.add_memory("Caroline went to the adoption agency on Friday")
        res = on.search("adoption agency")
        assert res.mode == "hybrid" and res.hits and "adoption" in res.hits[0].content
    finally:
        on.close()
    s = Settings()
    off_settings = replace(s, embed_batch=replace(s.embed_batch, enabled=False))
    off = open_engine(
        tmp_path / "off.db", embedder="numpy", actor="tester", load="now", settings=off_settings
    )
    try:
        assert off.embedder.get() is numpy_minilm
    finally:
        off.close()


def test_a_bad_setting_is_one_line(tmp_path):
    from engine.config import load_settings
    from engine.errors import InvalidInput

    cfg = tmp_path / "config.toml"
    for body, needle in (
        ("[embed_batch]\nwindow_ms = -1\n", "embed_batch.window_ms must be between"),
        ("[embed_batch]\nmax_batch = 0\n", "embed_batch.max_batch must be between"),
        ('[embed_batch]\nenabled = "yes"\n', "embed_batch.enabled must be true or false"),
    ):
        cfg.write_text(body)
        with pytest.raises(InvalidInput) as e:
            load_settings(cfg)
        assert needle in str(e.value) and "\n" not in str(e.value)
    cfg.write_text("[embed_batch]\nenabled = false\nwindow_ms = 5\nmax_batch = 16\n")
    s = load_settings(cfg).embed_batch
    assert (s.enabled, s.window_ms, s.max_batch) == (False, 5, 16)
