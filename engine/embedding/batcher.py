"""Micro-batching of concurrent embed calls (issues #24/#26): one MCP server or Hermes process
embeds every agent's query and content with one model, one text at a time. A forward pass of the
numpy MiniLM over one short text costs ~20 ms of CPU, over 8 of them ~7 ms each: calls that
arrive together are worth one pass.

How: the first caller with nothing in flight leads. It waits at most `window` seconds after the
oldest queued call arrived (or until `max_batch` texts are queued), takes the queue, runs the
model once per group of similar lengths, hands every caller its own rows and wakes them. Calls
arriving while a pass runs queue up and the next leader (one of them) takes them all, so under
load batches form with no window at all. A lone call waits at most the window. A call that is a
full batch already (a bulk import, a backfill) goes straight to the model.

Results are the model's own for each text (the model pads each pass to its longest text and masks
the padding): equal to a call of its own to float rounding (tests: max abs diff < 1e-5).
Thread-safe; a failing pass raises in every caller it held. Off with `[embed_batch] enabled =
false` (engine/config.py).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

# Texts of very different lengths are not padded to each other: a pass costs about its longest
# text times its size, so a 200-character memory would make 15 short queries cost 15 memories.
# A group takes texts up to this many times (plus SLACK characters) its shortest one's length.
SPREAD = 2.0
SLACK = 24


@dataclass
class BatchStats:
    """What the batcher did (a bench reads them; `passes` < `calls` means calls shared passes)."""

    calls: int = 0  # embed calls that went through the queue
    texts: int = 0
    batches: int = 0  # times a leader took the queue
    passes: int = 0  # model calls made for those batches (one per length group)
    direct: int = 0  # calls that were a full batch already: straight to the model
    largest: int = 0  # most calls in one batch

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class _Call:
    texts: list[str]
    arrived: float
    out: np.ndarray | None = None
    error: BaseException | None = None
    done: bool = False
    rows: list[int] = field(default_factory=list)  # this call's rows in the batch


class BatchingEmbedder:
    """An `Embedder` whose concurrent calls share forward passes of `inner` (see the module doc)."""

    def __init__(self, inner, window: float = 0.002, max_batch: int = 32) -> None:
        self.inner = inner
        self.name: str = inner.name
        self.dim: int = inner.dim
        self.window = max(0.0, float(window))
        self.max_batch = max(1, int(max_batch))
        self.stats = BatchStats()
        self._cv = threading.Condition()
        self._queue: list[_Call] = []
        self._queued = 0  # texts in the queue
        self._leading = False

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 [len(texts), dim], each row L2-normalised: `inner.embed(texts)`, shared."""
        if len(texts) == 0 or len(texts) >= self.max_batch:
            with self._cv:
                self.stats.direct += 1
            return self.inner.embed(texts)
        call = _Call(list(texts), time.monotonic())
        with self._cv:
            self._queue.append(call)
            self._queued += len(call.texts)
            self.stats.calls += 1
            self.stats.texts += len(call.texts)
            self._cv.notify_all()  # a leader waiting for a full batch counts it
            while not call.done:
                if self._leading:
                    self._cv.wait()
                    continue
                self._leading = True
                try:
                    batch = self._collect()
                    self._cv.release()
                    try:
                        self._run(batch)
                    finally:
                        self._cv.acquire()
                finally:
                    self._leading = False
                    self._cv.notify_all()  # the callers served, and the next leader
        if call.error is not None:
            raise call.error
        assert call.out is not None
        return call.out

    def _collect(self) -> list[_Call]:
        """(Holding the lock.) Wait out the window of the oldest queued call, or a full batch; then
        take whole calls from the front of the queue, up to `max_batch` texts (at least one call)."""
        deadline = self._queue[0].arrived + self.window
        while self._queued < self.max_batch:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._cv.wait(left)
        batch: list[_Call] = []
        n = 0
        while self._queue and (not batch or n + len(self._queue[0].texts) <= self.max_batch):
            c = self._queue.pop(0)
            batch.append(c)
            n += len(c.texts)
        self._queued -= n
        self.stats.batches += 1
        self.stats.largest = max(self.stats.largest, len(batch))
        return batch

    def _run(self, batch: list[_Call]) -> None:
        """(Not holding the lock.) One model call per length group; every caller gets its rows."""
        texts: list[str] = []
        for c in batch:
            c.rows = list(range(len(texts), len(texts) + len(c.texts)))
            texts.extend(c.texts)
        groups = length_groups(texts)
        try:
            out = np.zeros((len(texts), self.dim), dtype=np.float32)
            for idx in groups:
                out[idx] = self.inner.embed([texts[i] for i in idx])
            for c in batch:
                c.out = out[c.rows]
        except BaseException as exc:  # every caller it held hears of it, not only the leader
            for c in batch:
                c.error = exc
        finally:
            for c in batch:
                c.done = True
        with self._cv:
            self.stats.passes += len(groups)


def length_groups(texts: Sequence[str]) -> list[list[int]]:
    """Indexes of `texts` in groups of similar length (see SPREAD), shortest first."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    groups: list[list[int]] = []
    floor = -1.0
    for i in order:
        n = len(texts[i])
        if not groups or n > floor:
            groups.append([])
            floor = n * SPREAD + SLACK
        groups[-1].append(i)
    return groups


# One batcher per loaded model object: every engine a process opens on the same model (the MCP
# server's, a Hermes provider's, tests reopening) queues into the same passes.
_SHARED: weakref.WeakKeyDictionary[object, dict[tuple[float, int], BatchingEmbedder]] = (
    weakref.WeakKeyDictionary()
)
_SHARED_LOCK = threading.Lock()


def batching(inner, window: float, max_batch: int) -> BatchingEmbedder:
    """The process's batcher over `inner` with these limits (made on first use)."""
    with _SHARED_LOCK:
        per = _SHARED.setdefault(inner, {})
        key = (float(window), int(max_batch))
        if key not in per:
            per[key] = BatchingEmbedder(inner, window, max_batch)
        return per[key]
