"""The Ray scheduler: runs streamed in shards to ``SandboxWorker`` actors, each owning one sandbox.

The driver never holds the sweep: it pulls runs lazily from the plan and keeps at most ``depth``
shards in flight per actor (backpressure). A worker process that dies (killed, out of memory) is
restarted by Ray; the runs of its unfinished shards are dispatched again, up to the attempt limit,
after which they end as ``infra_error`` / ``worker_died``. Outcomes are returned to the driver,
which alone records them.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import ray
from ray.exceptions import ActorUnavailableError, RayError, RayTaskError

from cluster.worker import RunWorker, WorkerHealth, WorkerSettings
from evaluator.errors import ConfigError
from evaluator.models import Outcome, OutcomeStatus, ReasonCode, RunSpec
from evaluator.run import failed_outcome

_MAX_UNAVAILABLE = 600
"""Answers of "actor restarting" tolerated per sweep (0.5 s apart) before the sweep gives up."""


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
            ray.init(address=options.address, include_dashboard=False, log_to_driver=False,
                     num_cpus=None if options.address else max(os.cpu_count() or 1,
                                                                int(options.workers * options.cpus_per_worker)),
                     object_store_memory=None if options.address else 256 * 1024 * 1024)
        remote = ray.remote(SandboxWorker).options(max_restarts=-1, max_task_retries=0,
                                                   num_cpus=options.cpus_per_worker)
        self.actors = [remote.remote(self.settings, f"worker-{i}") for i in range(options.workers)]
        fresh = _shards(specs, options.shard_size)
        retry: list[list[RunSpec]] = []
        deaths: dict[str, int] = {}
        inflight: dict[asyncio.Future[list[Outcome]], tuple[int, list[RunSpec]]] = {}
        unavailable = 0

        def submit(index: int) -> bool:
            shard = retry.pop() if retry else next(fresh, None)
            if shard is None:
                return False
            for spec in shard:
                if on_dispatch:
                    on_dispatch(spec, f"worker-{index}", deaths.get(spec.run_key, 0) + 1)
            ref = self.actors[index].run_shard.remote(shard)
            inflight[asyncio.wrap_future(ref.future())] = (index, shard)
            return True

        try:
            for index in range(options.workers):
                for _ in range(options.depth):
                    submit(index)
            while inflight:
                done, _ = await asyncio.wait(inflight, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    index, shard = inflight.pop(future)
                    try:
                        outcomes = future.result()
                    except ActorUnavailableError:
                        # The actor is being restarted (its process died): the shard is not its
                        # fault; send it again once the new process is up.
                        retry.append(shard)
                        unavailable += 1
                        if unavailable > _MAX_UNAVAILABLE:
                            raise
                        await asyncio.sleep(0.5)
                    except RayTaskError as exc:
                        if isinstance(exc.cause, ConfigError):
                            raise exc.cause from exc  # the sweep cannot run at all (e.g. image not built)
                        for outcome in self._after_death(shard, deaths, retry, exc):
                            yield outcome
                    except RayError as exc:
                        for outcome in self._after_death(shard, deaths, retry, exc):
                            yield outcome
                    else:
                        for outcome in outcomes:
                            yield outcome
                    while sum(1 for i, _ in inflight.values() if i == index) < options.depth and submit(index):
                        pass
        finally:
            await self._shutdown(started_ray)

    def _after_death(self, shard: list[RunSpec], deaths: dict[str, int], retry: list[list[RunSpec]],
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
        await asyncio.gather(*closing, return_exceptions=True)
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
        if started_ray:
            ray.shutdown()


def _shards(specs: Iterator[RunSpec], size: int) -> Iterator[list[RunSpec]]:
    while shard := list(itertools.islice(specs, size)):
        yield shard
