"""evalgrid's many-runs layer: sweeps, the ledger, workers and their sandboxes, the local and Ray
schedulers, the reducer and report, the leaderboard, the CLI."""

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
