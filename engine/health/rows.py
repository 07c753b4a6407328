"""Rows that slipped in malformed before imports validated them: a number that is not finite (or
not a number), a JSON column that does not parse (or is not the object/array the code expects), a
vector of the wrong dimension or with a non-finite component. Each is one finding naming the
table, the id and the column; the checks only read.

Which columns are numbers and which are JSON comes from the schema's declarations, never from
input: the store's health checks (engine/storage/health.py) read the suspect values; the verdicts
are here."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from engine.storage.health import HealthChecks

SAMPLE = 20  # findings listed per table and kind

Finding = tuple[str, Any, str]  # (table, id, what)


def _show(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 40 else s[:37] + "..."


def number_findings(health: HealthChecks, c: Any) -> list[Finding]:
    """(table, id, what) for each stored number that is not a finite number."""
    out = []
    for table, ident, n, v, reference in health.number_suspects(c, SAMPLE):
        if reference and not isinstance(v, float):
            continue
        if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v)):
            out.append((table, ident, f"{n} = {_show(v)} is not a finite number"))
    return out


def json_findings(health: HealthChecks, c: Any) -> list[Finding]:
    out = []
    for table, ident, n, v, expected in health.json_suspects(c, SAMPLE):
        if v is None:
            continue
        ok, kind = _json_kind(v)
        if not ok:
            out.append((table, ident, f"{n} is not valid JSON ({_show(v)})"))
        elif kind != expected:
            out.append((table, ident, f"{n} is JSON {kind}, not an {expected}"))
    return out


def _json_kind(v: Any) -> tuple[bool, str]:
    try:
        parsed = json.loads(v, parse_constant=_refuse)
    except (TypeError, ValueError):
        return False, ""
    kinds: dict[type, str] = {dict: "object", list: "array"}
    return True, kinds.get(type(parsed), type(parsed).__name__)


def _refuse(name: str) -> Any:
    raise ValueError(name)  # NaN / Infinity are not JSON


def vector_findings(health: HealthChecks, c: Any) -> list[Finding]:
    """Every stored vector: its dimension and that each component is finite (numpy, in batches:
    ~1 s per 100k vectors)."""
    out: list[Finding] = []
    try:
        for batch in health.vector_batches(c):
            _check_batch(health.dimensions, batch, out)
    except health.errors:
        # One unreadable vector stops the scan: read them one by one to name each.
        out.clear()
        for mid, blob, unreadable in health.vectors_one_by_one(c):
            if unreadable is not None:
                out.append(("memories_vec", mid, unreadable))
            else:
                _check_batch(health.dimensions, [(mid, blob)], out)
    return out[:SAMPLE]


def _check_batch(dim: int, batch: list[tuple[Any, bytes | None]], out: list[Finding]) -> None:
    want = dim * 4
    good = []
    for mid, blob in batch:
        if blob is None or len(blob) != want:
            out.append(("memories_vec", mid, f"the vector has {len(blob or b'') // 4} dimensions, not {dim}"))
        else:
            good.append((mid, blob))
    if good:
        m = np.frombuffer(b"".join(b for _, b in good), dtype=np.float32).reshape(len(good), -1)
        for i in np.flatnonzero(~np.isfinite(m).all(axis=1))[:SAMPLE]:
            out.append(("memories_vec", good[i][0], "the vector has a non-finite component"))
