"""Running a sweep: plan, skip what the outcome store says is done, execute the rest, record each outcome once.

Two schedulers share one contract (``execute(specs) -> outcomes``): the in-process one, a few
:class:`~cluster.scheduling.worker.RunWorker` tasks on this event loop, and the Ray one
(:class:`~cluster.scheduling.ray_grid.RayScheduler`); :func:`make_scheduler` picks one. Either way the driver
alone records outcomes, in the run directory's :class:`~cluster.store.outcomes.OutcomeStore`; a
:class:`SweepObserver` watches.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from cluster.pairwise.stage import CompareOptions, compare
from cluster.pairwise.summary import PairwiseSummary
from cluster.reduce.leaderboard import Leaderboard, build_leaderboard, leaderboard_markdown
from cluster.sandbox.backends import sandbox_backends
from cluster.sandbox.container import SandboxLimits
from cluster.scheduling.ray_grid import RayOptions, RayScheduler
from cluster.scheduling.worker import RunWorker, WorkerHealth, WorkerSettings
from cluster.store.layout import RunFile
from cluster.store.object_store import StoreSettings
from cluster.store.outcomes import OutcomeStore, open_outcomes
from cluster.sweep.inputs import InputsRef
from cluster.sweep.spec import RecordedPlan, Sweep, SweepRecord
from evaluator import (
    ConfigError,
    DiskBudgetError,
    InfrastructureError,
    Outcome,
    OutcomeStatus,
    RunSpec,
    StagePaths,
    write_json_atomic,
)
from evaluator.llm import SpendingCap


@dataclass(frozen=True)
class GridOptions:
    """How a sweep is executed (none of this changes what is evaluated)."""

    scheduler: Literal["local", "ray"] = "local"
    """``local``: workers on this process's event loop; ``ray``: SandboxWorker actors."""
    workers: int | None = None
    """Workers (sandboxes) at once; default: the sweep's ``concurrency``."""
    ray: RayOptions = field(default_factory=RayOptions)
    """Ray settings; ``workers`` above overrides ``ray.workers``."""


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
    redone: int = 0
    """Runs that were in flight when an earlier invocation died, executed again."""
    refused_duplicates: int = 0
    """Outcomes the ledger refused because the run already had one (should stay 0)."""
    removed_containers: list[str] = field(default_factory=list)
    """Sandbox containers left behind by dead processes and removed at start."""
    deferred: list[str] = field(default_factory=list)
    """Runs left unrecorded because the budget was reached (listed in ``deferred.json``)."""
    spent_usd: float | None = None
    """The sweep's model spending so far (earlier invocations included), when it has a budget."""
    leaderboard: Leaderboard | None = None
    """The leaderboard of every outcome so far, also written to ``leaderboard.json`` and ``leaderboard.md``."""
    pairwise: PairwiseSummary | None = None
    """The compare stage's summary, when the sweep has ``pairwise:`` (see :mod:`cluster.pairwise`)."""


class Scheduler(Protocol):
    """Executes runs; every spec yields exactly one outcome."""

    def execute(self, specs: Iterator[RunSpec],
                on_dispatch: Callable[[RunSpec, str, int], None] | None = None) -> AsyncIterator[Outcome]:
        """Yield one outcome per spec; ``on_dispatch(spec, worker, attempt)`` is called as each is handed out."""
        ...

    async def health(self) -> list[WorkerHealth]:
        """Per-worker counters for the progress display."""
        ...


class LocalScheduler:
    """``workers`` RunWorkers as tasks of this event loop, pulling runs from a shared iterator."""

    def __init__(self, settings: WorkerSettings, workers: int) -> None:
        self._workers = [RunWorker(settings, f"worker-{i}") for i in range(workers)]

    async def execute(self, specs: Iterator[RunSpec],
                      on_dispatch: Callable[[RunSpec, str, int], None] | None = None) -> AsyncIterator[Outcome]:
        """Execute ``specs`` on the workers; outcomes come out as they finish."""
        queue: asyncio.Queue[Outcome | None] = asyncio.Queue()

        async def work(worker: RunWorker) -> None:
            try:
                for spec in specs:
                    if on_dispatch:
                        on_dispatch(spec, worker.health.worker_id, 1)
                    await queue.put(await worker.execute(spec))
            finally:
                await queue.put(None)

        tasks: list[asyncio.Task[None]] = []
        try:
            # Every start runs to its end before a failure is raised: a start still under way when
            # the workers are closed would leave its browser driver running past the event loop.
            started = await asyncio.gather(*(worker.start() for worker in self._workers), return_exceptions=True)
            for result in started:
                if isinstance(result, BaseException):
                    raise result
            tasks = [asyncio.create_task(work(worker)) for worker in self._workers]
            running = len(tasks)
            while running:
                item = await queue.get()
                if item is None:
                    running -= 1
                else:
                    yield item
            for task in tasks:
                task.result()  # a worker that failed outside a run (a bug) must not pass silently
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await asyncio.gather(*(worker.close() for worker in self._workers), return_exceptions=True)

    async def health(self) -> list[WorkerHealth]:
        """Each worker's counters."""
        return [worker.health for worker in self._workers]


