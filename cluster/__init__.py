"""evalgrid's many-runs layer: sweeps, the ledger, workers and their sandboxes, the local and Ray
schedulers, the reducer and report, the leaderboard, the CLI.

The public names below are loaded on first use (PEP 562), so that importing one module of the
package (``cluster.reduce.reducer``, ``cluster.reduce.statistics``) does not load Ray, Playwright, boto3 and the
Kubernetes client with the CLI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator import lazy_exports

if TYPE_CHECKING:
    from cluster.cli.entry import main
    from cluster.reduce.leaderboard import Leaderboard, LeaderboardRow, build_leaderboard
    from cluster.sandbox.container import SandboxLimits
    from cluster.sandbox.docker_backend import DockerSandbox, collect_garbage
    from cluster.scheduling.ray_grid import RayOptions, RayScheduler
    from cluster.scheduling.runner import GridOptions, LocalScheduler, SweepResult, run_sweep
    from cluster.scheduling.worker import RunWorker, WorkerSettings
    from cluster.store.ledger import Ledger
    from cluster.store.results_log import ResultsLog
    from cluster.sweep.spec import SandboxSpec, Sweep, SweepSpec, load_sweep

_WHERE = {
    "main": "cluster.cli.entry",
    "SandboxLimits": "cluster.sandbox.container",
    "DockerSandbox": "cluster.sandbox.docker_backend",
    "collect_garbage": "cluster.sandbox.docker_backend",
    "RayOptions": "cluster.scheduling.ray_grid",
    "RayScheduler": "cluster.scheduling.ray_grid",
    "Leaderboard": "cluster.reduce.leaderboard",
    "LeaderboardRow": "cluster.reduce.leaderboard",
    "build_leaderboard": "cluster.reduce.leaderboard",
    "Ledger": "cluster.store.ledger",
    "ResultsLog": "cluster.store.results_log",
    "GridOptions": "cluster.scheduling.runner",
    "LocalScheduler": "cluster.scheduling.runner",
    "SweepResult": "cluster.scheduling.runner",
    "run_sweep": "cluster.scheduling.runner",
    "SandboxSpec": "cluster.sweep.spec",
    "Sweep": "cluster.sweep.spec",
    "SweepSpec": "cluster.sweep.spec",
    "load_sweep": "cluster.sweep.spec",
    "RunWorker": "cluster.scheduling.worker",
    "WorkerSettings": "cluster.scheduling.worker",
}

__all__ = [
    "DockerSandbox",
    "GridOptions",
    "Leaderboard",
    "LeaderboardRow",
    "Ledger",
    "LocalScheduler",
    "RayOptions",
    "RayScheduler",
    "ResultsLog",
    "RunWorker",
    "SandboxLimits",
    "SandboxSpec",
    "Sweep",
    "SweepResult",
    "SweepSpec",
    "WorkerSettings",
    "build_leaderboard",
    "collect_garbage",
    "load_sweep",
    "main",
    "run_sweep",
]


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
