"""From pairwise verdicts (each pair in both orders) to the numbers a lab reads.

- **Position consistency** on pairs whose better app is known (WiserUI-Bench): FA, the accuracy when
  the better app is shown first; SA, when it is shown second; AA, their mean; CA, the same correct
  choice in both orders (chance is 25 %). A tie, or a choice dropped for want of evidence, is not correct.
- **Order effects** on pairs with no known order: how often both orders pick the same app (or both
  tie), and how often a decided verdict picks the app shown first.
- **Ratings**: Bradley-Terry per candidate from the pairs, an order-inconsistent pair counting as a
  tie (not as nothing); bootstrap intervals resample queries; a head-to-head matrix; Kendall's τ
  against the absolute ranking.
- **Human votes** (Arena-style): the judge's agreement with them on the same pairs, and their own ratings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict
from rich.markup import escape
from rich.table import Table

from cluster.reduce import statistics as st
from cluster.reduce.records import Pairwise, Rating
from cluster.store.layout import RunFile, per_judge_records
from evaluator import Dimension, PairwiseVerdict, Preference

SummaryDimension = Literal["functional", "aesthetic", "overall"]
KnownOrder = Callable[["Comparison", SummaryDimension], "str | None"]
"""The side known to be better on a dimension of a comparison, or ``None`` when no order is known."""
_DIMENSIONS: tuple[SummaryDimension, ...] = ("functional", "aesthetic", "overall")
_RATING_SAMPLES = 200


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class PositionConsistency(_Model):
    """WiserUI-Bench's order-swapped accuracies on pairs whose better app is known."""

    pairs: int
    """Pairs with a known better app, each judged in both orders."""
    fa: float | None
    """Accuracy when the better app is shown first."""
    sa: float | None
    """Accuracy when the better app is shown second."""
    aa: float | None
    """Mean of FA and SA."""
    ca: float | None
    """The better app chosen in both orders (chance: 0.25)."""


class OrderEffects(_Model):
    """How the order of presentation moves a judge, on pairs with no known order."""

    pairs: int
    """Pairs with no known better app, each judged in both orders."""
    consistency: float | None
    """The same app chosen (or a tie given) in both orders."""
    first_position: float | None
    """Of the decided verdicts (not ties), the share that chose the app shown first (0.5 is unbiased)."""


class DimensionSummary(_Model):
    """One dimension's pairwise results (``overall`` combines functional and aesthetic per verdict)."""

    dimension: SummaryDimension
    """Functional, aesthetic or overall."""
    known: PositionConsistency | None
    """Position consistency; ``None`` when no pair has a known better app."""
    unknown: OrderEffects
    """Order effects on the pairs with no known better app."""
    ratings: list[Rating]
    """Bradley-Terry ratings from the pairs, best first."""
    head_to_head: list[Pairwise]
    """Per candidate pair: pairs a won, lost and tied (an order-inconsistent pair is a tie)."""
    kendall_tau: float | None
    """Agreement of the pairwise ratings with the absolute ranking (None when undefined)."""


class HumanComparison(_Model):
    """Imported human pairwise votes beside the judge's."""

    votes: int
    """Votes read."""
    matched: int
    """Votes on a pair the judge also compared (both orders)."""
    agreement: float | None
    """Of the matched votes, the share where the judge's overall choice equals the human's (ties included)."""
    ratings: list[Rating]
    """Bradley-Terry ratings from the human votes alone."""
    head_to_head: list[Pairwise]
    """The human votes' head-to-head matrix."""


