"""Rows that slipped in malformed before imports validated them: a number that is not finite (or
not a number), a JSON column that does not parse (or is not the object/array the code expects), a
vector of the wrong dimension or with a non-finite component. Each is one finding naming the
table, the id and the column; the checks only read.

Which columns are numbers and which are JSON comes from the schema's declarations, never from
input."""

from __future__ import annotations

import math

from engine.storage.sqlite import schema
from engine.storage.sqlite.store import Error as SqlError

SAMPLE = 20  # findings listed per table and kind


def _number_columns(t: schema.Table) -> list[str]:
    return [n for n, d in t.columns if n != "id" and d.split()[0] in ("REAL", "INTEGER")]


def _reference(name: str) -> bool:
    """An id pointing elsewhere is never computed with: only an infinite value there is flagged
    (a stray text in one is the orphan checks' business, not arithmetic's)."""
    return name.endswith("_id") or name in ("absorbed_into", "watermark")


def _json_columns(t: schema.Table) -> dict[str, str]:
    out = {n: "object" for n, d in t.columns if "DEFAULT '{}'" in d}
    out.update({n: "array" for n, d in t.columns if "DEFAULT '[]'" in d})
    if t.name == "proposals":
        out["snapshot"] = "object"
    return out


def _key(t: schema.Table) -> str:
    return "id" if t.columns and t.columns[0][0] == "id" else "rowid"


def _show(v) -> str:
    s = repr(v)
    return s if len(s) <= 40 else s[:37] + "..."


def number_findings(c) -> list[tuple[str, object, str]]:
    """(table, id, what) for each stored number that is not a finite number."""
    out = []
    for t in schema.TABLES:
        cols = _number_columns(t)
        if not cols:
            continue
        bad = " OR ".join(
            f"(typeof({n}) = 'real' AND abs({n}) > 1.7976931348623157e308)"
            if _reference(n)
            else f"typeof({n}) NOT IN ('integer', 'real', 'null') OR abs({n}) > 1.7976931348623157e308"
            for n in cols
        )
        key = _key(t)
        for row in c.execute(f"SELECT {key}, {', '.join(cols)} FROM {t.name} WHERE {bad} LIMIT {SAMPLE}"):
            for n, v in zip(cols, tuple(row)[1:], strict=True):
                if _reference(n) and not isinstance(v, float):
                    continue
                if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v)):
                    out.append((t.name, row[0], f"{n} = {_show(v)} is not a finite number"))
    return out


def json_findings(c) -> list[tuple[str, object, str]]:
    out = []
    for t in schema.TABLES:
        cols = _json_columns(t)
        if not cols:
            continue
        conds = [
            f"({n} IS NOT NULL AND CASE WHEN json_valid({n}) THEN json_type({n}) != '{kind}' ELSE 1 END)"
            for n, kind in cols.items()
        ]
        key = _key(t)
        names = list(cols)
        for row in c.execute(
            f"SELECT {key}, {', '.join(names)} FROM {t.name} WHERE {' OR '.join(conds)} LIMIT {SAMPLE}"
        ):
            for n, v in zip(names, tuple(row)[1:], strict=True):
                if v is None:
                    continue
                ok, kind = _json_kind(v)
                if not ok:
                    out.append((t.name, row[0], f"{n} is not valid JSON ({_show(v)})"))
                elif kind != cols[n]:
                    out.append((t.name, row[0], f"{n} is JSON {kind}, not an {cols[n]}"))
    return out


def _json_kind(v) -> tuple[bool, str]:
    import json

    try:
        parsed = json.loads(v, parse_constant=_refuse)
    except (TypeError, ValueError):
        return False, ""
    kinds: dict[type, str] = {dict: "object", list: "array"}
    return True, kinds.get(type(parsed), type(parsed).__name__)


def _refuse(name: str):
    raise ValueError(name)  # NaN / Infinity are not JSON


def vector_findings(c) -> list[tuple[str, object, str]]:
    """Every stored vector: its dimension and that each component is finite (numpy, in batches:
    ~1 s per 100k vectors)."""
    out: list[tuple[str, object, str]] = []
    try:
        cur = c.execute("SELECT memory_id, embedding FROM memories_vec")
        while batch := cur.fetchmany(4096):
            _check_batch(batch, out)
    except SqlError:
        # One unreadable vector stops the scan: read them one by one to name each.
        out.clear()
        for (mid,) in c.execute("SELECT rowid FROM memories_vec_rowids").fetchall():
            try:
                _check_batch(
                    c.execute(
                        "SELECT memory_id, embedding FROM memories_vec WHERE memory_id = ?", (mid,)
                    ).fetchall(),
                    out,
                )
            except SqlError as exc:
                out.append(("memories_vec", mid, f"the vector cannot be read ({exc})"))
    return out[:SAMPLE]


def _check_batch(batch, out: list) -> None:
    import numpy as np

    want = schema.EMBED_DIM * 4
    good = []
    for mid, blob in batch:
        if blob is None or len(blob) != want:
            out.append(
                (
                    "memories_vec",
                    mid,
                    f"the vector has {len(blob or b'') // 4} dimensions, not {schema.EMBED_DIM}",
                )
            )
        else:
            good.append((mid, blob))
    if good:
        m = np.frombuffer(b"".join(b for _, b in good), dtype=np.float32).reshape(len(good), -1)
        for i in np.flatnonzero(~np.isfinite(m).all(axis=1))[:SAMPLE]:
            out.append(("memories_vec", good[i][0], "the vector has a non-finite component"))
