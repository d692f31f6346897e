"""bench_regime's verdict agreement on made-up runs: rt/rt, which ``make test``'s smoke no longer measures (it
makes no second real-time run), and sig/rt with and without that run."""

from __future__ import annotations

import pytest

from tests.benchmarks.bench_regime import Measured, agreement, smoke_problems

pytestmark = pytest.mark.pure


def _run(functional: float, aesthetic: float, *attributions: tuple[str, str]) -> Measured:
    return Measured(seconds=1.0, cpu={}, functional=functional, aesthetic=aesthetic,
                    attributions=list(attributions), verdict=True)


BROKEN = ("functional", "broken-control")
# "steady": both real-time runs agree; signals scores the look higher than both.
# "shaky": the real-time runs differ on the functional score; signals agrees with rt1.
APPS = {
    "steady": {"signals": _run(8.0, 7.0), "rt1": _run(8.0, 6.0), "rt2": _run(8.0, 6.0)},
    "shaky": {"signals": _run(5.0, 6.0, BROKEN), "rt1": _run(5.0, 6.0, BROKEN), "rt2": _run(4.0, 6.0, BROKEN)},
}


def test_rt_rt_and_sig_rt_are_shares_of_apps_and_sig_rt_the_mean_over_both_real_time_runs() -> None:
    agreed = agreement(APPS)
    assert agreed["apps"] == 2
    assert agreed["rt_rt"] == {"functional": 0.5, "aesthetic": 1.0, "attributions": 1.0, "all": 0.5}
    # steady: signals/rt1 and signals/rt2 both differ on the look; shaky: signals/rt2 differs on function
    assert agreed["sig_rt"] == {"functional": 0.75, "aesthetic": 0.5, "attributions": 1.0, "all": 0.25}
    assert [(d["app"], d["pair"], d["on"]) for d in agreed["disagreements"]] == [
        ("steady", "signals/rt1", ["aesthetic"]), ("steady", "signals/rt2", ["aesthetic"]),
        ("shaky", "rt1/rt2", ["functional"]), ("shaky", "signals/rt2", ["functional"])]
    assert agreed["disagreements"][2]["first"] == {"status": "judged", "functional": 5.0, "aesthetic": 6.0,
                                                   "attributions": ["functional:broken-control"]}
    assert smoke_problems(APPS, agreed, expected=2) == []
    assert smoke_problems(APPS, {**agreed, "rt_rt": {}}, expected=2) == ["the agreement was not computed"]


def test_without_a_second_real_time_run_sig_rt_is_signals_against_rt1_and_rt_rt_is_absent() -> None:
    apps = {name: {item: run for item, run in runs.items() if item != "rt2"} for name, runs in APPS.items()}
    agreed = agreement(apps)
    assert "rt_rt" not in agreed
    assert agreed["sig_rt"] == {"functional": 1.0, "aesthetic": 0.5, "attributions": 1.0, "all": 0.5}
    assert [(d["app"], d["pair"], d["on"]) for d in agreed["disagreements"]] == [
        ("steady", "signals/rt1", ["aesthetic"])]
    assert smoke_problems(apps, agreed, expected=2) == []  # rt/rt is not asked for when rt2 was not measured


def test_a_run_not_judged_agrees_only_with_one_that_ended_the_same_way() -> None:
    failed = Measured(seconds=1.0, cpu={}, status="failed", reason="app_crashed")
    agreed = agreement({"crashy": {"signals": failed, "rt1": _run(8.0, 6.0)}})
    assert agreed["sig_rt"] == {"functional": 0.0, "aesthetic": 0.0, "attributions": 0.0, "all": 0.0}
    assert [d["on"] for d in agreed["disagreements"]] == [["status"]]
