"""Tests of cluster.reduce.statistics against scipy and against independent straightforward implementations."""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import combinations

import numpy as np
import numpy.typing as npt
import pytest
import scipy.optimize
import scipy.stats

from cluster.reduce.statistics import (
    MeanInterval,
    ProportionInterval,
    bootstrap_mean,
    bradley_terry,
    bradley_terry_bootstrap,
    kendall_tau_b,
    paired_bootstrap_means,
    pass_rate,
    pearson,
    quadratic_weighted_kappa,
    spearman,
    webaccess_metrics,
    wilson_interval,
    win_counts,
)

Floats = npt.NDArray[np.float64]

# --------------------------------------------------------------------------- bootstrap_mean


def test_bootstrap_interval_contains_the_mean() -> None:
    values = np.random.default_rng(1).gamma(2.0, 1.5, size=40)
    result = bootstrap_mean(values, samples=2000, seed=7)
    assert isinstance(result, MeanInterval)
    assert result.mean == pytest.approx(values.mean())
    assert result.low < result.mean < result.high
    assert result.n == 40


def test_bootstrap_interval_shrinks_with_n() -> None:
    rng = np.random.default_rng(2)
    small = bootstrap_mean(rng.normal(4.0, 1.0, size=20), seed=0)
    large = bootstrap_mean(rng.normal(4.0, 1.0, size=2000), seed=0)
    # Width scales as 1/sqrt(n): 10x fewer points, about 10x wider.
    assert large.high - large.low < (small.high - small.low) / 4


def test_bootstrap_is_reproducible_for_a_seed() -> None:
    values = np.random.default_rng(3).normal(size=50).tolist()
    assert bootstrap_mean(values, seed=11) == bootstrap_mean(values, seed=11)
    assert bootstrap_mean(values, seed=11) != bootstrap_mean(values, seed=12)


def test_bootstrap_agrees_with_scipy_percentile_bootstrap() -> None:
    values = np.random.default_rng(4).gamma(2.0, 1.0, size=60)  # skewed, so the bounds are asymmetric
    ours = bootstrap_mean(values, samples=20000, seed=5, confidence=0.9)
    ref = scipy.stats.bootstrap((values,), np.mean, method="percentile", n_resamples=20000, confidence_level=0.9,
                                rng=np.random.default_rng(6)).confidence_interval
    # Independent Monte Carlo streams: the percentiles' standard error is about 0.02 standard errors of the mean.
    tolerance = 0.1 * values.std(ddof=1) / math.sqrt(values.size)
    assert ours.low == pytest.approx(ref.low, abs=tolerance)
    assert ours.high == pytest.approx(ref.high, abs=tolerance)


def test_bootstrap_confidence_widens_the_interval() -> None:
    values = np.random.default_rng(8).normal(size=100)
    narrow = bootstrap_mean(values, seed=1, confidence=0.5)
    wide = bootstrap_mean(values, seed=1, confidence=0.99)
    assert wide.low < narrow.low < narrow.high < wide.high


def test_bootstrap_single_value_and_constant_values_collapse() -> None:
    assert bootstrap_mean([6.5]) == MeanInterval(6.5, 6.5, 6.5, 1)
    assert bootstrap_mean([2.0, 2.0, 2.0]) == MeanInterval(2.0, 2.0, 2.0, 3)


