"""Where judgements are kept between runs, so the same reply and evidence are judged once.

A cache is anything with ``get(key)`` and ``put(key, value)``; the key is
``prompt.cache_key`` (a sha256 of the model, the template version, the evidence as sent and the
reply) and the value ``Judgement.to_dict()``. Only scored judgements are put: a failed request
or an unreadable answer is tried again next time. Implementations must be thread-safe: the
judge's workers call them concurrently.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Protocol


class JudgeCache(Protocol):
    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, value: dict[str, Any]) -> None: ...


class MemoryCache:
    """A cache for one process (tests, `judge-eval` runs)."""

    def __init__(self) -> None:
        self.entries: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            return self.entries.get(key)

    def put(self, key: str, value: dict[str, Any]) -> None:
        with self._lock:
            self.entries[key] = value


class DirectoryCache:
    """One JSON file per key under a folder; writes are atomic (temp file, then rename)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return None  # absent, or cut short by a crash mid-write of an older version
        return data if isinstance(data, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        path = self._path(key)
        path.parent.mkdir(exist_ok=True)
        temp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        temp.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
        temp.replace(path)
