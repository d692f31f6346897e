"""A sweep's live progress: the bar, the workers' health line, a line per outcome without the bar."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from pathlib import Path

from rich.console import Console, Group
from rich.live import Live
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from cluster.scheduling.runner import GridOptions, Scheduler, SweepResult, run_sweep
from cluster.store.object_store import StoreSettings
from cluster.sweep.inputs import InputsRef
from cluster.sweep.spec import Sweep
from evaluator import Outcome, OutcomeStatus


def run_with_progress(sweep: Sweep, run_dir: Path, grid: GridOptions, console: Console, *, no_progress: bool,
                       store: StoreSettings | None = None, inputs: InputsRef | None = None) -> SweepResult:
    """Run ``sweep`` on the grid with a progress bar, a per-worker health line and a line per outcome."""
    console.print(f"scheduler: {grid.scheduler}, {sweep.spec.concurrency} worker(s)", highlight=False)
    shown = _ProgressDisplay(console, sweep.size, no_progress=no_progress)

    async def main() -> SweepResult:
        try:
            return await run_sweep(sweep, run_dir, grid=grid, observer=shown, store=store, inputs=inputs)
        finally:
            shown.stop_watching()

    with Live(Group(shown.progress, shown.health), console=console, transient=False, refresh_per_second=4,
              redirect_stderr=False) if not no_progress else contextlib.nullcontext():
        return asyncio.run(main())


class _ProgressDisplay:
    """A sweep's progress bar with counts and rate, the workers' health line, and (without the bar) a line per
    outcome: the :class:`~cluster.scheduling.runner.SweepObserver` of ``evalgrid run``."""

    def __init__(self, console: Console, total: int, *, no_progress: bool) -> None:
        self.console, self.no_progress = console, no_progress
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[counts]}"), TimeElapsedColumn(), TextColumn("ETA"),
                                 TimeRemainingColumn(), TextColumn("{task.fields[rate]}"), console=console,
                                 disable=no_progress)
        self.task = self.progress.add_task("runs", total=total, counts="", rate="")
        # Per-worker health on its own line, without a bar: runs, failures, sandbox restarts, busy/idle.
        self.health = Progress(TextColumn("[bold]workers[/] {task.fields[line]}"), console=console,
                               disable=no_progress)
        self.workers_task = self.health.add_task("workers", line="starting ...")
        self.counts: Counter[str] = Counter()
        self.started = time.monotonic()
        self.done_here = 0
        self.watchers: list[asyncio.Task[None]] = []

    def on_start(self, total: int, skipped: int) -> None:
        if skipped:
            self.console.print(f"resuming: {skipped} of {total} runs already have an outcome and are skipped")
        self.progress.update(self.task, completed=skipped)

    def on_scheduler(self, scheduler: Scheduler) -> None:
        self.watchers.append(asyncio.create_task(_watch_workers(scheduler, self.health, self.workers_task)))

    def on_outcome(self, outcome: Outcome) -> None:
        self.done_here += 1
        self.counts[outcome.status.value] += 1
        rate = self.done_here / max(time.monotonic() - self.started, 1e-6) * 60
        self.progress.update(self.task, advance=1, rate=f"{rate:.1f} runs/min",
                             counts=" ".join(f"{k}={v}" for k, v in sorted(self.counts.items())))
        if self.no_progress:
            score = (f"F={outcome.functional:.1f} A={outcome.aesthetic:.1f}"
                     if outcome.status is OutcomeStatus.JUDGED else outcome.reason.code.value)
            self.console.print(f"  {outcome.candidate_id} × {outcome.query_id}: {outcome.status.value} {score}",
                               highlight=False)

    def stop_watching(self) -> None:
        for watcher in self.watchers:
            watcher.cancel()


async def _watch_workers(scheduler: Scheduler, progress: Progress, task: TaskID) -> None:
    """Refresh the per-worker health line every 2 s: runs, failures, sandbox restarts, current run."""
    while True:
        await asyncio.sleep(2)
        parts = []
        for health in await scheduler.health():
            state = "busy" if health.current else "idle"
            parts.append(f"{health.worker_id.removeprefix('worker-')}:{state} {health.runs} runs"
                         + (f" {health.failures} failed" if health.failures else "")
                         + (f" {health.sandbox_restarts} restarts" if health.sandbox_restarts else ""))
        progress.update(task, line=" | ".join(parts))
