"""The engine's documented error types: nothing else escapes its public API."""


class EngineError(Exception):
    """Base class: every error the engine raises on purpose is one of these."""


class InvalidInput(EngineError, ValueError):
    """The caller passed something the engine cannot store or search (a clear message says what)."""


class Forgotten(InvalidInput):
    """A write of text a forget removed: a tombstone matches it, so it is refused (and audited)."""


class NotFound(EngineError, LookupError):
    """An id that names nothing."""


class StoreBusy(EngineError):
    """The database stayed locked by other writers through every retry."""


class EmbedderUnavailable(EngineError):
    """Vector work was asked for but no embedding model is loaded or loadable."""


class ImportFailed(EngineError):
    """An import source is unreadable; the message names the file (and line) at fault."""


class DatabaseDamaged(EngineError):
    """The database found its file malformed: `doctor` says where; nothing (more) was written."""
