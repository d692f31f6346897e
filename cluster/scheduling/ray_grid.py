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

from cluster.scheduling.judge_pool import resolve_pools
from cluster.scheduling.ray_auth import join_ray
from cluster.scheduling.worker import RunWorker, WorkerHealth, WorkerSettings
from evaluator import ConfigError, Outcome, OutcomeStatus, ReasonCode, RunSpec, WorkerStartError, failed_outcome
from evaluator.llm import SpendingCap

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
        started_ray = not ray.is_initialized()
        if started_ray:
            options = self.options
            join_ray(options.address, include_dashboard=False, log_to_driver=False,
                     num_cpus=None if options.address else max(os.cpu_count() or 1,
                                                               int(options.workers * options.cpus_per_worker)),
                     object_store_memory=None if options.address else 256 * 1024 * 1024)
        keeper: Any = None
        try:
            settings, keeper = await self._actor_settings()
            remote = ray.remote(SandboxWorker).options(max_restarts=-1, max_task_retries=0,
                                                       num_cpus=self.options.cpus_per_worker)
            self.actors = [remote.remote(settings, f"worker-{i}") for i in range(self.options.workers)]
            dispatch = _Dispatch(self, _shards(specs, self.options.shard_size), on_dispatch)
            for index in range(self.options.workers):
                dispatch.fill(index)
            while dispatch.inflight:
                done, _ = await asyncio.wait(dispatch.inflight, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    for outcome in await dispatch.settle(future):
                        yield outcome
        finally:
            cap = self.settings.budget
            if keeper is not None and isinstance(cap, SpendingCap):
                with contextlib.suppress(RayError, TimeoutError):
                    cap.spent_usd = float(await asyncio.wait_for(asyncio.wrap_future(
                        keeper.spent.remote().future()), 10))
                ray.kill(keeper)
            await self._shutdown(started_ray)

    async def _actor_settings(self) -> tuple[WorkerSettings, Any]:
        """The actors' settings: judge pools resolved by name in this Ray cluster, and the spending cap as one
        actor (the budget keeper, also returned) that every worker reserves from."""
        settings, cap = self.settings, self.settings.budget
        if any(e.pool for e in settings.endpoints.values()):
            settings = dataclasses.replace(settings, endpoints=await asyncio.to_thread(resolve_pools,
                                                                                       settings.endpoints))
        keeper: Any = None
        if isinstance(cap, SpendingCap):
            keeper = ray.remote(_BudgetKeeper).options(num_cpus=0).remote(cap.cap_usd, cap.spent_usd)
            settings = dataclasses.replace(settings, budget=RayBudget(keeper))
        return settings, keeper

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


class _Dispatch:
    """Shards handed to the actors, ``depth`` in flight per actor, and what each finished call means.

    An actor runs its shards in submission order. A shard comes back with its outcomes; or it is sent again:
    its actor was restarting, or could not start (no run was attempted), or died while holding it but was
    running an older shard; or its runs are charged a death (the actor died running it, or a run raised).
    """

    def __init__(self, scheduler: RayScheduler, fresh: Iterator[list[RunSpec]],
                 on_dispatch: Callable[[RunSpec, str, int], None] | None) -> None:
        self._scheduler, self._fresh, self._on_dispatch = scheduler, fresh, on_dispatch
        self._retry: list[list[RunSpec]] = []
        self._deaths: dict[str, int] = {}
        self._sequence = itertools.count()
        self.inflight: dict[asyncio.Future[list[Outcome]], tuple[int, int, list[RunSpec]]] = {}
        """future -> (actor index, submission number, shard)."""
        self._unavailable = 0
        self._start_failures = [0] * scheduler.options.workers

    def fill(self, index: int) -> None:
        """Hand actor ``index`` shards until it holds ``depth`` of them, or none is left."""
        while sum(1 for i, _, _ in self.inflight.values() if i == index) < self._scheduler.options.depth:
            shard = self._retry.pop() if self._retry else next(self._fresh, None)
            if shard is None:
                return
            for spec in shard:
                if self._on_dispatch:
                    self._on_dispatch(spec, f"worker-{index}", self._deaths.get(spec.run_key, 0) + 1)
            ref = self._scheduler.actors[index].run_shard.remote(shard)
            self.inflight[asyncio.wrap_future(ref.future())] = (index, next(self._sequence), shard)

    async def settle(self, future: asyncio.Future[list[Outcome]]) -> list[Outcome]:
        """The outcomes a finished call gives (none if its shard goes again), and the actor's next shards."""
        if future not in self.inflight:
            return []  # already written off with its actor's death, below
        index, number, shard = self.inflight.pop(future)
        outcomes: list[Outcome] = []
        try:
            outcomes = future.result()
        except ActorUnavailableError:
            # The actor is being restarted: the shard is not its fault; send it again once the new process is up.
            self._retry.append(shard)
            self._unavailable += 1
            if self._unavailable > _MAX_UNAVAILABLE:
                raise
            await asyncio.sleep(0.5)
        except RayTaskError as exc:
            outcomes = await self._failed_call(index, shard, exc)
        except RayError as exc:
            outcomes = self._died(index, number, shard, exc)
        else:
            self._unavailable, self._start_failures[index] = 0, 0
        self.fill(index)
        return outcomes

    async def _failed_call(self, index: int, shard: list[RunSpec], exc: RayTaskError) -> list[Outcome]:
        if isinstance(exc.cause, ConfigError):
            raise exc.cause from exc  # the sweep cannot run at all (e.g. image not built)
        if isinstance(exc.cause, WorkerStartError):
            self._retry.append(shard)  # no run was attempted
            self._start_failures[index] += 1
            if self._start_failures[index] >= _MAX_START_FAILURES:
                raise exc.cause from exc
            await asyncio.sleep(1.0)
            return []
        return self._charge(shard, exc)

    def _died(self, index: int, number: int, shard: list[RunSpec], exc: RayError) -> list[Outcome]:
        # The actor's process died. Every shard it held fails with it, but only the one it was running (the
        # oldest) can have caused it; the rest go again free.
        doomed = [(number, shard)]
        for other, (i, n, held) in list(self.inflight.items()):
            if i == index:
                del self.inflight[other]
                doomed.append((n, held))
        doomed.sort(key=lambda item: item[0])
        outcomes = self._charge(doomed[0][1], exc)
        self._retry.extend(held for _, held in doomed[1:])
        return outcomes

    def _charge(self, shard: list[RunSpec], exc: RayError) -> list[Outcome]:
        """A death for each run of ``shard``: a run out of attempts fails as infra_error, the rest go again."""
        failed, again = [], []
        for spec in shard:
            deaths = self._deaths[spec.run_key] = self._deaths.get(spec.run_key, 0) + 1
            if deaths >= self._scheduler.settings.max_attempts:
                failed.append(failed_outcome(spec, OutcomeStatus.INFRA_ERROR, ReasonCode.WORKER_DIED,
                                             f"the worker process died {deaths} times running this run: "
                                             f"{str(exc).splitlines()[0][:300]}", attempts=deaths, duration_s=0.0))
            else:
                again.append(spec)
        if again:
            self._retry.append(again)
        return failed


def _shards(specs: Iterator[RunSpec], size: int) -> Iterator[list[RunSpec]]:
    while shard := list(itertools.islice(specs, size)):
        yield shard
