"""Tests of sessions.storage on a real folder, moto's S3 server and a scripted S3 on loopback.

The contract tests run the same assertions against ``LocalStore`` and ``S3Store``, so the local
default behaves like the bucket a team runs in production (key order included).
"""

from __future__ import annotations

import gzip
import itertools
import re
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer
from tests_support import serving

from sessions.errors import ConfigError, CredentialError, StorageError
from sessions.storage import (
    AccessDeniedError,
    BucketNotFoundError,
    LocalStore,
    ObjectInfo,
    ObjectVanishedError,
    S3Store,
    Store,
    open_store,
    partition_prefix,
)

SECRET = "s3cr3t-that-must-never-leak"
DAY = "sessions/2026/11/29/"
BIG = 1_050  # past one ListObjectsV2 page (1,000 keys)
_bucket_numbers = itertools.count()


@pytest.fixture(scope="module")
def aws_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Dummy credentials, and nothing from this machine's AWS setup (no IMDS lookups either)."""
    absent = tmp_path_factory.mktemp("aws") / "absent"
    with pytest.MonkeyPatch.context() as mp:
        for name in (
            "AWS_PROFILE",
            "AWS_SESSION_TOKEN",
            "AWS_ENDPOINT_URL",
            "AWS_ENDPOINT_URL_S3",
            "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
            "AWS_CONTAINER_CREDENTIALS_FULL_URI",
            "AWS_WEB_IDENTITY_TOKEN_FILE",
        ):
            mp.delenv(name, raising=False)
        mp.setenv("AWS_ACCESS_KEY_ID", "testing")
        mp.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
        mp.setenv("AWS_DEFAULT_REGION", "us-east-1")
        mp.setenv("AWS_SHARED_CREDENTIALS_FILE", str(absent))
        mp.setenv("AWS_CONFIG_FILE", str(absent))
        mp.setenv("AWS_EC2_METADATA_DISABLED", "true")
        yield


@pytest.fixture(scope="module")
def endpoint(aws_env: None) -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(scope="module")
def s3(endpoint: str) -> Any:
    """A plain boto3 client, to arrange and disturb buckets independently of the store."""
    return boto3.session.Session().client("s3", endpoint_url=endpoint)


@pytest.fixture
def bucket(s3: Any) -> str:
    name = f"test-bucket-{next(_bucket_numbers)}"
    s3.create_bucket(Bucket=name)
    return name


@pytest.fixture(scope="module")
def big_bucket(s3: Any) -> str:
    s3.create_bucket(Bucket="big-bucket")
    keys = [f"{DAY}{i:05d}.jsonl" for i in range(BIG)]
    keys += ["sessions/2026/11/30/00000.jsonl", "sessions/2026/11/2x.jsonl"]
    with ThreadPoolExecutor(8) as pool:  # moto serves ~150 puts/s; threads keep it busy
        list(pool.map(lambda key: s3.put_object(Bucket="big-bucket", Key=key, Body=b"{}"), keys))
    return "big-bucket"


@dataclass
class Subject:
    """A store under test and a way to remove an object behind its back."""

    store: Store
    remove: Callable[[str], None]


@pytest.fixture(params=["local", "s3"])
def subject(request: pytest.FixtureRequest, tmp_path: Path) -> Subject:
    if request.param == "local":
        return Subject(LocalStore(tmp_path), lambda key: (tmp_path / key).unlink())
    name, s3 = request.getfixturevalue("bucket"), request.getfixturevalue("s3")
    store = S3Store(name, "team/a", endpoint_url=request.getfixturevalue("endpoint"))
    return Subject(store, lambda key: s3.delete_object(Bucket=name, Key=f"team/a/{key}"))


# -- the contract, on both stores --------------------------------------------------------------


def test_write_read_exists_round_trip(subject: Subject) -> None:
    store = subject.store
    raw = gzip.compress(b'{"role": "user", "content": "hi"}\n' * 50, mtime=0)
    store.write("day/a.jsonl.gz", raw)
    store.write_text("day/b.json", "{}")

    assert store.read("day/a.jsonl.gz") == raw
    assert store.read("day/b.json") == b"{}"
    assert store.exists("day/b.json")
    assert not store.exists("day/missing.json")
    assert list(store.list()) == [
        ObjectInfo("day/a.jsonl.gz", len(raw)),
        ObjectInfo("day/b.json", 2),
    ]


