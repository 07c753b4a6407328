"""The engine's documented error types: nothing else escapes its public API."""


class EngineError(Exception):
    """Base class: every error the engine raises on purpose is one of these."""


class InvalidInput(EngineError, ValueError):
    """The caller passed something the engine cannot store or search (a clear message says what)."""


class Forgotten(InvalidInput):
    """A write of text a forget removed: a tombstone matches it, so it is refused (and audited)."""


class NotFound(EngineError, LookupError):
    """An id that names nothing."""


class MergedAway(InvalidInput):
    """A write to a memory a curator merge absorbed: refused (and audited), naming the survivor."""

    def __init__(self, memory_id: int, survivor: int, action: str) -> None:
        what = (
            "undo that merge in the curator to restore it"
            if action == "restore"
            else f"{action} memory {survivor} instead (or undo the merge in the curator)"
        )
        super().__init__(f"memory {memory_id} was merged into memory {survivor}; {what}")
        self.memory_id, self.survivor = memory_id, survivor


class ReadOnly(EngineError):
    """A write asked of an engine that cannot write: a standby (read replica) or `--read-only`.
    The message says which, in one line; nothing was attempted."""


class Refused(EngineError, PermissionError):
    """The verified caller lacks the role an action needs: the message names the role, in one line
    (and the refusal is audited)."""


class StoreBusy(EngineError):
    """The database stayed locked by other writers through every retry."""


class EmbedderUnavailable(EngineError):
    """Vector work was asked for but no embedding model is loaded or loadable."""


class ImportFailed(EngineError):
    """An import source is unreadable; the message names the file (and line) at fault."""


class DiskFull(EngineError):
    """The disk (the server's, on PostgreSQL) is full: the write rolled back, nothing of it kept.
    The CLI exits 5 (DISK_FULL_EXIT)."""


DISK_FULL_EXIT = 5


class DatabaseDamaged(EngineError):
    """The database found its file malformed: `doctor` says where; nothing (more) was written."""


CUT_AT = 200  # characters of a value an error message shows


def cut(value: object, limit: int = CUT_AT) -> str:
    """A value as an error message shows it: its repr, or its first `limit` characters and its
    length (`'abcabc…' (3,000,000 chars)`), so an error line never echoes megabytes of input."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}… ({len(value):,} chars)"
    shown = repr(value)
    return shown if len(shown) <= limit else f"{shown[:limit]}… ({len(shown):,} chars)"


def cut_line(message: str, limit: int = 4 * CUT_AT) -> str:
    """One message line no longer than about `limit` (the last guard where errors are shown)."""
    if len(message) <= limit:
        return message
    return f"{message[:limit]}… ({len(message):,} chars)"
