"""The results store: what a run wrote, partitioned by date so DuckDB or Athena read it in place.

    <results>/sessions/date=YYYY-MM-DD/run=<run_id>/part-00000.parquet   one row per session
    <results>/signals/date=YYYY-MM-DD/run=<run_id>/part-00000.parquet    one row per signal
    <results>/failures/date=YYYY-MM-DD/run=<run_id>/part-00000.parquet   one row per unreadable file
    <results>/audit/date=YYYY-MM-DD/run=<run_id>/part-00000.parquet      faithfulness audit log
    <results>/manifests/date=YYYY-MM-DD/manifest.json                    the run's manifest

Batches write their own parts, so nothing waits in memory for the end of the run. The manifest
is written last and names the run that holds the day; once it is written, parts of older runs of
that day are deleted, so a re-run replaces the day rather than adding to it.
"""

from __future__ import annotations

import io
from datetime import date
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from sessions.storage import Store

# Every table says which day and which run it belongs to; the per-session tables also say which
# session, agent and version, so one query can join or split them without the sessions table.
_RUN = [("date", pa.string()), ("run_id", pa.string())]
_SESSION = [
    ("session_id", pa.string()),
    ("source", pa.string()),
    ("agent", pa.string()),
    ("agent_version", pa.string()),
]

SESSION_SCHEMA = pa.schema(
    [
        *_RUN,
        ("session_id", pa.string()),
        ("source", pa.string()),
        ("format", pa.string()),
        ("agent", pa.string()),
        ("agent_version", pa.string()),
        ("model", pa.string()),
        ("started_at", pa.timestamp("us", tz="UTC")),
        ("events", pa.int32()),
        ("tool_calls", pa.int32()),
        ("replies", pa.int32()),
        ("tools_source", pa.string()),
        ("signals", pa.int32()),
        ("warnings", pa.list_(pa.string())),
    ]
)

SIGNAL_SCHEMA = pa.schema(
    [
        *_RUN,
        *_SESSION,
        ("kind", pa.string()),
        ("value", pa.string()),
        ("severity", pa.string()),
        ("events", pa.list_(pa.int32())),
        ("explanation", pa.string()),
        ("detector", pa.string()),
        ("detector_version", pa.int32()),
        ("params", pa.string()),
    ]
)

FAILURE_SCHEMA = pa.schema(
    [
        *_RUN,
        ("source", pa.string()),
        ("reason", pa.string()),
        ("message", pa.string()),
    ]
)

# The faithfulness audit log: one row per reply below the threshold (`action` says which check).
AUDIT_SCHEMA = pa.schema(
    [
        *_RUN,
        *_SESSION,
        ("action", pa.string()),
        ("event", pa.int32()),
        ("score", pa.float64()),
        ("threshold", pa.float64()),
        ("per_kind_breakdown", pa.string()),
        ("unsupported_sample", pa.list_(pa.string())),
        ("response_excerpt", pa.string()),
        ("context_excerpt", pa.string()),
    ]
)

TABLES = {
    "sessions": SESSION_SCHEMA,
    "signals": SIGNAL_SCHEMA,
    "failures": FAILURE_SCHEMA,
    "audit": AUDIT_SCHEMA,
}


class ResultsStore:
    def __init__(self, store: Store, prefix: str = "halluwatch/") -> None:
        self.store = store
        self.prefix = prefix if not prefix or prefix.endswith("/") else prefix + "/"

    @property
    def url(self) -> str:
        return f"{self.store.url.rstrip('/')}/{self.prefix}"

    def _day(self, table: str, day: date) -> str:
        return f"{self.prefix}{table}/date={day.isoformat()}/"

    def write_part(
        self, table: str, day: date, run_id: str, part: int, rows: list[dict[str, Any]]
    ) -> None:
        if not rows:
            return
        schema = TABLES[table]
        buffer = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), buffer, compression="zstd")
        key = f"{self._day(table, day)}run={run_id}/part-{part:05d}.parquet"
        self.store.write(key, buffer.getvalue())

    def write_manifest(self, day: date, manifest: dict[str, Any]) -> str:
        key = f"{self._day('manifests', day)}manifest.json"
        self.store.write(
            key, orjson.dumps(manifest, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
        )
        return key

    def read_manifest(self, day: date) -> dict[str, Any] | None:
        key = f"{self._day('manifests', day)}manifest.json"
        if not self.store.exists(key):
            return None
        value = orjson.loads(self.store.read(key))
        return value if isinstance(value, dict) else None

    def drop_other_runs(self, day: date, run_id: str) -> list[str]:
        """Delete what older runs wrote for ``day``; returns the run prefixes removed."""
        removed = []
        for table in TABLES:
            day_prefix = self._day(table, day)
            runs = {o.key[len(day_prefix) :].split("/", 1)[0] for o in self.store.list(day_prefix)}
            for run in sorted(runs - {f"run={run_id}"}):
                self.store.delete_prefix(f"{day_prefix}{run}/")
                removed.append(f"{day_prefix}{run}/")
        return removed

    def read_table(self, table: str, day: date) -> pa.Table:
        """The rows of ``table`` for ``day`` from the run the manifest names (empty if none)."""
        manifest = self.read_manifest(day)
        schema = TABLES[table]
        if manifest is None:
            return schema.empty_table()
        prefix = f"{self._day(table, day)}run={manifest['run_id']}/"
        parts = [
            pq.read_table(io.BytesIO(self.store.read(o.key)), schema=schema)
            for o in self.store.list(prefix)
            if o.key.endswith(".parquet")
        ]
        return pa.concat_tables(parts) if parts else schema.empty_table()
