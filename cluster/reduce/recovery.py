"""Recovery from the preview tool's reports, per agentic candidate (see :class:`~cluster.reduce.records.Recovery`).

Counted over runs, not cells: each run is one generation that did or did not recover. A run whose first preview
did not run (a timeout) has no first status and enters only the counts of calls and rounds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cluster.reduce.records import Interval, Recovery, RunRow
from cluster.reduce.statistics import bootstrap_mean


def recovery_table(rows: Sequence[RunRow], cells: Sequence[RunRow], bases: Mapping[str, str], *, samples: int,
                   seed: int) -> list[Recovery]:
    """One :class:`Recovery` per candidate with agentic runs, in the order the candidates first appear.

    ``cells`` are the reducer's (one row per candidate, query and variant, samples combined); ``bases`` maps an
    agentic candidate to its single-turn base, whose score it gains over.
    """
    by_candidate: dict[str, list[RunRow]] = {}
    for row in rows:
        if row.preview_rounds is not None:
            by_candidate.setdefault(row.candidate_id, []).append(row)
    table = []
    for name, runs in by_candidate.items():
        recovery = _recovery(name, runs, samples=samples, seed=seed)
        if name in bases:
            recovery = recovery.model_copy(update={"base": bases[name],
                                                   "gain": _gain(cells, name, bases[name], samples, seed)})
        table.append(recovery)
    return table


def _gain(cells: Sequence[RunRow], name: str, base: str, samples: int, seed: int) -> Interval | None:
    """Mean overall difference over the cells both candidates have scores for."""
    def overall(candidate: str) -> dict[tuple[str, str | None], float]:
        return {(c.query_id, c.variant): (c.functional + c.aesthetic) / 2 for c in cells
                if c.candidate_id == candidate and c.functional is not None and c.aesthetic is not None}

    mine, theirs = overall(name), overall(base)
    differences = [mine[cell] - theirs[cell] for cell in mine if cell in theirs]
    if not differences:
        return None
    gain = bootstrap_mean(differences, samples=samples, seed=seed)
    return Interval(mean=gain.mean, low=gain.low, high=gain.high, n=gain.n)


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
