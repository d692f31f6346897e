"""The images ``make test`` builds beside the suite: a test that uses them waits for them; a failed build fails it.

On a fresh machine the Debian base, the sandbox image and the worker image take minutes to build, and only the
tests marked ``docker`` (which run containers) or ``images`` (which read the images' state, as the doctor does) use
them. So ``make test`` starts the suite once the venvs are done and builds the images (and runs the lint) beside it,
naming the build in ``EVALGRID_IMAGES_BUILD``: ``<prefix>.log`` is its output and ``<prefix>.rc`` its exit status,
written when it ends. Each lane runs such modules after the others (``tests/lanes.py``); such a test waits here,
before its setup, so the wait counts against no item's ceiling. A build that failed fails each of them at its
setup, with the build's log.

Without the variable (``pytest`` run by hand, ``make test-full``) nothing waits: the images are built before.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

ENV = "EVALGRID_IMAGES_BUILD"
_LONGEST_WAIT_S = 1800.0
_POLL_S = 2.0
_LOG_LINES = 20
_NEEDS_IMAGES = ("docker", "images")
"""The markers of the tests that wait for the images."""


def needs_images(item: pytest.Item) -> bool:
    """Whether ``item`` runs the images or reads their state."""
    return any(item.get_closest_marker(name) for name in _NEEDS_IMAGES)


def _build() -> Path | None:
    prefix = os.environ.get(ENV)
    return Path(prefix) if prefix else None


def _status(prefix: Path) -> str | None:
    try:
        return prefix.with_name(prefix.name + ".rc").read_text().strip()
    except FileNotFoundError:
        return None


def build_failure() -> str | None:
    """What a test that needs the images is told when their build beside the suite failed (status and log), else
    None."""
    prefix = _build()
    status = None if prefix is None else _status(prefix)
    if prefix is None or status in (None, "0"):
        return None
    log = prefix.with_name(prefix.name + ".log")
    tail = log.read_text(errors="replace").splitlines()[-_LOG_LINES:] if log.exists() else []
    return (f"the images' build beside the suite failed (exit {status}; log: {log}); fix what it says, "
            "then `make images`:\n" + "\n".join(tail))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> None:
    """Hold a test that needs the images until their build has ended (at most half an hour, then let it find them
    missing)."""
    prefix = _build()
    if prefix is None or not needs_images(item):
        return
    deadline = time.monotonic() + _LONGEST_WAIT_S
    while _status(prefix) is None and time.monotonic() < deadline:
        time.sleep(_POLL_S)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Fail a test that needs the images when they did not build, with what the build said."""
    if needs_images(item) and (failure := build_failure()) is not None:
        pytest.fail(failure, pytrace=False)
