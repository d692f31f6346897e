"""An S3-compatible object store (boto3): the bytes layer under ``s3://`` run directories.

Every call is retried with backoff and jitter twice over: botocore's ``standard`` retry mode takes
5xx replies, throttling (``SlowDown``) and dropped connections request by request, and an outer
loop here takes what outlasts it, so a flaky endpoint costs time, never evidence. Large files go up
as multipart uploads whose parts are retried one by one; an upload that fails for good is aborted,
so no half-written object is left under its key (S3 shows an object only once it is complete).

Credentials come from boto3's usual chain (environment, profile, instance or pod identity); they
are never read from sweep files and never written anywhere.
"""

from __future__ import annotations

import base64
import hashlib
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import urlsplit

import boto3
from boto3.exceptions import Boto3Error
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from evaluator import ConfigError, StoreError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import ListObjectsV2OutputTypeDef

Encryption = Literal["none", "AES256", "aws:kms"]

_T = TypeVar("_T")
_MIB = 1024 * 1024
# Errors that a retry cannot fix: the request itself is wrong, or access is denied.
_PERMANENT = {"AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "NoSuchBucket", "InvalidBucketName",
              "InvalidArgument", "MalformedXML", "KMS.NotFoundException", "InvalidRequest", "AllAccessDisabled"}


@dataclass(frozen=True)
class StoreLocation:
    """``s3://bucket/prefix`` split into its parts; the prefix has no leading or trailing slash."""

    bucket: str
    prefix: str

    @classmethod
    def parse(cls, url: str) -> StoreLocation:
        """Parse an ``s3://`` URL; raises :class:`ConfigError` for anything else."""
        parts = urlsplit(url)
        if parts.scheme != "s3" or not parts.netloc:
            raise ConfigError(f"{url!r} is not an object-store location; write it as s3://bucket/prefix")
        return cls(parts.netloc, parts.path.strip("/"))

    @property
    def url(self) -> str:
        """The location as an ``s3://`` URL."""
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/")

    def key(self, rel: str) -> str:
        """The object key of ``rel`` under the prefix."""
        return f"{self.prefix}/{rel}" if self.prefix else rel


def is_store_url(text: str) -> bool:
    """Whether ``text`` names an object-store location rather than a local directory."""
    return text.startswith("s3://")


@dataclass(frozen=True)
class StoreSettings:
    """How to reach the store; plain and picklable, so workers on other nodes get the same view."""

    url: str
    """``s3://bucket/prefix`` of the run directory."""
    endpoint_url: str | None = None
    """An S3-compatible endpoint (MinIO, Ceph, moto); ``None`` means AWS."""
    region: str | None = None
    encryption: Encryption = "none"
    """Server-side encryption asked for on every write."""
    kms_key_id: str | None = None
    """The KMS key for ``aws:kms`` (default: the bucket's)."""
    attempts: int = 6
    """Attempts of each call by the outer loop here."""
    sdk_attempts: int = 5
    """Attempts of each HTTP request by botocore (its backoff follows S3's advice, up to 20 s)."""
    multipart_threshold: int = 8 * _MIB
    """Files at least this large are uploaded in parts."""
    part_size: int = 8 * _MIB
    backoff_s: float = 0.2
    """First pause of the outer retry loop; doubled each time, with full jitter, up to 10 s."""


