"""evalgrid's many-runs layer: sweeps, the ledger, workers and their sandboxes, the local and Ray
schedulers, the reducer and report, the leaderboard, the CLI.

The public names below are loaded on first use (PEP 562), so that importing one module of the
package (``cluster.reducer``, ``cluster.statistics``) does not load Ray, Playwright, boto3 and the
Kubernetes client with the CLI.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cluster.cli import main
    from cluster.container_sandbox import SandboxLimits
    from cluster.docker_sandbox import DockerSandbox, collect_garbage
    from cluster.grid import RayOptions, RayScheduler
    from cluster.leaderboard import Leaderboard, LeaderboardRow, build_leaderboard
    from cluster.ledger import Ledger
    from cluster.results import ResultsLog
    from cluster.runner import GridOptions, LocalScheduler, SweepResult, run_sweep
    from cluster.sweep import SandboxSpec, Sweep, SweepSpec, load_sweep
    from cluster.worker import RunWorker, WorkerSettings

_WHERE = {
    "main": "cluster.cli",
    "SandboxLimits": "cluster.container_sandbox",
    "DockerSandbox": "cluster.docker_sandbox",
    "collect_garbage": "cluster.docker_sandbox",
    "RayOptions": "cluster.grid",
    "RayScheduler": "cluster.grid",
    "Leaderboard": "cluster.leaderboard",
    "LeaderboardRow": "cluster.leaderboard",
    "build_leaderboard": "cluster.leaderboard",
    "Ledger": "cluster.ledger",
    "ResultsLog": "cluster.results",
    "GridOptions": "cluster.runner",
    "LocalScheduler": "cluster.runner",
    "SweepResult": "cluster.runner",
    "run_sweep": "cluster.runner",
    "SandboxSpec": "cluster.sweep",
    "Sweep": "cluster.sweep",
    "SweepSpec": "cluster.sweep",
    "load_sweep": "cluster.sweep",
    "RunWorker": "cluster.worker",
    "WorkerSettings": "cluster.worker",
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


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'cluster' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