def test_list_filters_by_prefix_in_s3_key_order(subject: Subject) -> None:
    store = subject.store
    for key in ["b/1", "ab/c", "a/2", "a-b", "a/1"]:
        store.write(key, b"x")

    # '-' sorts before '/', which sorts before letters: the local walk must match S3's order.
    assert [info.key for info in store.list("a")] == ["a-b", "a/1", "a/2", "ab/c"]
    assert [info.key for info in store.list("a/")] == ["a/1", "a/2"]
    assert [info.key for info in store.list("c/")] == []


def test_delete_prefix_deletes_only_that_prefix(subject: Subject) -> None:
    store = subject.store
    for key in ["results/2026/11/29/a", "results/2026/11/29/sub/b", "results/2026/11/30/a"]:
        store.write(key, b"x")

    store.delete_prefix("results/2026/11/29/")
    store.delete_prefix("results/2027/")  # nothing there: not an error

    assert [info.key for info in store.list()] == ["results/2026/11/30/a"]
    with pytest.raises(ValueError, match="whole store"):
        store.delete_prefix("")


def test_read_many_reports_an_object_that_vanished_after_listing(subject: Subject) -> None:
    store = subject.store
    for i in range(5):
        store.write(f"day/{i}.json", f'{{"n": {i}}}'.encode())
    keys = [info.key for info in store.list("day/")]
    subject.remove("day/2.json")

    results = dict(store.read_many(keys, max_workers=2))

    vanished = results.pop("day/2.json")
    assert isinstance(vanished, ObjectVanishedError)
    assert vanished.reason == "vanished"
    assert "day/2.json" in str(vanished)
    assert results == {f"day/{i}.json": f'{{"n": {i}}}'.encode() for i in (0, 1, 3, 4)}


# -- S3 against moto ----------------------------------------------------------------------------


def test_s3_list_follows_pages_past_1000_keys(big_bucket: str, endpoint: str) -> None:
    store = S3Store(big_bucket, endpoint_url=endpoint)

    listed = list(store.list(DAY))

    assert [info.key for info in listed] == [f"{DAY}{i:05d}.jsonl" for i in range(BIG)]
    assert {info.size for info in listed} == {2}


def test_s3_store_prefix_is_stripped_from_keys(big_bucket: str, endpoint: str) -> None:
    store = S3Store(big_bucket, "/sessions/2026/11", endpoint_url=endpoint)

    assert store.url == "s3://big-bucket/sessions/2026/11/"
    assert [info.key for info in store.list("2")][-1] == "2x.jsonl"
    assert [info.key for info in store.list("30/")] == ["30/00000.jsonl"]
    assert store.read("30/00000.jsonl") == b"{}"


def test_s3_read_returns_gzip_bytes_untouched(bucket: str, s3: Any, endpoint: str) -> None:
    raw = gzip.compress(b'{"type": "assistant"}\n' * 200)
    # Content-Encoding: gzip must not make the client decompress behind our back.
    s3.put_object(Bucket=bucket, Key="s.jsonl.gz", Body=raw, ContentEncoding="gzip")

    assert S3Store(bucket, endpoint_url=endpoint).read("s.jsonl.gz") == raw


def test_s3_missing_bucket_names_the_bucket(endpoint: str) -> None:
    store = S3Store("no-such-bucket", endpoint_url=endpoint)

    with pytest.raises(BucketNotFoundError, match="'no-such-bucket' does not exist") as caught:
        list(store.list())
    assert isinstance(caught.value, StorageError)
    assert endpoint in str(caught.value)
    with pytest.raises(BucketNotFoundError):
        store.read("x")


