"""Input checked at the door: strict JSON (finite numbers, 64-bit integers) and every restored row
held to the schema (types, JSON columns, ranges, vectors) before anything is written.

Python's json module accepts `NaN`, `Infinity` and `1e999` (read as inf) and integers of any size;
stored, they make forget, proposals or the curator fail later, far from the file that brought
them. Every importer parses through `loads` and a JSONL export's rows through `check_row`."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping

import numpy as np

from engine.errors import InvalidInput, cut
from engine.sessions import ROLES
from engine.types import KINDS, TIERS

INT_MAX = 2**63 - 1
INT_MIN = -(2**63)
# Epoch seconds a date can be formatted from: 1970 up to the last second of year 9999.
TIME_MAX = 253402300799.0


def _no_constant(name: str):
    raise InvalidInput(f"{name} is not a number JSON allows (numbers must be finite)")


def _float(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise InvalidInput(f"number {text[:40]} is out of range (numbers must be finite)")
    return v


def _int(text: str) -> int:
    if len(text.lstrip("-")) > 19:
        raise InvalidInput(f"integer {text[:40]}{'...' if len(text) > 40 else ''} does not fit in 64 bits")
    v = int(text)
    if not INT_MIN <= v <= INT_MAX:
        raise InvalidInput(f"integer {text} does not fit in 64 bits")
    return v


def loads(text: str):
    """json.loads that refuses NaN/Infinity, numbers that overflow to inf and integers beyond 64
    bits (InvalidInput), and nesting too deep to read back (ValueError)."""
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_float, parse_int=_int)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def finite_json(v, what: str) -> None:
    """A value about to be stored as JSON text: no NaN/inf, integers in 64 bits."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return
    if isinstance(v, float):
        if not math.isfinite(v):
            raise InvalidInput(f"{what} holds {v} (numbers must be finite)")
    elif isinstance(v, int):
        if not INT_MIN <= v <= INT_MAX:
            raise InvalidInput(f"{what} holds an integer that does not fit in 64 bits")
    elif isinstance(v, dict):
        for x in v.values():
            finite_json(x, what)
    elif isinstance(v, (list, tuple)):
        for x in v:
            finite_json(x, what)


def number(v, what: str, lo: float | None = None, hi: float | None = None, *, integer: bool = False) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (integer and not isinstance(v, int)):
        raise InvalidInput(
            f'"{what}" must be {"a whole number" if integer else "a number"}, not {type(v).__name__}'
        )
    if isinstance(v, float) and not math.isfinite(v):
        raise InvalidInput(f'"{what}" must be finite, not {v}')
    if isinstance(v, int) and not INT_MIN <= v <= INT_MAX:
        raise InvalidInput(f'"{what}" does not fit in 64 bits')
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        span = (
            f"between {lo:g} and {hi:g}"
            if lo is not None and hi is not None
            else f"at least {lo:g}"
            if lo is not None
            else f"at most {hi:g}"
        )
        raise InvalidInput(f'"{what}" must be {span}, not {v:g}')


def epoch(v, what: str) -> None:
    number(v, what, 0.0, TIME_MAX)


# -- rows of a full export ---------------------------------------------------------------------
_OBJ, _LIST, _ANY = dict, list, object
# JSON text columns and the JSON type each must hold ("" allowed where the schema defaults to it).
JSON_COLUMNS = {
    "metadata": _OBJ,
    "steps": _LIST,
    "triggers": _LIST,
    "members": _LIST,
    "evidence": _OBJ,
    "snapshot": _ANY,
    "counts": _OBJ,
    "selected": _ANY,
}
# (audit.summary is display text the chain hashes as written: any text, not parsed.)
JSON_BY_TABLE = {"import_watermarks": {"value": _ANY}}
UNIT = {("memories", "importance"), ("memories", "strength"), ("memories", "anchor_strength")}
RANGES = {
    ("rules", "score"): (0.0, 10.0),
    ("rule_history", "old_score"): (0.0, 10.0),
    ("rule_history", "new_score"): (0.0, 10.0),
    ("curator_runs", "duration"): (0.0, None),
}
FLAGS = {"pinned", "embedded", "dry_run", "needs_approval"}
COUNTS = {"access_count", "violations", "token_count", "residue", "watermark"}
CHOICES = {
    ("memories", "kind"): KINDS,
    ("memories", "tier"): TIERS,
    ("messages", "role"): ROLES,
    ("flow_runs", "outcome"): ("pass", "fail"),
}


def _is_time(col: str) -> bool:
    return col == "at" or col.endswith("_at") or col == "deadline"


_PLANS: dict[tuple[str, str, str], tuple] = {}