def worker_settings(sweep: Sweep, run_dir: Path, store: StoreSettings | None = None,
                    inputs: InputsRef | None = None, *, workers: int = 1) -> WorkerSettings:
    """The workers' settings from the sweep file (and the object store, when the run directory is one;
    and the packed inputs, when the sweep came as an archive that workers on other nodes must fetch).

    An endpoint's concurrency and rate limits are the sweep's: each of ``workers`` gets its share.
    """
    box = sweep.spec.sandbox
    endpoints = {name: endpoint.model_copy(update={
        "max_concurrency": max(1, math.ceil(endpoint.max_concurrency / workers)),
        "requests_per_minute": endpoint.requests_per_minute / workers if endpoint.requests_per_minute else None,
    }) for name, endpoint in sweep.spec.endpoints.items()}
    return WorkerSettings(
        run_dir=str(run_dir.resolve()), backend=box.backend, run_timeout_s=sweep.spec.run_timeout_s,
        generation_timeout_s=sweep.spec.generation_timeout_s, max_attempts=sweep.spec.max_attempts, image=box.image,
        limits=SandboxLimits(memory=box.memory, cpus=box.cpus, pids=box.pids), store=store, inputs=inputs,
        endpoints=endpoints,
    )


class SweepObserver(Protocol):
    """What a sweep tells whoever watches it (a progress bar, a test): called on the driver's event loop."""

    def on_start(self, total: int, skipped: int) -> None:
        """The plan has ``total`` runs, ``skipped`` of them already have an outcome."""
        ...

    def on_scheduler(self, scheduler: Scheduler) -> None:
        """The scheduler that executes the runs (its :meth:`~Scheduler.health` can be polled)."""
        ...

    def on_outcome(self, outcome: Outcome) -> None:
        """A run finished (a deferred run too, which is not recorded)."""
        ...


class _Unobserved:
    def on_start(self, total: int, skipped: int) -> None:
        pass

    def on_scheduler(self, scheduler: Scheduler) -> None:
        pass

    def on_outcome(self, outcome: Outcome) -> None:
        pass


def make_scheduler(grid: GridOptions, settings: WorkerSettings, workers: int) -> Scheduler:
    """The scheduler ``grid`` asks for, with ``workers`` workers of ``settings``."""
    if grid.scheduler == "ray":
        return RayScheduler(settings, dataclasses.replace(grid.ray, workers=workers))
    return LocalScheduler(settings, workers)


