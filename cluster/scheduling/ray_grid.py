"""The Ray scheduler: runs streamed in shards to ``SandboxWorker`` actors, each owning one sandbox.

The driver never holds the sweep: it pulls runs lazily from the plan and keeps at most ``depth``
shards in flight per actor (backpressure). A worker process that dies (killed, out of memory) is
restarted by Ray. The shard it was running is charged an attempt and sent again, up to the attempt
limit, after which its runs end as ``infra_error`` / ``worker_died``; the shards it had queued go
again free of charge. A worker that cannot start three times in a row stops the sweep with the
reason (nothing is recorded for runs that never started). Outcomes are returned to the driver,
which alone records them.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import os
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import ray
from ray.exceptions import ActorUnavailableError, RayError, RayTaskError

from cluster.judge_pool import resolve_pools
from cluster.ray_auth import join_ray
from cluster.worker import RunWorker, WorkerHealth, WorkerSettings
from evaluator.budget import SpendingCap
from evaluator.errors import ConfigError, WorkerStartError
from evaluator.models import Outcome, OutcomeStatus, ReasonCode, RunSpec
from evaluator.run import failed_outcome

_MAX_UNAVAILABLE = 600
"""Answers of "actor restarting" in a row (0.5 s apart) before the sweep gives up."""
_MAX_START_FAILURES = 3
"""Failed starts of one worker in a row before the sweep stops with the reason."""
_SHUTDOWN_S = 30.0
"""How long actors get to remove their sandboxes before they are killed (gc collects what remains)."""


class SandboxWorker:
    """A Ray actor around one :class:`RunWorker`: one sandbox, runs executed one at a time."""

    def __init__(self, settings: WorkerSettings, worker_id: str) -> None:
        self._worker = RunWorker(settings, worker_id)
        self._started = False
        self._lock = asyncio.Lock()

    async def run_shard(self, specs: list[RunSpec]) -> list[Outcome]:
        """Execute a shard; shards sent ahead wait their turn (one sandbox runs one app at a time)."""
        async with self._lock:
            if not self._started:
                await self._worker.start()
                self._started = True
            return [await self._worker.execute(spec) for spec in specs]

    def health(self) -> WorkerHealth:
        """Counters for the progress display."""
        return self._worker.health

    def pid(self) -> int:
        """The worker process (chaos tests kill it)."""
        return os.getpid()

    async def close(self) -> None:
        """Remove the sandbox."""
        async with self._lock:
            await self._worker.close()


class _BudgetKeeper:
    """A Ray actor holding the sweep's one spending cap, so that every worker's calls count against it."""

    def __init__(self, cap_usd: float, spent_usd: float) -> None:
        self._cap = SpendingCap(cap_usd, spent_usd=spent_usd)

    async def reserve(self, usd: float) -> bool:
        """See :meth:`SpendingCap.reserve`."""
        return await self._cap.reserve(usd)

    async def settle(self, reserved: float, spent: float) -> None:
        """See :meth:`SpendingCap.settle`."""
        await self._cap.settle(reserved, spent)

    def spent(self) -> float:
        """What was spent so far."""
        return self._cap.spent_usd


class RayBudget:
    """The workers' side of :class:`_BudgetKeeper` (picklable: it is only the actor's handle)."""

    def __init__(self, keeper: Any) -> None:
        self._keeper = keeper

    async def reserve(self, usd: float) -> bool:
        """Reserve ``usd`` under the sweep's cap."""
        return bool(await self._keeper.reserve.remote(usd))

    async def settle(self, reserved: float, spent: float) -> None:
        """Turn a reservation into spending."""
        await self._keeper.settle.remote(reserved, spent)


@dataclass(frozen=True)
class RayOptions:
    """How the sweep uses Ray."""

    workers: int = 2
    """SandboxWorker actors (one sandbox each)."""
    shard_size: int = 1
    """Runs per actor call; larger shards cut dispatch overhead, smaller ones lose less when a worker dies."""
    depth: int = 2
    """Shards in flight per actor: one running, the next already queued."""
    address: str | None = None
    """Ray cluster to join (``auto`` inside a RayCluster); ``None`` starts a local one."""
    cpus_per_worker: float = 1.0
    """CPUs Ray reserves per actor (browser workers are CPU-bound)."""


