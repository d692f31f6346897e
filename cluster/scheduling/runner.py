"""Running a sweep: plan, skip what the ledger says is done, execute the rest, record each outcome once.

Two schedulers share one contract (``execute(specs) -> outcomes``): the in-process one, a few
:class:`~cluster.worker.RunWorker` tasks on this event loop, and the Ray one
(:class:`~cluster.grid.RayScheduler`). Either way the driver alone records outcomes: first in the
SQLite ledger (the source of truth for resume; a second outcome for a run is refused), then in
``results.jsonl`` (the human-readable log the reducer reads).
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

from cluster.container_sandbox import SandboxLimits
from cluster.docker_sandbox import collect_garbage
from cluster.grid import RayOptions, RayScheduler
from cluster.inputs import InputsRef
from cluster.leaderboard import Leaderboard, build_leaderboard, leaderboard_markdown
from cluster.ledger import Ledger
from cluster.object_store import S3Store, StoreSettings
from cluster.results import ResultsLog
from cluster.run_store import RunStore
from cluster.sweep import PLAN_FILE, RecordedPlan, Sweep
from cluster.worker import RunWorker, WorkerHealth, WorkerSettings
from evaluator.atomic import write_json_atomic
from evaluator.budget import SpendingCap
from evaluator.errors import ConfigError, InfrastructureError
from evaluator.models import Outcome, OutcomeStatus, RunSpec


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
        max_attempts=sweep.spec.max_attempts, image=box.image,
        limits=SandboxLimits(memory=box.memory, cpus=box.cpus, pids=box.pids), store=store, inputs=inputs,
        endpoints=endpoints,
    )


async def run_sweep(
    sweep: Sweep, run_dir: Path, *, grid: GridOptions = GridOptions(),
    on_start: Callable[[int, int], None] | None = None, on_outcome: Callable[[Outcome], None] | None = None,
    on_scheduler: Callable[[Scheduler], None] | None = None, max_infra_streak: int = 8,
    store: StoreSettings | None = None, inputs: InputsRef | None = None,
) -> SweepResult:
    """Execute every unfinished run of ``sweep`` under ``run_dir``; re-running resumes.

    With ``store``, the run directory lives in the object store and ``run_dir`` is this machine's
    staging copy: the ledger first adopts every outcome the store has (so a new machine resumes
    from the store alone), each run's stages are published by its worker, and each outcome is
    written to the store before the local ledger records it.

    Raises :class:`~evaluator.errors.InfrastructureError` after ``max_infra_streak`` infrastructure
    failures in a row (an outage); those runs stay unrecorded and are redone by the next invocation.
    """
    started = time.monotonic()
    run_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(run_dir / "sweep.json", {"path": str(sweep.path), "spec": sweep.spec.model_dump(mode="json")})
    remote = RunStore(S3Store(store)) if store else None
    if remote:
        await asyncio.to_thread(remote.put_file, "sweep.json", run_dir / "sweep.json")
    workers = grid.workers or sweep.spec.concurrency
    pools = sorted(name for name, e in sweep.spec.endpoints.items() if e.pool)
    if pools and grid.scheduler != "ray":
        raise ConfigError(f"endpoints {', '.join(pools)} name judge pools, which live in a Ray cluster; run with "
                          "--scheduler ray (and --ray-address of the cluster that serves them)")
    settings = worker_settings(sweep, run_dir, store, inputs, workers=workers)
    removed = await collect_garbage() if settings.backend == "docker" else []
    log = ResultsLog(run_dir / "results.jsonl")
    log.path.touch(exist_ok=True)  # `evalgrid status` works from the first second of a sweep
    with Ledger.for_run_dir(run_dir) as ledger:
        if remote:
            await asyncio.to_thread(remote.rebuild_ledger, ledger)
        _reconcile(ledger, log)
        redone = {flight.run_key for flight in ledger.in_flight()}
        finished = ledger.finished_keys()
        outcomes: dict[str, Outcome] = {}
        planned: list[str] = []
        for spec in sweep.plan():
            planned.append(spec.run_key)
            if spec.run_key in finished:
                found = ledger.outcome(spec.run_key)
                if found is not None:
                    outcomes[spec.run_key] = found
        total, skipped = len(planned), len(outcomes)
        await _record_plan(sweep, planned, run_dir, remote)
        cap: SpendingCap | None = None
        if sweep.spec.budget_usd is not None:
            # What recorded runs cost counts against the cap: raising it is what lets a re-run go on.
            cap = SpendingCap(sweep.spec.budget_usd, spent_usd=sum(u.cost_usd for o in ledger.outcomes()
                                                                   for u in o.usage))
            settings = dataclasses.replace(settings, budget=cap)
        if on_start:
            on_start(total, skipped)
        pending = (spec for spec in sweep.plan() if spec.run_key not in finished)
        scheduler: Scheduler
        if grid.scheduler == "ray":
            options = RayOptions(workers=workers, shard_size=grid.ray.shard_size, depth=grid.ray.depth,
                                 address=grid.ray.address, cpus_per_worker=grid.ray.cpus_per_worker)
            scheduler = RayScheduler(settings, options)
        else:
            scheduler = LocalScheduler(settings, workers)
        if on_scheduler:
            on_scheduler(scheduler)

        def dispatched(spec: RunSpec, worker: str, attempt: int) -> None:
            ledger.mark_started(spec.run_key, worker=worker, attempt=attempt)

        executed = refused = 0
        # Infrastructure failures in a row are held back, not recorded: if they are the start of an
        # outage (the Docker engine gone, a full disk), the sweep stops and a re-run redoes them
        # instead of leaving every remaining run marked infra_error. An app's hang or crash is a judged
        # outcome (app_hang / app_crash), so a run of hostile apps never reads as an outage.
        held: list[Outcome] = []

        async def record(outcome: Outcome) -> None:
            nonlocal executed, refused
            if remote and ledger.outcome(outcome.run_key) is None:
                # The store first: an outcome the ledger has is one the store has, whatever crashes.
                await asyncio.to_thread(remote.put_outcome, outcome)
            if not ledger.finish(outcome):
                refused += 1
                return
            for stage, key in (("artifact", outcome.artifact_key), ("evidence", outcome.evidence_key),
                               ("verdict", outcome.verdict_key)):
                if key:
                    ledger.record_stage(stage, key, _stage_location(stage, key))
            log.append(outcome)
            outcomes[outcome.run_key] = outcome
            executed += 1
            if on_outcome:
                on_outcome(outcome)

        deferred: list[Outcome] = []
        async for outcome in scheduler.execute(pending, dispatched):
            if outcome.status is OutcomeStatus.DEFERRED:
                deferred.append(outcome)  # not recorded: the next invocation, with more budget, redoes it
                if on_outcome:
                    on_outcome(outcome)
                continue
            if outcome.status is OutcomeStatus.INFRA_ERROR:
                held.append(outcome)
                if len(held) >= max_infra_streak:
                    last = held[-1].reason
                    why = f"{last.code.value}: {(last.detail.splitlines() or [''])[0][:300]}"
                    raise InfrastructureError(
                        f"{len(held)} runs in a row failed for infrastructure reasons (last: {why}); they were "
                        "not recorded. Fix the cause and re-run the same command to resume.")
                continue
            for earlier in held:
                await record(earlier)
            held.clear()
            await record(outcome)
        for earlier in held:
            await record(earlier)
        write_json_atomic(run_dir / "deferred.json", {
            "reason": "the sweep's budget (budget_usd) was reached; raise it and re-run the same command",
            "budget_usd": sweep.spec.budget_usd, "spent_usd": round(cap.spent_usd, 6) if cap else None,
            "runs": [{"run_key": o.run_key, "candidate_id": o.candidate_id, "query_id": o.query_id,
                      "detail": o.reason.detail[:300]} for o in deferred]})
    board = build_leaderboard(sweep.spec.name, [c.id for c in sweep.spec.candidates], outcomes.values(),
                              sample_reduce=sweep.spec.sample_reduce)
    write_json_atomic(run_dir / "leaderboard.json", board)
    (run_dir / "leaderboard.md").write_text(leaderboard_markdown(board), encoding="utf-8")
    if remote:
        for name in ("results.jsonl", "leaderboard.json", "leaderboard.md", "deferred.json"):
            await asyncio.to_thread(remote.put_file, name, run_dir / name)
    return SweepResult(outcomes=outcomes, skipped=skipped, executed=executed, seconds=time.monotonic() - started,
                       torn_lines=log.torn_lines, redone=len(redone & outcomes.keys()), refused_duplicates=refused,
                       removed_containers=removed, deferred=[o.run_key for o in deferred],
                       spent_usd=cap.spent_usd if cap else None, leaderboard=board)


async def _record_plan(sweep: Sweep, planned: list[str], run_dir: Path, remote: RunStore | None) -> None:
    """The plan this invocation runs, which reduction reads (never the sweep file, which may change)."""
    plan = RecordedPlan(spec=sweep.spec, run_keys=planned, queries=sweep.queries)
    write_json_atomic(run_dir / PLAN_FILE, plan, indent=None)
    if remote:
        await asyncio.to_thread(remote.put_file, PLAN_FILE, run_dir / PLAN_FILE)


def _stage_location(stage: str, key: str) -> str:
    return {"artifact": f"artifacts/{key}.json", "evidence": f"evidence/{key}",
            "verdict": f"verdicts/{key}.json"}[stage]


def _reconcile(ledger: Ledger, log: ResultsLog) -> None:
    """Make the ledger and the JSONL log agree after a crash between the two writes, or an older run dir."""
    logged = log.load()
    known = ledger.finished_keys()
    ledger.import_outcomes(o for key, o in logged.items() if key not in known)
    missing = [o for o in ledger.outcomes() if o.run_key not in logged]
    for outcome in missing:
        log.append(outcome)
