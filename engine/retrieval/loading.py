"""Loading a long-lived engine's in-memory index (the vector matrix, the keyword matrix) once: in
the caller's thread or a background one, never two loads at a time, and never an error for the
caller — until a load succeeds, the store's own index answers, and the next trigger tries again."""

from __future__ import annotations

import threading
from collections.abc import Callable


class Loader:
    def __init__(self, name: str, load: Callable[[], None], loaded: Callable[[], bool]) -> None:
        self.name = name  # the background thread's name
        self._load = load  # builds the index and publishes it (or returns, if there is nothing to load)
        self._loaded = loaded
        self._lock = threading.Lock()
        self.loading = False

    def start(self, background: bool = False) -> None:
        with self._lock:
            if self._loaded() or self.loading:
                return
            self.loading = True
        if background:
            threading.Thread(target=self._run, name=self.name, daemon=True).start()
        else:
            self._run()

    def _run(self) -> None:
        try:
            self._load()
        except Exception:  # noqa: BLE001 - the store keeps answering; the next trigger tries again
            pass
        finally:
            self.loading = False
