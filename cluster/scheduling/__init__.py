"""Running a sweep's runs: the contract both schedulers share, the local and Ray schedulers, the worker
that executes runs on its own browser, judge servers on GPUs, and rejudging stored evidence.

- ``runner``: :func:`run_sweep` (plan, skip what is done, execute the rest, record each outcome once) and the
  in-process :class:`LocalScheduler`;
- ``ray_grid``: the :class:`RayScheduler`, runs streamed in shards to sandbox-owning actors;
- ``worker``: :class:`RunWorker`, one browser and sandbox, runs one after another;
- ``judge_pool``: vLLM judge servers as Ray actors; ``ray_auth``: joining a cluster that wants a token;
- ``rejudge``: a run directory's evidence scored by another judge, without a browser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator import lazy_exports

if TYPE_CHECKING:
    from cluster.scheduling.judge_pool import JudgeServerSpec, pool_health, resolve_pools, start_pool, stop_pool
    from cluster.scheduling.ray_auth import join_ray
    from cluster.scheduling.ray_grid import RayOptions, RayScheduler
    from cluster.scheduling.rejudge import RejudgeResult
    from cluster.scheduling.runner import GridOptions, LocalScheduler, Scheduler, SweepResult, run_sweep
    from cluster.scheduling.worker import RunWorker, WorkerSettings

_WHERE = {
    "GridOptions": "cluster.scheduling.runner",
    "LocalScheduler": "cluster.scheduling.runner",
    "Scheduler": "cluster.scheduling.runner",
    "SweepResult": "cluster.scheduling.runner",
    "run_sweep": "cluster.scheduling.runner",
    "RayOptions": "cluster.scheduling.ray_grid",
    "RayScheduler": "cluster.scheduling.ray_grid",
    "RunWorker": "cluster.scheduling.worker",
    "WorkerSettings": "cluster.scheduling.worker",
    "JudgeServerSpec": "cluster.scheduling.judge_pool",
    "start_pool": "cluster.scheduling.judge_pool",
    "stop_pool": "cluster.scheduling.judge_pool",
    "pool_health": "cluster.scheduling.judge_pool",
    "resolve_pools": "cluster.scheduling.judge_pool",
    "join_ray": "cluster.scheduling.ray_auth",
    "RejudgeResult": "cluster.scheduling.rejudge",
}

__all__ = [
    "GridOptions",
    "JudgeServerSpec",
    "LocalScheduler",
    "RayOptions",
    "RayScheduler",
    "RejudgeResult",
    "RunWorker",
    "Scheduler",
    "SweepResult",
    "WorkerSettings",
    "join_ray",
    "pool_health",
    "resolve_pools",
    "run_sweep",
    "start_pool",
    "stop_pool",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