class RayScheduler:
    """Streams runs to Ray actors and yields their outcomes as they arrive."""

    def __init__(self, settings: WorkerSettings, options: RayOptions) -> None:
        self.settings = settings
        self.options = options
        self.actors: list[Any] = []

    async def execute(self, specs: Iterator[RunSpec],
                      on_dispatch: Callable[[RunSpec, str, int], None] | None = None) -> AsyncIterator[Outcome]:
        """Execute ``specs``; every spec yields exactly one outcome."""
        options = self.options
        started_ray = not ray.is_initialized()
        if started_ray:
            join_ray(options.address, include_dashboard=False, log_to_driver=False,
                     num_cpus=None if options.address else max(os.cpu_count() or 1,
                                                               int(options.workers * options.cpus_per_worker)),
                     object_store_memory=None if options.address else 256 * 1024 * 1024)
        remote = ray.remote(SandboxWorker).options(max_restarts=-1, max_task_retries=0,
                                                   num_cpus=options.cpus_per_worker)
        settings, cap = self.settings, self.settings.budget
        if any(e.pool for e in settings.endpoints.values()):
            # Judge pools (`evalgrid judge serve`) are found by name in this Ray cluster.
            try:
                endpoints = await asyncio.to_thread(resolve_pools, settings.endpoints)
            except BaseException:
                if started_ray:
                    ray.shutdown()
                raise
            settings = dataclasses.replace(settings, endpoints=endpoints)
        keeper: Any = None
        if isinstance(cap, SpendingCap):
            keeper = ray.remote(_BudgetKeeper).options(num_cpus=0).remote(cap.cap_usd, cap.spent_usd)
            settings = dataclasses.replace(settings, budget=RayBudget(keeper))
        self.actors = [remote.remote(settings, f"worker-{i}") for i in range(options.workers)]
        fresh = _shards(specs, options.shard_size)
        retry: list[list[RunSpec]] = []
        deaths: dict[str, int] = {}
        sequence = itertools.count()
        # future -> (actor index, submission number, shard); an actor runs its shards in submission order
        inflight: dict[asyncio.Future[list[Outcome]], tuple[int, int, list[RunSpec]]] = {}
        unavailable = 0
        start_failures = [0] * options.workers

        def submit(index: int) -> bool:
            shard = retry.pop() if retry else next(fresh, None)
            if shard is None:
                return False
            for spec in shard:
                if on_dispatch:
                    on_dispatch(spec, f"worker-{index}", deaths.get(spec.run_key, 0) + 1)
            ref = self.actors[index].run_shard.remote(shard)
            inflight[asyncio.wrap_future(ref.future())] = (index, next(sequence), shard)
            return True

        try:
            for index in range(options.workers):
                for _ in range(options.depth):
                    submit(index)
            while inflight:
                done, _ = await asyncio.wait(inflight, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    if future not in inflight:
                        continue  # already written off with its actor's death, below
                    index, number, shard = inflight.pop(future)
                    try:
                        outcomes = future.result()
                    except ActorUnavailableError:
                        # The actor is being restarted: the shard is not its fault; send it again
                        # once the new process is up.
                        retry.append(shard)
                        unavailable += 1
                        if unavailable > _MAX_UNAVAILABLE:
                            raise
                        await asyncio.sleep(0.5)
                    except RayTaskError as exc:
                        if isinstance(exc.cause, ConfigError):
                            raise exc.cause from exc  # the sweep cannot run at all (e.g. image not built)
                        if isinstance(exc.cause, WorkerStartError):
                            retry.append(shard)  # no run was attempted
                            start_failures[index] += 1
                            if start_failures[index] >= _MAX_START_FAILURES:
                                raise exc.cause from exc
                            await asyncio.sleep(1.0)
                        else:
                            for outcome in self._charge(shard, deaths, retry, exc):
                                yield outcome
                    except RayError as exc:
                        # The actor's process died. Every shard it held fails with it, but only the
                        # one it was running (the oldest) can have caused it; the rest go again free.
                        doomed = [(number, shard)]
                        for other, (i, n, sh) in list(inflight.items()):
                            if i == index:
                                del inflight[other]
                                doomed.append((n, sh))
                        doomed.sort(key=lambda item: item[0])
                        for outcome in self._charge(doomed[0][1], deaths, retry, exc):
                            yield outcome
                        retry.extend(sh for _, sh in doomed[1:])
                    else:
                        unavailable, start_failures[index] = 0, 0
                        for outcome in outcomes:
                            yield outcome
                    while sum(1 for i, _, _ in inflight.values() if i == index) < options.depth and submit(index):
                        pass
        finally:
            if keeper is not None and isinstance(cap, SpendingCap):
                with contextlib.suppress(RayError, TimeoutError):
                    cap.spent_usd = float(await asyncio.wait_for(asyncio.wrap_future(
                        keeper.spent.remote().future()), 10))
                ray.kill(keeper)
            await self._shutdown(started_ray)

    def _charge(self, shard: list[RunSpec], deaths: dict[str, int], retry: list[list[RunSpec]],
                     exc: RayError) -> Iterator[Outcome]:
        again = []
        for spec in shard:
            deaths[spec.run_key] = deaths.get(spec.run_key, 0) + 1
            if deaths[spec.run_key] >= self.settings.max_attempts:
                yield failed_outcome(spec, OutcomeStatus.INFRA_ERROR, ReasonCode.WORKER_DIED,
                                     f"the worker process died {deaths[spec.run_key]} times running this run: "
                                     f"{str(exc).splitlines()[0][:300]}", attempts=deaths[spec.run_key],
                                     duration_s=0.0)
            else:
                again.append(spec)
        if again:
            retry.append(again)

    async def health(self) -> list[WorkerHealth]:
        """Each actor's counters; a dead or restarting actor is reported as such."""
        reports = []
        for index, actor in enumerate(self.actors):
            try:
                reports.append(await asyncio.wait_for(asyncio.wrap_future(actor.health.remote().future()), 2))
            except (RayError, TimeoutError):
                reports.append(WorkerHealth(f"worker-{index}", last_error="not answering (restarting?)"))
        return reports

    async def _shutdown(self, started_ray: bool) -> None:
        closing = [asyncio.wrap_future(actor.close.remote().future()) for actor in self.actors]
        if closing:
            _, late = await asyncio.wait(closing, timeout=_SHUTDOWN_S)
            for future in late:
                future.cancel()
            for future in closing:
                if future.done() and not future.cancelled():
                    future.exception()  # a dead actor cannot close; its containers are gc'd by owner
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
        if started_ray:
            ray.shutdown()


def _shards(specs: Iterator[RunSpec], size: int) -> Iterator[list[RunSpec]]:
    while shard := list(itertools.islice(specs, size)):
        yield shard
