"""SQL over the results store with DuckDB: one view per table, holding only committed runs.

Each day's manifest names the run that holds the day, so the views never show a day twice, even
in the moment between a re-run's commit and the removal of the run it replaced. Local parts are
read in place by DuckDB; parts in S3 are read with pyarrow (which needs no DuckDB extension
offline) and handed to DuckDB as Arrow tables.
"""

from __future__ import annotations

import io
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from findings.store import TABLES, ResultsStore
from sessions.storage import LocalStore

MANIFEST_COLUMNS = (
    "date",
    "run_id",
    "code_version",
    "config_hash",
    "files",
    "files_parsed",
    "files_failed",
    "sessions",
    "tool_calls",
    "replies",
    "sessions_without_tool_list",
    "started_at",
    "finished_at",
)


def committed_parts(results: ResultsStore, table: str) -> list[str]:
    keys = []
    for day in results.committed_days():
        manifest = results.read_manifest(day) or {}
        prefix = f"{results.prefix}{table}/date={day.isoformat()}/run={manifest.get('run_id')}/"
        keys += [o.key for o in results.store.list(prefix) if o.key.endswith(".parquet")]
    return keys


def connect(results: ResultsStore) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    local = results.store if isinstance(results.store, LocalStore) else None
    for table, schema in TABLES.items():
        keys = committed_parts(results, table)
        if local is not None and keys:
            paths = ", ".join("'" + str(local.root / k).replace("'", "''") + "'" for k in keys)
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet([{paths}])")
            continue
        parts = [pq.read_table(io.BytesIO(results.store.read(k)), schema=schema) for k in keys]
        con.register(table, pa.concat_tables(parts) if parts else schema.empty_table())
    manifests = [
        {c: (results.read_manifest(d) or {}).get(c) for c in MANIFEST_COLUMNS}
        for d in results.committed_days()
    ]
    con.register(
        "manifests",
        pa.Table.from_pylist(manifests)
        if manifests
        else pa.table({c: pa.array([], pa.string()) for c in MANIFEST_COLUMNS}),
    )
    return con


def run_query(results: ResultsStore, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    con = connect(results)
    try:
        cursor = con.execute(sql)
    except duckdb.Error as exc:
        from sessions.errors import ConfigError

        raise ConfigError(f"query failed: {str(exc).splitlines()[0]}") from None
    columns = [d[0] for d in cursor.description or []]
    return columns, cursor.fetchall()
