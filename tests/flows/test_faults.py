"""Faults at flow level: S3 throttling and dropped connections, an object that vanishes between
listing and reading, a run killed mid-way, and a run that fails telling the team.

The S3 faults come from a small HTTP proxy on loopback in front of moto's server: real requests
from the real client, answered 503 SlowDown, cut off, held, or passed on after deleting the
object. The sessions bucket is read through the proxy; results go to a local folder.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, unquote, urlsplit

import boto3
import pytest
from tests_support import cli_env, halluwatch_bin, serving

from findings.query import run_query
from findings.store import TABLES, ResultsStore
from sessions.errors import ConfigError
from sessions.storage import LocalStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "alerts"))
from loopback import Reply, peer
from test_webhook_channel import SECRET, verify

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples"
DAY = date(2026, 11, 29)
DAY_FOLDER = EXAMPLE / "bucket" / "sessions" / "2026" / "11" / "29"
PREFIX = "prod"
# What the bundled example's 2026-11-29 gives, fault or no fault (tests/flows/test_nightly.py).
EXPECTED = {
    "files": 10,
    "files_parsed": 9,
    "sessions": 31,
    "failed_by_reason": {"truncated": 1},
    "signals_by_kind": {
        "contradicted_action_claim": 1,
        "invented_id": 3,
        "not_found": 6,
        "unknown_tool": 9,
    },
}

pytestmark = pytest.mark.prefect

_buckets = itertools.count()
T = TypeVar("T")


# -- the fault proxy ----------------------------------------------------------------------------

SLOW_DOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection"}


class FaultProxy(ThreadingHTTPServer):
    """Forwards S3 requests to ``upstream``, injecting the faults it is told to.

    ``slow_down[op]``: answer the next N requests of ``op`` (``ListObjectsV2``, ``GetObject``...)
    with 503 SlowDown; ``drop[op]``: close the next N connections without an answer (how a
    timeout or a reset looks to the client); ``cut[op]``: answer the next N with the whole
    status and headers but half the body, then close (a connection lost mid-download);
    ``vanish``: keys deleted upstream just before their first GetObject is passed on; ``hold``:
    keys whose GetObject waits until ``release`` is set.
    """

    daemon_threads = True

    def __init__(self, upstream: str, delete: Callable[[str, str], None]) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.delete = delete
        self.slow_down: Counter[str] = Counter()
        self.drop: Counter[str] = Counter()
        self.cut: Counter[str] = Counter()
        self.vanish: set[str] = set()
        self.hold: set[str] = set()
        self.held = threading.Event()  # a held request has arrived
        self.release = threading.Event()
        self.injected: list[tuple[str, str, str]] = []  # (fault, operation, key)
        self.passed: Counter[str] = Counter()  # operation -> requests passed on
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def fault_for(self, op: str, bucket: str, key: str) -> str | None:
        with self.lock:
            budgets = (("slow_down", self.slow_down), ("drop", self.drop), ("cut", self.cut))
            for name, budget in budgets:
                if budget[op] > 0:
                    budget[op] -= 1
                    self.injected.append((name, op, key))
                    return name
            if op == "GetObject" and key in self.vanish:
                self.vanish.discard(key)
                self.injected.append(("vanish", op, key))
                return "vanish"
            if op == "GetObject" and key in self.hold:
                self.injected.append(("hold", op, key))
                return "hold"
            self.passed[op] += 1
            return None


def _operation(method: str, path: str) -> tuple[str, str, str]:
    """(S3 operation, bucket, key) of a path-style request."""
    parts = urlsplit(path)
    bucket, _, key = parts.path.lstrip("/").partition("/")
    key = unquote(key)
    query = parse_qs(parts.query, keep_blank_values=True)
    if method == "GET" and not key:
        return ("ListObjectsV2" if query.get("list-type") == ["2"] else "ListObjects"), bucket, ""
    names = {"GET": "GetObject", "HEAD": "HeadObject", "PUT": "PutObject"}
    return names.get(method, f"{method}Object"), bucket, key


class _ProxyHandler(BaseHTTPRequestHandler):
    server: FaultProxy
    protocol_version = "HTTP/1.1"  # keep-alive, like S3: botocore reuses its connections

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        op, bucket, key = _operation(self.command, self.path)
        fault = self.server.fault_for(op, bucket, key)
        if fault == "drop":
            self.close_connection = True  # no status line: the client sees the connection end
            return
        if fault == "slow_down":
            self._reply(503, {"Content-Type": "application/xml"}, SLOW_DOWN)
            return
        if fault == "vanish":
            self.server.delete(bucket, key)  # gone after the listing, before the read
        if fault == "hold":
            self.server.held.set()
            self.server.release.wait(timeout=120)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        upstream = http.client.HTTPConnection(*self.server.upstream, timeout=30)
        try:
            upstream.request(self.command, self.path, body=body or None, headers=headers)
            response = upstream.getresponse()
            payload = response.read()
            status = response.status
            out = {k: v for k, v in response.getheaders() if k.lower() not in HOP_BY_HOP}
            if self.command == "HEAD":
                out["Content-Length"] = response.getheader("Content-Length") or "0"
        finally:
            upstream.close()
        self._reply(status, out, payload, cut=fault == "cut")

    def _reply(self, status: int, headers: dict[str, str], body: bytes, cut: bool = False) -> None:
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            if self.command != "HEAD" or "Content-Length" not in headers:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body[: len(body) // 2] if cut else body)
            if cut:
                self.close_connection = True
        except OSError:  # the client is gone (a killed run): nothing to answer
            self.close_connection = True

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _handle

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def fault_proxy(upstream: str, s3: Any) -> Iterator[FaultProxy]:
    proxy = FaultProxy(upstream, lambda bucket, key: s3.delete_object(Bucket=bucket, Key=key))
    with serving(proxy):
        try:
            yield proxy
        finally:
            proxy.release.set()  # let held reads go before the server shuts down


# -- helpers ------------------------------------------------------------------------------------


@pytest.fixture
def s3(s3_endpoint: str) -> Any:
    return boto3.session.Session().client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")


def _bucket_with_the_day(s3: Any) -> str:
    """A new bucket holding the example's 2026-11-29 under ``prod/``."""
    bucket = f"faults-{next(_buckets)}"
    s3.create_bucket(Bucket=bucket)
    for path in sorted(DAY_FOLDER.rglob("*")):
        if path.is_file():
            key = f"{PREFIX}/{path.relative_to(EXAMPLE / 'bucket').as_posix()}"
            s3.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
    return bucket


