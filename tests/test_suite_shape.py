"""The suite's own machinery: the xdist lanes keep what must not overlap apart, and the budget fails a slow item.

Each case runs pytest on a small synthetic suite in a subprocess, with this project's plugins
(``tests/lanes.py``, ``tests/budget.py``) and real pytest-xdist workers.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests import images_pending
from tests.support import ROOT

_INI = """[pytest]
markers =
    docker: a sandbox
    heavy: a heavy one
    images: reads the images
"""

# Each test records its worker, module and when it ran; the docker and heavy modules take a while, so that any
# overlap between two of them would show.
_MODULE = """import json, os, time
import pytest
pytestmark = {marks}


@pytest.mark.parametrize("n", range({count}))
def test_runs(n):
    started = time.monotonic()
    time.sleep({sleep})
    with open(os.environ["SHAPE_LOG"], "a") as log:
        log.write(json.dumps({{"module": __name__, "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
                               "start": started, "end": time.monotonic()}}) + "\\n")
"""


def _suite(root: Path, modules: dict[str, tuple[str, int, float]]) -> None:
    (root / "pytest.ini").write_text(_INI)
    for name, (marks, count, sleep) in modules.items():
        (root / f"test_{name}.py").write_text(_MODULE.format(marks=marks, count=count, sleep=sleep))


def _pytest(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("EVALGRID_FULL_TESTS", images_pending.ENV)}
    environment |= {"PYTHONPATH": str(ROOT), "SHAPE_LOG": str(root / "log.jsonl"), **env}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.budget", "-p", "tests.images_pending",
                           "-p", "tests.lanes", "-q", "-p", "no:cacheprovider", *args], cwd=root,
                          env=environment, capture_output=True, text=True, timeout=120)


def _rows(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / "log.jsonl").read_text().splitlines()]


def test_the_machine_lane_runs_its_modules_one_at_a_time_on_one_worker_and_first(tmp_path: Path) -> None:
    _suite(tmp_path, {"sandbox_a": ("pytest.mark.docker", 2, 0.3), "sandbox_b": ("pytest.mark.docker", 2, 0.3),
                      "heavy_a": ("pytest.mark.heavy", 2, 0.3), "plain_a": ("[]", 3, 0.05),
                      "plain_b": ("[]", 3, 0.05), "plain_c": ("[]", 3, 0.05)})
    done = _pytest(tmp_path, "-n", "2", "--dist", "loadgroup", "--no-loadscope-reorder")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _rows(tmp_path)
    assert len(rows) == 15
    lane = sorted((r for r in rows if not r["module"].startswith("test_plain")), key=lambda r: r["start"])
    assert len({r["worker"] for r in lane}) == 1, lane  # one worker ...
    assert all(a["end"] <= b["start"] for a, b in zip(lane, lane[1:], strict=False)), lane  # ... one at a time
    # ... and first: on its worker, nothing ran before it.
    plain = [r for r in rows if r["module"].startswith("test_plain")]
    assert all(r["start"] >= lane[-1]["end"] for r in plain if r["worker"] == lane[0]["worker"])
    # The other modules run beside it, each a unit: its module fixtures are built once.
    assert {r["worker"] for r in plain} - {lane[0]["worker"]}
    for module in ("test_plain_a", "test_plain_b", "test_plain_c"):
        assert len({r["worker"] for r in plain if r["module"] == module}) == 1


def test_an_item_over_the_ceiling_fails_the_run_and_says_what_to_do(tmp_path: Path) -> None:
    _suite(tmp_path, {"slow": ("[]", 1, 0.6), "quick": ("[]", 2, 0.0)})
    over = _pytest(tmp_path, EVALGRID_TEST_CEILING_S="0.3")
    assert over.returncode == 1, over.stdout + over.stderr
    assert "3 passed" in over.stdout
    assert "OVER BUDGET: test_slow.py::test_runs[0]" in over.stdout and "make test-full" in over.stdout
    assert "suite wall time" in over.stdout and "slowest items" in over.stdout
    # Under xdist the controller keeps the account; the full suite has no ceiling.
    assert _pytest(tmp_path, "-n", "2", EVALGRID_TEST_CEILING_S="0.3").returncode == 1
    assert _pytest(tmp_path, EVALGRID_TEST_CEILING_S="0.3", EVALGRID_FULL_TESTS="1").returncode == 0
    assert _pytest(tmp_path, EVALGRID_TEST_CEILING_S="5").returncode == 0


def test_docker_tests_wait_for_the_images_built_beside_the_suite_and_the_lane_runs_the_rest_first(
        tmp_path: Path) -> None:
    """Under make test the images build beside the suite: in each lane the modules that need none run first, the
    tests that run the images (``docker``) or read them (``images``) start only once the build has written its
    status, and their wait is no item's time."""
    _suite(tmp_path, {"sandbox_a": ("pytest.mark.docker", 2, 0.1), "heavy_a": ("pytest.mark.heavy", 2, 0.1),
                      "doctor_a": ("pytest.mark.images", 1, 0.0), "plain_a": ("[]", 2, 0.0)})
    build = tmp_path / "images"
    ended = []

    def the_build_ends() -> None:
        time.sleep(3.0)
        ended.append(time.monotonic())
        build.with_name("images.rc").write_text("0\n")

    finisher = threading.Thread(target=the_build_ends)
    finisher.start()
    done = _pytest(tmp_path, "-n", "2", "--dist", "loadgroup", "--no-loadscope-reorder",
                   EVALGRID_IMAGES_BUILD=str(build))
    finisher.join()
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _rows(tmp_path)
    sandbox = [r for r in rows if r["module"] == "test_sandbox_a"]
    heavy = [r for r in rows if r["module"] == "test_heavy_a"]
    assert len(sandbox) == len(heavy) == 2
    assert max(r["end"] for r in heavy) <= min(r["start"] for r in sandbox)
    assert min(r["start"] for r in sandbox) >= ended[0]
    [doctor] = [r for r in rows if r["module"] == "test_doctor_a"]
    assert doctor["start"] >= ended[0]
    assert all(r["end"] <= doctor["start"] for r in rows if r["module"] == "test_plain_a")
    # The budget counts setup, call and teardown: the items, not the three seconds they waited.
    items = re.findall(r"^\s+([0-9.]+) s  test_sandbox_a.py", done.stdout, flags=re.MULTILINE)
    assert len(items) == 2 and all(float(seconds) < 2.0 for seconds in items), done.stdout


def test_a_failed_image_build_fails_the_docker_tests_with_its_log(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    build = tmp_path / "images"
    monkeypatch.setenv(images_pending.ENV, str(build))
    assert images_pending.build_failure() is None  # still building
    build.with_name("images.rc").write_text("0\n")
    assert images_pending.build_failure() is None
    build.with_name("images.rc").write_text("2\n")
    build.with_name("images.log").write_text("building evalgrid/sandbox:dev ...\nE: Unable to locate package x\n")
    _suite(tmp_path, {"sandbox_a": ("pytest.mark.docker", 1, 0.0), "plain_a": ("[]", 1, 0.0)})
    done = _pytest(tmp_path, "-rf", EVALGRID_IMAGES_BUILD=str(build))
    assert done.returncode == 1 and "1 passed" in done.stdout and "1 error" in done.stdout, done.stdout
    assert "exit 2" in done.stdout and "Unable to locate package x" in done.stdout and "make images" in done.stdout