def test_s3_missing_credentials_say_what_to_set(
    bucket: str, endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    store = S3Store(bucket, endpoint_url=endpoint)

    with pytest.raises(CredentialError, match="AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"):
        list(store.list())
    # A credential problem concerns the whole run: read_many raises it rather than yield it.
    with pytest.raises(CredentialError):
        list(store.read_many(["a", "b"]))


def test_s3_never_shows_credentials(bucket: str, endpoint: str) -> None:
    store = S3Store(bucket, endpoint_url=endpoint)
    with pytest.raises(ObjectVanishedError) as caught:
        store.read("missing.json")

    for text in (str(caught.value), repr(store), store.url):
        assert SECRET not in text and "testing" not in text
    assert str(caught.value).startswith(f"s3://{bucket}/missing.json does not exist")


# -- S3 errors moto does not produce: a scripted S3 on loopback ---------------------------------


class _ScriptedS3(BaseHTTPRequestHandler):
    """Answers each request with the next scripted (status, error code or None for success)."""

    def do_GET(self) -> None:
        self.server.requests.append(self.command)  # type: ignore[attr-defined]
        status, code = self.server.script.pop(0)  # type: ignore[attr-defined]
        body = b"payload" if code is None else f"<Error><Code>{code}</Code></Error>".encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_HEAD = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def scripted(aws_env: None) -> Iterator[tuple[ThreadingHTTPServer, str]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ScriptedS3)
    server.script, server.requests = [], []  # type: ignore[attr-defined]
    with serving(server):
        yield server, f"http://127.0.0.1:{server.server_address[1]}"


def test_s3_slow_down_is_retried(scripted: tuple[Any, str]) -> None:
    server, url = scripted
    server.script += [(503, "SlowDown"), (200, None)]

    assert S3Store("bkt", endpoint_url=url).read("k") == b"payload"
    assert server.requests == ["GET", "GET"]


@pytest.mark.parametrize(
    ("status", "code", "error", "says"),
    [
        (403, "AccessDenied", AccessDeniedError, "s3:GetObject"),
        (403, "InvalidAccessKeyId", CredentialError, "AWS_ACCESS_KEY_ID"),
        (400, "InvalidObjectState", StorageError, "could not read s3://bkt/k: InvalidObjectState"),
    ],
)
def test_s3_errors_become_halluwatch_errors(
    scripted: tuple[Any, str], status: int, code: str, error: type[Exception], says: str
) -> None:
    server, url = scripted
    server.script += [(status, code)]

    with pytest.raises(error, match=says):
        S3Store("bkt", endpoint_url=url).read("k")
    assert server.requests == ["GET"]


def test_s3_exists_on_forbidden_head_is_an_error_not_false(scripted: tuple[Any, str]) -> None:
    server, url = scripted
    server.script += [(403, None)]

    with pytest.raises(AccessDeniedError, match="s3://bkt/k"):
        S3Store("bkt", endpoint_url=url).exists("k")
    assert server.requests == ["HEAD"]  # a 403 is final: not retried


# -- read_many: order, bounds, laziness ---------------------------------------------------------


class _GatedStore(LocalStore):
    """Counts reads in progress; each read waits at a barrier until ``width`` reads run at once."""

    def __init__(self, root: Path, width: int) -> None:
        super().__init__(root)
        self.gate = threading.Barrier(width, timeout=10)
        self.lock = threading.Lock()
        self.active = self.most_active = 0

    def read(self, key: str) -> bytes:
        with self.lock:
            self.active += 1
            self.most_active = max(self.most_active, self.active)
        try:
            self.gate.wait()  # fails (BrokenBarrierError) if fewer than `width` ever overlap
            return super().read(key)
        finally:
            with self.lock:
                self.active -= 1


@pytest.mark.parametrize(
    ("max_workers", "max_in_flight", "width"),
    [(8, 3, 3), (2, None, 2)],
)
def test_read_many_keeps_input_order_within_the_bound(
    tmp_path: Path, max_workers: int, max_in_flight: int | None, width: int
) -> None:
    store = _GatedStore(tmp_path, width)
    keys = [f"k/{n}" for n in (5, 3, 11, 0, 7, 2, 9, 1, 4, 10, 6, 8)]
    for key in keys:
        store.write(key, key.encode())

    results = list(store.read_many(keys, max_workers=max_workers, max_in_flight=max_in_flight))

    assert results == [(key, key.encode()) for key in keys]
    assert store.most_active == width


def test_read_many_pulls_keys_lazily_and_stops_early(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.write("k", b"x")
    pulled = 0

    def endless_keys() -> Iterator[str]:
        nonlocal pulled
        while True:
            pulled += 1
            yield "k"

    results = store.read_many(endless_keys(), max_workers=2, max_in_flight=3)
    assert next(results) == ("k", b"x")
    assert pulled == 4  # the bound, plus the one submitted as the first was handed over
    results.close()  # returns: the pool is shut down, nothing left running
    assert pulled == 4


def test_read_many_rejects_a_zero_bound(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        next(LocalStore(tmp_path).read_many(["k"], max_in_flight=0))


# -- LocalStore specifics -----------------------------------------------------------------------


def test_local_write_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.write("a/b/c.json", b"old")
    store.write("a/b/c.json", b"new")
    (tmp_path / "a" / "b" / "d").mkdir()

    with pytest.raises(StorageError, match="cannot write"):
        store.write("a/b/d", b"cannot replace a folder")

    assert (tmp_path / "a" / "b" / "c.json").read_bytes() == b"new"
    assert sorted(p.name for p in (tmp_path / "a" / "b").iterdir()) == ["c.json", "d"]


def test_local_list_skips_unfinished_writes(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.write("day/a.json", b"{}")
    (tmp_path / "day" / ".halluwatch-tmp-b.json.1234").write_bytes(b"{")

    assert [info.key for info in store.list()] == ["day/a.json"]


def test_local_delete_prefix_by_name_prefix(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    for key in ["day/run-1.json", "day/run-2.json", "day/summary.json"]:
        store.write(key, b"x")

    store.delete_prefix("day/run-")

    assert [info.key for info in store.list()] == ["day/summary.json"]


def test_local_rejects_keys_that_leave_the_root(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "root")

    with pytest.raises(StorageError, match=re.escape("invalid key '../secret'")):
        store.write("../secret", b"x")
    [(key, error)] = store.read_many(["a//b"])  # one bad key is data: yielded, not raised
    assert key == "a//b" and isinstance(error, StorageError) and "invalid key" in str(error)
    assert not (tmp_path / "secret").exists()


def test_local_missing_root_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match=f"{tmp_path / 'nowhere'} does not exist"):
        list(LocalStore(tmp_path / "nowhere").list())


# -- open_store ---------------------------------------------------------------------------------


def test_open_store_routes_s3_urls(aws_env: None) -> None:
    store = open_store(
        "s3://my-bucket/team/sessions", endpoint_url="http://127.0.0.1:9", region="eu-west-1"
    )

    assert isinstance(store, S3Store)
    assert (store.bucket, store.prefix, store.url) == (
        "my-bucket",
        "team/sessions/",
        "s3://my-bucket/team/sessions/",
    )
    assert store._client.meta.endpoint_url == "http://127.0.0.1:9"
    assert store._client.meta.region_name == "eu-west-1"


def test_open_store_routes_local_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)

    for url, root in [
        (f"file://{tmp_path}/a", tmp_path / "a"),
        (str(tmp_path / "b"), tmp_path / "b"),
        ("rel/c", tmp_path / "rel" / "c"),
    ]:
        store = open_store(url)
        assert isinstance(store, LocalStore)
        assert store.root == root.resolve()
    based = open_store("rel/d", base=tmp_path / "base")
    assert isinstance(based, LocalStore)
    assert based.root == (tmp_path / "base" / "rel" / "d").resolve()


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("gs://bucket/sessions", "unsupported storage URL scheme 'gs'"),
        ("https://user:pw@example.com/x", "scheme 'https': use s3://"),
        ("s3://AKIAKEY:hunter2@bucket/x", "contains credentials"),
        ("s3:///sessions", "needs a bucket"),
        ("file://fileserver/share", "names a remote host 'fileserver'"),
    ],
)
def test_open_store_rejects_bad_urls(url: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says) as caught:
        open_store(url)
    assert "hunter2" not in str(caught.value) and ":pw" not in str(caught.value)


# -- partition_prefix ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("layout", "prefix"),
    [
        ("sessions/{date:%Y/%m/%d}/", "sessions/2026/11/29/"),
        ("sessions/{date:%Y/%m/%d}", "sessions/2026/11/29/"),
        ("dt={date}", "dt=2026-11-29/"),
        ("{year}/{month:02d}/{day:02d}/", "2026/11/29/"),
        ("/logs/{date:%Y%m%d}", "logs/20261129/"),
        ("", ""),
    ],
)
def test_partition_prefix_renders(layout: str, prefix: str) -> None:
    assert partition_prefix(layout, date(2026, 11, 29)) == prefix


def test_partition_prefix_pads_fields() -> None:
    assert partition_prefix("{year}/{month:02d}/{day:02d}", date(2026, 3, 7)) == "2026/03/07/"


@pytest.mark.parametrize(
    ("layout", "says"),
    [
        ("sessions/{dat}/", "unknown field 'dat'"),
        ("sessions/{year:%Y}/", "is invalid"),
        ("sessions/{date/", "is invalid"),
        ("sessions/{}/", "is invalid"),
    ],
)
def test_partition_prefix_rejects_bad_layouts(layout: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says) as caught:
        partition_prefix(layout, date(2026, 11, 29))
    assert repr(layout) in str(caught.value)
    assert "{date:%Y/%m/%d}" in str(caught.value)