@pytest.mark.parametrize(("values", "kwargs", "message"), [
    ([], {}, "empty"),
    ([1.0, float("nan")], {}, "NaN"),
    ([1.0, 2.0], {"samples": 0}, "samples"),
    ([1.0, 2.0], {"confidence": 1.0}, "confidence"),
    ([[1.0, 2.0]], {}, "one-dimensional"),
])
def test_bootstrap_rejects_bad_input(values: list[float], kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bootstrap_mean(values, **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- paired_bootstrap_means


def test_paired_bootstrap_resamples_rows_jointly() -> None:
    column = np.random.default_rng(9).normal(5.0, 2.0, size=30)
    matrix = np.column_stack([column, column, -column, column + 1.0])
    same, twin, mirrored, shifted = paired_bootstrap_means(matrix, samples=500, seed=3)
    assert twin == same
    # The same rows in every replicate: negating a column mirrors its interval, shifting it shifts the interval.
    assert (mirrored.low, mirrored.high) == pytest.approx((-same.high, -same.low))
    assert (shifted.low, shifted.high) == pytest.approx((same.low + 1.0, same.high + 1.0))


def test_paired_bootstrap_matches_bootstrap_mean_without_missing_values() -> None:
    matrix = np.random.default_rng(10).normal(size=(25, 3))
    results = paired_bootstrap_means(matrix, samples=400, seed=21)
    for column, result in enumerate(results):
        assert result == bootstrap_mean(matrix[:, column], samples=400, seed=21)


def test_paired_bootstrap_ignores_missing_entries() -> None:
    rng = np.random.default_rng(11)
    matrix = rng.normal(4.0, 1.0, size=(40, 2))
    matrix[rng.choice(40, size=10, replace=False), 1] = np.nan
    full, holed = paired_bootstrap_means(matrix, samples=500, seed=0)
    assert full.n == 40
    assert holed.n == 30
    assert holed.mean == pytest.approx(np.nanmean(matrix[:, 1]))
    assert holed.low < holed.mean < holed.high


def test_paired_bootstrap_rejects_an_empty_column() -> None:
    matrix = np.array([[1.0, np.nan], [2.0, np.nan]])
    with pytest.raises(ValueError, match=r"columns \[1\]"):
        paired_bootstrap_means(matrix)


# --------------------------------------------------------------------------- pass_rate, wilson_interval, win_counts


def test_pass_rate_counts_values_at_or_above_the_threshold() -> None:
    assert pass_rate([3.0, 4.0, 4.0, 7.5], 4.0) == 0.75
    assert pass_rate([1.0], 4.0) == 0.0
    with pytest.raises(ValueError, match="empty"):
        pass_rate([], 4.0)


@pytest.mark.parametrize(("successes", "n", "low", "high"), [
    (0, 10, 0.0, 0.2775),        # a bootstrap of ten 0s gives [0, 0]
    (10, 10, 0.7225, 1.0),
    (5, 10, 0.2366, 0.7634),
    (1, 1, 0.2065, 1.0),
    (81, 263, 0.2553, 0.3662),   # Wilson (1927) as tabulated by Newcombe (1998), example (a)
])
def test_wilson_interval_known_values(successes: int, n: int, low: float, high: float) -> None:
    result = wilson_interval(successes, n)
    assert isinstance(result, ProportionInterval)
    assert (result.rate, result.n) == (pytest.approx(successes / n), n)
    assert (result.low, result.high) == (pytest.approx(low, abs=1e-4), pytest.approx(high, abs=1e-4))


@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
def test_wilson_interval_matches_scipy(confidence: float) -> None:
    for successes, n in [(0, 7), (3, 7), (7, 7), (1, 50), (49, 50), (12, 1000)]:
        ref = scipy.stats.binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
        result = wilson_interval(successes, n, confidence=confidence)
        assert (result.low, result.high) == (pytest.approx(ref.low, abs=1e-12), pytest.approx(ref.high, abs=1e-12))


def test_wilson_interval_is_exact_at_the_ends_and_narrows_with_n() -> None:
    assert wilson_interval(0, 3).low == 0.0 and wilson_interval(3, 3).high == 1.0
    widths = [(w.high - w.low) for w in (wilson_interval(n // 2, n) for n in (4, 40, 400))]
    assert widths[0] > widths[1] > widths[2]


@pytest.mark.parametrize(("successes", "n", "kwargs", "message"), [
    (0, 0, {}, "at least 1"),
    (4, 3, {}, "between 0 and n"),
    (-1, 3, {}, "between 0 and n"),
    (1, 3, {"confidence": 1.0}, "confidence"),
])
def test_wilson_interval_rejects_bad_input(successes: int, n: int, kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        wilson_interval(successes, n, **kwargs)


def test_win_counts_skips_missing_pairs_and_halves_ties() -> None:
    a = [5.0, 3.0, 4.0, float("nan"), 6.0, 2.0]
    b = [4.0, 3.5, 4.0, 1.0, float("nan"), 1.0]
    result = win_counts(a, b)
    # Compared: 5>4 win, 3<3.5 loss, 4=4 tie, 2>1 win; the two NaN pairs are skipped.
    assert (result.wins, result.losses, result.ties) == (2, 1, 1)
    assert result.win_rate == pytest.approx((2 + 0.5) / 4)


def test_win_counts_rejects_unpaired_or_disjoint_scores() -> None:
    with pytest.raises(ValueError, match="paired"):
        win_counts([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="both"):
        win_counts([1.0, float("nan")], [float("nan"), 2.0])


# --------------------------------------------------------------------------- Bradley-Terry


def _elo_mle_reference(wins: Floats) -> Floats:
    """Maximise the Bradley-Terry likelihood (with the same 0.01 prior) with a generic optimiser."""
    k = wins.shape[0]
    w = np.where(np.eye(k, dtype=bool), 0.0, wins + 0.01)

    def negative_log_likelihood(theta: Floats) -> float:
        gap = theta[:, None] - np.logaddexp(theta[:, None], theta[None, :])
        return float(-(w * gap).sum())

    fitted = scipy.optimize.minimize(negative_log_likelihood, np.zeros(k), method="BFGS", options={"gtol": 1e-10})
    theta = fitted.x - fitted.x.mean()
    result: Floats = 1000.0 + 400.0 / math.log(10.0) * theta
    return result


def _simulated_wins(truth: Floats, games: int, seed: int) -> Floats:
    rng = np.random.default_rng(seed)
    k = truth.size
    wins = np.zeros((k, k))
    for i, j in combinations(range(k), 2):
        p = 1.0 / (1.0 + 10.0 ** ((truth[j] - truth[i]) / 400.0))
        wins[i, j] = rng.binomial(games, p)
        wins[j, i] = games - wins[i, j]
    return wins


def test_bradley_terry_recovers_known_ratings() -> None:
    truth = np.array([1000.0, 800.0, 1200.0, 900.0, 1100.0])  # mean 1000 already
    ratings = bradley_terry(_simulated_wins(truth, games=2000, seed=12))
    assert list(np.argsort(ratings)) == list(np.argsort(truth))
    # 8000 games per candidate: the standard error is about 5 Elo points.
    np.testing.assert_allclose(ratings, truth, atol=20.0)
    assert ratings.mean() == pytest.approx(1000.0)


def test_bradley_terry_matches_a_generic_likelihood_maximiser() -> None:
    rng = np.random.default_rng(13)
    wins = rng.integers(0, 12, size=(6, 6)).astype(float)
    wins[0, 1] += 0.5  # a tie entered as half a win each way
    wins[1, 0] += 0.5
    np.testing.assert_allclose(bradley_terry(wins), _elo_mle_reference(wins), atol=1e-3)


def test_bradley_terry_two_candidates_in_closed_form() -> None:
    # With two candidates the MLE odds are the win ratio, prior included: (3 + 0.01) / (1 + 0.01).
    ratings = bradley_terry(np.array([[0, 3], [1, 0]]))
    assert ratings[0] - ratings[1] == pytest.approx(400 * math.log10(3.01 / 1.01))
    assert ratings.mean() == pytest.approx(1000.0)


def test_bradley_terry_keeps_undefeated_and_disconnected_candidates_finite() -> None:
    wins = np.array([
        [0, 9, 9, 0, 0],
        [0, 0, 4, 0, 0],
        [0, 6, 0, 0, 0],
        [0, 0, 0, 0, 7],  # 3 and 4 never meet 0, 1, 2
        [0, 0, 0, 3, 0],
    ], dtype=float)
    ratings = bradley_terry(wins)
    assert np.isfinite(ratings).all()
    assert ratings.argmax() == 0
    assert ratings[3] > ratings[4]
    assert ratings.mean() == pytest.approx(1000.0)
    # Only the prior links the two groups and bounds candidate 0: the slowest case for MM, so check it converged.
    np.testing.assert_allclose(ratings, _elo_mle_reference(wins), atol=1e-2)


def test_bradley_terry_survives_extreme_records() -> None:
    wins = np.zeros((4, 4))
    wins[0, 1:] = 1000.0  # 0 beat everyone 1000 times; the rest never played each other
    ratings = bradley_terry(wins)
    assert np.isfinite(ratings).all()
    assert ratings[0] > ratings[1] + 1000
    np.testing.assert_allclose(ratings[1:], ratings[1])


def test_bradley_terry_edge_cases_and_errors() -> None:
    np.testing.assert_array_equal(bradley_terry(np.zeros((1, 1))), [1000.0])
    np.testing.assert_allclose(bradley_terry(np.zeros((3, 3))), [1000.0] * 3)
    with pytest.raises(ValueError, match="square"):
        bradley_terry(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="negative"):
        bradley_terry(np.array([[0.0, -1.0], [1.0, 0.0]]))


def _simulated_outcomes(seed: int) -> tuple[Floats, Floats]:
    rng = np.random.default_rng(seed)
    quality = np.array([1.0, 0.0, 2.4, 1.6])
    queries = 150
    raw = 3.0 + rng.normal(0, 1.0, size=(queries, 1)) + quality + rng.normal(0, 1.2, size=(queries, quality.size))
    scores: Floats = np.clip(np.round(raw * 2) / 2, 0.0, 8.0)  # half points, so ties happen
    scores[rng.random(scores.shape) < 0.05] = np.nan
    return scores, quality


def _reference_win_matrix(scores: Floats) -> Floats:
    k = scores.shape[1]
    wins = np.zeros((k, k))
    for row in scores:
        for i in range(k):
            for j in range(k):
                if i == j or math.isnan(row[i]) or math.isnan(row[j]):
                    continue
                if row[i] > row[j]:
                    wins[i, j] += 1.0
                elif row[i] == row[j]:
                    wins[i, j] += 0.5
    return wins


def test_bradley_terry_bootstrap_orders_candidates_and_brackets_the_point_estimate() -> None:
    scores, quality = _simulated_outcomes(14)
    intervals = bradley_terry_bootstrap(scores, samples=300, seed=2)
    ratings = np.array([r.rating for r in intervals])
    assert list(np.argsort(ratings)) == list(np.argsort(quality))
    for r in intervals:
        assert r.low <= r.rating <= r.high
        assert r.low < r.high
    best, worst = intervals[int(quality.argmax())], intervals[int(quality.argmin())]
    assert best.low > worst.high


def test_bradley_terry_bootstrap_point_estimate_uses_per_query_comparisons() -> None:
    scores, _ = _simulated_outcomes(15)
    intervals = bradley_terry_bootstrap(scores, samples=50, seed=0)
    expected = bradley_terry(_reference_win_matrix(scores))
    np.testing.assert_allclose([r.rating for r in intervals], expected, atol=1e-6)


def test_bradley_terry_bootstrap_is_reproducible() -> None:
    scores, _ = _simulated_outcomes(16)
    assert bradley_terry_bootstrap(scores, samples=100, seed=4) == bradley_terry_bootstrap(scores, samples=100, seed=4)


# --------------------------------------------------------------------------- quadratic weighted kappa


def _kappa_reference(a: list[float], b: list[float], categories: int, step: float, low: float) -> float:
    """Textbook quadratic-weighted kappa from the confusion matrix, for scores already on the grid."""
    n = len(a)
    confusion = [[0] * categories for _ in range(categories)]
    for x, y in zip(a, b, strict=True):
        confusion[round((x - low) / step)][round((y - low) / step)] += 1
    rows = [sum(confusion[i]) for i in range(categories)]
    cols = [sum(confusion[i][j] for i in range(categories)) for j in range(categories)]
    observed = expected = 0.0
    for i in range(categories):
        for j in range(categories):
            weight = (i - j) ** 2 / (categories - 1) ** 2
            observed += weight * confusion[i][j] / n
            expected += weight * rows[i] * cols[j] / n**2
    return 1.0 - observed / expected


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_kappa_matches_a_confusion_matrix_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 17, size=80)
    a = (truth / 2).tolist()
    b = (np.clip(truth + rng.integers(-3, 4, size=80), 0, 16) / 2).tolist()
    assert quadratic_weighted_kappa(a, b) == pytest.approx(_kappa_reference(a, b, 17, 0.5, 0.0))


def test_kappa_with_a_custom_grid() -> None:
    rng = np.random.default_rng(5)
    a = rng.integers(1, 6, size=50).astype(float).tolist()
    b = rng.integers(1, 6, size=50).astype(float).tolist()
    result = quadratic_weighted_kappa(a, b, step=1.0, low=1.0, high=5.0)
    assert result == pytest.approx(_kappa_reference(a, b, 5, 1.0, 1.0))


def test_kappa_known_cases() -> None:
    grid = [i / 2 for i in range(17)]
    assert quadratic_weighted_kappa(grid, grid) == 1.0
    # Systematic reversal: the worst possible disagreement for these marginals.
    assert quadratic_weighted_kappa(grid, [8.0 - g for g in grid]) == pytest.approx(-1.0)
    rng = np.random.default_rng(6)
    noisy = rng.uniform(0, 8, size=60)
    reversed_kappa = quadratic_weighted_kappa(noisy, 8.0 - noisy + rng.normal(0, 0.5, size=60))
    assert reversed_kappa is not None and reversed_kappa < -0.5
    # Two categories by hand: observed disagreement 1/4, expected 0.5*0.75 + 0.5*0.25 = 0.5, so 1 - 0.25/0.5.
    assert quadratic_weighted_kappa([0, 0, 1, 1], [0, 1, 1, 1], step=1.0, low=0.0, high=1.0) == pytest.approx(0.5)


def test_kappa_bins_to_half_points_with_halves_up_and_clips() -> None:
    raw_a = [6.2, 6.3, 6.25, 8.4, -1.0, 3.0]
    raw_b = [6.0, 7.0, 6.5, 7.5, 1.0, 3.1]
    binned_a = [6.0, 6.5, 6.5, 8.0, 0.0, 3.0]
    binned_b = [6.0, 7.0, 6.5, 7.5, 1.0, 3.0]
    assert quadratic_weighted_kappa(raw_a, raw_b) == pytest.approx(quadratic_weighted_kappa(binned_a, binned_b))
    assert quadratic_weighted_kappa(binned_a, binned_b) == pytest.approx(_kappa_reference(binned_a, binned_b, 17,
                                                                                          0.5, 0.0))


def test_kappa_undefined_cases() -> None:
    assert quadratic_weighted_kappa([], []) is None
    assert quadratic_weighted_kappa([4.0], [4.0]) is None
    assert quadratic_weighted_kappa([3.0, 3.0, 3.0], [3.0, 3.0, 3.0]) is None  # no expected disagreement
    assert quadratic_weighted_kappa([2.0, 2.0], [5.0, 5.0]) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="paired"):
        quadratic_weighted_kappa([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="whole number of steps"):
        quadratic_weighted_kappa([1.0, 2.0], [1.0, 2.0], step=0.3)


# --------------------------------------------------------------------------- correlations


def _tied_pairs(seed: int, n: int) -> tuple[Floats, Floats]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 6, size=n).astype(float)
    b = a + rng.integers(-2, 3, size=n) + rng.choice([0.0, 0.5], size=n)
    return a, b


@pytest.mark.parametrize(("seed", "n"), [(0, 30), (1, 80), (2, 200), (3, 1300)])
def test_correlations_match_scipy_on_data_with_ties(seed: int, n: int) -> None:
    a, b = _tied_pairs(seed, n)
    assert pearson(a, b) == pytest.approx(scipy.stats.pearsonr(a, b).statistic, abs=1e-12)
    assert spearman(a, b) == pytest.approx(scipy.stats.spearmanr(a, b).statistic, abs=1e-12)
    assert kendall_tau_b(a, b) == pytest.approx(scipy.stats.kendalltau(a, b, variant="b").statistic, abs=1e-12)


def test_correlations_on_continuous_data_and_lists() -> None:
    rng = np.random.default_rng(7)
    a = rng.normal(size=50)
    b = -0.6 * a + rng.normal(size=50)
    x, y = a.tolist(), b.tolist()
    assert pearson(x, y) == pytest.approx(scipy.stats.pearsonr(a, b).statistic, abs=1e-12)
    assert spearman(x, y) == pytest.approx(scipy.stats.spearmanr(a, b).statistic, abs=1e-12)
    assert kendall_tau_b(x, y) == pytest.approx(scipy.stats.kendalltau(a, b).statistic, abs=1e-12)


@pytest.mark.parametrize("function", [pearson, spearman, kendall_tau_b])
def test_correlations_are_none_when_undefined(function: Callable[[list[float], list[float]], float | None]) -> None:
    assert function([], []) is None
    assert function([1.0], [2.0]) is None
    assert function([0.1, 0.1, 0.1], [1.0, 2.0, 3.0]) is None
    assert function([1.0, 2.0, 3.0], [5.0, 5.0, 5.0]) is None
    assert function([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(1.0)  # defined once both vary
    with pytest.raises(ValueError, match="NaN"):
        function([1.0, float("nan")], [1.0, 2.0])


# --------------------------------------------------------------------------- WebAccessBench


def test_webaccess_mixed_case_by_hand() -> None:
    m = webaccess_metrics([0, 0, 2, 4], [100, 100, 100, 100])
    # E = 6 / 4 = 1.5; Z = 2 clean of 4 = 50 %; D = 100; R_dom = 1.5 / (100 / 100) = 1.5
    assert (m.artifacts, m.mean_defects, m.clean_rate, m.mean_dom_elements) == (4, 1.5, 50.0, 100.0)
    assert m.defects_per_100_elements == 1.5
    # Q_err = Q_dom = 100 * 2^-0.75 = 59.4604
    assert m.q_err == pytest.approx(59.4604, abs=1e-4)
    assert m.q_dom == pytest.approx(59.4604, abs=1e-4)
    # overall = 0.5 * 59.4604 + 0.3 * 59.4604 + 0.2 * 50 = 29.7302 + 17.8381 + 10 = 57.568 -> 58
    assert m.score == 58
    # guidance = 0.5 * 59.4604 + 0.5 * 50 = 29.7302 + 25 = 54.730 -> 55
    assert m.guidance_score == 55


def test_webaccess_normalises_by_dom_size() -> None:
    m = webaccess_metrics([1, 0, 2, 1], [20, 20, 40, 40])
    # E = 4 / 4 = 1.0; Z = 1 of 4 = 25 %; D = 120 / 4 = 30; R_dom = 1.0 / 0.3 = 3.3333
    assert m.defects_per_100_elements == pytest.approx(10 / 3)
    # Q_err = 100 * 2^-0.5 = 70.7107; Q_dom = 100 * 2^-1.6667 = 31.4980
    assert m.q_err == pytest.approx(70.7107, abs=1e-4)
    assert m.q_dom == pytest.approx(31.4980, abs=1e-4)
    # overall = 35.3553 + 9.4494 + 5.0 = 49.805 -> 50; guidance = 15.7490 + 12.5 = 28.249 -> 28
    assert (m.score, m.guidance_score) == (50, 28)


def test_webaccess_without_dom_elements_uses_raw_defects() -> None:
    m = webaccess_metrics([1, 3], [0, 0])
    # E = 2; Z = 0; D = 0, so R_dom = E = 2; Q_err = Q_dom = 100 * 2^-1 = 50
    assert (m.mean_dom_elements, m.defects_per_100_elements, m.q_err, m.q_dom) == (0.0, 2.0, 50.0, 50.0)
    # overall = 25 + 15 + 0 = 40; guidance = 25 + 0 = 25
    assert (m.score, m.guidance_score) == (40, 25)


def test_webaccess_all_clean_scores_100() -> None:
    m = webaccess_metrics([0, 0, 0], [10, 20, 30])
    # E = 0, Z = 100, R_dom = 0: Q_err = Q_dom = 100; 50 + 30 + 20 = 100 and 50 + 50 = 100
    assert (m.mean_defects, m.clean_rate, m.q_err, m.q_dom) == (0.0, 100.0, 100.0, 100.0)
    assert (m.score, m.guidance_score) == (100, 100)


def test_webaccess_rounds_halves_up_and_stays_in_range() -> None:
    m = webaccess_metrics([0, 0, 0, 8], [100, 100, 100, 100])
    # E = 2, Z = 75, R_dom = 2: Q = 50; overall = 25 + 15 + 15 = 55; guidance = 25 + 37.5 = 62.5 -> 63, not 62
    assert (m.score, m.guidance_score) == (55, 63)
    heavy = webaccess_metrics([10, 10], [5, 5])
    # E = 10, Z = 0, D = 5, R_dom = 200: Q_err = 100 * 2^-5 = 3.125, Q_dom ~ 0; overall = 1.5625 -> 2; guidance 0
    assert (heavy.score, heavy.guidance_score) == (2, 0)


@pytest.mark.parametrize(("defects", "dom", "message"), [
    ([], [], "no artifacts"),
    ([1, 2], [10], "entries"),
    ([-1], [10], "negative"),
    ([1.5], [10], "whole-number"),
])
def test_webaccess_rejects_bad_input(defects: list[int], dom: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        webaccess_metrics(defects, dom)
