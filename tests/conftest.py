"""Suite-wide hooks, and the S3-compatible server (moto behind a fault proxy) that several suites use."""

from __future__ import annotations

import gc
import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from tests.s3.faulty_s3 import FaultyS3, faulty_s3
from tests.support import install_sandbox_npm_trees

pytest_plugins = ["tests.budget", "tests.images_pending", "tests.lanes"]


def pytest_collection_finish(session: pytest.Session) -> None:
    """Set aside what collection built (every test module and what it imported) from later garbage collections.

    ``gc.freeze()`` moves the objects alive now to a generation the collector never scans again: the collection
    after each test (below) then scans what tests made, not the ~140,000 objects of Ray, Playwright and OpenCV
    each worker imported. Measured: 0.12-0.17 s a collection on an idle machine, 1-4 s under CI load, ~620 s of
    teardown in one lane of a 58-minute suite; after the freeze, microseconds on the same heap.
    """
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _collect_garbage_at_teardown(request: pytest.FixtureRequest) -> Iterator[None]:
    """Finalise what a test left behind while that test is still the current one.

    An asyncio subprocess transport that outlives its event loop fails in its finalizer. Collected
    here, the failure is reported against the test that leaked it; collected at a random later
    moment, it once landed inside pytest's own traceback rendering (CPython 3.11.7's ``ast.parse``)
    and aborted the whole session with an INTERNALERROR. A full collection costs ~0.1 s, so tests
    marked ``pure`` (no event loop, no subprocess) skip it.

    What survives is frozen too, as the collection's start froze what collection built: without it, each
    collection rescanned every module fixture, cache and lazy import of the tests before, and grew with them, to
    0.2-0.3 s a test late in a CI lane (254 s of teardown in one rehearsal, against 0.01 s for the same tests run
    alone). The price: a cycle that dies after its test (a module fixture's) is never collected, its memory and
    any descriptor it holds kept until the worker exits; fixtures close what they open, so that is little.
    """
    yield
    if request.node.get_closest_marker("pure") is None:
        gc.collect()
        gc.freeze()


@pytest.fixture(scope="session")
def mirror_root() -> Path:
    """The sandbox's npm trees installed on this host (the mirror's, its code's, the toolchain); the mirror's root."""
    return install_sandbox_npm_trees()


@pytest.fixture(scope="session")
def s3_server() -> Iterator[FaultyS3]:
    """One moto server and proxy for the whole session (moto takes a second to start)."""
    yield from faulty_s3()


@pytest.fixture
def s3(s3_server: FaultyS3, monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultyS3]:
    """The server with no faults pending and test credentials in the environment."""
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    s3_server.clear()
    yield s3_server
    s3_server.clear()


@pytest.fixture
def bucket(s3: FaultyS3) -> str:
    """A fresh bucket, created directly on the server (not through the proxy)."""
    name = f"evalgrid-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=s3.server_endpoint, region_name="us-east-1").create_bucket(Bucket=name)
    return name