class PairwiseSummary(_Model):
    """What ``evalgrid compare`` writes (``pairwise/<judge>/summary.json``) and the report shows."""

    version: int = 1
    """Format version."""
    sweep: str
    """The sweep's name."""
    judge: str
    """The pairwise judge's label."""
    judge_version: str
    """Its version (part of the pairwise keys)."""
    selection: str
    """How pairs were chosen: ``all``, ``adjacent`` or ``sample:N``."""
    candidates: list[str]
    """The candidates compared."""
    known_order: list[str]
    """Candidates in known order of quality, best first (pairs of two of them have a known better app)."""
    pairs: int
    """Pairs judged in both orders."""
    skipped: dict[str, int]
    """Pairs left out because a side had no usable bundle, by reason (and ``budget``: deferred by the cap)."""
    dropped_choices: int
    """Choices dropped because they cited no usable evidence even after one repair request."""
    failed: list[str]
    """Comparisons the judge could not make (refusal, unusable answer, endpoint error), with why."""
    tau_note: str
    """What the Kendall τ was computed on."""
    dimensions: list[DimensionSummary]
    """Functional, aesthetic and overall."""
    human: HumanComparison | None = None
    """Human votes, when imported."""

    def dimension(self, name: SummaryDimension) -> DimensionSummary:
        """The summary of one dimension."""
        return next(d for d in self.dimensions if d.dimension == name)


@dataclass(frozen=True)
class Comparison:
    """One pair of one query judged in both orders: ``ab`` shows ``a`` first, ``ba`` shows ``b`` first."""

    query_id: str
    a: str
    b: str
    ab: PairwiseVerdict
    ba: PairwiseVerdict


@dataclass(frozen=True)
class HumanVote:
    """One imported vote: on ``query_id``, ``winner`` (a candidate id, or ``None`` for a tie) of ``a`` and ``b``."""

    query_id: str
    a: str
    b: str
    winner: str | None


def choice(verdict: PairwiseVerdict, dimension: SummaryDimension) -> Preference | None:
    """A verdict's choice on one dimension; ``overall`` is the majority of the two (a split is a tie).

    ``None`` when the choice was dropped (for ``overall``: both were).
    """
    if dimension != "overall":
        return verdict.choice(Dimension(dimension))
    picks = [p for d in Dimension if (p := verdict.choice(d)) is not None]
    if not picks:
        return None
    lean = sum(1 if p is Preference.FIRST else -1 if p is Preference.SECOND else 0 for p in picks)
    return Preference.FIRST if lean > 0 else Preference.SECOND if lean < 0 else Preference.TIE


def winner(comparison: Comparison, dimension: SummaryDimension) -> str | None:
    """The candidate both orders chose; ``None`` for a tie, an order-inconsistent pair or a dropped choice."""
    first = _picked(choice(comparison.ab, dimension), comparison.a, comparison.b)
    second = _picked(choice(comparison.ba, dimension), comparison.b, comparison.a)
    return first if first is not None and first == second else None


def _picked(preference: Preference | None, shown_first: str, shown_second: str) -> str | None:
    if preference is Preference.FIRST:
        return shown_first
    if preference is Preference.SECOND:
        return shown_second
    return None


def position_consistency(comparisons: Sequence[Comparison], better: KnownOrder,
                         dimension: SummaryDimension) -> PositionConsistency | None:
    """FA, SA, AA and CA over the comparisons whose better app on ``dimension`` ``better`` knows."""
    first_ok: list[bool] = []
    second_ok: list[bool] = []
    both_ok: list[bool] = []
    for c in comparisons:
        good = better(c, dimension)
        if good is None:
            continue
        # In ab the better app is shown first when it is a; in ba when it is b.
        good_first, good_second = (c.ab, c.ba) if good == c.a else (c.ba, c.ab)
        right_first = choice(good_first, dimension) is Preference.FIRST
        right_second = choice(good_second, dimension) is Preference.SECOND
        first_ok.append(right_first)
        second_ok.append(right_second)
        both_ok.append(right_first and right_second)
    if not both_ok:
        return None
    fa, sa = float(np.mean(first_ok)), float(np.mean(second_ok))
    return PositionConsistency(pairs=len(both_ok), fa=round(fa, 4), sa=round(sa, 4), aa=round((fa + sa) / 2, 4),
                               ca=round(float(np.mean(both_ok)), 4))


