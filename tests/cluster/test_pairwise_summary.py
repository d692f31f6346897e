"""Pairwise numbers from verdicts: position consistency, order effects, ratings, pair selection, human votes.

Verdicts are built directly (no browser, no model): what is checked is the arithmetic that turns
ordered verdicts into FA/SA/AA/CA and ratings, against values worked out by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cluster.pairwise.pairs import check_selection, select_pairs, twin_order
from cluster.pairwise.summary import (
    Comparison,
    HumanVote,
    human_comparison,
    known_order,
    order_effects,
    position_consistency,
    summarise_dimensions,
    winner,
)
from cluster.pairwise.votes import read_votes
from evaluator.errors import ConfigError
from evaluator.models import (
    Dimension,
    EvidenceRef,
    JudgeInfo,
    OutcomeReason,
    OutcomeStatus,
    PairChoice,
    PairwiseVerdict,
    Preference,
    ReasonCode,
)
from evaluator.models import Outcome as RunOutcome

_REF = [EvidenceRef(file="static/desktop-viewport.png")]
_JUDGE = JudgeInfo(name="scripted", kind="llm", rubric_version="t")


def _verdict(functional: Preference, aesthetic: Preference | None = None) -> PairwiseVerdict:
    choices = [PairChoice(dimension=Dimension.FUNCTIONAL, choice=functional, reason="r", first_evidence=_REF,
                          second_evidence=_REF)]
    if aesthetic is not None:
        choices.append(PairChoice(dimension=Dimension.AESTHETIC, choice=aesthetic, reason="r", first_evidence=_REF,
                                  second_evidence=_REF))
    return PairwiseVerdict(pairwise_key="k", first="e1", second="e2", judge=_JUDGE, choices=choices, label="t")


def _pairs(judge: str, n: int = 4) -> list[Comparison]:
    """``n`` pairs of good (better) against bad, half with good shown first in ``ab``, judged by a kind of judge."""
    out = []
    for i in range(n):
        a, b = ("good", "bad") if i % 2 == 0 else ("bad", "good")
        if judge == "first":  # always picks the app shown first
            ab = ba = _verdict(Preference.FIRST)
        elif judge == "right":  # always picks the better app
            ab = _verdict(Preference.FIRST if a == "good" else Preference.SECOND)
            ba = _verdict(Preference.FIRST if b == "good" else Preference.SECOND)
        else:  # consistent but wrong on every other pair: picks the same app in both orders
            pick = "good" if i < n // 2 else "bad"
            ab = _verdict(Preference.FIRST if a == pick else Preference.SECOND)
            ba = _verdict(Preference.FIRST if b == pick else Preference.SECOND)
        out.append(Comparison(f"q{i}", a, b, ab, ba))
    return out


def test_a_judge_that_always_picks_the_first_app_gets_full_fa_no_sa_and_ca_zero() -> None:
    got = position_consistency(_pairs("first"), known_order(["good", "bad"]), "functional")
    assert got is not None
    assert (got.fa, got.sa, got.aa, got.ca) == (1.0, 0.0, 0.5, 0.0)


def test_an_order_consistent_judge_gets_ca_equal_to_aa_right_or_wrong() -> None:
    better = known_order(["good", "bad"])
    right = position_consistency(_pairs("right"), better, "functional")
    half = position_consistency(_pairs("consistent"), better, "functional")
    assert right is not None and (right.fa, right.sa, right.aa, right.ca) == (1.0, 1.0, 1.0, 1.0)
    assert half is not None and half.ca == half.aa == 0.5


def test_a_tie_or_a_dropped_choice_is_not_correct() -> None:
    tie = Comparison("q", "good", "bad", _verdict(Preference.TIE), _verdict(Preference.SECOND))
    dropped = Comparison("q2", "good", "bad", _verdict(Preference.FIRST, Preference.FIRST),
                         PairwiseVerdict(pairwise_key="k", first="e", second="f", judge=_JUDGE, label="t",
                                         dropped=["functional: cites nothing"]))
    got = position_consistency([tie, dropped], known_order(["good", "bad"]), "functional")
    assert got is not None and (got.fa, got.sa, got.ca) == (0.5, 0.5, 0.0)


def test_order_effects_on_pairs_with_no_known_order() -> None:
    biased = order_effects(_pairs("first"), "functional")
    assert (biased.consistency, biased.first_position) == (0.0, 1.0)
    fair = order_effects(_pairs("right"), "functional")
    assert (fair.consistency, fair.first_position) == (1.0, 0.5)


def test_overall_is_the_majority_of_the_two_dimensions_and_a_split_is_a_tie() -> None:
    split = Comparison("q", "x", "y", _verdict(Preference.FIRST, Preference.SECOND),
                       _verdict(Preference.SECOND, Preference.FIRST))
    agree = Comparison("q", "x", "y", _verdict(Preference.FIRST, Preference.TIE),
                       _verdict(Preference.SECOND, Preference.TIE))
    assert winner(split, "overall") is None and winner(split, "functional") == "x"
    assert winner(agree, "overall") == "x"


def test_ratings_follow_the_pairs_and_an_inconsistent_pair_counts_as_a_tie() -> None:
    candidates = ["a", "b", "c"]
    comparisons = []
    for q in range(6):  # a beats b and c, b beats c, in both orders
        for x, y in (("a", "b"), ("a", "c"), ("b", "c")):
            comparisons.append(Comparison(f"q{q}", x, y, _verdict(Preference.FIRST, Preference.FIRST),
                                          _verdict(Preference.SECOND, Preference.SECOND)))
    absolute = {"functional": {"a": 6.0, "b": 4.0, "c": 2.0}, "aesthetic": {"a": 1.0, "b": 4.0, "c": 7.0}}
    summary = {d.dimension: d for d in summarise_dimensions(comparisons, candidates, known_order([]), absolute)}
    functional = summary["functional"]
    assert [r.candidate_id for r in functional.ratings] == ["a", "b", "c"]
    assert functional.kendall_tau == 1.0 and functional.known is None
    assert summary["aesthetic"].kendall_tau == -1.0  # each dimension against its own absolute means
    assert {(p.a, p.b, p.wins, p.losses, p.ties) for p in functional.head_to_head} == {
        ("a", "b", 6, 0, 0), ("a", "c", 6, 0, 0), ("b", "c", 6, 0, 0)}
    # The same pairs judged by a judge that always picks the first app: every pair is order-inconsistent.
    biased = [Comparison(c.query_id, c.a, c.b, _verdict(Preference.FIRST), _verdict(Preference.FIRST))
              for c in comparisons]
    flat = summarise_dimensions(biased, candidates, known_order([]), {})[0]
    assert all(p.ties == 6 for p in flat.head_to_head)
    assert max(r.elo for r in flat.ratings) - min(r.elo for r in flat.ratings) < 1.0


def test_human_votes_agreement_and_their_own_ratings(tmp_path: Path) -> None:
    votes_file = tmp_path / "votes.csv"
    votes_file.write_text("query,a,b,winner,extra\nq0,good,bad,good,x\nq1,bad,good,tie (bothbad),y\n"
                          "q9,good,bad,bad,z\n", encoding="utf-8")
    votes = read_votes(votes_file, ["good", "bad"])
    assert votes == [HumanVote("q0", "good", "bad", "good"), HumanVote("q1", "bad", "good", None),
                     HumanVote("q9", "good", "bad", "bad")]
    got = human_comparison(votes, _pairs("right"), ["good", "bad"])
    assert (got.votes, got.matched, got.agreement) == (3, 2, 0.5)  # q0 agrees; q1 the judge decided, humans tied
    assert {r.candidate_id for r in got.ratings} == {"good", "bad"}


@pytest.mark.parametrize(("text", "message"), [
    ("query,a,winner\nq,x,x\n", "missing b"),
    ("query,a,b,winner\nq,good,nobody,good\n", "'nobody' is not a candidate"),
    ("query,a,b,winner\nq,good,bad,maybe\n", "winner 'maybe'"),
    ("query,a,b,winner\nq,good,good,good\n", "two different candidates"),
])
def test_a_wrong_votes_file_is_refused_with_its_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "votes.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        read_votes(path, ["good", "bad"])


def _outcome(candidate: str, query: str, overall: float, status: OutcomeStatus = OutcomeStatus.JUDGED
             ) -> RunOutcome:
    judged = status is OutcomeStatus.JUDGED
    return RunOutcome(run_key=f"{candidate}-{query}", candidate_id=candidate, query_id=query, status=status,
                      reason=OutcomeReason(code=ReasonCode.OK if judged else ReasonCode.SANDBOX_FAILED, detail=""),
                      attempts=1, evidence_key=f"ev-{candidate}-{query}" if judged else None,
                      functional=overall if judged else None, aesthetic=overall if judged else None,
                      duration_s=1.0, finished_at="2026-11-26T00:00:00Z")


def test_pair_selection_all_adjacent_and_sample_and_what_is_skipped() -> None:
    outcomes = [_outcome("a", "q1", 6), _outcome("b", "q1", 2), _outcome("c", "q1", 4),
                _outcome("a", "q2", 5), _outcome("b", "q2", 5), _outcome("c", "q2", 0, OutcomeStatus.INFRA_ERROR)]
    every = select_pairs(outcomes, ["a", "b", "c"], "all")
    assert [(p.query_id, p.a.candidate_id, p.b.candidate_id) for p in every.pairs] == [
        ("q1", "a", "b"), ("q1", "a", "c"), ("q1", "b", "c"), ("q2", "a", "b")]
    assert every.skipped == {"infra_error": 2}
    adjacent = select_pairs(outcomes, ["a", "b", "c"], "adjacent")
    assert [(p.query_id, p.a.candidate_id, p.b.candidate_id) for p in adjacent.pairs] == [
        ("q1", "a", "c"), ("q1", "c", "b"), ("q2", "a", "b")]  # neighbours in each query's absolute ranking
    assert adjacent.skipped == {"infra_error": 1}
    sampled = select_pairs(outcomes, ["a", "b", "c"], "sample:2", seed=3)
    ids = [(p.query_id, p.a.candidate_id, p.b.candidate_id) for p in sampled.pairs]
    assert len(ids) == 2 and set(ids) < {(p.query_id, p.a.candidate_id, p.b.candidate_id) for p in every.pairs}
    assert select_pairs(outcomes, ["a", "b", "c"], "sample:2", seed=3).pairs == sampled.pairs  # seeded
    assert select_pairs(outcomes, ["a", "b"], "all", has_bundle=lambda o: o.query_id != "q2").skipped == {
        "bundle missing": 1}
    for wrong in ("some", "sample:0", "sample:x"):
        with pytest.raises(ConfigError, match="all, adjacent, sample:N"):
            check_selection(wrong)


def test_twins_pair_each_mutation_twin_with_its_original() -> None:
    outcomes = [_outcome("calibration", "todo.original.aa", 6), _outcome("calibration", "todo.css_removed.bb", 3),
                _outcome("calibration", "todo.click_throws.cc", 0, OutcomeStatus.TIMEOUT),
                _outcome("calibration", "game.keys_swallowed.dd", 2)]
    twins = select_pairs(outcomes, ["calibration"], "twins")
    assert [(p.query_id, p.sides, p.a.query_id, p.b.query_id) for p in twins.pairs] == [
        ("todo.css_removed", ("original", "twin"), "todo.original.aa", "todo.css_removed.bb")]
    assert twins.skipped == {"timeout": 1, "no run": 1}  # a twin that timed out; a twin with no original
    with pytest.raises(ConfigError, match="evalgrid calibrate"):
        select_pairs([_outcome("a", "q1", 6)], ["a"], "twins")


def test_a_twin_is_known_worse_only_on_the_dimension_its_operator_broke() -> None:
    design = Comparison("todo.css_removed", "original", "twin", _verdict(Preference.TIE), _verdict(Preference.TIE))
    behaviour = Comparison("todo.click_throws", "original", "twin", _verdict(Preference.FIRST),
                           _verdict(Preference.SECOND))
    assert [twin_order(design, d) for d in ("functional", "aesthetic", "overall")] == [None, "original", "original"]
    assert [twin_order(behaviour, d) for d in ("functional", "aesthetic", "overall")] == ["original", None, "original"]
    functional = position_consistency([design, behaviour], twin_order, "functional")
    # The design twin's tie is not held against the judge.
    assert functional is not None and functional.pairs == 1 and functional.ca == 1.0
