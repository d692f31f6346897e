"""Lanes for pytest-xdist on a 2-core machine: what must not run beside its own kind, and the rest.

``make test`` runs the suite on two xdist workers with ``--dist loadgroup``. Each test module is one unit of
work (its module fixtures are built once, on one worker), except the modules that take the machine: any module
with a test marked ``docker`` (a sandbox container holds one core, and several of these tests count or kill the
containers on the machine), ``heavy`` (a vLLM server, a Ray head of its own) or ``timing``
(a race against the machine's load that a neighbour in the other lane once made it lose). Those
share one group, the machine lane, run one after another on one worker, first (it is the longest chain); the
other worker takes the other modules, which drive at most one local Chromium or none.

Why one lane and not two: a heavy module beside a sandbox test is two loads that each want most of the machine,
and it was measured to break what waits on time. A CI rehearsal with the sandbox tests and the heavy ones in two
lanes side by side had the vLLM test take 424 s (186 s in one lane), the token-auth Ray head miss its start
timeout, and two explorer cases and a crash-policy case miss their timings. With one lane, a full run passed,
and a second lost only the two races marked ``timing`` (the crash policy's watcher, the soundtrack's tone), each
beside a sandbox test. So at most one sandbox, cluster or vLLM server runs at a time, as in a serial run, and
what cannot share a machine never does: two Ray clusters, two vLLM servers, a test that counts containers beside
one that makes them. Each worker has its own temporary directories and session fixtures (a moto server each; the
npm trees behind a lock).

Without xdist (``pytest`` alone, ``make test-full``) nothing changes: no group is added.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.images_pending import needs_images

MACHINE_LANE = "machine"
_TAKES_THE_MACHINE = ("docker", "heavy", "timing")


def _module_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> Iterator[None]:
    """Group each module as a unit, the machine's modules in one lane, and put that lane first.

    A wrapper, so the groups are there before xdist's own hook reads them into the test ids.
    """
    if config.getoption("loadgroup", False):  # set on xdist's workers under --dist loadgroup
        _group(items)
    return (yield)


def _group(items: list[pytest.Item]) -> None:
    machine = {_module_of(item) for item in items
               if any(item.get_closest_marker(name) for name in _TAKES_THE_MACHINE)}
    for item in items:
        module = _module_of(item)
        item.add_marker(pytest.mark.xdist_group(MACHINE_LANE if module in machine else module))
    # The lane first: it is the longest chain (``--no-loadscope-reorder`` keeps this order). In each lane, the modules
    # that need the images last, as make test builds them beside the suite (tests/images_pending.py); in the
    # machine lane, the races (``timing``) with them, as a build is load of its own.
    later = {_module_of(item) for item in items if needs_images(item) or item.get_closest_marker("timing")}
    items.sort(key=lambda item: (_module_of(item) not in machine, _module_of(item) in later))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """Refuse to run when xdist did not take the groups: a lane would be split across both workers.

    (pytest 9.2 moved node ids where xdist 3.8's ``loadgroup`` cannot suffix them, hence ``pytest<9.2``.)
    """
    if node.config.getoption("dist") == "loadgroup" and ids and not any("@" in nodeid for nodeid in ids):
        raise pytest.UsageError("pytest-xdist ran with --dist loadgroup but gave no test a group, so tests that "
                                "must not overlap could run at once. Use a pytest that xdist "
                                "supports (pyproject.toml pins it), or run without -n.")
