"""Recovery from the preview tool's reports, per agentic candidate (see :class:`~cluster.reduce.records.Recovery`).

Counted over runs, not cells: each run is one generation that did or did not recover. A status that is unknown
(a first round without a report, a final answer whose preview did not finish) is counted apart and kept out of
the rate it cannot inform: counting it as a failure would charge the candidate for the previewer's timeouts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cluster.reduce.records import Interval, Recovery, RunRow
from cluster.reduce.statistics import bootstrap_mean, wilson_interval


def recovery_table(rows: Sequence[RunRow], cells: Sequence[RunRow], bases: Mapping[str, str], *, samples: int,
                   seed: int) -> list[Recovery]:
    """One :class:`Recovery` per candidate with agentic runs, in the order the candidates first appear.

    ``cells`` are the reducer's (one row per candidate, query and variant, samples combined); ``bases`` maps an
    agentic candidate to its single-turn base, whose score it gains over. ``samples`` and ``seed`` drive the
    gain's bootstrap over queries; the recovery rate's interval is Wilson's, which needs neither.
    """
    by_candidate: dict[str, list[RunRow]] = {}
    for row in rows:
        if row.preview_rounds is not None:
            by_candidate.setdefault(row.candidate_id, []).append(row)
    table = []
    for name, runs in by_candidate.items():
        recovery = _recovery(name, runs)
        if name in bases:
            recovery = recovery.model_copy(update={"base": bases[name],
                                                   "gain": _gain(cells, name, bases[name], samples, seed)})
        table.append(recovery)
    return table


def _gain(cells: Sequence[RunRow], name: str, base: str, samples: int, seed: int) -> Interval | None:
    """Mean overall difference per query, bootstrapped over the queries both candidates have scores for.

    A query's variants share its brief, so their differences move together; resampling cells would treat them
    as independent and narrow the interval. Each query's difference is the mean over its cells both scored.
    """
    def overall(candidate: str) -> dict[tuple[str, str | None], float]:
        return {(c.query_id, c.variant): (c.functional + c.aesthetic) / 2 for c in cells
                if c.candidate_id == candidate and c.functional is not None and c.aesthetic is not None}

    mine, theirs = overall(name), overall(base)
    by_query: dict[str, list[float]] = {}
    for cell, score in mine.items():
        if cell in theirs:
            by_query.setdefault(cell[0], []).append(score - theirs[cell])
    if not by_query:
        return None
    gain = bootstrap_mean([sum(d) / len(d) for d in by_query.values()], samples=samples, seed=seed)
    return Interval(mean=gain.mean, low=gain.low, high=gain.high, n=gain.n)


def _recovery(name: str, runs: list[RunRow]) -> Recovery:
    called = [r for r in runs if r.preview_rounds]
    reported = [r for r in called if r.preview_first is not None]
    failing = [r for r in reported if r.preview_first == "errors"]
    known = [r for r in failing if r.preview_final_clean is not None]
    recovered = sum(1 for r in known if r.preview_final_clean)
    rate = wilson_interval(recovered, len(known)) if known else None
    return Recovery(
        candidate_id=name, runs=len(runs), never_called=len(runs) - len(called),
        first_unknown=len(called) - len(reported), first_errors=len(failing),
        first_errors_rate=len(failing) / len(reported) if reported else None,
        recovered=recovered, final_unknown=len(failing) - len(known),
        recovery_rate=Interval(mean=rate.rate, low=rate.low, high=rate.high, n=rate.n) if rate else None,
        mean_rounds=sum(r.preview_rounds or 0 for r in called) / len(called) if called else None,
    )
