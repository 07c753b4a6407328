"""What the environment decides for the console and the CLI alike: read here, nowhere else."""

from __future__ import annotations

import os

EMBEDDER_VAR = "MEMCONSOLE_EMBEDDER"


def embedder_choice(wanted: str | None = "default") -> str | None:
    """The embedder to open the engine with: `wanted`, unless $MEMCONSOLE_EMBEDDER says otherwise
    ("default" | "hash" | "none"; tests and CI use "hash"). A caller that never needs a vector
    (`wanted=None`) stays without one, so sentence-transformers is never imported for it."""
    if wanted is None:
        return None
    override = os.environ.get(EMBEDDER_VAR)
    if not override:
        return wanted
    return None if override == "none" else override