def _config(folder: Path, bucket: str, endpoint: str, extra: str = "") -> Path:
    """The example's config reading ``bucket`` at ``endpoint``, results in ``folder/results``."""
    folder.mkdir(parents=True, exist_ok=True)
    text = (
        (EXAMPLE / "halluwatch.yaml")
        .read_text()
        .replace(
            "location: ./bucket",
            f"location: s3://{bucket}/{PREFIX}\n  endpoint_url: {endpoint}",
        )
    )
    assert f"s3://{bucket}" in text and "location: ./results" in text
    config = folder / "halluwatch.yaml"
    config.write_text(text + extra)
    return config


def _key(bucket_relative: str) -> str:
    return f"{PREFIX}/sessions/2026/11/29/{bucket_relative}"


def _rows(results: ResultsStore, table: str) -> list[dict[str, Any]]:
    """The day's committed rows without the run id, in a stable order."""
    rows = [
        {k: v for k, v in r.items() if k != "run_id"}
        for r in results.read_table(table, DAY).to_pylist()
    ]
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def _poll(check: Callable[[], T | None], timeout: float, what: str) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)


# -- (a) throttling and dropped connections -----------------------------------------------------


def test_throttling_and_dropped_connections_change_nothing(
    prefect_api: str, s3_endpoint: str, s3: Any, tmp_path: Path
) -> None:
    from flows.nightly import nightly

    bucket = _bucket_with_the_day(s3)
    clean = nightly(config=str(_config(tmp_path / "clean", bucket, s3_endpoint)), date="2026-11-29")
    with fault_proxy(s3_endpoint, s3) as proxy:
        # Few, because each costs seconds: after a SlowDown, boto3's adaptive mode rate-limits
        # the client itself (200 small reads took 8 s after one SlowDown, 1.6 s without).
        proxy.slow_down.update({"ListObjectsV2": 1, "GetObject": 2})
        proxy.drop.update({"GetObject": 1})
        config = _config(tmp_path / "faulty", bucket, proxy.url)
        faulty = nightly(config=str(config), date="2026-11-29")
    injected = Counter((fault, op) for fault, op, _ in proxy.injected)
    assert injected == {
        ("slow_down", "ListObjectsV2"): 1,
        ("slow_down", "GetObject"): 2,
        ("drop", "GetObject"): 1,
    }
    assert proxy.passed["GetObject"] == EXPECTED["files"]  # every object read in the end
    for name, value in EXPECTED.items():
        assert clean[name] == faulty[name] == value, name
    for key in ("tool_calls", "replies", "formats", "findings", "anomalies"):
        strip = json.loads(json.dumps(faulty[key]).replace(faulty["run_id"], clean["run_id"]))
        assert strip == clean[key], key
    clean_results = ResultsStore(LocalStore(tmp_path / "clean" / "results"), "")
    faulty_results = ResultsStore(LocalStore(tmp_path / "faulty" / "results"), "")
    for table in ("sessions", "signals", "failures", "metrics", "findings"):
        assert _rows(faulty_results, table) == _rows(clean_results, table), table