async def run_sweep(sweep: Sweep, run_dir: Path, *, grid: GridOptions = GridOptions(),
                    observer: SweepObserver | None = None, max_infra_streak: int = 8,
                    store: StoreSettings | None = None, inputs: InputsRef | None = None,
                    budget: SpendingCap | None = None) -> SweepResult:
    """Execute every unfinished run of ``sweep`` under ``run_dir``; re-running resumes.

    ``budget`` is a cap shared with the caller's own model calls (a stage that runs a sweep of its own, like
    the repair-lift); by default the sweep's ``budget_usd`` and what its recorded runs cost.

    With ``store``, the run directory lives in the object store and ``run_dir`` is this machine's
    staging copy: every outcome the store has is adopted first (so a new machine resumes from the
    store alone), each run's stages are published by its worker, and each outcome is written to the
    store before the local ledger records it (:mod:`cluster.store.outcomes`).

    Raises :class:`~evaluator.errors.InfrastructureError` after ``max_infra_streak`` infrastructure
    failures in a row (an outage); those runs stay unrecorded and are redone by the next invocation.
    """
    started = time.monotonic()
    pools = sorted(name for name, e in sweep.spec.endpoints.items() if e.pool)
    if pools and grid.scheduler != "ray":
        raise ConfigError(f"endpoints {', '.join(pools)} name judge pools, which live in a Ray cluster; run with "
                          "--scheduler ray (and --ray-address of the cluster that serves them)")
    observer = observer or _Unobserved()
    workers = grid.workers or sweep.spec.concurrency
    settings = worker_settings(sweep, run_dir, store, inputs, workers=workers)
    backend = sandbox_backends.create(settings.backend)
    removed = await backend.collect_garbage() if backend.driver_collects else []
    async with open_outcomes(run_dir, store) as recorded:
        write_json_atomic(run_dir / RunFile.SWEEP, SweepRecord(path=str(sweep.path), spec=sweep.spec))
        await recorded.publish(RunFile.SWEEP)
        redone = {flight.run_key for flight in recorded.in_flight()}
        finished, outcomes, total = await _resume(sweep, run_dir, recorded)
        skipped = len(outcomes)
        cap = budget if budget is not None else _spending_cap(sweep, recorded)
        if cap:
            settings = dataclasses.replace(settings, budget=cap)
        observer.on_start(total, skipped)
        scheduler = make_scheduler(grid, settings, workers)
        observer.on_scheduler(scheduler)
        disk = _DiskBudget(sweep.spec.disk_budget_gib, run_dir) if sweep.spec.disk_budget_gib else None
        recorder = _Recorder(recorded, outcomes, observer, max_infra_streak, disk)
        pending = (spec for spec in sweep.plan() if spec.run_key not in finished)
        async for outcome in scheduler.execute(pending, lambda spec, worker, attempt: recorded.mark_started(
                spec.run_key, worker=worker, attempt=attempt)):
            await recorder.take(outcome)
        await recorder.flush()
        _write_deferred(run_dir, sweep, cap, recorder.deferred)
        board = build_leaderboard(sweep.spec.name, [c.id for c in sweep.spec.candidates], outcomes.values(),
                                  sample_reduce=sweep.spec.sample_reduce)
        write_json_atomic(run_dir / RunFile.LEADERBOARD, board)
        (run_dir / RunFile.LEADERBOARD_MD).write_text(leaderboard_markdown(board), encoding="utf-8")
        await recorded.publish(RunFile.RESULTS, RunFile.LEADERBOARD, RunFile.LEADERBOARD_MD, RunFile.DEFERRED)
        torn_lines = recorded.torn_lines
    # Pairs are judged on bundles this machine holds; an object-store run's bundles live in the store.
    pairwise = await _compare(sweep, run_dir, cap) if sweep.spec.pairwise is not None and store is None else None
    return SweepResult(outcomes=outcomes, skipped=skipped, executed=recorder.executed,
                       seconds=time.monotonic() - started, torn_lines=torn_lines, redone=len(redone & outcomes.keys()),
                       refused_duplicates=recorder.refused, removed_containers=removed,
                       deferred=[o.run_key for o in recorder.deferred], spent_usd=cap.spent_usd if cap else None,
                       leaderboard=board, pairwise=pairwise)


async def _compare(sweep: Sweep, run_dir: Path, cap: SpendingCap | None) -> PairwiseSummary:
    """The sweep's ``pairwise:`` stage on the evidence now stored (a resumed sweep pays only for new pairs)."""
    spec = sweep.spec.pairwise
    assert spec is not None  # only called for a sweep that compares
    options = CompareOptions(candidates=spec.candidates, pairs=spec.pairs, known_order=spec.known_order)
    return (await compare(run_dir, spec.judge, options, endpoints=dict(sweep.spec.endpoints), budget=cap)).summary


async def _resume(sweep: Sweep, run_dir: Path, recorded: OutcomeStore
                  ) -> tuple[set[str], dict[str, Outcome], int]:
    """Record this invocation's plan; the keys already finished, the outcomes of the plan's finished runs, and
    how many runs the plan has."""
    finished = recorded.finished_keys()
    outcomes: dict[str, Outcome] = {}
    planned: list[str] = []
    for spec in sweep.plan():
        planned.append(spec.run_key)
        if spec.run_key in finished:
            found = recorded.outcome(spec.run_key)
            if found is not None:
                outcomes[spec.run_key] = found
    # Reduction reads the plan, never the sweep file, which may change.
    write_json_atomic(run_dir / RunFile.PLAN, RecordedPlan(spec=sweep.spec, run_keys=planned, queries=sweep.queries),
                      indent=None)
    await recorded.publish(RunFile.PLAN)
    return finished, outcomes, len(planned)