def _plan(table: str, col: str, decl: str) -> tuple:
    """(type, not null, low, high, JSON kind, choices) for one column, worked out once."""
    key = (table, col)
    if (table, col, decl) not in _PLANS:
        typ = decl.split()[0] if decl else ""
        lo: float | None = None
        hi: float | None = None
        if typ == "INTEGER":
            if "PRIMARY KEY" in decl:
                lo, hi = 1, INT_MAX
            elif col in FLAGS:
                lo, hi = 0, 1
            elif col in COUNTS:
                lo, hi = 0, INT_MAX
            else:
                lo, hi = INT_MIN, INT_MAX
        elif typ == "REAL":
            lo, hi = (0.0, 1.0) if key in UNIT else RANGES.get(key, (None, None))
            if _is_time(col):
                lo, hi = 0.0, TIME_MAX
        kind = (JSON_BY_TABLE.get(table, {}).get(col) or JSON_COLUMNS.get(col)) if typ == "TEXT" else None
        _PLANS[(table, col, decl)] = (typ, "NOT NULL" in decl, lo, hi, kind, CHOICES.get(key))
    return _PLANS[(table, col, decl)]


def check_row(table: str, row: dict, declared: Mapping[str, str]) -> None:
    """Hold one exported row to its table's declaration (`declared`: column -> declaration,
    TableDump.declared) with InvalidInput naming the column. The common case (a well-formed
    value) costs a type test and a comparison."""
    for col, v in row.items():
        typ, not_null, lo, hi, kind, choices = _plan(table, col, declared.get(col, ""))
        if v is None:
            if not_null:
                raise InvalidInput(f'"{table}.{col}" may not be null')
            continue
        if isinstance(v, (bytes, bytearray)):
            raise InvalidInput(
                f'"{table}.{col}" holds binary data; this column holds {typ.lower() or "no binary data"}'
            )
        if typ == "TEXT":
            if type(v) is not str or "\x00" in v or not v.isascii():
                _text(v, f"{table}.{col}")
            if kind is not None and not (v == "" and kind is _ANY):
                _json_text(v, f"{table}.{col}", kind)
            if choices and v not in choices:
                raise InvalidInput(f'"{table}.{col}" is {cut(v)}; use one of {", ".join(choices)}')
        elif typ == "INTEGER":
            if not (type(v) is int and lo <= v <= hi):
                number(v, f"{table}.{col}", lo, hi, integer=True)
        elif typ == "REAL":
            t = type(v)
            if not (
                (t is float or t is int)
                and (lo is None or lo <= v)
                and (hi is None or v <= hi)
                and (t is int or math.isfinite(v))
            ):
                number(v, f"{table}.{col}", lo, hi)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            number(v, f"{table}.{col}")
        elif not isinstance(v, str):
            raise InvalidInput(f'"{table}.{col}" must be a plain value, not {type(v).__name__}')


def _text(v, what: str) -> None:
    if not isinstance(v, str):
        raise InvalidInput(f'"{what}" must be text, not {type(v).__name__}')
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f'"{what}" contains a lone surrogate (not valid Unicode)') from None
    if "\x00" in v:
        raise InvalidInput(f'"{what}" contains a NUL character')


def _json_text(v: str, what: str, kind) -> None:
    try:
        data = loads(v)
    except InvalidInput as exc:
        raise InvalidInput(f'"{what}" is not valid JSON: {exc}') from None
    except (ValueError, RecursionError) as exc:
        raise InvalidInput(f'"{what}" is not valid JSON ({getattr(exc, "msg", exc)})') from None
    if kind is not _ANY and not isinstance(data, kind):
        want = "an object" if kind is dict else "a list"
        raise InvalidInput(f'"{what}" must be JSON {want}, not {type(data).__name__}')


def vector(b64, dim: int) -> bytes:
    """A memory's exported vector: base64 of `dim` finite float32 values, not all zero."""
    if not isinstance(b64, str):
        raise InvalidInput('"vector" must be base64 text')
    try:
        raw = base64.b64decode(b64, validate=True)
    except (ValueError, TypeError):
        raise InvalidInput('"vector" is not base64') from None
    if len(raw) != 4 * dim:
        raise InvalidInput(
            f"a vector must belong to a memory and hold {dim} float32 values, not {len(raw) / 4:g}"
        )
    arr = np.frombuffer(raw, dtype="<f4")
    if not np.isfinite(arr).all():
        raise InvalidInput('"vector" holds NaN or infinite values')
    if not arr.any():
        raise InvalidInput('"vector" is all zeros (no direction to compare)')
    return raw
