"""The one scoring rule the leaderboard and the reducer share.

Which outcomes count (judged and non-assessable: a non-assessable answer scores 0; infra errors and
timeouts are the machinery's and are left out), and how a cell's samples, the runs of one
(candidate, query, variant), become one score: their mean, or the best sample. Every mean a
candidate gets is over cells, rounded to :data:`PLACES`.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Literal

from pydantic import BaseModel, ConfigDict

from evaluator import OutcomeStatus

SampleReduce = Literal["mean", "best"]

SCORED = frozenset({OutcomeStatus.JUDGED, OutcomeStatus.NON_ASSESSABLE})
"""Outcomes that enter the means; the others are counted, not scored."""

PLACES = 4
"""Decimal places of every reported mean score."""


def run_scores(status: OutcomeStatus, functional: float | None, aesthetic: float | None
               ) -> tuple[float, float] | None:
    """A run's (functional, aesthetic), or None when its outcome does not count."""
    if status not in SCORED:
        return None
    return float(functional or 0.0), float(aesthetic or 0.0)


def cell_score(samples: Sequence[tuple[float, float]], how: SampleReduce) -> tuple[float, float]:
    """One cell's (functional, aesthetic) from its samples' scores: their mean, or the best sample
    (highest functional + aesthetic, then highest functional; the first of equals)."""
    if how == "best":
        return max(samples, key=lambda fa: (fa[0] + fa[1], fa[0]))
    return fmean(f for f, _ in samples), fmean(a for _, a in samples)


def candidate_means(cells: Sequence[tuple[float, float]]) -> tuple[float, float, float]:
    """A candidate's reported (functional, aesthetic, overall) means over its cells' scores; overall is the
    mean of each cell's (functional + aesthetic) / 2."""
    return (rounded(fmean(f for f, _ in cells)), rounded(fmean(a for _, a in cells)),
            rounded(fmean((f + a) / 2 for f, a in cells)))


def rounded(value: float) -> float:
    """A score or interval bound as reported."""
    return round(value, PLACES)


class OutcomeCounts(BaseModel):
    """A candidate's runs counted as the rule counts them: the start of its leaderboard line and its summary."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    rank: int
    """1 is best, by overall mean."""
    candidate_id: str
    """The candidate."""
    runs: int
    """Runs with an outcome."""
    judged: int
    """Runs with a verdict."""
    non_assessable: int
    """Runs whose answer held nothing runnable (scored 0.0)."""
    infra_error: int
    """Runs lost to the infrastructure (excluded from the means)."""
    timeout: int
    """Runs that hit the time limit for the machinery's reasons (excluded from the means)."""
    hang: int = 0
    """Judged runs the app hung (functional 0, counted in the means)."""
    crash: int = 0
    """Judged runs the app crashed (functional 0, counted in the means)."""
    infra_error_rate: float | None = None
    """Share of the candidate's runs excluded as the machinery's failures (infra errors and timeouts)."""