def test_a_connection_lost_mid_download_changes_nothing(
    prefect_api: str, s3_endpoint: str, s3: Any, tmp_path: Path
) -> None:
    """Half an object, then the connection closes (as a read timeout mid-body also ends).

    botocore does not retry a body read; today the batch fails and Prefect's task retry
    (after 2 s) reads the batch again. Asserted here: only that the results are complete.
    """
    from flows.nightly import nightly

    bucket = _bucket_with_the_day(s3)
    with fault_proxy(s3_endpoint, s3) as proxy:
        proxy.cut.update({"GetObject": 1})
        config = _config(tmp_path, bucket, proxy.url)
        manifest = nightly(config=str(config), date="2026-11-29")
    assert [(fault, op) for fault, op, _ in proxy.injected] == [("cut", "GetObject")]
    for name, value in EXPECTED.items():
        assert manifest[name] == value, name
    results = ResultsStore(LocalStore(tmp_path / "results"), "")
    assert results.read_table("sessions", DAY).num_rows == EXPECTED["sessions"]


# -- (b) an object that vanishes between listing and reading -----------------------------------


def test_an_object_gone_before_it_is_read_is_counted_not_fatal(
    prefect_api: str, s3_endpoint: str, s3: Any, tmp_path: Path
) -> None:
    from flows.nightly import nightly

    bucket = _bucket_with_the_day(s3)
    gone = _key("ops-agent/trace-1.json")
    with fault_proxy(s3_endpoint, s3) as proxy:
        proxy.vanish.add(gone)
        manifest = nightly(config=str(_config(tmp_path, bucket, proxy.url)), date="2026-11-29")
    assert proxy.injected == [("vanish", "GetObject", gone)]
    assert manifest["files"] == 10 and manifest["files_parsed"] == 8
    assert manifest["failed_by_reason"] == {"truncated": 1, "vanished": 1}
    vanished = [f for f in manifest["failures"] if f["reason"] == "vanished"]
    assert [f["source"] for f in vanished] == ["sessions/2026/11/29/ops-agent/trace-1.json"]
    assert "does not exist" in vanished[0]["message"]
    assert manifest["sessions"] == EXPECTED["sessions"] - 1  # one ops-agent trace is one session
    results = ResultsStore(LocalStore(tmp_path / "results"), "")
    rows = results.read_table("failures", DAY).to_pylist()
    assert sorted(r["reason"] for r in rows) == ["truncated", "vanished"]


