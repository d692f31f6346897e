"""From a run directory's outcomes to numbers: the scoring rule, the leaderboard, the reduction with its
statistics, and the records the report reads.

- ``scoring``: the one rule for which outcomes count and how a cell's samples combine;
- ``leaderboard``: per-candidate means and what the models cost, written by every sweep;
- ``reducer``: outcomes and verdicts → tables and a :class:`Reduction`; ``records``: those records;
- ``statistics``: bootstrap intervals, Bradley-Terry ratings, agreement, WebAccessBench;
- ``recovery``: how agentic candidates recovered from the preview tool's reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator import lazy_exports

if TYPE_CHECKING:
    from cluster.reduce.leaderboard import (
        Leaderboard,
        LeaderboardRow,
        build_leaderboard,
        leaderboard_markdown,
        leaderboard_table,
    )
    from cluster.reduce.records import CandidateSummary, Reduction, RunRow
    from cluster.reduce.reducer import (
        ReduceOptions,
        RunDirectory,
        open_run_directory,
        reduce_rows,
        reduce_run_dir,
        write_tables,
    )
    from cluster.reduce.scoring import candidate_means, cell_score, run_scores

_WHERE = {
    "run_scores": "cluster.reduce.scoring",
    "cell_score": "cluster.reduce.scoring",
    "candidate_means": "cluster.reduce.scoring",
    "Leaderboard": "cluster.reduce.leaderboard",
    "LeaderboardRow": "cluster.reduce.leaderboard",
    "build_leaderboard": "cluster.reduce.leaderboard",
    "leaderboard_table": "cluster.reduce.leaderboard",
    "leaderboard_markdown": "cluster.reduce.leaderboard",
    "ReduceOptions": "cluster.reduce.reducer",
    "RunDirectory": "cluster.reduce.reducer",
    "open_run_directory": "cluster.reduce.reducer",
    "reduce_run_dir": "cluster.reduce.reducer",
    "reduce_rows": "cluster.reduce.reducer",
    "write_tables": "cluster.reduce.reducer",
    "Reduction": "cluster.reduce.records",
    "RunRow": "cluster.reduce.records",
    "CandidateSummary": "cluster.reduce.records",
}

__all__ = [
    "CandidateSummary",
    "Leaderboard",
    "LeaderboardRow",
    "ReduceOptions",
    "Reduction",
    "RunDirectory",
    "RunRow",
    "build_leaderboard",
    "candidate_means",
    "cell_score",
    "leaderboard_markdown",
    "leaderboard_table",
    "open_run_directory",
    "reduce_rows",
    "reduce_run_dir",
    "run_scores",
    "write_tables",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
