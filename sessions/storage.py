"""Object storage: a local folder or an S3 bucket (AWS, MinIO), behind one small ``Store``.

Keys are '/'-separated and relative to the store root, so the rest of halluwatch never sees a
bucket or a folder. Failures become ``StorageError`` subclasses that name the object and the
next step; a missing or rejected credential is a ``CredentialError`` (the run stops at once)::

    StorageError
    ├── ObjectVanishedError    the key is gone (deleted between listing and reading)
    ├── BucketNotFoundError    the bucket does not exist
    └── AccessDeniedError      the credentials may not do this

Each subclass has a short ``reason`` the run manifest can count by, like ``SessionError``.
"""

from __future__ import annotations

import os
import secrets
import shutil
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from operator import itemgetter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    IncompleteReadError,
    NoCredentialsError,
    PartialCredentialsError,
    ResponseStreamingError,
)

from sessions.errors import ConfigError, CredentialError, StorageError

# A body cut off mid-download is read again this many times in all (botocore retries requests,
# not the streaming of their bodies).
BODY_ATTEMPTS = 3


class ObjectVanishedError(StorageError):
    reason = "vanished"


class BucketNotFoundError(StorageError):
    reason = "no_such_bucket"


class AccessDeniedError(StorageError):
    reason = "access_denied"


@dataclass(frozen=True)
class ObjectInfo:
    key: str
    size: int


class Store(ABC):
    """Where session files are read from and results written to."""

    url: str

    @abstractmethod
    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        """The objects whose key starts with ``prefix``, in key order."""

    @abstractmethod
    def read(self, key: str) -> bytes: ...

    @abstractmethod
    def write(self, key: str, data: bytes) -> None: ...

    @abstractmethod
    def exists(self, key: str) -> bool: ...

    @abstractmethod
    def delete_prefix(self, prefix: str) -> None:
        """Delete every object whose key starts with ``prefix`` (which must not be empty)."""

    def write_text(self, key: str, text: str) -> None:
        self.write(key, text.encode("utf-8"))

    def read_many(
        self, keys: Iterable[str], max_workers: int = 8, max_in_flight: int | None = None
    ) -> Iterator[tuple[str, bytes | StorageError]]:
        """Read ``keys`` concurrently, yielding ``(key, bytes or StorageError)`` in input order.

        At most ``max_in_flight`` keys (default: twice ``max_workers``, so the pool stays busy
        while the caller parses) are read but not yet consumed: ``keys`` is pulled lazily and
        memory stays flat however long the day is. Other errors (a ``CredentialError``, a bug)
        are raised: they concern the whole run, not one object.
        """
        if max_workers < 1 or (max_in_flight is not None and max_in_flight < 1):
            raise ValueError("max_workers and max_in_flight must be at least 1")
        bound = max_in_flight or 2 * max_workers
        pending_keys = iter(keys)
        pending: deque[tuple[str, Future[bytes]]] = deque()
        pool = ThreadPoolExecutor(min(max_workers, bound), thread_name_prefix="halluwatch-read")

        def submit_next() -> None:
            key = next(pending_keys, None)
            if key is not None:
                pending.append((key, pool.submit(self.read, key)))

        try:
            for _ in range(bound):
                submit_next()
            while pending:
                key, future = pending.popleft()
                result: bytes | StorageError
                try:
                    result = future.result()
                except StorageError as exc:
                    result = exc
                submit_next()  # before yielding, so the read overlaps the caller's work
                yield key, result
        finally:
            # Also reached when the caller stops early: drop what was queued, wait for the rest.
            pool.shutdown(wait=True, cancel_futures=True)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"


# Temp files of unfinished writes; the listing skips them, so readers never see half a file.
_TMP = ".halluwatch-tmp-"


