"""The judge's cache in the results store: one JSON object per content hash.

    <results>/judge-cache/<first two hex digits>/<sha256>.json

The key hashes the model, the prompt template version, the evidence as sent and the reply
(detectors/judge computes it), so a re-run or a backfill over the same sessions repeats no call,
and a new model or prompt misses the cache by construction. Entries are not tied to a day or a
run: they outlive re-runs (nothing deletes them) and a lifecycle rule may expire them.
"""

from __future__ import annotations

import string
from typing import Any

import orjson

from findings.store import ResultsStore
from sessions.errors import StorageError

_HEX = frozenset(string.hexdigits)


class StoreJudgeCache:
    """A ``detectors.judge.JudgeCache`` over the results store."""

    def __init__(self, results: ResultsStore) -> None:
        self.results = results

    def _key(self, key: str) -> str:
        if len(key) < 8 or not _HEX.issuperset(key):
            raise ValueError(f"judge cache key {key!r} is not a hex digest")
        return f"{self.results.prefix}judge-cache/{key[:2]}/{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._key(key)
        try:
            if not self.results.store.exists(path):
                return None
            value = orjson.loads(self.results.store.read(path))
        except (StorageError, orjson.JSONDecodeError):
            return None  # a cache that cannot be read is a miss, never a failed run
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        self.results.store.write(self._key(key), orjson.dumps(value))
