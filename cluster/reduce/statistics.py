"""Statistics behind the reduction: bootstrap and Wilson intervals, win rates, Bradley-Terry, agreement, WebAccessBench.

Everything here is plain numpy so the reducer carries no scipy dependency; the tests check each estimator
against scipy or an independent straightforward implementation. Random functions take a ``seed`` and draw
from ``numpy.random.default_rng(seed)``, so a reduction is reproducible bit for bit.

Missing values: the functions whose inputs naturally have holes (a candidate not scored on a query) take NaN
as "missing" and say so; everywhere else NaN or infinity is an error, because silently dropping values there
would make the reported ``n`` disagree with what the caller counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

__all__ = [
    "MeanInterval",
    "ProportionInterval",
    "RatingInterval",
    "WebAccessMetrics",
    "WinCounts",
    "bootstrap_mean",
    "bradley_terry",
    "bradley_terry_bootstrap",
    "bradley_terry_wins_bootstrap",
    "kendall_tau_b",
    "paired_bootstrap_means",
    "pass_rate",
    "pearson",
    "quadratic_weighted_kappa",
    "spearman",
    "webaccess_metrics",
    "wilson_interval",
    "win_counts",
]

_Vector = Sequence[float] | npt.NDArray[np.floating[Any]] | npt.NDArray[np.integer[Any]]
_Counts = Sequence[int] | npt.NDArray[np.integer[Any]]
_Matrix = npt.NDArray[np.floating[Any]] | npt.NDArray[np.integer[Any]]
_Floats = npt.NDArray[np.float64]

_BT_PRIOR = 0.01
"""Pseudo-wins added each way between every pair: keeps undefeated and disconnected candidates finite."""

_ELO_CENTRE = 1000.0
_MM_WARM_UP = 10
"""MM steps before switching to Newton."""
_NEWTON_HALVINGS = 40
"""Most step halvings tried per Newton step."""
_KENDALL_BLOCK = 512
"""Rows compared at once in Kendall's tau, bounding memory at ``_KENDALL_BLOCK * n`` pairs."""


class MeanInterval(NamedTuple):
    """A mean with its percentile bootstrap interval."""

    mean: float
    """Point estimate: the mean of the observations."""
    low: float
    """Lower percentile bound of the bootstrap distribution of the mean."""
    high: float
    """Upper percentile bound."""
    n: int
    """Observations behind the mean."""


class ProportionInterval(NamedTuple):
    """A share of successes with its Wilson score interval."""

    rate: float
    """Point estimate: successes over trials."""
    low: float
    """Lower bound of the Wilson score interval."""
    high: float
    """Upper bound."""
    n: int
    """Trials behind the rate."""


class WinCounts(NamedTuple):
    """Head-to-head record of candidate a against candidate b over paired queries."""

    wins: int
    """Queries where a scored higher."""
    losses: int
    """Queries where b scored higher."""
    ties: int
    """Queries with equal scores."""
    win_rate: float
    """``(wins + ties / 2) / (wins + losses + ties)``."""


class RatingInterval(NamedTuple):
    """A Bradley-Terry rating on the Elo scale with its percentile bootstrap interval."""

    rating: float
    """Point estimate, fitted on all queries."""
    low: float
    """Lower percentile bound over query resamples."""
    high: float
    """Upper percentile bound."""


class WebAccessMetrics(NamedTuple):
    """WebAccessBench's aggregate accessibility metrics (section E of the paper) for one set of artifacts."""

    artifacts: int
    """Artifacts measured."""
    mean_defects: float
    """E: mean defect count per artifact."""
    clean_rate: float
    """Z: percentage (0-100) of artifacts with zero defects."""
    mean_dom_elements: float
    """D: mean DOM element count per artifact."""
    defects_per_100_elements: float
    """R_dom: ``E / (D / 100)``, or E when D is 0."""
    q_err: float
    """``100 * 2 ** (-E / 2)``: quality from the absolute defect burden."""
    q_dom: float
    """``100 * 2 ** (-R_dom / 2)``: quality from the element-normalised burden."""
    score: int
    """Overall score ``0.5 * Q_err + 0.3 * Q_dom + 0.2 * Z``, rounded half up and clamped to 0-100."""
    guidance_score: int
    """Per-guidance-condition score ``0.5 * Q_dom + 0.5 * Z``, rounded half up and clamped to 0-100."""


