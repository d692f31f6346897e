"""The recovery table comes out as constructed: who never called the tool, whose first preview failed, who
recovered, the rounds used and the gain over the single-turn base; and a sweep's ``base:`` is checked. Rows are
built by hand (plain records; no run is needed)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from cluster.reduce.records import RunRow
from cluster.reduce.recovery import recovery_table
from cluster.sweep.spec import SweepSpec
from evaluator.keys import content_key
from evaluator.models import Candidate

pytestmark = pytest.mark.pure


def _row(candidate: str, i: int, rounds: int | None, first: str | None = None, clean: bool | None = None,
         score: float = 5.0) -> RunRow:
    return RunRow(run_key=f"{candidate}-{i}", candidate_id=candidate, query_id=f"q{i}", brief="b", domain="d",
                  leaf="l", difficulty="easy", language="en", language_group="english",
                  kind="interactive_application", status="judged", reason_code="ok", reason_detail="", judge=None,
                  functional=score, aesthetic=score, evidence_key=None, verdict_key=None, axe_violations=None,
                  dom_elements=None, preview_rounds=rounds, preview_first=first, preview_final_clean=clean)


def test_rates_counts_and_rounds_are_as_constructed() -> None:
    rows = [
        *(_row("agent", i, 0) for i in range(2)),                            # never called the tool
        *(_row("agent", 2 + i, 2, "errors", True) for i in range(4)),        # failed first, recovered
        *(_row("agent", 6 + i, 3, "errors", False) for i in range(2)),       # failed first, did not
        *(_row("agent", 8 + i, 1, "ok", True) for i in range(2)),            # clean at once
        *(_row("single", i, None) for i in range(5)),                        # not agentic: no row in the table
        *(_row("stubborn", i, 3, "errors", False) for i in range(3)),
    ]
    agent, stubborn = recovery_table(rows, rows, {}, samples=500, seed=1)
    assert (agent.candidate_id, agent.runs, agent.never_called, agent.first_errors, agent.recovered) == \
        ("agent", 10, 2, 6, 4)
    assert agent.first_errors_rate == pytest.approx(6 / 8)
    assert agent.recovery_rate is not None and agent.recovery_rate.mean == pytest.approx(4 / 6)
    assert agent.recovery_rate.low < 4 / 6 < agent.recovery_rate.high and agent.recovery_rate.n == 6
    assert agent.mean_rounds == pytest.approx((4 * 2 + 2 * 3 + 2 * 1) / 8)
    assert stubborn.recovered == 0 and stubborn.recovery_rate is not None and stubborn.recovery_rate.high == 0.0


def test_a_candidate_that_never_previews_has_no_rates_only_counts() -> None:
    [quiet] = recovery_table([_row("quiet", i, 0) for i in range(3)], [], {}, samples=100, seed=0)
    assert (quiet.runs, quiet.never_called, quiet.first_errors_rate, quiet.recovery_rate, quiet.mean_rounds) == \
        (3, 3, None, None, None)



def test_the_gain_over_the_base_is_the_mean_difference_over_the_queries_both_scored() -> None:
    agent = [_row("agent", i, 2, "errors", True, score=6.0 + i % 2) for i in range(6)]   # 6, 7, 6, 7, 6, 7
    base = [_row("single", i, None, score=5.0) for i in range(5)]                        # q5 has no base score
    [recovery] = recovery_table([*agent, *base], [*agent, *base], {"agent": "single"}, samples=500, seed=0)
    assert recovery.base == "single" and recovery.gain is not None
    assert recovery.gain.n == 5 and recovery.gain.mean == pytest.approx((1 + 2 + 1 + 2 + 1) / 5)
    assert 1.0 <= recovery.gain.low <= recovery.gain.mean <= recovery.gain.high <= 2.0


_LIVE = {"provider": "openai", "endpoint": "e", "model": "m"}


def _sweep(*candidates: Mapping[str, object]) -> SweepSpec:
    return SweepSpec.model_validate({"name": "s", "queries": "q.yaml", "endpoints": {"e": {"base_url": "http://x/v1"}},
                                     "candidates": list(candidates)})


def test_base_must_be_the_same_model_in_one_turn_and_is_named_with_a_hint() -> None:
    agentic = {"id": "tool", **_LIVE, "generate": {"mode": "agentic"}, "base": "single"}
    assert _sweep(agentic, {"id": "single", **_LIVE}).candidates[0].base == "single"
    with pytest.raises(ValueError, match="did you mean 'single'"):
        _sweep({**agentic, "base": "singel"}, {"id": "single", **_LIVE})
    with pytest.raises(ValueError, match="same model"):
        _sweep(agentic, {"id": "single", **_LIVE, "model": "other"})
    with pytest.raises(ValueError, match="not agentic"):
        Candidate.model_validate({"id": "plain", **_LIVE, "base": "single"})


def test_a_candidate_without_base_keeps_its_keys() -> None:
    plain = Candidate.model_validate({"id": "c", **_LIVE})
    assert "base" not in plain.model_dump(mode="json") and "generate" not in plain.model_dump(mode="json")
    assert content_key("run", plain) == content_key("run", Candidate.model_validate({"id": "c", **_LIVE,
                                                                                    "base": None}))
