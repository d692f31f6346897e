"""evalgrid's many-runs layer: sweep files, the local runner, the results log, the leaderboard, the CLI."""

from cluster.cli import main
from cluster.leaderboard import Leaderboard, LeaderboardRow, build_leaderboard
from cluster.results import ResultsLog
from cluster.runner import SweepResult, run_sweep
from cluster.sweep import Sweep, SweepSpec, load_sweep

__all__ = [
    "Leaderboard",
    "LeaderboardRow",
    "ResultsLog",
    "Sweep",
    "SweepResult",
    "SweepSpec",
    "build_leaderboard",
    "load_sweep",
    "main",
    "run_sweep",
]
