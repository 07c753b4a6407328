"""Embedding models as a choice (issue #26): the registry of models a store may use
(registry.py), their weights checked against published checksums at load (checksums.py), the
model tag every store carries (tag.py) and re-embedding a store with another model in the
background, resumable, switching only once the new set is complete (reembed.py)."""
