"""The local sweep runner: many runs on one machine, bounded concurrency, resumable.

Runs are pulled lazily from the plan by a fixed number of workers sharing one Chromium, so memory
stays flat whatever the sweep's size. Every run ends with exactly one outcome appended to the
results log; a re-run of the same sweep skips the runs whose outcome is already there.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import Browser, Playwright, async_playwright

from cluster.results import ResultsLog
from cluster.sweep import Sweep
from evaluator.browser import launch_browser
from evaluator.errors import BrowserUnavailableError, InfrastructureError
from evaluator.evidence import write_json_atomic
from evaluator.models import Outcome, OutcomeStatus, ReasonCode, RunSpec
from evaluator.run import StagePaths, execute_run, failed_outcome


@dataclass
class SweepResult:
    """What a sweep invocation did."""

    outcomes: dict[str, Outcome]
    """Outcome of every run of the sweep, by run key (earlier invocations included)."""
    skipped: int
    """Runs already finished before this invocation."""
    executed: int
    """Runs finished by this invocation."""
    seconds: float = 0.0
    """Wall time of this invocation."""
    torn_lines: int = field(default=0)
    """Unreadable lines found in the results log (a crash mid-write)."""


class _SharedBrowser:
    """One Chromium for all workers, relaunched when it dies."""

    def __init__(self, playwright: Playwright) -> None:
        self._playwright = playwright
        self._browser: Browser | None = None
        self._lock = asyncio.Lock()

    async def get(self) -> Browser:
        async with self._lock:
            if self._browser is None or not self._browser.is_connected():
                self._browser = await launch_browser(self._playwright)
            return self._browser

    async def close(self) -> None:
        if self._browser is not None and self._browser.is_connected():
            await self._browser.close()


async def run_sweep(
    sweep: Sweep, run_dir: Path, *, on_start: Callable[[int, int], None] | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> SweepResult:
    """Execute every unfinished run of ``sweep`` under ``run_dir``."""
    started = time.monotonic()
    run_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(run_dir / "sweep.json", {"path": str(sweep.path), "spec": sweep.spec.model_dump(mode="json")})
    log = ResultsLog(run_dir / "results.jsonl")
    recorded = log.load()
    keys = [spec.run_key for spec in sweep.plan()]
    outcomes = {k: recorded[k] for k in keys if k in recorded}
    skipped = len(outcomes)
    if on_start:
        on_start(len(keys), skipped)
    pending: Iterator[RunSpec] = (spec for spec in sweep.plan() if spec.run_key not in outcomes)
    paths = StagePaths(run_dir)
    executed = 0
    async with async_playwright() as playwright:
        browsers = _SharedBrowser(playwright)
        await browsers.get()  # fail fast, before any run, when no browser can start

        async def worker() -> None:
            nonlocal executed
            for spec in pending:
                outcome = await _run_one(spec, browsers, paths, sweep)
                log.append(outcome)
                outcomes[spec.run_key] = outcome
                executed += 1
                if on_outcome:
                    on_outcome(outcome)

        try:
            await asyncio.gather(*(worker() for _ in range(sweep.spec.concurrency)))
        finally:
            await browsers.close()
    return SweepResult(outcomes=outcomes, skipped=skipped, executed=executed,
                       seconds=time.monotonic() - started, torn_lines=log.torn_lines)


async def _run_one(spec: RunSpec, browsers: _SharedBrowser, paths: StagePaths, sweep: Sweep) -> Outcome:
    """One run with its timeout and bounded, classified retries."""
    started = time.monotonic()
    limit = sweep.spec.run_timeout_s
    code, detail = ReasonCode.INTERNAL_ERROR, ""
    for attempt in range(1, sweep.spec.max_attempts + 1):
        try:
            browser = await browsers.get()
            return await asyncio.wait_for(execute_run(spec, browser=browser, paths=paths, attempt=attempt), limit)
        except TimeoutError:
            # An app that hangs the run is a result about the app, not a reason to retry.
            return failed_outcome(spec, OutcomeStatus.TIMEOUT, ReasonCode.RUN_TIMEOUT,
                                  f"the run exceeded its {limit:.0f} s limit", attempts=attempt,
                                  duration_s=time.monotonic() - started)
        except BrowserUnavailableError as exc:
            code, detail = ReasonCode.BROWSER_UNAVAILABLE, str(exc)
        except InfrastructureError as exc:
            code, detail = ReasonCode.BROWSER_CRASHED, str(exc)
        except Exception as exc:  # noqa: BLE001 - a bug must cost one run, not the sweep; the trace is kept
            code = ReasonCode.INTERNAL_ERROR
            detail = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}"
    return failed_outcome(spec, OutcomeStatus.INFRA_ERROR, code, detail, attempts=sweep.spec.max_attempts,
                          duration_s=time.monotonic() - started)