def order_effects(comparisons: Sequence[Comparison], dimension: SummaryDimension) -> OrderEffects:
    """Consistency across the two orders and the first-position rate, over ``comparisons``."""
    consistent: list[bool] = []
    firsts: list[bool] = []
    for c in comparisons:
        ab, ba = choice(c.ab, dimension), choice(c.ba, dimension)
        if ab is None or ba is None:
            consistent.append(False)
        else:
            consistent.append(_picked(ab, c.a, c.b) == _picked(ba, c.b, c.a)
                              and (ab is Preference.TIE) == (ba is Preference.TIE))
        firsts += [p is Preference.FIRST for p in (ab, ba) if p in (Preference.FIRST, Preference.SECOND)]
    return OrderEffects(pairs=len(comparisons),
                        consistency=round(float(np.mean(consistent)), 4) if consistent else None,
                        first_position=round(float(np.mean(firsts)), 4) if firsts else None)


def outcome_matrix(results: Iterable[tuple[str, str, str, str | None]], candidates: Sequence[str]
                   ) -> tuple[np.ndarray, list[Pairwise]]:
    """Per-query win matrices and the head-to-head table from ``(query, a, b, winner or None)`` results.

    A result with no winner is half a win each: that is how an order-inconsistent pair or a tie counts.
    """
    index = {c: i for i, c in enumerate(candidates)}
    queries: dict[str, int] = {}
    rows = [r for r in results if r[1] in index and r[2] in index]
    wins = np.zeros((max(1, len({r[0] for r in rows})), len(candidates), len(candidates)))
    tally: dict[tuple[int, int], list[int]] = {}
    for query, a, b, won in rows:
        q = queries.setdefault(query, len(queries))
        i, j = sorted((index[a], index[b]))
        counts = tally.setdefault((i, j), [0, 0, 0])
        if won is None:
            wins[q, i, j] += 0.5
            wins[q, j, i] += 0.5
            counts[2] += 1
        else:
            w = index[won]
            wins[q, w, j if w == i else i] += 1.0
            counts[0 if w == i else 1] += 1
    table = [Pairwise(a=candidates[i], b=candidates[j], wins=n[0], losses=n[1], ties=n[2],
                      win_rate=round((n[0] + n[2] / 2) / sum(n), 4))
             for (i, j), n in sorted(tally.items())]
    return wins, table


def ratings(wins: np.ndarray, candidates: Sequence[str], seed: int = 0) -> list[Rating]:
    """Bradley-Terry ratings (best first) of the candidates that met another at least once."""
    played = [i for i in range(len(candidates)) if wins[:, i, :].sum() + wins[:, :, i].sum() > 0]
    if len(played) < 2:
        return []
    sub = wins[:, played][:, :, played]
    intervals = st.bradley_terry_wins_bootstrap(sub, samples=_RATING_SAMPLES, seed=seed)
    rated = [Rating(candidate_id=candidates[i], elo=round(r.rating, 1), low=round(r.low, 1), high=round(r.high, 1))
             for i, r in zip(played, intervals, strict=True)]
    return sorted(rated, key=lambda r: -r.elo)


def kendall_tau(rated: Sequence[Rating], absolute: Mapping[str, float]) -> float | None:
    """Kendall's τ-b between pairwise ratings and absolute mean scores, over candidates that have both."""
    shared = [r for r in rated if r.candidate_id in absolute]
    if len(shared) < 2:
        return None
    tau = st.kendall_tau_b([r.elo for r in shared], [absolute[r.candidate_id] for r in shared])
    return None if tau is None else round(tau, 4)


def summarise_dimension(comparisons: Sequence[Comparison], candidates: Sequence[str], dimension: SummaryDimension,
                        better: KnownOrder, absolute: Mapping[str, float]) -> DimensionSummary:
    """Every pairwise number of one dimension; ``absolute`` is each candidate's mean absolute score on it."""
    unknown = [c for c in comparisons if better(c, dimension) is None]
    wins, table = outcome_matrix(((c.query_id, c.a, c.b, winner(c, dimension)) for c in comparisons), candidates)
    rated = ratings(wins, candidates)
    return DimensionSummary(dimension=dimension, known=position_consistency(comparisons, better, dimension),
                            unknown=order_effects(unknown, dimension), ratings=rated, head_to_head=table,
                            kendall_tau=kendall_tau(rated, absolute))