class LocalStore(Store):
    """A folder on the local disk (the default store)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser().resolve()
        self.url = self.root.as_uri()

    def _path(self, key: str) -> Path:
        parts = key.split("/")
        if any(part in ("", ".", "..") for part in parts):
            raise StorageError(f"invalid key {key!r} for {self.root}: keys are 'a/b/c' paths")
        return self.root.joinpath(*parts)

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        if not self.root.is_dir():
            raise StorageError(
                f"the local store {self.root} does not exist or is not a folder: "
                "check the storage path in the config"
            )
        folder = prefix.rpartition("/")[0]
        start = self._path(folder) if folder else self.root
        yield from self._walk(start, folder + "/" if folder else "", prefix)

    def _walk(self, directory: Path, dir_key: str, prefix: str) -> Iterator[ObjectInfo]:
        try:
            with os.scandir(directory) as scan:
                # A folder sorts as 'name/', which puts its keys exactly where a sort of the
                # full keys would (the order S3 lists in), without holding the tree in memory.
                entries = [(e.name + "/" if e.is_dir() else e.name, e) for e in scan]
            entries.sort(key=itemgetter(0))
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            raise StorageError(f"cannot list {directory}: {exc.strerror or exc}") from exc
        for name, entry in entries:
            key = dir_key + name
            if name.endswith("/"):
                if key.startswith(prefix) or prefix.startswith(key):
                    yield from self._walk(Path(entry.path), key, prefix)
            elif key.startswith(prefix) and entry.is_file() and not name.startswith(_TMP):
                try:
                    size = entry.stat().st_size
                except FileNotFoundError:
                    continue  # deleted while we listed
                yield ObjectInfo(key, size)

    def read(self, key: str) -> bytes:
        path = self._path(key)
        try:
            return path.read_bytes()
        except FileNotFoundError as exc:
            raise ObjectVanishedError(f"{path} does not exist (deleted after listing?)") from exc
        except OSError as exc:
            raise StorageError(f"cannot read {path}: {exc.strerror or exc}") from exc

    def write(self, key: str, data: bytes) -> None:
        path = self._path(key)
        tmp = path.with_name(f"{_TMP}{path.name}.{secrets.token_hex(6)}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # os.open (not mkstemp) so the file gets the usual umask permissions, not 0600.
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
            with os.fdopen(os.open(tmp, flags, 0o666), "wb") as out:
                out.write(data)
            # No fsync: results can be re-made by re-running the day; os.replace already gives
            # readers the old file or the new one, never a torn one.
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from exc

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def delete_prefix(self, prefix: str) -> None:
        if not prefix:
            raise ValueError("refusing to delete the whole store: pass a non-empty prefix")
        try:
            if prefix.endswith("/"):
                # The whole folder, leftover temp files included, so a re-run starts clean.
                shutil.rmtree(self._path(prefix.rstrip("/")))
            else:
                for info in [*self.list(prefix)]:  # listed first: we delete what we walk
                    self._path(info.key).unlink(missing_ok=True)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StorageError(f"cannot delete {prefix!r} in {self.root}: {exc}") from exc


_CREDENTIALS_HINT = (
    "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (plus AWS_SESSION_TOKEN for temporary "
    "credentials), or AWS_PROFILE"
)
_REJECTED_CODES = {"InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken"}


class S3Store(Store):
    """An S3 bucket, optionally under a prefix; MinIO and moto through ``endpoint_url``."""

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint_url: str | None = None,
        region: str | None = None,
        client: Any = None,
    ) -> None:
        if not bucket:
            raise ConfigError("an S3 store needs a bucket: use s3://BUCKET/PREFIX")
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.url = f"s3://{bucket}/{self.prefix}"
        self._client = client if client is not None else _s3_client(endpoint_url, region)

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        skip = len(self.prefix)
        with self._errors("list", prefix):
            for page in self._pages(prefix):
                for obj in page.get("Contents", ()):
                    if not obj["Key"].endswith("/"):  # folder markers made by consoles
                        yield ObjectInfo(obj["Key"][skip:], obj["Size"])

    def _pages(self, prefix: str) -> Iterator[dict[str, Any]]:
        paginator = self._client.get_paginator("list_objects_v2")
        return iter(paginator.paginate(Bucket=self.bucket, Prefix=self.prefix + prefix))

    def read(self, key: str) -> bytes:
        with self._errors("read", key):
            for attempt in range(1, BODY_ATTEMPTS + 1):
                reply = self._client.get_object(Bucket=self.bucket, Key=self.prefix + key)
                body = reply["Body"]  # botocore's StreamingBody: it checks the length it reads
                try:
                    return bytes(body.read())
                except (ResponseStreamingError, IncompleteReadError):
                    # The connection broke mid-body; botocore retried the request, not this.
                    if attempt == BODY_ATTEMPTS:
                        raise
                finally:
                    body.close()
        raise AssertionError("unreachable")

    def write(self, key: str, data: bytes) -> None:
        with self._errors("write", key):
            self._client.put_object(Bucket=self.bucket, Key=self.prefix + key, Body=data)

    def exists(self, key: str) -> bool:
        with self._errors("check", key):
            try:
                self._client.head_object(Bucket=self.bucket, Key=self.prefix + key)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey"):
                    return False
                raise
        return True

    def delete_prefix(self, prefix: str) -> None:
        if not prefix:
            raise ValueError("refusing to delete the whole store: pass a non-empty prefix")
        with self._errors("delete", prefix):
            for page in self._pages(prefix):  # at most 1,000 keys a page: one DeleteObjects
                if doomed := [{"Key": obj["Key"]} for obj in page.get("Contents", ())]:
                    reply = self._client.delete_objects(
                        Bucket=self.bucket, Delete={"Objects": doomed, "Quiet": True}
                    )
                    if errors := reply.get("Errors"):
                        raise StorageError(
                            f"could not delete {len(errors)} objects under {self.url}{prefix}, "
                            f"e.g. {errors[0]['Key']}: {errors[0]['Code']} {errors[0]['Message']}"
                        )

    @contextmanager
    def _errors(self, action: str, key: str) -> Iterator[None]:
        try:
            yield
        except (BotoCoreError, ClientError) as exc:
            raise self._translate(exc, action, f"{self.url}{key}") from exc

    def _translate(self, exc: Exception, action: str, where: str) -> Exception:
        if isinstance(exc, NoCredentialsError | PartialCredentialsError):
            return CredentialError(f"no AWS credentials to {action} {where}: {_CREDENTIALS_HINT}")
        if not isinstance(exc, ClientError):  # unreachable endpoint, timeouts after retries
            endpoint = self._client.meta.endpoint_url
            return StorageError(f"could not {action} {where} at {endpoint}: {exc}")
        error = exc.response.get("Error", {})
        code, message = str(error.get("Code", "")), error.get("Message", "")
        if code == "NoSuchBucket":
            return BucketNotFoundError(
                f"bucket {self.bucket!r} does not exist at {self._client.meta.endpoint_url}: "
                "check the bucket in the storage URL (and the endpoint), or create it"
            )
        if code in ("NoSuchKey", "404"):
            return ObjectVanishedError(f"{where} does not exist (deleted after listing?)")
        if code in ("AccessDenied", "403", "AllAccessDisabled"):
            return AccessDeniedError(
                f"access denied to {action} {where}: the credentials need s3:ListBucket and "
                "s3:GetObject on the bucket (s3:PutObject and s3:DeleteObject to write results)"
            )
        if code in _REJECTED_CODES:
            return CredentialError(f"AWS rejected the credentials ({code}): {_CREDENTIALS_HINT}")
        return StorageError(f"could not {action} {where}: {code} {message}".rstrip())


def _s3_client(endpoint_url: str | None, region: str | None) -> Any:
    # Imported here: boto3 costs ~0.2 s, which a run on a local folder need not pay.
    import boto3
    from botocore.config import Config

    config = Config(
        # Adaptive mode retries 503 SlowDown and throttling with a client-side rate limit.
        retries={"max_attempts": 10, "mode": "adaptive"},
        connect_timeout=10,
        read_timeout=60,
        # Above read_many's workers, so threads never wait for (or discard) a connection.
        max_pool_connections=32,
    )
    # A session of our own: boto3's default session is not safe to create from many threads.
    session = boto3.session.Session()
    return session.client("s3", endpoint_url=endpoint_url, region_name=region, config=config)


def open_store(
    url: str,
    *,
    endpoint_url: str | None = None,
    region: str | None = None,
    base: Path | None = None,
) -> Store:
    """``s3://bucket/prefix`` -> ``S3Store``; ``file:///path`` or a path -> ``LocalStore``."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "s3":
        if "@" in parts.netloc:  # the URL is not repeated: it holds a secret
            raise ConfigError(f"the s3:// storage URL contains credentials: {_CREDENTIALS_HINT}")
        return S3Store(parts.netloc, parts.path, endpoint_url=endpoint_url, region=region)
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise ConfigError(f"the file:// URL names a remote host {parts.hostname!r}")
        path = Path(url2pathname(parts.path))
    elif scheme == "" or len(scheme) == 1:  # a plain path (or a Windows drive letter)
        path = Path(url)
    else:
        raise ConfigError(
            f"unsupported storage URL scheme {scheme!r}: "
            "use s3://BUCKET/PREFIX, file:///PATH or a local folder"
        )
    path = path.expanduser()
    return LocalStore(path if path.is_absolute() else (base or Path.cwd()) / path)


_LAYOUT_FIELDS = "{date} (ISO), {date:%Y/%m/%d} (any strftime), {year}, {month:02d}, {day:02d}"


def partition_prefix(layout: str, day: date) -> str:
    """The key prefix of ``day``'s partition, e.g. ``sessions/{date:%Y/%m/%d}/`` -> ``.../29/``."""
    fields = {"date": day, "year": day.year, "month": day.month, "day": day.day}
    try:
        rendered = layout.format_map(fields)
    except KeyError as exc:
        raise ConfigError(
            f"partition layout {layout!r} has an unknown field {exc.args[0]!r}: "
            f"use {_LAYOUT_FIELDS}"
        ) from exc
    except (IndexError, ValueError, AttributeError, TypeError) as exc:
        raise ConfigError(
            f"partition layout {layout!r} is invalid ({exc}): use {_LAYOUT_FIELDS}"
        ) from exc
    rendered = rendered.lstrip("/")  # keys are relative to the store root
    return rendered if not rendered or rendered.endswith("/") else rendered + "/"
