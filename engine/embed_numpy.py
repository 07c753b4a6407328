"""all-MiniLM-L6-v2 without torch: the same weights (the package's model.safetensors, memory-mapped),
the same fast tokenizer (its tokenizer.json) and the same sentence-transformers pipeline
(Transformer -> mean pooling over the attention mask -> L2 normalisation), computed with numpy.

Why: a fresh `memconsole search` / `add` spent 7-20 s importing torch and sentence-transformers
and loading the model; this loads in ~0.1-0.3 s (numpy is already imported by the engine, the
weights are mapped, not copied) and embeds one query in ~0.02-0.05 s. Its vectors match
sentence-transformers' to cosine >= 0.9999 (tests/engine/test_embed_numpy.py checks >= 0.999 on
LoCoMo turns), so vectors stored by either stay valid. Batch throughput is about torch's on this
machine. Nothing is exported or cached: the weights are read where the package installed them.

Only the pipeline of this model family is supported (BERT encoder, absolute positions, GELU, mean
pooling, normalisation); anything else in the model folder is refused with EmbedderUnavailable so
the caller can fall back to sentence-transformers.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.errors import EmbedderUnavailable

_MAX_HEADER = 100 * 1024 * 1024  # a safetensors JSON header larger than this is not a model we know
_NEG = np.float32(np.finfo(np.float32).min)  # the additive mask transformers' BERT uses
SMALL_BATCH_TOKENS = 2048  # up to this many tokens (texts x longest) a batch runs on one BLAS thread


def _read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as exc:
        raise EmbedderUnavailable(f"cannot read {path}: {exc}") from exc


def load_safetensors(path: str) -> dict[str, np.ndarray]:
    """Every F32 tensor of a .safetensors file as a read-only array over one memory map (no copy)."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            if not 0 < n <= min(_MAX_HEADER, size - 8):
                raise EmbedderUnavailable(f"{path}: bad safetensors header length {n}")
            header = json.loads(f.read(n))
    except (OSError, ValueError, struct.error) as exc:
        raise EmbedderUnavailable(f"cannot read {path}: {exc}") from exc
    start = 8 + n
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=start)
    out: dict[str, np.ndarray] = {}
    for key, spec in header.items():
        if key == "__metadata__" or spec.get("dtype") != "F32":
            continue  # position_ids (I64) and metadata are not weights
        shape = tuple(int(d) for d in spec["shape"])
        lo, hi = (int(x) for x in spec["data_offsets"])
        count = int(np.prod(shape)) if shape else 1
        if not 0 <= lo <= hi <= size - start or hi - lo != 4 * count:
            raise EmbedderUnavailable(f"{path}: tensor {key} lies outside the file")
        out[key] = np.frombuffer(data, dtype=np.float32, count=count, offset=lo).reshape(shape)
    return out


def _blas_controller() -> Any:
    try:
        from threadpoolctl import ThreadpoolController

        return ThreadpoolController()
    except Exception:  # no threadpoolctl, or a BLAS it cannot see: BLAS keeps its own threads
        return None


