"""Build the run's working parts (stores, reader, detectors) from a loaded config.

Tasks receive the config, not live clients, so the same flow runs on threads, processes or a
Dask cluster; each worker builds its parts once and reuses them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from detectors.runner import DetectorSuite
from findings.store import ResultsStore
from flows.config import LoadedConfig
from sessions.reader import SessionReader
from sessions.storage import Store, open_store


@dataclass(frozen=True, slots=True)
class RunParts:
    sessions: Store
    results: ResultsStore
    reader: SessionReader
    suite: DetectorSuite


_cache: dict[str, RunParts] = {}
_lock = threading.Lock()


def run_parts(loaded: LoadedConfig) -> RunParts:
    key = f"{loaded.base}:{loaded.hash}"
    with _lock:
        if key not in _cache:
            _cache[key] = _build(loaded)
        return _cache[key]


def _build(loaded: LoadedConfig) -> RunParts:
    cfg = loaded.config
    sessions = open_store(
        cfg.sessions.location,
        endpoint_url=cfg.sessions.endpoint_url,
        region=cfg.sessions.region,
        base=loaded.base,
    )
    if cfg.results.location:
        results_store = open_store(
            cfg.results.location, endpoint_url=cfg.results.endpoint_url, base=loaded.base
        )
    else:
        results_store = sessions
    reader = SessionReader(cfg.sessions, cfg.agents, base=loaded.base)
    return RunParts(
        sessions,
        ResultsStore(results_store, cfg.results.prefix),
        reader,
        loaded.detector_suite(),
    )