# --------------------------------------------------------------------------- bootstrap intervals


def bootstrap_mean(
    values: _Vector, *, samples: int = 1000, seed: int = 0, confidence: float = 0.95
) -> MeanInterval:
    """Percentile bootstrap interval of the mean of ``values``.

    Draws ``samples`` resamples of size n with replacement, all at once as a (samples x n) index matrix,
    and returns the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles (linear interpolation)
    of the resampled means. With a single observation the interval collapses onto it.

    Raises:
        ValueError: if ``values`` is empty, not one-dimensional, holds NaN or infinity, or the bootstrap
            parameters are out of range.
    """
    _check_bootstrap(samples, confidence)
    data = _vector(values, "values")
    _require_finite(data, "values")
    if data.size == 0:
        raise ValueError("values is empty: cannot bootstrap the mean of no observations")
    mean = float(data.mean())
    if data.size == 1:
        return MeanInterval(mean, mean, mean, 1)
    rng = np.random.default_rng(seed)
    replicates = data[_resample(rng, data.size, samples)].mean(axis=1)
    low, high = _percentiles(replicates, confidence)
    return MeanInterval(mean, float(low), float(high), int(data.size))


def paired_bootstrap_means(
    matrix: _Matrix, *, samples: int = 1000, seed: int = 0, confidence: float = 0.95
) -> list[MeanInterval]:
    """Percentile bootstrap intervals of each column's mean, resampling the rows (queries) jointly.

    ``matrix`` has shape (queries x k). Every bootstrap replicate draws one set of rows and uses it for all
    columns, so the intervals of candidates scored on the same queries share their resampling noise.
    NaN marks a missing entry and is left out of that column's mean (and its ``n``); a replicate that drew
    only missing rows for a column is dropped from that column's percentiles. Without NaN, a column's
    interval equals :func:`bootstrap_mean` of the column with the same seed.

    Raises:
        ValueError: if ``matrix`` is not two-dimensional or has no rows, a column has no values, an entry
            is infinite, or the bootstrap parameters are out of range.
    """
    _check_bootstrap(samples, confidence)
    data = _matrix(matrix, "matrix")
    if np.isinf(data).any():
        raise ValueError("matrix holds infinite values; use NaN for missing entries")
    present = ~np.isnan(data)
    counts = present.sum(axis=0)
    empty = np.flatnonzero(counts == 0)
    if empty.size:
        raise ValueError(f"matrix columns {empty.tolist()} have no values (all NaN)")
    queries = data.shape[0]
    index = _resample(np.random.default_rng(seed), queries, samples) if queries > 1 else None
    filled = np.where(present, data, 0.0)
    out = []
    for column in range(data.shape[1]):
        mean = float(filled[:, column].sum() / counts[column])
        if index is None or counts[column] == 1:
            out.append(MeanInterval(mean, mean, mean, int(counts[column])))
            continue
        # Sums over counts rather than nanmean: no warnings for all-missing replicates, which are dropped.
        drawn = present[index, column].sum(axis=1)
        sums = filled[index, column].sum(axis=1)
        usable = drawn > 0
        low, high = _percentiles(sums[usable] / drawn[usable], confidence)
        out.append(MeanInterval(mean, float(low), float(high), int(counts[column])))
    return out


# --------------------------------------------------------------------------- rates and head-to-head


