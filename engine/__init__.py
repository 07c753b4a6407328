"""memconsole's memory engine: the only code that touches the database. No UI imports here."""

from engine.clock import FixedClock, SystemClock, iso, parse_time
from engine.embed import Embedder, HashEmbedder
from engine.engine import MemoryEngine, open_engine
from engine.errors import (
    DatabaseDamaged,
    DiskFull,
    EmbedderUnavailable,
    EngineError,
    Forgotten,
    ImportFailed,
    InvalidInput,
    NotFound,
    StoreBusy,
)
from engine.types import (
    AddResult,
    Breakdown,
    Explanation,
    Hit,
    Memory,
    Message,
    SearchResult,
    Session,
    SessionDetail,
    to_json,
)

__all__ = [
    "open_engine",
    "MemoryEngine",
    "Embedder",
    "HashEmbedder",
    "FixedClock",
    "SystemClock",
    "iso",
    "parse_time",
    "EngineError",
    "DatabaseDamaged",
    "DiskFull",
    "InvalidInput",
    "Forgotten",
    "NotFound",
    "StoreBusy",
    "EmbedderUnavailable",
    "ImportFailed",
    "AddResult",
    "Breakdown",
    "Explanation",
    "Hit",
    "Memory",
    "Message",
    "SearchResult",
    "Session",
    "SessionDetail",
    "to_json",
]
