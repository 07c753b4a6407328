"""Loading a registered model as an `Embedder`: its weight files checked against the registry's
checksums first (checksums.py), then run the cheapest way that gives its vectors: the numpy
MiniLM (no torch: a cold `search` stays fast), sentence-transformers on torch as the reference or
the fallback, the hashing embedder for the test-only model."""

from __future__ import annotations

from typing import Literal

from engine.embedding.checksums import verify
from engine.embedding.registry import ModelSpec
from engine.errors import EmbedderUnavailable

How = Literal["default", "numpy", "minilm"]


def load(spec: ModelSpec, model_path: str | None = None, how: How = "default"):
    """The model as an Embedder named `spec.id` (EmbedderUnavailable when its weights are missing
    or differ from the published ones)."""
    from engine.embed import Embedder, HashEmbedder, default_model_path, shared_minilm

    emb: Embedder
    if spec.loader == "hash":
        return HashEmbedder(spec.dim, name=spec.id)
    folder = model_path or default_model_path()
    verify(spec, folder)
    if how == "minilm":
        emb = shared_minilm(folder)
    else:
        from engine.embed_numpy import shared_numpy_minilm

        try:
            emb = shared_numpy_minilm(folder)
        except (EmbedderUnavailable, ImportError):
            if how != "default":
                raise
            emb = shared_minilm(folder)
    if emb.dim != spec.dim:
        raise EmbedderUnavailable(f"{spec.id}: the model in {folder} gives {emb.dim} floats, not {spec.dim}")
    return emb
