"""Which pairs of apps the compare stage puts before a pairwise judge.

Pairs are of one query: two candidates' apps built for the same brief. ``all`` is every pair of the
candidates named; ``adjacent`` only neighbours in the absolute ranking of that query (k-1 pairs instead
of k(k-1)/2: the comparisons that can still change an order); ``sample:N`` N pairs drawn from ``all``
with a seed. ``twins`` is for a run directory made by ``evalgrid calibrate``: each mutation twin against
its working original (sides labelled ``original`` and ``twin``, the original known to be better). A side
with no usable bundle (not judged, an infrastructure error, a non-assessable answer, a bundle missing on
this machine) cannot be compared: the pair is skipped and counted by reason.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from cluster.calibration.twins import Operator
from cluster.pairwise.summary import Comparison, SummaryDimension
from evaluator import ConfigError, Outcome, OutcomeStatus

_SAMPLE = re.compile(r"^sample:(\d+)$")


TWIN_LABELS = ("original", "twin")
"""The sides of a ``twins`` pair, better first."""


@dataclass(frozen=True)
class Pair:
    """Two runs of one brief, both with a committed bundle; sides are named by candidate unless labelled."""

    query_id: str
    a: Outcome
    b: Outcome
    labels: tuple[str, str] | None = None

    @property
    def sides(self) -> tuple[str, str]:
        """The names the two sides are counted under (their candidates, or the labels)."""
        return self.labels or (self.a.candidate_id, self.b.candidate_id)


@dataclass
class Selection:
    """The pairs chosen, and what was left out."""

    how: str
    pairs: list[Pair] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    """Pairs (``all``, ``sample:N``) or candidates (``adjacent``) left out, by reason."""


def check_selection(how: str) -> str:
    """``how`` when it is ``all``, ``adjacent`` or ``sample:N`` (N ≥ 1); a ConfigError saying so otherwise."""
    match = _SAMPLE.match(how)
    if how in ("all", "adjacent", "twins") or (match and int(match.group(1)) >= 1):
        return how
    raise ConfigError(f"pairs {how!r}: use all, adjacent, sample:N (N pairs drawn at random, N ≥ 1) or twins "
                      "(a calibration run directory)")


def select_pairs(outcomes: Sequence[Outcome], candidates: Sequence[str], how: str, *, seed: int = 0,
                 has_bundle: Callable[[Outcome], bool] = lambda o: True) -> Selection:
    """The pairs ``how`` chooses among ``candidates``' runs in ``outcomes`` (sample 0 of each cell).

    ``has_bundle`` says whether a judged run's evidence is on this machine.
    """
    check_selection(how)
    if how == "twins":
        return _twins(outcomes, has_bundle)
    cells = first_cells(outcomes, set(candidates))
    selection = Selection(how)
    for query_id in sorted({query for query, _ in cells}):
        usable, missing = _usable(cells, query_id, candidates, has_bundle)
        if how == "adjacent":
            for reason in missing.values():
                _count(selection, reason)
            ranked = sorted(usable, key=lambda o: (-_overall(o), candidates.index(o.candidate_id)))
            selection.pairs += [Pair(query_id, x, y) for x, y in zip(ranked, ranked[1:], strict=False)]
            continue
        by_id = {o.candidate_id: o for o in usable}
        for a, b in combinations(candidates, 2):
            gone = missing.get(a) or missing.get(b)
            if gone is not None:
                _count(selection, gone)
            else:
                selection.pairs.append(Pair(query_id, by_id[a], by_id[b]))
    match = _SAMPLE.match(how)
    if match and int(match.group(1)) < len(selection.pairs):
        selection.pairs = sorted(random.Random(seed).sample(selection.pairs, int(match.group(1))),
                                 key=lambda p: (p.query_id, p.a.candidate_id, p.b.candidate_id))
    return selection


def twin_order(comparison: Comparison, dimension: SummaryDimension) -> str | None:
    """The original, where a twin's operator broke ``dimension`` (any operator breaks ``overall``); else ``None``.

    A design twin keeps every behaviour, so on the functional dimension a tie is right and no side is known
    better (and the other way round for a behaviour twin).
    """
    operator = Operator(comparison.query_id.rsplit(".", 1)[-1])
    if dimension == "overall" or (dimension == "aesthetic") == operator.aesthetic:
        return TWIN_LABELS[0]
    return None


def _twins(outcomes: Sequence[Outcome], has_bundle: Callable[[Outcome], bool]) -> Selection:
    """Each twin of a calibration run directory (queries ``<app>.<version>.<hash>``) against its original."""
    selection = Selection("twins")
    by_app: dict[str, dict[str, Outcome]] = {}
    for outcome in outcomes:
        parts = outcome.query_id.split(".")
        if len(parts) != 3:
            raise ConfigError(f"query {outcome.query_id!r} is not a calibration twin's (<app>.<version>.<hash>): "
                              "--pairs twins is for a run directory made by `evalgrid calibrate`")
        by_app.setdefault(parts[0], {})[parts[1]] = outcome
    for app, versions in sorted(by_app.items()):
        original = versions.get(TWIN_LABELS[0])
        for name, twin in sorted(versions.items()):
            if name == TWIN_LABELS[0]:
                continue
            gone = next((why for o in (original, twin) if (why := unusable(o, has_bundle))), None)
            if gone is not None:
                _count(selection, gone)
            else:
                assert original is not None  # unusable says "no run" for a missing original
                selection.pairs.append(Pair(f"{app}.{name}", original, twin, TWIN_LABELS))
    return selection


def unusable(outcome: Outcome | None, has_bundle: Callable[[Outcome], bool]) -> str | None:
    """Why a run's stored evidence cannot be judged again (one side of a pair, a repair-lift fixture), or ``None``."""
    if outcome is None:
        return "no run"
    if outcome.status is not OutcomeStatus.JUDGED or outcome.evidence_key is None:
        return outcome.status.value
    return "bundle missing" if not has_bundle(outcome) else None


def first_cells(outcomes: Sequence[Outcome], wanted: Collection[str]) -> dict[tuple[str, str], Outcome]:
    """One run per (query, candidate) of ``wanted``: the lowest sample of the first variant, so stages on stored
    evidence compare like with like."""
    cells: dict[tuple[str, str], Outcome] = {}
    for outcome in sorted(outcomes, key=lambda o: (o.variant or "", o.sample)):
        if outcome.candidate_id in wanted:
            cells.setdefault((outcome.query_id, outcome.candidate_id), outcome)
    return cells


def _usable(cells: dict[tuple[str, str], Outcome], query_id: str, candidates: Sequence[str],
            has_bundle: Callable[[Outcome], bool]) -> tuple[list[Outcome], dict[str, str]]:
    usable, missing = [], {}
    for candidate in candidates:
        outcome = cells.get((query_id, candidate))
        why = unusable(outcome, has_bundle)
        if why is not None:
            missing[candidate] = why
        elif outcome is not None:
            usable.append(outcome)
    return usable, missing


def _overall(outcome: Outcome) -> float:
    return ((outcome.functional or 0.0) + (outcome.aesthetic or 0.0)) / 2


def _count(selection: Selection, reason: str) -> None:
    selection.skipped[reason] = selection.skipped.get(reason, 0) + 1
