"""One filter language for every listing (issue #27): parse (parse.py), what each surface accepts
(surfaces.py), completion (complete.py)."""

from .complete import candidates, complete
from .parse import MAX_CHARS, Filter, FilterError, parse_filter, parse_when, tokenize
from .surfaces import SURFACES, Surface

__all__ = [
    "MAX_CHARS",
    "SURFACES",
    "Filter",
    "FilterError",
    "Surface",
    "candidates",
    "complete",
    "parse_filter",
    "parse_when",
    "tokenize",
]