def _valid(text: str) -> str:
    """`text` with each lone surrogate as U+FFFD (a well-formed pair joined into its character)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to 1.5e-7 (Abramowitz & Stegun 7.1.26), in float32: numpy has no erf of its own."""
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t
    return np.copysign(1.0 - poly * np.exp(-a * a), x)


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x * Phi(x)."""
    return x * (0.5 + 0.5 * _erf(x * np.float32(0.7071067811865476)))


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    d = x - mu
    var = (d * d).mean(-1, keepdims=True)
    return d / np.sqrt(var + np.float32(eps)) * w + b


def _check_pipeline(path: str) -> tuple[dict[str, Any], int]:
    """The model folder must describe exactly sentence-transformers' Transformer -> mean Pooling ->
    Normalize over a BERT encoder; returns (config.json, max_seq_length)."""
    modules = _read_json(os.path.join(path, "modules.json"))
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    if kinds != ["Transformer", "Pooling", "Normalize"]:
        raise EmbedderUnavailable(f"unsupported sentence-transformers pipeline {kinds}")
    pool_dir = next(m.get("path", "") for m in modules if str(m.get("type", "")).endswith("Pooling"))
    pool = _read_json(os.path.join(path, pool_dir, "config.json"))
    modes = {k for k, v in pool.items() if k.startswith("pooling_mode") and v}
    if modes != {"pooling_mode_mean_tokens"}:
        raise EmbedderUnavailable(f"unsupported pooling {sorted(modes)}")
    cfg = _read_json(os.path.join(path, "config.json"))
    if (
        cfg.get("model_type") != "bert"
        or cfg.get("hidden_act") != "gelu"
        or cfg.get("position_embedding_type", "absolute") != "absolute"
    ):
        raise EmbedderUnavailable("unsupported encoder (needs BERT, GELU, absolute positions)")
    sbert = _read_json(os.path.join(path, "sentence_bert_config.json"))
    if sbert.get("do_lower_case"):
        raise EmbedderUnavailable("do_lower_case in sentence_bert_config.json is not supported")
    max_len = int(sbert.get("max_seq_length") or cfg.get("max_position_embeddings", 512))
    return cfg, min(max_len, int(cfg.get("max_position_embeddings", 512)))


class NumpyMiniLM:
    """The `Embedder` for all-MiniLM-L6-v2 (and models of its shape) in numpy; see the module doc."""

    name = "all-MiniLM-L6-v2"
    dim = 384
    batch_size = 32  # texts sorted by length, padded to the longest in the batch, as encode() does

    def __init__(self, model_path: str | None = None) -> None:
        from tokenizers import Tokenizer  # Rust, ~0.05 s to import: no torch, no transformers

        from engine.embed import default_model_path

        path = model_path or default_model_path()
        if not os.path.isdir(path):
            raise EmbedderUnavailable(f"embedding model not found at {path}")
        cfg, self.max_seq_length = _check_pipeline(path)
        self.path = path
        self.heads = int(cfg["num_attention_heads"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.dim = int(cfg["hidden_size"])
        self.head_dim = self.dim // self.heads
        try:
            tok = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
        except Exception as exc:  # tokenizers raises its own Exception type
            raise EmbedderUnavailable(f"cannot load tokenizer.json: {exc}") from exc
        # tokenizer.json carries its own truncation (128) and fixed padding: sentence-transformers
        # truncates at max_seq_length (special tokens included) and pads to the batch's longest.
        tok.no_padding()
        tok.enable_truncation(max_length=self.max_seq_length)
        self.tokenizer = tok
        w = load_safetensors(os.path.join(path, "model.safetensors"))
        w = {k.removeprefix("bert."): v for k, v in w.items()}
        try:
            self._emb = (
                w["embeddings.word_embeddings.weight"],
                w["embeddings.position_embeddings.weight"],
                w["embeddings.token_type_embeddings.weight"][0],
                w["embeddings.LayerNorm.weight"],
                w["embeddings.LayerNorm.bias"],
            )
            self._layers = []
            for i in range(int(cfg["num_hidden_layers"])):
                p = f"encoder.layer.{i}."
                self._layers.append(
                    tuple(
                        w[p + n]
                        for n in (
                            "attention.self.query.weight",
                            "attention.self.query.bias",
                            "attention.self.key.weight",
                            "attention.self.key.bias",
                            "attention.self.value.weight",
                            "attention.self.value.bias",
                            "attention.output.dense.weight",
                            "attention.output.dense.bias",
                            "attention.output.LayerNorm.weight",
                            "attention.output.LayerNorm.bias",
                            "intermediate.dense.weight",
                            "intermediate.dense.bias",
                            "output.dense.weight",
                            "output.dense.bias",
                            "output.LayerNorm.weight",
                            "output.LayerNorm.bias",
                        )
                    )
                )
        except KeyError as exc:
            raise EmbedderUnavailable(f"model.safetensors lacks {exc}") from exc
        if self._emb[0].shape[1] != self.dim:
            raise EmbedderUnavailable("model.safetensors does not match config.json")
        self._lock = threading.Lock()  # one forward pass at a time: BLAS already uses both cores
        self._blas = _blas_controller()

    # -- the pipeline -------------------------------------------------------------------------

    def _tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, as sentence-transformers' tokenize(): each text stripped, then
        truncated at max_seq_length with [CLS] and [SEP] counted. Lone surrogates (which the Rust
        tokenizer cannot take) become U+FFFD."""
        return [e.ids for e in self.tokenizer.encode_batch([_valid(t.strip()) for t in texts])]

    @staticmethod
    def _pad(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        """Ids and attention mask [n, longest], padded with 0 ([PAD])."""
        longest = max(len(r) for r in rows)
        ids = np.zeros((len(rows), longest), dtype=np.int64)
        mask = np.zeros((len(rows), longest), dtype=np.float32)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = r
            mask[i, : len(r)] = 1.0
        return ids, mask

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Mean-pooled last hidden state [n, dim] (not yet normalised)."""
        n, s = ids.shape
        h, d = self.heads, self.head_dim
        word, pos, tok_type, ln_w, ln_b = self._emb
        x = word[ids] + pos[:s] + tok_type  # token_type_ids are all 0 for one segment
        x = _layer_norm(x, ln_w, ln_b, self.eps).reshape(n * s, self.dim)
        bias = ((1.0 - mask) * _NEG)[:, None, None, :]  # [n, 1, 1, s]
        scale = np.float32(1.0 / np.sqrt(d))
        for qw, qb, kw, kb, vw, vb, ow, ob, l1w, l1b, iw, ib, o2w, o2b, l2w, l2b in self._layers:

            def heads(w: np.ndarray, b: np.ndarray, x: np.ndarray = x) -> np.ndarray:
                return np.ascontiguousarray((x @ w.T + b).reshape(n, s, h, d).transpose(0, 2, 1, 3))

            q, k, v = heads(qw, qb), heads(kw, kb), heads(vw, vb)
            att = (q @ k.transpose(0, 1, 3, 2)) * scale + bias  # [n, h, s, s]
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(n * s, self.dim)
            x = _layer_norm(ctx @ ow.T + ob + x, l1w, l1b, self.eps)
            x = _layer_norm(_gelu(x @ iw.T + ib) @ o2w.T + o2b + x, l2w, l2b, self.eps)
        x = x.reshape(n, s, self.dim)
        m = mask[:, :, None]
        return (x * m).sum(1) / np.maximum(m.sum(1), np.float32(1e-9))

    def _threads(self, tokens: int) -> contextlib.AbstractContextManager[object]:
        """One BLAS thread for a small batch (a query, a few memories): its matrices are too small
        to share, and on a busy 2-core machine OpenBLAS's second thread made a one-query embed
        take 0.4-1.9 s instead of 0.05-0.1 s (load 8-9). Large batches keep BLAS's own setting."""
        if self._blas is None or tokens > SMALL_BATCH_TOKENS:
            return contextlib.nullcontext()
        return self._blas.limit(limits=1, user_api="blas")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 [len(texts), dim], each row L2-normalised."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows = self._tokenize(texts)
        out = np.zeros((len(rows), self.dim), dtype=np.float32)
        order = sorted(range(len(rows)), key=lambda i: -len(rows[i]))
        with self._lock:
            for lo in range(0, len(order), self.batch_size):
                idx = order[lo : lo + self.batch_size]
                ids, mask = self._pad([rows[i] for i in idx])
                with self._threads(ids.size):
                    out[idx] = self._forward(ids, mask)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.maximum(norms, np.float32(1e-12))).astype(np.float32, copy=False)


_SHARED: dict[str, NumpyMiniLM] = {}
_SHARED_LOCK = threading.Lock()


def shared_numpy_minilm(model_path: str | None = None) -> NumpyMiniLM:
    """One loaded model per process and path (engines opened and closed repeatedly share it)."""
    from engine.embed import default_model_path

    key = model_path or default_model_path()
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = NumpyMiniLM(key)
        return _SHARED[key]
