"""Suite-wide hooks."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _collect_garbage_at_teardown() -> Iterator[None]:
    """Finalise what a test left behind while that test is still the current one.

    An asyncio subprocess transport that outlives its event loop fails in its finalizer. Collected
    here, the failure is reported against the test that leaked it; collected at a random later
    moment, it once landed inside pytest's own traceback rendering (CPython 3.11.7's ``ast.parse``)
    and aborted the whole session with an INTERNALERROR.
    """
    yield
    gc.collect()
