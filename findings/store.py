"""The results store: what a run wrote, partitioned by date so DuckDB or Athena read it in place.

    <results>/sessions/date=YYYY-MM-DD/run=<run_id>/part-00000.parquet   one row per session
    <results>/signals/date=YYYY-MM-DD/run=<run_id>/part-00000.parquet    one row per signal
    <results>/failures/date=YYYY-MM-DD/run=<run_id>/part-00000.parquet   one row per unreadable file
    <results>/audit/date=YYYY-MM-DD/run=<run_id>/part-00000.parquet      faithfulness audit log
    <results>/judgements/date=YYYY-MM-DD/run=<run_id>/part-00000.parquet one row per judged reply
    <results>/judge-cache/<ab>/<sha256>.json                             the judge's replies, by
                                                                         content hash (any day)
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

from sessions.errors import ConfigError
from sessions.storage import LocalStore, Store

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
        ("data", pa.string()),  # JSON: detector-specific facts (tool, rule, entity kind...)
        ("evidence", pa.string()),  # JSON: the cited events, excerpted, for examples
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

METRIC_SCHEMA = pa.schema(
    [
        *_RUN,
        ("agent", pa.string()),
        ("agent_version", pa.string()),  # "*" = all versions of the agent
        ("metric", pa.string()),
        ("kind", pa.string()),  # proportion | rate
        ("numerator", pa.int64()),
        ("denominator", pa.int64()),
        ("value", pa.float64()),
        ("ci_low", pa.float64()),  # a 95% interval, for estimates from the judge's sample
        ("ci_high", pa.float64()),
        ("sessions", pa.int64()),
    ]
)

ANOMALY_SCHEMA = pa.schema(
    [
        *_RUN,
        ("metric", pa.string()),
        ("agent", pa.string()),
        ("agent_version", pa.string()),
        ("kind", pa.string()),
        ("today_value", pa.float64()),
        ("today_numerator", pa.int64()),
        ("today_denominator", pa.int64()),
        ("baseline_value", pa.float64()),
        ("baseline_numerator", pa.int64()),
        ("baseline_denominator", pa.int64()),
        ("baseline_days", pa.int32()),
        ("lift", pa.float64()),
        ("p_value", pa.float64()),
        ("status", pa.string()),
        ("severity", pa.string()),
        ("reason", pa.string()),
    ]
)

# The LLM judge: one row per judged reply, scored or not (an unscored row says why).
JUDGEMENT_SCHEMA = pa.schema(
    [
        *_RUN,
        *_SESSION,
        ("reply_event", pa.int32()),
        ("status", pa.string()),  # scored | unscored | over_budget
        ("score", pa.float64()),  # contradicted claims / claims
        ("claims", pa.int32()),
        ("supported", pa.int32()),
        ("partial", pa.int32()),
        ("unsupported", pa.int32()),
        ("contradicted", pa.int32()),
        ("reason", pa.string()),
        ("unscored_reason", pa.string()),
        ("model", pa.string()),
        ("template", pa.string()),
        ("cached", pa.bool_()),
        ("input_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("cost_usd", pa.float64()),
        ("weight", pa.float64()),  # 1 / inclusion probability of the session in the sample
        ("flagged", pa.bool_()),  # code checks flagged the session (it was oversampled)
        ("evidence_truncated", pa.bool_()),
        ("claims_detail", pa.string()),  # JSON: each claim with its label and evidence
    ]
)

FINDING_SCHEMA = pa.schema(
    [
        *_RUN,
        ("finding_id", pa.string()),
        ("kind", pa.string()),
        ("agent", pa.string()),
        ("severity", pa.string()),
        ("title", pa.string()),
        ("affected_sessions", pa.int64()),
        ("affected_share", pa.float64()),
        ("signals", pa.int64()),
        ("first_seen", pa.string()),
        ("recommended_fix", pa.string()),
    ]
)

TABLES = {
    "sessions": SESSION_SCHEMA,
    "signals": SIGNAL_SCHEMA,
    "failures": FAILURE_SCHEMA,
    "audit": AUDIT_SCHEMA,
    "metrics": METRIC_SCHEMA,
    "anomalies": ANOMALY_SCHEMA,
    "findings": FINDING_SCHEMA,
    "judgements": JUDGEMENT_SCHEMA,
}
# Files that are not Parquet tables but live in a run's folder all the same.
DOCUMENTS = ("findings_detail",)


class ResultsStore:
    def __init__(self, store: Store, prefix: str = "halluwatch/") -> None:
        if isinstance(store, LocalStore):
            # Results are written here anyway; a first run on an empty day must find it.
            try:
                store.root.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ConfigError(
                    f"results location {store.root} cannot be used as a folder "
                    f"({exc.strerror}): point results.location at a folder"
                ) from None
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
        for table in (*TABLES, *DOCUMENTS):
            day_prefix = self._day(table, day)
            runs = {o.key[len(day_prefix) :].split("/", 1)[0] for o in self.store.list(day_prefix)}
            for run in sorted(runs - {f"run={run_id}"}):
                self.store.delete_prefix(f"{day_prefix}{run}/")
                removed.append(f"{day_prefix}{run}/")
        return removed

    def read_table(self, table: str, day: date) -> pa.Table:
        """The rows of ``table`` for ``day`` from the run the manifest names (empty if none)."""
        manifest = self.read_manifest(day)
        if manifest is None:
            return TABLES[table].empty_table()
        return self.read_run_table(table, day, manifest["run_id"])

    def write_document(self, name: str, day: date, run_id: str, value: Any) -> None:
        key = f"{self._day(name, day)}run={run_id}/{name}.json"
        self.store.write(key, orjson.dumps(value, option=orjson.OPT_INDENT_2))

    def read_document(self, name: str, day: date) -> Any:
        """A run document (e.g. the findings in full) of the run the manifest names, or None."""
        manifest = self.read_manifest(day)
        if manifest is None:
            return None
        key = f"{self._day(name, day)}run={manifest['run_id']}/{name}.json"
        return orjson.loads(self.store.read(key)) if self.store.exists(key) else None

    def committed_days(self) -> list[date]:
        """Days with a manifest, oldest first."""
        days = set()
        for obj in self.store.list(f"{self.prefix}manifests/"):
            part = obj.key[len(self.prefix) + len("manifests/") :].split("/", 1)[0]
            if part.startswith("date=") and obj.key.endswith("manifest.json"):
                days.add(date.fromisoformat(part.removeprefix("date=")))
        return sorted(days)

    def read_run_table(self, table: str, day: date, run_id: str) -> pa.Table:
        """The rows one run wrote for ``day`` (committed or not)."""
        schema = TABLES[table]
        prefix = f"{self._day(table, day)}run={run_id}/"
        parts = [
            pq.read_table(io.BytesIO(self.store.read(o.key)), schema=schema)
            for o in self.store.list(prefix)
            if o.key.endswith(".parquet")
        ]
        return pa.concat_tables(parts) if parts else schema.empty_table()