class S3Store:
    """Bytes in and out of one ``s3://bucket/prefix``."""

    def __init__(self, settings: StoreSettings, *, client: S3Client | None = None) -> None:
        self.settings = settings
        self.location = StoreLocation.parse(settings.url)
        if settings.encryption == "none" and settings.kms_key_id:
            raise ConfigError("a KMS key was given but encryption is 'none'; set encryption to aws:kms")
        self._client: S3Client = client or boto3.client(
            "s3", endpoint_url=settings.endpoint_url, region_name=settings.region or "us-east-1",
            config=Config(retries={"mode": "standard", "max_attempts": settings.sdk_attempts},
                          connect_timeout=10, read_timeout=60,
                          # Checksums only where S3 requires them: S3-compatible servers differ in
                          # their support for the newer trailing-checksum encoding.
                          request_checksum_calculation="when_required",
                          response_checksum_validation="when_required"),
        )
        self._transfer = TransferConfig(multipart_threshold=settings.multipart_threshold,
                                        multipart_chunksize=settings.part_size, max_concurrency=4,
                                        num_download_attempts=settings.sdk_attempts)

    # ------------------------------------------------------------------------------ writes

    def put_bytes(self, rel: str, data: bytes, *, content_type: str = "application/octet-stream") -> None:
        """Write one small object; its MD5 travels with it, so a body cut short is refused by the server."""
        md5 = hashlib.md5(data, usedforsecurity=False).digest()
        extra = self._encryption_args()
        self._retry(f"write {rel}", lambda: self._client.put_object(
            Bucket=self.location.bucket, Key=self.location.key(rel), Body=data, ContentType=content_type,
            ContentMD5=base64.b64encode(md5).decode(), **extra))

    def put_file(self, rel: str, path: Path, *, content_type: str = "application/octet-stream") -> None:
        """Upload a file: in one request when small, as a multipart upload (parts retried) when large."""
        if path.stat().st_size < self.settings.multipart_threshold:
            self.put_bytes(rel, path.read_bytes(), content_type=content_type)
            return
        extra: dict[str, Any] = {"ContentType": content_type, **self._encryption_args()}
        self._retry(f"upload {rel}", lambda: self._client.upload_file(
            str(path), self.location.bucket, self.location.key(rel), ExtraArgs=extra, Config=self._transfer))

    # ------------------------------------------------------------------------------- reads

    def get_bytes(self, rel: str) -> bytes | None:
        """The object's bytes, or ``None`` when there is no such object."""
        def get() -> bytes | None:
            try:
                reply = self._client.get_object(Bucket=self.location.bucket, Key=self.location.key(rel))
            except ClientError as exc:
                if _code(exc) in ("NoSuchKey", "404"):
                    return None
                raise
            return reply["Body"].read()
        return self._retry(f"read {rel}", get)

    def download_file(self, rel: str, path: Path) -> None:
        """Download an object to ``path`` (written beside it first, then moved into place)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.part")
        self._retry(f"download {rel}", lambda: self._client.download_file(
            self.location.bucket, self.location.key(rel), str(tmp), Config=self._transfer))
        tmp.replace(path)

    def size(self, rel: str) -> int | None:
        """The object's size in bytes, or ``None`` when there is no such object."""
        def head() -> int | None:
            try:
                reply = self._client.head_object(Bucket=self.location.bucket, Key=self.location.key(rel))
            except ClientError as exc:
                if _code(exc) in ("NoSuchKey", "404", "NotFound"):
                    return None
                raise
            return int(reply["ContentLength"])
        return self._retry(f"look up {rel}", head)

    def list(self, rel_prefix: str, *, page_size: int = 1000) -> Iterator[str]:
        """Names (relative to the store's prefix) of every object under ``rel_prefix``, page by page."""
        root = self.location.key("")
        bucket, prefix = self.location.bucket, self.location.key(rel_prefix)
        token = ""
        while True:
            def page_after(token: str = token) -> ListObjectsV2OutputTypeDef:
                if token:
                    return self._client.list_objects_v2(Bucket=bucket, Prefix=prefix, MaxKeys=page_size,
                                                        ContinuationToken=token)
                return self._client.list_objects_v2(Bucket=bucket, Prefix=prefix, MaxKeys=page_size)
            page = self._retry(f"list {rel_prefix}", page_after)
            for item in page.get("Contents", []):
                yield item["Key"][len(root):]
            if not page.get("IsTruncated"):
                return
            token = page["NextContinuationToken"]

    def delete(self, rel: str) -> None:
        """Delete one object (deleting a missing object is not an error in S3)."""
        self._retry(f"delete {rel}", lambda: self._client.delete_object(
            Bucket=self.location.bucket, Key=self.location.key(rel)))

    # ----------------------------------------------------------------------------- helpers

    def _encryption_args(self) -> dict[str, Any]:
        if self.settings.encryption == "none":
            return {}
        args: dict[str, Any] = {"ServerSideEncryption": self.settings.encryption}
        if self.settings.kms_key_id:
            args["SSEKMSKeyId"] = self.settings.kms_key_id
        return args

    def _retry(self, what: str, call: Callable[[], _T]) -> _T:
        delay = self.settings.backoff_s
        for attempt in range(1, self.settings.attempts + 1):
            try:
                return call()
            except ClientError as exc:
                if _code(exc) in _PERMANENT:
                    raise StoreError(f"{self.location.url}: cannot {what}: {exc}. Check the bucket name, the "
                                     "credentials in the environment and the encryption settings.") from exc
                last: Exception = exc
            except (BotoCoreError, Boto3Error, OSError) as exc:
                last = exc
            if attempt == self.settings.attempts:
                break
            time.sleep(random.uniform(0, delay))
            delay = min(delay * 2, 10.0)
        raise StoreError(f"{self.location.url}: could not {what} after {self.settings.attempts} attempts "
                         f"({type(last).__name__}: {last}). Check the endpoint and re-run the same command to resume.")


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))