def summarise_dimensions(comparisons: Sequence[Comparison], candidates: Sequence[str], better: KnownOrder,
                         absolute: Mapping[SummaryDimension, Mapping[str, float]]) -> list[DimensionSummary]:
    """:func:`summarise_dimension` for functional, aesthetic and overall, each against its own absolute means."""
    return [summarise_dimension(comparisons, candidates, d, better, absolute.get(d, {})) for d in _DIMENSIONS]


def human_comparison(votes: Sequence[HumanVote], comparisons: Sequence[Comparison], candidates: Sequence[str]
                     ) -> HumanComparison:
    """The judge's agreement with human votes on the same pairs, and the votes' own ratings."""
    judged = {(c.query_id, frozenset((c.a, c.b))): winner(c, "overall") for c in comparisons}
    agree = [judged[key] == v.winner for v in votes if (key := (v.query_id, frozenset((v.a, v.b)))) in judged]
    wins, table = outcome_matrix(((v.query_id, v.a, v.b, v.winner) for v in votes), candidates)
    return HumanComparison(votes=len(votes), matched=len(agree),
                           agreement=round(float(np.mean(agree)), 4) if agree else None,
                           ratings=ratings(wins, candidates), head_to_head=table)


def known_order(order: Sequence[str]) -> KnownOrder:
    """The better side, on every dimension, of candidates listed best first; ``None`` when either is not listed."""
    rank = {c: i for i, c in enumerate(order)}

    def better(comparison: Comparison, dimension: SummaryDimension) -> str | None:
        a, b = comparison.a, comparison.b
        if a not in rank or b not in rank or a == b:
            return None
        return a if rank[a] < rank[b] else b

    return better



def read_summaries(run_dir: Path) -> list[PairwiseSummary]:
    """Every pairwise summary written into ``run_dir`` (one per judge), skipping files of another format."""
    return per_judge_records(run_dir, RunFile.PAIRWISE, RunFile.PAIRWISE_SUMMARY, PairwiseSummary)


def summary_tables(summary: PairwiseSummary) -> list[Table]:
    """The summary as terminal tables: position consistency and order effects, then the ratings."""
    order = Table(title=f"pairwise judge — {escape(summary.judge)} ({summary.selection}, {summary.pairs} pairs)",
                  caption="FA/SA: accuracy with the better app shown first/second; AA their mean; CA the better app "
                          "chosen in both orders (chance 25 %). Consistency and first-position rate on pairs with "
                          "no known order.")
    for column in ("dimension", "pairs", "FA", "SA", "AA", "CA", "consistency", "first position", "Kendall τ"):
        order.add_column(column, justify="left" if column == "dimension" else "right")
    for d in summary.dimensions:
        k = d.known
        order.add_row(d.dimension, str(k.pairs if k else d.unknown.pairs),
                      *(_pct(getattr(k, m) if k else None) for m in ("fa", "sa", "aa", "ca")),
                      _pct(d.unknown.consistency), _pct(d.unknown.first_position),
                      "—" if d.kendall_tau is None else f"{d.kendall_tau:+.2f}")
    overall = summary.dimension("overall")
    ratings = Table(title="Bradley–Terry ratings from the pairs (overall)", caption=summary.tau_note)
    for column in ("candidate", "Elo", "95% interval", *(("human Elo",) if summary.human else ())):
        ratings.add_column(column, justify="left" if column == "candidate" else "right")
    human = {r.candidate_id: r for r in summary.human.ratings} if summary.human else {}
    for r in overall.ratings:
        extra = [f"{human[r.candidate_id].elo:.0f}" if r.candidate_id in human else "—"] if summary.human else []
        ratings.add_row(escape(r.candidate_id), f"{r.elo:.0f}", f"[{r.low:.0f}, {r.high:.0f}]", *extra)
    return [order, ratings]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"
