"""The model tag every store carries: which registered model made the vectors search reads
(`meta` vector_model, vector_dim), and the reembed in progress, if any (`meta` reembed_*).

A store written before the tag existed holds all-MiniLM-L6-v2 vectors (the only model there
was): reading it untagged says so, and the first read-write open stamps it (`stamp_missing`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.embedding.registry import DEFAULT_MODEL

if TYPE_CHECKING:
    from engine.storage.port import Connection, Storage

MODEL, DIM = "vector_model", "vector_dim"
NEXT_MODEL, NEXT_DIM, NEXT_SINCE, NEXT_BY = "reembed_model", "reembed_dim", "reembed_since", "reembed_by"
KEYS = (MODEL, DIM, NEXT_MODEL, NEXT_DIM, NEXT_SINCE, NEXT_BY)  # a store's own: never exported


@dataclass(frozen=True)
class ModelTag:
    model: str
    dim: int
    stamped: bool = True  # False: an untagged store (older memconsole), read as the default model


LEGACY = ModelTag(DEFAULT_MODEL.id, DEFAULT_MODEL.dim, stamped=False)


@dataclass(frozen=True)
class PendingReembed:
    model: str
    dim: int
    since: float
    by: str


def read(conn: Connection) -> ModelTag:
    model, dim = conn.meta.get(MODEL), conn.meta.get(DIM)
    if not model or not dim:
        return LEGACY
    return ModelTag(model, int(dim))


def stamp_missing(conn: Connection) -> None:
    conn.meta.put_missing(MODEL, LEGACY.model)
    conn.meta.put_missing(DIM, str(LEGACY.dim))


def put(conn: Connection, model: str, dim: int) -> None:
    conn.meta.put(MODEL, model)
    conn.meta.put(DIM, str(int(dim)))


def pending(conn: Connection) -> PendingReembed | None:
    model = conn.meta.get(NEXT_MODEL)
    if not model:
        return None
    return PendingReembed(
        model,
        int(conn.meta.get(NEXT_DIM) or 0),
        float(conn.meta.get(NEXT_SINCE) or 0.0),
        conn.meta.get(NEXT_BY) or "",
    )


def put_pending(conn: Connection, job: PendingReembed | None) -> None:
    """Record (or, with None, clear: '' reads as none) the reembed in progress."""
    conn.meta.put(NEXT_MODEL, job.model if job else "")
    conn.meta.put(NEXT_DIM, str(job.dim) if job else "")
    conn.meta.put(NEXT_SINCE, repr(job.since) if job else "")
    conn.meta.put(NEXT_BY, job.by if job else "")


def stamp_model_tag(store: Storage) -> None:
    """A read-write open of a store from before model tags stamps it with the model its vectors
    were made by (all-MiniLM-L6-v2, the only one there was). One meta read otherwise."""
    if store.readonly or store.query(read).stamped:
        return
    store.write(stamp_missing)
