"""The vectors' model across a migration (issue #26): a store re-embedded with another model
(another width than all-MiniLM-L6-v2's 384) migrates with its model tag and its vectors as they
are, never re-embedded and never cut to the target's default width.

An empty target takes the source's model: its vector table is made at the source's width (the
reembed switch's own step, over an empty staging table) and its tag names the source's model,
inside the copy's one write. A target that already holds records keeps its own model: a source of
another model is refused in one line (its vectors would be dropped and embedded again, which a
migration must not do silently: `memconsole reembed` one side first)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.embedding import registry
from engine.embedding import tag as model_tag
from engine.embedding.tag import ModelTag
from engine.errors import InvalidInput, cut

if TYPE_CHECKING:
    from engine.storage.port import Connection


def tag_of(eng: Any) -> ModelTag:
    return eng.ctx.store.query(model_tag.read)


def refuse_mismatch(source: ModelTag, target: ModelTag, target_name: str) -> None:
    """A target holding records of another model: one clear line."""
    if (source.model, source.dim) != (target.model, target.dim):
        raise InvalidInput(
            f"the target {target_name} holds {target.model} vectors ({target.dim} floats), the source "
            f"{cut(source.model)} ({source.dim}): re-embed one of them first (memconsole reembed --model ID)"
        )


def adopt(conn: Connection, backend: Any, source: ModelTag) -> int:
    """Inside the copy's write into an empty target: make the target's vector table the source's
    width and tag it with the source's model. Returns the width the source's vectors must have."""
    if registry.known(source.model) is None:
        raise InvalidInput(f"the source's vectors are of an unknown model {cut(source.model)}")
    spec = registry.known(source.model)
    assert spec is not None
    if spec.dim != source.dim:
        raise InvalidInput(
            f"the source is tagged {spec.id} with {source.dim} floats; that model makes {spec.dim}"
        )
    here = model_tag.read(conn)
    if (here.model, here.dim) != (source.model, source.dim):
        if here.dim != source.dim:
            backend.switch(conn, source.dim)  # staging is empty in a new store: an empty table
        model_tag.put(conn, source.model, source.dim)
    return source.dim