def pass_rate(values: _Vector, threshold: float) -> float:
    """Share (0-1) of ``values`` at or above ``threshold``.

    Raises:
        ValueError: if ``values`` is empty, not one-dimensional or holds NaN or infinity, or
            ``threshold`` is NaN.
    """
    data = _vector(values, "values")
    _require_finite(data, "values")
    if data.size == 0:
        raise ValueError("values is empty: a pass rate needs at least one score")
    if math.isnan(threshold):
        raise ValueError("threshold is NaN")
    return float(np.count_nonzero(data >= threshold) / data.size)


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> ProportionInterval:
    """Wilson's score interval for a share of ``successes`` in ``n`` trials.

    Unlike a percentile bootstrap of 0/1 outcomes, which collapses onto [0, 0] at 0/n and [1, 1] at n/n, it
    keeps a width that reflects how few trials there were (0/10 gives 0 to 0.278). The bounds are
    ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)`` with p the observed share and z the standard normal
    quantile at ``(1 + confidence) / 2``; the lower bound is exactly 0 at 0/n and the upper exactly 1 at n/n.

    Raises:
        ValueError: if ``n`` is below 1, ``successes`` is outside 0..n, or ``confidence`` is not strictly
            between 0 and 1.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}: a share of no trials has no interval")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n ({n}), got {successes}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")
    z = NormalDist().inv_cdf((1.0 + confidence) / 2.0)
    rate = successes / n
    shrink = 1.0 + z * z / n
    centre = (rate + z * z / (2 * n)) / shrink
    half = z * math.sqrt(rate * (1.0 - rate) / n + z * z / (4 * n * n)) / shrink
    # At 0/n and n/n the bound is exactly 0 or 1 in theory; in floats the difference leaves rounding dust.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return ProportionInterval(rate, low, high, n)


def win_counts(scores_a: _Vector, scores_b: _Vector) -> WinCounts:
    """Wins, losses and ties of candidate a against b over paired per-query scores.

    Position i of both sequences is the same query. A pair where either score is NaN (missing) is
    skipped; equal scores are a tie, worth half a win in ``win_rate``.

    Raises:
        ValueError: if the sequences differ in length, hold infinity, or share no query scored by both.
    """
    a, b = _paired(scores_a, scores_b, "scores_a", "scores_b")
    if np.isinf(a).any() or np.isinf(b).any():
        raise ValueError("scores hold infinite values; use NaN for missing scores")
    both = ~(np.isnan(a) | np.isnan(b))
    a, b = a[both], b[both]
    if a.size == 0:
        raise ValueError("no query has scores for both candidates: a win rate is undefined")
    wins = int(np.count_nonzero(a > b))
    losses = int(np.count_nonzero(a < b))
    ties = int(a.size) - wins - losses
    return WinCounts(wins, losses, ties, (wins + ties / 2) / a.size)


# --------------------------------------------------------------------------- Bradley-Terry


def bradley_terry(wins: _Matrix, *, iterations: int = 1000, tolerance: float = 1e-9) -> _Floats:
    """Bradley-Terry ratings on the Elo scale from a matrix of pairwise wins.

    ``wins[i, j]`` is how many times candidate i beat j (a tie may be entered as half a win each way);
    the diagonal is ignored. 0.01 pseudo-wins are added each way between every pair, a tiny symmetric prior
    that keeps undefeated, winless and disconnected candidates finite. Strengths maximise the likelihood:
    a few steps of Hunter's (2004) MM algorithm, then damped Newton steps, because MM alone crawls where only
    the prior links candidates. The fit stops when no log-strength moves by more than ``tolerance`` in a
    Newton step, or after ``iterations`` Newton steps. Ratings are ``400 * log10(strength)`` shifted so their
    mean is 1000, so a 400-point gap means 10:1 odds.

    Raises:
        ValueError: if ``wins`` is not a non-empty square matrix of finite non-negative numbers, or
            ``iterations`` / ``tolerance`` are not positive.
    """
    if iterations < 1:
        raise ValueError(f"iterations must be at least 1, got {iterations}")
    if not tolerance > 0:
        raise ValueError(f"tolerance must be positive, got {tolerance}")
    data = _matrix(wins, "wins")
    if data.shape[0] != data.shape[1]:
        raise ValueError(f"wins must be square (k x k), got shape {data.shape}")
    if not np.isfinite(data).all():
        raise ValueError("wins holds NaN or infinite values")
    if (data < 0).any():
        raise ValueError("wins holds negative counts")
    ratings: _Floats = _fit_elo(data[np.newaxis], iterations, tolerance)[0]
    return ratings


def bradley_terry_bootstrap(
    outcomes: _Matrix, *, samples: int = 1000, seed: int = 0, confidence: float = 0.95
) -> list[RatingInterval]:
    """Bradley-Terry Elo ratings with percentile intervals from resampling queries.

    ``outcomes`` has shape (queries x k): each candidate's overall score per query, NaN where missing.
    Within a query every pair of candidates both scored there is one comparison: the higher score wins,
    equal scores give half a win each. The point estimate is :func:`bradley_terry` on all queries; each
    replicate resamples the queries with replacement, rebuilds the win matrix and refits. Each replicate is
    centred on 1000 like the point estimate, so the intervals describe a candidate relative to the field.

    Raises:
        ValueError: if ``outcomes`` is not two-dimensional with at least one row and column, holds
            infinity, or the bootstrap parameters are out of range.
    """
    _check_bootstrap(samples, confidence)
    data = _matrix(outcomes, "outcomes")
    if np.isinf(data).any():
        raise ValueError("outcomes holds infinite values; use NaN for missing scores")
    return bradley_terry_wins_bootstrap(_per_query_wins(data), samples=samples, seed=seed, confidence=confidence)


def bradley_terry_wins_bootstrap(
    wins: npt.ArrayLike, *, samples: int = 1000, seed: int = 0, confidence: float = 0.95
) -> list[RatingInterval]:
    """Bradley-Terry Elo ratings from per-query win matrices, with intervals from resampling queries.

    ``wins`` has shape (queries x k x k): ``wins[q, i, j]`` is how often i beat j on query q (a tie is half
    a win each). Pairwise votes arrive this way; :func:`bradley_terry_bootstrap` builds it from scores.

    Raises:
        ValueError: if ``wins`` is not three-dimensional with square, non-negative, finite matrices, or the
            bootstrap parameters are out of range.
    """
    _check_bootstrap(samples, confidence)
    data = np.asarray(wins, dtype=np.float64)
    if data.ndim != 3 or data.shape[0] < 1 or data.shape[1] != data.shape[2] or data.shape[1] < 1:
        raise ValueError(f"wins must be (queries x k x k) with at least one query; got shape {data.shape}")
    if not np.isfinite(data).all() or (data < 0).any():
        raise ValueError("wins must hold finite, non-negative counts")
    queries, k, _ = data.shape
    per_query = data.reshape(queries, k * k)
    point = _fit_elo(per_query.sum(axis=0).reshape(1, k, k), 1000, 1e-9)[0]
    index = _resample(np.random.default_rng(seed), queries, samples)
    # A replicate's win matrix is the per-query matrices weighted by how often each query was drawn.
    offsets = index + queries * np.arange(samples)[:, np.newaxis]
    drawn = np.bincount(offsets.ravel(), minlength=samples * queries).reshape(samples, queries)
    replicates = _fit_elo((drawn @ per_query).reshape(samples, k, k), 1000, 1e-9)
    low, high = _percentiles(replicates, confidence)
    return [RatingInterval(float(point[c]), float(low[c]), float(high[c])) for c in range(k)]


# --------------------------------------------------------------------------- agreement


def quadratic_weighted_kappa(
    a: _Vector, b: _Vector, *, step: float = 0.5, low: float = 0.0, high: float = 8.0
) -> float | None:
    """Cohen's kappa with quadratic weights between two raters' scores.

    Scores are clipped to [low, high] and binned to the nearest multiple of ``step`` above ``low``, halves
    rounding up (so with the defaults 6.25 counts as 6.5): 17 categories for 0.0-8.0 in half points.
    Returns None with fewer than two pairs, or when the expected disagreement is zero (both raters put
    everything in one and the same category), where kappa is undefined.

    Raises:
        ValueError: if the sequences differ in length or hold NaN or infinity, ``step`` is not positive,
            or ``high - low`` is not a positive whole number of steps.
    """
    x, y = _paired(a, b, "a", "b")
    _require_finite(x, "a")
    _require_finite(y, "b")
    if not step > 0:
        raise ValueError(f"step must be positive, got {step}")
    span = (high - low) / step
    if not span >= 1 or abs(span - round(span)) > 1e-9:
        raise ValueError(f"high - low must be a positive whole number of steps: {low}..{high} by {step}")
    if x.size < 2:
        return None
    categories = round(span) + 1
    bins_a = _bin(x, step, low, high)
    bins_b = _bin(y, step, low, high)
    pairs = np.bincount(bins_a * categories + bins_b, minlength=categories**2).reshape(categories, categories)
    observed = pairs / x.size
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    grid = np.arange(categories)
    weights = (grid[:, np.newaxis] - grid[np.newaxis, :]) ** 2 / (categories - 1) ** 2
    disagreement = float((weights * expected).sum())
    if disagreement <= 0:
        return None
    return 1.0 - float((weights * observed).sum()) / disagreement


def pearson(a: _Vector, b: _Vector) -> float | None:
    """Pearson's correlation coefficient; None when undefined (fewer than two pairs or a constant side).

    Raises:
        ValueError: if the sequences differ in length or hold NaN or infinity.
    """
    x, y = _finite_pairs(a, b)
    return _pearson(x, y)


def spearman(a: _Vector, b: _Vector) -> float | None:
    """Spearman's rank correlation (Pearson on ranks, ties given their average rank); None when undefined.

    Raises:
        ValueError: if the sequences differ in length or hold NaN or infinity.
    """
    x, y = _finite_pairs(a, b)
    if x.size < 2:
        return None
    return _pearson(_average_ranks(x), _average_ranks(y))


def kendall_tau_b(a: _Vector, b: _Vector) -> float | None:
    """Kendall's tau-b, which corrects for ties on either side; None when undefined.

    Undefined means fewer than two pairs or a side with every value tied. Compares all n(n-1)/2 pairs
    with vectorised blocks of rows: O(n^2) time and O(512 n) memory, comfortable up to a few thousand
    pairs (n = 5000 takes about a second); beyond that an O(n log n) merge-sort method would be needed.

    Raises:
        ValueError: if the sequences differ in length or hold NaN or infinity.
    """
    x, y = _finite_pairs(a, b)
    n = x.size
    if n < 2:
        return None
    concordance = 0  # concordant minus discordant pairs
    tied_x = tied_y = 0
    columns = np.arange(n)
    for start in range(0, n, _KENDALL_BLOCK):
        rows = np.arange(start, min(start + _KENDALL_BLOCK, n))
        later = columns[np.newaxis, :] > rows[:, np.newaxis]  # each unordered pair once
        sign_x = np.sign(x[rows, np.newaxis] - x[np.newaxis, :]).astype(np.int8)
        sign_y = np.sign(y[rows, np.newaxis] - y[np.newaxis, :]).astype(np.int8)
        concordance += int((sign_x.astype(np.int64) * sign_y)[later].sum())
        tied_x += int(np.count_nonzero((sign_x == 0) & later))
        tied_y += int(np.count_nonzero((sign_y == 0) & later))
    pairs = n * (n - 1) // 2
    denominator = math.sqrt(float(pairs - tied_x) * float(pairs - tied_y))
    if denominator == 0:
        return None
    return max(-1.0, min(1.0, concordance / denominator))


# --------------------------------------------------------------------------- WebAccessBench


def webaccess_metrics(defects: _Counts, dom_elements: _Counts) -> WebAccessMetrics:
    """WebAccessBench's aggregate score and its inputs from per-artifact defect and DOM element counts.

    Position i of both sequences is the same artifact. Follows section E of the WebAccessBench paper:
    E = mean defects, D = mean DOM elements, Z = percentage of defect-free artifacts,
    R_dom = E / (D / 100) (E when D is 0), Q_err = 100 * 2^(-E/2), Q_dom = 100 * 2^(-R_dom/2);
    overall score = 0.5 Q_err + 0.3 Q_dom + 0.2 Z and guidance score = 0.5 Q_dom + 0.5 Z, each rounded to
    the nearest integer (halves up) and clamped to 0-100.

    Raises:
        ValueError: if the sequences are empty, differ in length, or hold negative or non-integer counts.
    """
    errors = _counts(defects, "defects")
    elements = _counts(dom_elements, "dom_elements")
    if errors.size != elements.size:
        raise ValueError(f"defects has {errors.size} entries but dom_elements has {elements.size}")
    if errors.size == 0:
        raise ValueError("no artifacts: defects and dom_elements are empty")
    mean_defects = float(errors.mean())
    clean_rate = 100.0 * float(np.count_nonzero(errors == 0)) / errors.size
    mean_elements = float(elements.mean())
    burden = mean_defects / (mean_elements / 100.0) if mean_elements > 0 else mean_defects
    q_err = _clamp(100.0 * 2.0 ** (-mean_defects / 2.0))
    q_dom = _clamp(100.0 * 2.0 ** (-burden / 2.0))
    return WebAccessMetrics(
        artifacts=int(errors.size),
        mean_defects=mean_defects,
        clean_rate=clean_rate,
        mean_dom_elements=mean_elements,
        defects_per_100_elements=burden,
        q_err=q_err,
        q_dom=q_dom,
        score=_score(0.5 * q_err + 0.3 * q_dom + 0.2 * clean_rate),
        guidance_score=_score(0.5 * q_dom + 0.5 * clean_rate),
    )


# --------------------------------------------------------------------------- helpers


def _check_bootstrap(samples: int, confidence: float) -> None:
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")


def _resample(rng: np.random.Generator, n: int, samples: int) -> npt.NDArray[np.int64]:
    return rng.integers(0, n, size=(samples, n), dtype=np.int64)


def _percentiles(replicates: _Floats, confidence: float) -> tuple[_Floats, _Floats]:
    tail = (1.0 - confidence) / 2.0
    bounds = np.quantile(replicates, [tail, 1.0 - tail], axis=0)
    return bounds[0], bounds[1]


def _vector(values: _Vector, name: str) -> _Floats:
    data = np.asarray(values, dtype=np.float64)
    if data.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {data.shape}")
    return data


def _matrix(values: _Matrix, name: str) -> _Floats:
    data = np.asarray(values, dtype=np.float64)
    if data.ndim != 2 or data.shape[0] == 0 or data.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty two-dimensional array, got shape {data.shape}")
    return data


def _counts(values: _Counts, name: str) -> npt.NDArray[np.int64]:
    data = np.asarray(values)
    if data.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {data.shape}")
    if data.size == 0:
        return np.zeros(0, dtype=np.int64)
    if data.dtype.kind == "b" or data.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold integer counts, got dtype {data.dtype}")
    if data.dtype.kind == "f" and not (np.isfinite(data).all() and (data == np.round(data)).all()):
        raise ValueError(f"{name} must hold whole-number counts")
    if (data < 0).any():
        raise ValueError(f"{name} holds negative counts")
    return data.astype(np.int64)


def _require_finite(data: _Floats, name: str) -> None:
    if not np.isfinite(data).all():
        raise ValueError(f"{name} holds NaN or infinite values")


def _paired(a: _Vector, b: _Vector, name_a: str, name_b: str) -> tuple[_Floats, _Floats]:
    x = _vector(a, name_a)
    y = _vector(b, name_b)
    if x.size != y.size:
        raise ValueError(f"{name_a} has {x.size} values but {name_b} has {y.size}; they must be paired")
    return x, y


def _finite_pairs(a: _Vector, b: _Vector) -> tuple[_Floats, _Floats]:
    x, y = _paired(a, b, "a", "b")
    _require_finite(x, "a")
    _require_finite(y, "b")
    return x, y


def _pearson(x: _Floats, y: _Floats) -> float | None:
    # An exact constancy test: centring a constant float array can leave rounding noise that is not zero.
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    dx = x - x.mean()
    dy = y - y.mean()
    r = float((dx * dy).sum() / math.sqrt(float((dx * dx).sum()) * float((dy * dy).sum())))
    return max(-1.0, min(1.0, r))


def _average_ranks(values: _Floats) -> _Floats:
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], values.size]  # exclusive
    # A run of ties at sorted positions start..end-1 shares the mean 1-based rank (start + 1 + end) / 2.
    run_rank = (starts + 1 + ends) / 2.0
    ranks = np.empty(values.size, dtype=np.float64)
    ranks[order] = np.repeat(run_rank, ends - starts)
    return ranks


def _bin(values: _Floats, step: float, low: float, high: float) -> npt.NDArray[np.int64]:
    # floor(x + 0.5) rounds halves up; np.rint would round them to even, splitting quarter points unevenly.
    return np.floor((np.clip(values, low, high) - low) / step + 0.5).astype(np.int64)


def _per_query_wins(outcomes: _Floats) -> _Floats:
    scored = ~np.isnan(outcomes)
    both = scored[:, :, np.newaxis] & scored[:, np.newaxis, :]
    left = outcomes[:, :, np.newaxis]
    right = outcomes[:, np.newaxis, :]
    credit = np.where(left > right, 1.0, np.where(left == right, 0.5, 0.0))
    credit = np.where(both, credit, 0.0)
    k = outcomes.shape[1]
    credit[:, np.arange(k), np.arange(k)] = 0.0
    return credit


def _fit_elo(wins: _Floats, iterations: int, tolerance: float) -> _Floats:
    """Fit a batch of Bradley-Terry problems: ``wins`` is (batch x k x k); returns (batch x k) Elo ratings."""
    batch, k, _ = wins.shape
    if k == 1:
        return np.full((batch, 1), _ELO_CENTRE)
    off_diagonal = ~np.eye(k, dtype=bool)
    w = np.where(off_diagonal, wins + _BT_PRIOR, 0.0)
    won = w.sum(axis=2)
    games = w + np.swapaxes(w, 1, 2)
    theta = np.zeros((batch, k))  # log strengths, kept at mean 0
    # Hunter's MM steps first: each is guaranteed to raise the likelihood, so they move safely away from the flat
    # start. MM alone is far too slow where only the prior links candidates (an undefeated or disconnected one
    # needs ~9,000 steps for 1e-9), so damped Newton steps finish the fit with quadratic convergence.
    for _ in range(min(_MM_WARM_UP, iterations)):
        theta = _mm_step(theta, won, games)
    for _ in range(iterations):
        step = _newton_step(theta, w, won, games)
        theta = theta + step
        if float(np.abs(step).max()) < tolerance:
            break
    ratings: _Floats = 400.0 / math.log(10.0) * theta
    centred: _Floats = ratings - ratings.mean(axis=1, keepdims=True) + _ELO_CENTRE
    return centred


def _mm_step(theta: _Floats, won: _Floats, games: _Floats) -> _Floats:
    strength = np.exp(theta)
    # Hunter's MM update: p_i <- W_i / sum_j n_ij / (p_i + p_j).
    denominator = (games / (strength[:, :, np.newaxis] + strength[:, np.newaxis, :])).sum(axis=2)
    updated: _Floats = np.log(won) - np.log(denominator)
    # Strengths are defined up to a common factor; fixing the mean log keeps them from drifting.
    centred: _Floats = updated - updated.mean(axis=1, keepdims=True)
    return centred


def _newton_step(theta: _Floats, w: _Floats, won: _Floats, games: _Floats) -> _Floats:
    """A Newton step on the log-likelihood in log strengths, halved until the likelihood does not drop."""
    gap = theta[:, :, np.newaxis] - theta[:, np.newaxis, :]
    beats = 0.5 * (1.0 + np.tanh(gap / 2.0))  # P(i beats j), overflow-free logistic
    gradient = won - (games * beats).sum(axis=2)
    # The negative Hessian is a graph Laplacian (singular along the all-ones direction); adding the all-ones
    # matrix makes it invertible and, because the gradient sums to zero, yields the mean-zero Newton step.
    coupling = games * beats * (1.0 - beats)
    laplacian = -coupling
    diagonal = np.arange(theta.shape[1])
    laplacian[:, diagonal, diagonal] = coupling.sum(axis=2)
    step: _Floats = np.linalg.solve(laplacian + 1.0, gradient[:, :, np.newaxis])[:, :, 0]
    before = _log_likelihood(theta, w)
    scale = np.ones((theta.shape[0], 1))
    for _ in range(_NEWTON_HALVINGS):
        worse = _log_likelihood(theta + scale * step, w) < before - 1e-12 * np.abs(before)
        if not worse.any():
            break
        scale[worse] /= 2.0
    scaled: _Floats = scale * step
    return scaled


def _log_likelihood(theta: _Floats, w: _Floats) -> _Floats:
    gap = theta[:, :, np.newaxis] - theta[:, np.newaxis, :]
    # log P(i beats j) = -log(1 + exp(-(theta_i - theta_j)))
    total: _Floats = -(w * np.logaddexp(0.0, -gap)).sum(axis=(1, 2))
    return total


def _clamp(value: float) -> float:
    return min(100.0, max(0.0, value))


def _score(value: float) -> int:
    # Half up, as "rounded to the nearest integer" reads; Python's round() would send 62.5 to 62.
    return int(_clamp(math.floor(value + 0.5)))
