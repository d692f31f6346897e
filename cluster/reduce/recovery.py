"""Recovery from the preview tool's reports, per agentic candidate (see :class:`~cluster.reduce.records.Recovery`).

Counted over runs, not cells: each run is one generation that did or did not recover. A run whose first preview
did not run (a timeout) has no first status and enters only the counts of calls and rounds.
"""

from __future__ import annotations

from collections.abc import Sequence

from cluster.reduce.records import Interval, Recovery, RunRow
from cluster.reduce.statistics import bootstrap_mean


def recovery_table(rows: Sequence[RunRow], *, samples: int, seed: int) -> list[Recovery]:
    """One :class:`Recovery` per candidate with agentic runs, in the order the candidates first appear."""
    by_candidate: dict[str, list[RunRow]] = {}
    for row in rows:
        if row.preview_rounds is not None:
            by_candidate.setdefault(row.candidate_id, []).append(row)
    return [_recovery(name, runs, samples=samples, seed=seed) for name, runs in by_candidate.items()]


def _recovery(name: str, runs: list[RunRow], *, samples: int, seed: int) -> Recovery:
    called = [r for r in runs if r.preview_rounds]
    failing = [r for r in called if r.preview_first == "errors"]
    outcomes = [1.0 if r.preview_final_clean else 0.0 for r in failing]
    rate = bootstrap_mean(outcomes, samples=samples, seed=seed) if outcomes else None
    return Recovery(
        candidate_id=name, runs=len(runs), never_called=len(runs) - len(called), first_errors=len(failing),
        first_errors_rate=len(failing) / len(called) if called else None, recovered=int(sum(outcomes)),
        recovery_rate=Interval(mean=rate.mean, low=rate.low, high=rate.high, n=rate.n) if rate else None,
        mean_rounds=sum(r.preview_rounds or 0 for r in called) / len(called) if called else None,
    )
