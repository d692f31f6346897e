"""The suite's shape, held by the suite: its time, its slowest items, and a ceiling on any one item.

CI has 90 minutes and a fresh machine; a suite that grows one slow test at a time crosses that line unnoticed.
So every run ends with its wall time and its slowest items (setup, call and teardown added up, as they are
what a test costs: a module fixture's setup counts against the module's first test), and the run fails when
one item passes its ceiling (``EVALGRID_TEST_CEILING_S``, default 300 s). That is a budget on the suite's
shape, measured in the run itself, not a timed assertion on the code's speed: a test that needs longer
belongs in the full suite (``make test-full``, where the ceiling does not apply) with a slice of it here.

Under pytest-xdist the workers' reports reach the controller, which alone keeps the account.
"""

from __future__ import annotations

import os
import time

import pytest

_SLOWEST_SHOWN = 12


def full_suite() -> bool:
    """Whether the full versions of the sliced tests run (``EVALGRID_FULL_TESTS=1``, as ``make test-full`` sets).

    ``make test`` runs each costly end-to-end test on a slice that keeps what it proves (every fault kind,
    every candidate, both orders) at a fraction of the runs; the full versions are what benchmarks and
    closing notes cite.
    """
    return os.environ.get("EVALGRID_FULL_TESTS", "") == "1"


class SuiteBudget:
    """The account of one session: seconds per item, and the ceiling they are held to."""

    def __init__(self, ceiling_s: float | None) -> None:
        self.ceiling_s = ceiling_s
        self.started = time.monotonic()
        self.seconds: dict[str, float] = {}

    def over(self) -> list[tuple[str, float]]:
        """The items over the ceiling, with their seconds."""
        if self.ceiling_s is None:
            return []
        return [(node, s) for node, s in self.seconds.items() if s > self.ceiling_s]

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self) -> None:
        self.started = time.monotonic()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # A run that failed already keeps its own status.
        if self.over() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.seconds:
            return  # nothing ran (--collect-only, or nothing selected)
        write = terminalreporter.write_line
        wall = time.monotonic() - self.started
        ceiling = "none (full suite)" if self.ceiling_s is None else f"{self.ceiling_s:g} s an item"
        terminalreporter.section("suite budget")
        write(f"suite wall time {wall:.0f} s ({wall / 60:.1f} min); ceiling {ceiling}")
        write(f"slowest items (setup + call + teardown), of {len(self.seconds)}:")
        for node, seconds in sorted(self.seconds.items(), key=lambda item: -item[1])[:_SLOWEST_SHOWN]:
            write(f"  {seconds:7.1f} s  {node}")
        for node, seconds in self.over():
            write(f"OVER BUDGET: {node} took {seconds:.0f} s, over the {self.ceiling_s:g} s ceiling. Make it "
                  "prove the same on less (a slice here, the whole under EVALGRID_FULL_TESTS=1: `make test-full`), "
                  "or split it.", red=True)


def _ceiling() -> float | None:
    if full_suite():
        return None
    raw = os.environ.get("EVALGRID_TEST_CEILING_S", "300")
    try:
        return float(raw)
    except ValueError:
        raise pytest.UsageError(f"EVALGRID_TEST_CEILING_S must be a number of seconds, not {raw!r}") from None


def pytest_configure(config: pytest.Config) -> None:
    """Keep the account on the controller, or on the only process (xdist's workers report to the controller)."""
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(SuiteBudget(_ceiling()), "evalgrid-suite-budget")
