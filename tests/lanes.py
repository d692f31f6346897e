"""Lanes for pytest-xdist on a 2-core machine: what must not run beside its own kind, and the rest.

``make test`` runs the suite on two xdist workers with ``--dist loadgroup``. Each test module is one unit of
work (its module fixtures are built once, on one worker), except two lanes, each run one module after another
on one worker:

- the **sandbox** lane: every module with a test marked ``docker``. A sandbox container holds one core, and
  several of these tests count or kill the containers on the machine, so no two of them may overlap;
- the **heavy** lane: the other modules marked ``heavy`` (a vLLM server, a Ray head of its own, a dozen pages
  in one browser), each of which takes most of the machine on its own.

The lanes go first in the queue (the sandbox lane is the longest chain), so one worker starts the sandbox lane
and the other the heavy lane, then the other modules. Why that is safe on 2 cores: at most one sandbox test and
one heavy module run at once, and what cannot share a machine never does: containers are only made in the
sandbox lane; the Ray clusters that run beside each other are local ones that ``ray.init`` starts on free
ports (the token-auth head of ``test_ray_auth`` keeps its own temp dir, so no driver joins it by accident); the
vLLM server's fixed port is used by its module alone. Each worker has its own temporary directories and
session fixtures (a moto server each; the npm trees behind a lock).

Without xdist (``pytest`` alone, ``make test-full``) nothing changes: no group is added.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

SANDBOX_LANE = "sandbox"
HEAVY_LANE = "heavy"


def _module_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> Iterator[None]:
    """Group each module as a unit and the lanes' modules in their lanes, and put the lanes first.

    A wrapper, so the groups are there before xdist's own hook reads them into the test ids.
    """
    if config.getoption("loadgroup", False):  # set on xdist's workers under --dist loadgroup
        _group(items)
    return (yield)


def _group(items: list[pytest.Item]) -> None:
    lanes: dict[str, str] = {}
    for item in items:
        module = _module_of(item)
        if item.get_closest_marker("docker"):
            lanes[module] = SANDBOX_LANE
        elif item.get_closest_marker("heavy"):
            lanes.setdefault(module, HEAVY_LANE)
    for item in items:
        module = _module_of(item)
        item.add_marker(pytest.mark.xdist_group(lanes.get(module, module)))
    # The lanes first, the longest one at the head (``--no-loadscope-reorder`` keeps this order).
    rank = {SANDBOX_LANE: 0, HEAVY_LANE: 1}
    items.sort(key=lambda item: rank.get(lanes.get(_module_of(item), ""), 2))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """Refuse to run when xdist did not take the groups: a lane would be split across both workers.

    (pytest 9.2 moved node ids where xdist 3.8's ``loadgroup`` cannot suffix them, hence ``pytest<9.2``.)
    """
    if node.config.getoption("dist") == "loadgroup" and ids and not any("@" in nodeid for nodeid in ids):
        raise pytest.UsageError("pytest-xdist ran with --dist loadgroup but gave no test a group, so tests that "
                                "must not overlap could run at once. Use a pytest that xdist "
                                "supports (pyproject.toml pins it), or run without -n.")