def _spending_cap(sweep: Sweep, recorded: OutcomeStore) -> SpendingCap | None:
    if sweep.spec.budget_usd is None:
        return None
    # What recorded runs cost counts against the cap: raising it is what lets a re-run go on.
    return SpendingCap(sweep.spec.budget_usd, spent_usd=sum(u.cost_usd for o in recorded.outcomes() for u in o.usage))


class _Recorder:
    """Outcomes into the store as they come, once each, with infrastructure failures held back.

    Infrastructure failures in a row are held, not recorded: if they are the start of an outage (the
    Docker engine gone, a full disk), the sweep stops and a re-run redoes them instead of leaving every
    remaining run marked infra_error. An app's hang or crash is a judged outcome (app_hang / app_crash),
    so a run of hostile apps never reads as an outage. A deferred run (the budget reached) is not
    recorded: the next invocation, with more budget, redoes it.
    """

    def __init__(self, store: OutcomeStore, outcomes: dict[str, Outcome], observer: SweepObserver,
                 max_infra_streak: int, disk: _DiskBudget | None = None) -> None:
        self._store, self._outcomes, self._observer = store, outcomes, observer
        self._max_streak = max_infra_streak
        self._disk = disk
        self._held: list[Outcome] = []
        self.deferred: list[Outcome] = []
        self.executed = self.refused = 0

    async def take(self, outcome: Outcome) -> None:
        """Record ``outcome`` (and the infrastructure failures held before it), hold it, or defer it."""
        if outcome.status is OutcomeStatus.DEFERRED:
            self.deferred.append(outcome)
            self._observer.on_outcome(outcome)
        elif outcome.status is OutcomeStatus.INFRA_ERROR:
            self._held.append(outcome)
            if len(self._held) >= self._max_streak:
                last = self._held[-1].reason
                why = f"{last.code.value}: {(last.detail.splitlines() or [''])[0][:300]}"
                raise InfrastructureError(
                    f"{len(self._held)} runs in a row failed for infrastructure reasons (last: {why}); they were "
                    "not recorded. Fix the cause and re-run the same command to resume.")
        else:
            await self.flush()
            await self._record(outcome)

    async def flush(self) -> None:
        """Record the infrastructure failures held so far (the streak ended, or the sweep did)."""
        held, self._held = self._held, []
        for outcome in held:
            await self._record(outcome)

    async def _record(self, outcome: Outcome) -> None:
        if not await self._store.record(outcome):
            self.refused += 1
            return
        self._outcomes[outcome.run_key] = outcome
        self.executed += 1
        self._observer.on_outcome(outcome)
        if self._disk is not None:
            self._disk.check(outcome)


class _DiskBudget:
    """The sweep's evidence on this machine against its ``disk_budget_gib``: measured once, then bundle by bundle."""

    def __init__(self, gib: float, run_dir: Path) -> None:
        self._limit, self._gib = int(gib * 2**30), gib
        self._paths = StagePaths(run_dir)
        evidence = run_dir / StagePaths.EVIDENCE
        self._counted = {bundle.name for bundle in evidence.iterdir()} if evidence.is_dir() else set()
        self.used = sum(_size(evidence / name) for name in self._counted)

    def check(self, outcome: Outcome) -> None:
        """Count ``outcome``'s bundle (once, however many runs share it); raise past the budget."""
        key = outcome.evidence_key
        if key is not None and key not in self._counted:
            self._counted.add(key)
            self.used += _size(self._paths.evidence(key))
        if self.used > self._limit:
            raise DiskBudgetError(
                f"the sweep's evidence reached {self.used / 2**30:.2f} GiB of its disk budget "
                f"(disk_budget_gib: {self._gib:g}); every finished run is recorded. Free space or raise "
                "disk_budget_gib, then re-run the same command to resume.")


def _size(path: Path) -> int:
    """Bytes of the files under ``path`` (0 when it is not there: a bundle kept only in the object store)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else 0


def _write_deferred(run_dir: Path, sweep: Sweep, cap: SpendingCap | None, deferred: list[Outcome]) -> None:
    write_json_atomic(run_dir / RunFile.DEFERRED, {
        "reason": "the sweep's budget (budget_usd) was reached; raise it and re-run the same command",
        "budget_usd": sweep.spec.budget_usd, "spent_usd": round(cap.spent_usd, 6) if cap else None,
        "runs": [{"run_key": o.run_key, "candidate_id": o.candidate_id, "query_id": o.query_id,
                  "detail": o.reason.detail[:300]} for o in deferred]})
