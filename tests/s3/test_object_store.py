"""S3Store against a real S3-compatible server (moto on loopback) with injected faults."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import boto3
import pytest

from cluster.store.object_store import StoreLocation
from evaluator.errors import ConfigError, StoreError
from tests.s3.faulty_s3 import FaultyS3, make_store


def _server(s3: FaultyS3):  # type: ignore[no-untyped-def]
    return boto3.client("s3", endpoint_url=s3.server_endpoint, region_name="us-east-1")


def test_locations_parse_and_refuse_what_is_not_s3() -> None:
    """``s3://bucket/prefix`` splits cleanly; a local path or a bucketless URL is a config error."""
    assert StoreLocation.parse("s3://lab/sweeps/may/") == StoreLocation("lab", "sweeps/may")
    assert StoreLocation.parse("s3://lab").key("x.json") == "x.json"
    for bad in ("runs/demo", "s3:///nobucket", "gs://lab/x"):
        with pytest.raises(ConfigError, match="s3://bucket/prefix"):
            StoreLocation.parse(bad)


def test_round_trip_listing_and_missing_objects(s3: FaultyS3, bucket: str) -> None:
    """What is written reads back; listing follows continuation tokens; a missing object is ``None``."""
    store = make_store(s3, bucket)
    store.put_bytes("a/one.json", b'{"x": 1}', content_type="application/json")
    assert store.get_bytes("a/one.json") == b'{"x": 1}'
    assert store.size("a/one.json") == 8
    assert store.get_bytes("a/none.json") is None and store.size("a/none.json") is None
    server = _server(s3)
    for i in range(53):
        server.put_object(Bucket=bucket, Key=f"runs/t/many/{i:05d}", Body=b"")
    names = list(store.list("many/", page_size=10))
    assert names == [f"many/{i:05d}" for i in range(53)]
    assert sum(1 for seen in s3.seen if seen.method == "GET" and "list-type=2" in seen.path) == 6


def test_5xx_and_throttling_are_retried_until_the_write_lands(s3: FaultyS3, bucket: str) -> None:
    """Three 500s and three SlowDowns in a row on the same PUT: the object still arrives, intact.

    botocore is held to 2 attempts per request here (its own backoff on throttling grows to 20 s),
    so the outer retry loop carries most of the load.
    """
    store = make_store(s3, bucket, sdk_attempts=2)
    errors = s3.inject("500", r"^PUT /.*/runs/t/flaky\.bin$", times=3)
    slow = s3.inject("throttle", r"^PUT /.*/runs/t/flaky\.bin$", times=3)
    data = os.urandom(100_000)
    store.put_bytes("flaky.bin", data)
    assert errors.injected == 3 and slow.injected == 3
    assert _server(s3).get_object(Bucket=bucket, Key="runs/t/flaky.bin")["Body"].read() == data


def test_a_connection_dropped_mid_upload_is_retried(s3: FaultyS3, bucket: str) -> None:
    """The proxy cuts the connection half-way through the body twice; the third try lands."""
    store = make_store(s3, bucket)
    dropped = s3.inject("drop_body", r"^PUT /.*/runs/t/cut\.bin$", times=2)
    data = os.urandom(300_000)
    store.put_bytes("cut.bin", data)
    assert dropped.injected == 2
    assert store.get_bytes("cut.bin") == data


def test_multipart_upload_survives_dropped_parts_and_a_lost_reply(s3: FaultyS3, bucket: str, tmp_path: Path) -> None:
    """A 17 MiB video goes up in 4 parts; two parts are cut mid-body and the completion's reply is lost.

    The object that results is byte-identical, and no unfinished multipart upload is left behind.
    """
    video = tmp_path / "video.mp4"
    video.write_bytes(os.urandom(17 * 1024 * 1024))
    store = make_store(s3, bucket)
    cut = s3.inject("drop_body", r"^PUT /.*/runs/t/video\.mp4\?.*partNumber=", times=2)
    lost = s3.inject("drop_reply", r"^POST /.*/runs/t/video\.mp4\?uploadId=", times=1)
    store.put_file("video.mp4", video, content_type="video/mp4")
    assert cut.injected == 2 and lost.injected == 1
    parts = [seen for seen in s3.seen if "partNumber=" in seen.path and seen.fault is None]
    assert len({p.path.split("partNumber=")[1].split("&")[0] for p in parts}) == 4
    body = _server(s3).get_object(Bucket=bucket, Key="runs/t/video.mp4")["Body"].read()
    assert hashlib.sha256(body).digest() == hashlib.sha256(video.read_bytes()).digest()
    assert not _server(s3).list_multipart_uploads(Bucket=bucket).get("Uploads")


def test_a_failure_that_outlasts_the_retries_is_a_store_error_and_leaves_no_object(
        s3: FaultyS3, bucket: str, tmp_path: Path) -> None:
    """Every part upload fails: StoreError saying to re-run, no object under the key, no upload left open."""
    video = tmp_path / "video.mp4"
    video.write_bytes(os.urandom(11 * 1024 * 1024))
    store = make_store(s3, bucket, attempts=2, sdk_attempts=2)
    s3.inject("500", r"partNumber=", times=10_000)
    with pytest.raises(StoreError, match="after 2 attempts.*re-run the same command"):
        store.put_file("video.mp4", video)
    assert store.size("video.mp4") is None
    assert not _server(s3).list_multipart_uploads(Bucket=bucket).get("Uploads")


def test_a_missing_bucket_fails_at_once_with_what_to_check(s3: FaultyS3) -> None:
    """NoSuchBucket is not retried; the message names the store and what to check."""
    store = make_store(s3, "no-such-bucket-evalgrid")
    with pytest.raises(StoreError, match=r"s3://no-such-bucket-evalgrid/runs/t.*bucket name"):
        store.put_bytes("x", b"x")
    assert sum(1 for seen in s3.seen if seen.method == "PUT") == 1


def test_server_side_encryption_is_requested_on_every_write(s3: FaultyS3, bucket: str, tmp_path: Path) -> None:
    """With AES256 set, small and multipart objects both come back marked as encrypted."""
    store = make_store(s3, bucket, encryption="AES256")
    store.put_bytes("small.json", b"{}")
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(6 * 1024 * 1024))
    store.put_file("big.bin", big)
    server = _server(s3)
    for key in ("runs/t/small.json", "runs/t/big.bin"):
        assert server.head_object(Bucket=bucket, Key=key).get("ServerSideEncryption") == "AES256"
    with pytest.raises(ConfigError, match="encryption"):
        make_store(s3, bucket, kms_key_id="alias/x")