# -- (c) a run killed mid-way -------------------------------------------------------------------


def test_a_run_killed_mid_way_commits_nothing_and_a_rerun_commits_the_day(
    prefect_api: str, s3_endpoint: str, s3: Any, tmp_path: Path
) -> None:
    from flows.nightly import nightly

    bucket = _bucket_with_the_day(s3)
    results_dir = tmp_path / "results"
    with fault_proxy(s3_endpoint, s3) as proxy:
        # One batch per file (~1 KB batches); the batch of the last file blocks on its read.
        proxy.hold.add(_key("support-bot/sessions.jsonl"))
        config = _config(tmp_path, bucket, proxy.url, "  batch_mb: 0.001\n")
        assert config.read_text().rstrip().endswith("timezone: UTC\n  batch_mb: 0.001")
        log = tmp_path / "run.log"
        with log.open("wb") as out:
            run = subprocess.Popen(
                [halluwatch_bin(), "run", "--config", str(config), "--date", DAY.isoformat()],
                env=cli_env(PREFECT_API_URL=prefect_api),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

        def written_while_held() -> list[Path]:
            if run.poll() is not None:
                raise AssertionError(f"the run ended by itself:\n{log.read_text()[-3000:]}")
            if not proxy.held.is_set():
                return []
            return sorted(results_dir.glob("sessions/date=2026-11-29/run=*/part-*.parquet"))

        try:
            parts = _poll(written_while_held, 120, "a batch's parts while another batch is held")
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(run.pid, signal.SIGKILL)  # the run and anything it started
            run.wait(timeout=30)
        assert run.returncode == -signal.SIGKILL, log.read_text()[-3000:]
        killed_run = parts[0].parent.name

        # Nothing of the killed run is visible: no manifest, no committed day, empty views.
        results = ResultsStore(LocalStore(results_dir), "")
        assert not (results_dir / "manifests").exists()
        assert results.committed_days() == []
        assert results.read_table("sessions", DAY).num_rows == 0
        assert run_query(results, "SELECT count(*) FROM sessions")[1] == [(0,)]
        assert run_query(results, "SELECT count(*) FROM signals")[1] == [(0,)]

        proxy.hold.clear()
        proxy.release.set()
        manifest = nightly(config=str(config), date=DAY.isoformat())

    for name, value in EXPECTED.items():
        assert manifest[name] == value, name
    assert manifest["batches"] == 10
    assert results.committed_days() == [DAY]
    assert run_query(results, "SELECT count(*) FROM sessions")[1] == [(31,)]
    # The killed run's parts are gone, in every table: only the committed run remains.
    for table in TABLES:
        runs = {p.name for p in (results_dir / table / "date=2026-11-29").glob("run=*")}
        assert runs <= {f"run={manifest['run_id']}"}, (table, runs)
    assert not list(results_dir.glob(f"*/date=2026-11-29/{killed_run}"))


# -- 3. a failed run tells the team ------------------------------------------------------------


def _failing_config(tmp_path: Path, hook_url: str, slack: bool = False) -> Path:
    """The example, with a results location that is a file: the run cannot write anything.

    The file's name holds the webhook's signing secret, so the error message quotes a secret.
    """
    shutil.copytree(EXAMPLE / "bucket", tmp_path / "bucket")
    blocked = tmp_path / f"results-{SECRET}"
    blocked.write_text("not a folder\n")
    text = (
        (EXAMPLE / "halluwatch.yaml")
        .read_text()
        .replace("location: ./results", f"location: ./{blocked.name}")
    )
    channels = f"""
alerts:
  channels:
    team-hook:
      {{type: webhook, url: "{hook_url}", secret_env: HW_TEST_HOOK_SECRET, max_attempts: 1}}
"""
    if slack:
        channels += "    team-slack: {type: slack, webhook_url_env: HW_TEST_SLACK_URL}\n"
    config = tmp_path / "halluwatch.yaml"
    config.write_text(text + channels)
    return config


class _Lines(logging.Handler):
    """Every record, formatted as a handler writes it (message and traceback)."""

    def __init__(self) -> None:
        super().__init__()
        self.written: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.written.append(self.format(record))


def test_a_failed_night_sends_one_redacted_run_failed_message(
    prefect_api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flows.nightly import nightly

    monkeypatch.setenv("HW_TEST_HOOK_SECRET", SECRET)
    lines = _Lines()  # what Prefect logs of the run, as its handlers would write it
    run_logger = logging.getLogger("prefect.flow_runs")
    run_logger.addHandler(lines)
    try:
        with peer({"/hook": Reply(204, b""), "/slack": Reply(200, b"ok")}) as server:
            monkeypatch.setenv("HW_TEST_SLACK_URL", server.base_url + "/slack")
            config = _failing_config(tmp_path, server.base_url + "/hook", slack=True)
            with pytest.raises(ConfigError, match="cannot be used as a folder") as failed:
                nightly(config=str(config), date="2026-11-29")
    finally:
        run_logger.removeHandler(lines)
    assert SECRET in str(failed.value)  # the error itself quotes the secret...
    errors = [line for line in lines.written if "cannot be used as a folder" in line]
    assert errors and all("[redacted:env_secret]" in line for line in errors)
    assert not [line for line in lines.written if SECRET in line]  # ...Prefect's log does not
    hooks = [r for r in server.received if r.path == "/hook"]
    slack = [r for r in server.received if r.path == "/slack"]
    assert len(hooks) == 1 and len(slack) == 1
    for request in hooks + slack:
        assert SECRET not in request.body.decode()  # ...the messages do not
    assert verify(hooks[0], SECRET)
    payload = hooks[0].json()
    assert payload["type"] == "halluwatch.alerts" and payload["count"] == 1
    [alert] = payload["alerts"]
    assert alert["item_type"] == "run_failure" and alert["day"] == "2026-11-29"
    assert alert["title"] == "halluwatch run failed: nightly 2026-11-29"
    assert alert["kind"] == type(failed.value).__name__
    assert alert["summary"].startswith(f"{type(failed.value).__name__}: ")
    assert "[redacted:env_secret]" in alert["summary"]
    run = payload["run"]
    assert run["flow"] == "nightly" and run["label"] == "2026-11-29"
    assert run["flow_run_id"] and run["flow_run_name"] == "nightly-2026-11-29"
    assert run["url"] is None or run["flow_run_id"] in run["url"]
    assert run["rerun"] == f"halluwatch run --config {config} --date 2026-11-29"
    text = slack[0].body.decode()
    assert "halluwatch run failed: nightly 2026-11-29" in text
    assert run["flow_run_id"] in text and "[redacted:env_secret]" in text
    assert not (tmp_path / "results").exists()


def test_a_failed_backfill_from_the_cli_sends_one_message(prefect_api: str, tmp_path: Path) -> None:
    with peer({"/hook": Reply(204, b"")}) as server:
        config = _failing_config(tmp_path, server.base_url + "/hook")
        days = ["--start", "2026-11-28", "--end", "2026-11-29", "--deploy-version", "v2.4"]
        result = subprocess.run(
            [halluwatch_bin(), "backfill", "--config", str(config), *days],
            capture_output=True,
            text=True,
            env=cli_env(PREFECT_API_URL=prefect_api, HW_TEST_HOOK_SECRET=SECRET),
            timeout=300,
            check=False,
        )
    # A results location that is not a folder is a config error: one line, exit 2.
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("halluwatch: error: results location")
    [request] = server.received
    assert verify(request, SECRET) and SECRET not in request.body.decode()
    payload = request.json()
    [alert] = payload["alerts"]
    assert alert["item_type"] == "run_failure" and alert["day"] == "2026-11-28"
    assert alert["title"] == "halluwatch run failed: backfill 2026-11-28..2026-11-29"
    assert payload["run"]["rerun"].endswith(
        "--start 2026-11-28 --end 2026-11-29 --deploy-version v2.4"
    )


def test_undelivered_alerts_send_no_run_failed_message(
    prefect_api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure that is itself a delivery failure is not announced again: it is in the outbox."""
    from alerts.dispatch import AlertsNotDelivered
    from flows.nightly import nightly

    monkeypatch.setenv("HW_TEST_HOOK_SECRET", SECRET)
    shutil.copytree(EXAMPLE / "bucket", tmp_path / "bucket")
    with peer({"/hook": Reply(503, b"down")}) as server:
        config = tmp_path / "halluwatch.yaml"
        config.write_text(
            (EXAMPLE / "halluwatch.yaml").read_text()
            + "alerts:\n  channels:\n    team-hook:\n"
            + f'      {{type: webhook, url: "{server.base_url}/hook", '
            + "secret_env: HW_TEST_HOOK_SECRET, max_attempts: 1}\n"
        )
        with pytest.raises(AlertsNotDelivered):
            nightly(config=str(config), date="2026-11-29")
    types = {a["item_type"] for r in server.received for a in r.json()["alerts"]}
    assert server.received and "run_failure" not in types


def test_the_run_failed_message_in_each_format_is_inert() -> None:
    """Slack, email and console renderings of one failure; an error quoting markup stays text."""
    from alerts.channels.email import EmailChannel
    from flows.failures import FailureRenderer, RunFailure

    failure = RunFailure(
        flow="nightly",
        label="2026-11-29",
        day=DAY,
        error_type="StorageError",
        error="cannot write s3://bkt/x: <!channel> <b>now</b>",
        rerun="halluwatch run --config /etc/halluwatch.yaml --date 2026-11-29",
        flow_run_id="0b1c2d3e",
        flow_run_name="nightly-2026-11-29",
        url="http://127.0.0.1:4200/runs/flow-run/0b1c2d3e",
    )
    renderer = FailureRenderer(failure)
    alert = failure.alert()

    blocks = renderer.slack_blocks([alert], max_examples=3)
    slack = json.dumps(blocks)
    assert "<!channel>" not in slack and "&lt;!channel&gt;" in slack
    assert blocks[0]["text"]["text"] == "[critical] halluwatch run failed: nightly 2026-11-29"
    assert blocks[-1]["elements"][0]["url"] == failure.url
    assert "<!channel>" not in renderer.slack_text([alert])

    message = EmailChannel(
        "mail", renderer=renderer, host="127.0.0.1", port=25, sender="hw@example.com",
        recipients=["oncall@example.com"],
    ).build_message([alert])  # fmt: skip
    assert message["Subject"] == "[halluwatch] run failed: nightly 2026-11-29"
    parts = {p.get_content_type(): p.get_content() for p in message.walk() if not p.is_multipart()}
    assert set(parts) == {"text/plain", "text/html"}  # no chart: a failure has no figures
    assert failure.rerun in parts["text/plain"] and "0b1c2d3e" in parts["text/plain"]
    assert "<b>now</b>" not in parts["text/html"] and "&lt;b&gt;now&lt;/b&gt;" in parts["text/html"]

    console = renderer.console([alert]).splitlines()
    assert console[0] == "[CRITICAL] halluwatch run failed: nightly 2026-11-29  (Failed)"
    assert console[1] == "  StorageError: cannot write s3://bkt/x: <!channel> <b>now</b>"
