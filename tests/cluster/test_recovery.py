"""The recovery table comes out as constructed: who never called the tool, whose first preview failed, who
recovered, whose status is unknown, the rounds used and the gain over the single-turn base; and a sweep's
``base:`` is checked. Rows are built by hand (plain records; no run is needed)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from cluster.reduce.records import RunRow
from cluster.reduce.recovery import recovery_table
from cluster.reduce.statistics import wilson_interval
from cluster.sweep.spec import SweepSpec
from evaluator.keys import content_key
from evaluator.models import Candidate

pytestmark = pytest.mark.pure


def _row(candidate: str, i: int, rounds: int | None, first: str | None = None, clean: bool | None = None,
         score: float = 5.0, variant: str | None = None) -> RunRow:
    return RunRow(run_key=f"{candidate}-{i}-{variant}", candidate_id=candidate, query_id=f"q{i}", variant=variant,
                  brief="b", domain="d",
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
    assert (agent.first_unknown, agent.final_unknown) == (0, 0)
    assert agent.first_errors_rate == pytest.approx(6 / 8)
    assert agent.recovery_rate is not None and agent.recovery_rate.mean == pytest.approx(4 / 6)
    assert (agent.recovery_rate.low, agent.recovery_rate.high) == pytest.approx(wilson_interval(4, 6)[1:3])
    assert agent.recovery_rate.low < 4 / 6 < agent.recovery_rate.high and agent.recovery_rate.n == 6
    assert agent.mean_rounds == pytest.approx((4 * 2 + 2 * 3 + 2 * 1) / 8)
    # 0 of 3 is no proof of a 0% rate: Wilson's upper bound stays well above it, where a bootstrap gave [0, 0].
    assert stubborn.recovered == 0 and stubborn.recovery_rate is not None
    assert (stubborn.recovery_rate.mean, stubborn.recovery_rate.low) == (0.0, 0.0)
    assert stubborn.recovery_rate.high == pytest.approx(0.5615, abs=1e-4)


def test_unknown_statuses_are_counted_apart_and_left_out_of_the_rates() -> None:
    rows = [
        _row("agent", 0, 0),                                                 # never called the tool
        *(_row("agent", 1 + i, 2, None, True) for i in range(3)),            # first round had no report
        *(_row("agent", 4 + i, 2, "errors", True) for i in range(2)),        # recovered
        _row("agent", 6, 2, "errors", False),                                # did not
        *(_row("agent", 7 + i, 3, "errors", None) for i in range(4)),        # final status unknown
        _row("agent", 11, 1, "ok", None),                                    # clean at once, final unknown
    ]
    [agent] = recovery_table(rows, [], {}, samples=100, seed=0)
    assert (agent.runs, agent.never_called, agent.first_unknown, agent.first_errors) == (12, 1, 3, 7)
    assert agent.first_errors_rate == pytest.approx(7 / 8)                   # not 7 / 11: 3 had no first status
    assert (agent.recovered, agent.final_unknown) == (2, 4)
    assert agent.recovery_rate is not None and agent.recovery_rate.n == 3    # not 7: 4 finals are unknown
    assert agent.recovery_rate.mean == pytest.approx(2 / 3)
    assert agent.mean_rounds == pytest.approx((3 * 2 + 2 * 2 + 2 + 4 * 3 + 1) / 11)


def test_no_rate_when_every_status_it_needs_is_unknown() -> None:
    rows = [_row("agent", 0, 1, None), _row("agent", 1, 2, "errors", None)]
    [agent] = recovery_table(rows, [], {}, samples=100, seed=0)
    assert (agent.first_unknown, agent.first_errors, agent.final_unknown, agent.recovered) == (1, 1, 1, 0)
    assert agent.first_errors_rate == 1.0 and agent.recovery_rate is None
    [blind] = recovery_table([_row("blind", 0, 2, None, True)], [], {}, samples=100, seed=0)
    assert (blind.first_unknown, blind.first_errors_rate, blind.recovery_rate) == (1, None, None)


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


def test_the_gain_averages_a_querys_variants_and_resamples_queries() -> None:
    # q0 gains 2 in each of its three variants, q1 gains nothing: per query [2, 0], not per cell [2, 2, 2, 0].
    agent = [*(_row("agent", 0, 1, "ok", True, score=7.0, variant=v) for v in ("a", "b", "c")),
             _row("agent", 1, 1, "ok", True, score=5.0, variant="a")]
    base = [*(_row("single", 0, None, score=5.0, variant=v) for v in ("a", "b", "c")),
            _row("single", 1, None, score=5.0, variant="a")]
    [recovery] = recovery_table(agent, [*agent, *base], {"agent": "single"}, samples=4000, seed=3)
    assert recovery.gain is not None and (recovery.gain.n, recovery.gain.mean) == (2, pytest.approx(1.0))
    # Two queries resampled give means 0, 1 or 2 (a quarter, a half, a quarter): the bounds are the extremes.
    # Resampling the four cells would put the mean at 1.5 and the lower bound at 0.5.
    assert (recovery.gain.low, recovery.gain.high) == (0.0, 2.0)


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
    # Another prompt or sampling is another base: the gain would not be the tool's alone.
    with pytest.raises(ValueError, match="same system_prompt and params"):
        _sweep(agentic, {"id": "single", **_LIVE, "params": {"temperature": 0.2}})
    with pytest.raises(ValueError, match="same system_prompt and params"):
        _sweep(agentic, {"id": "single", **_LIVE, "system_prompt": "Be brief."})
    with pytest.raises(ValueError, match="not agentic"):
        Candidate.model_validate({"id": "plain", **_LIVE, "base": "single"})


def test_previews_that_could_outlast_the_generation_are_refused_at_load() -> None:
    """The previews run inside the generation's limit: a sweep whose rounds alone could take it all is refused."""
    agentic = {"id": "tool", **_LIVE, "generate": {"mode": "agentic", "max_rounds": 5, "round_timeout_s": 400}}
    with pytest.raises(ValueError, match="raise generation_timeout_s"):
        _sweep(agentic)
    assert SweepSpec.model_validate({"name": "s", "queries": "q.yaml", "generation_timeout_s": 2001,
                                     "endpoints": {"e": {"base_url": "http://x/v1"}}, "candidates": [agentic]})


def test_a_candidate_without_base_keeps_its_keys() -> None:
    plain = Candidate.model_validate({"id": "c", **_LIVE})
    assert "base" not in plain.model_dump(mode="json") and "generate" not in plain.model_dump(mode="json")
    assert content_key("run", plain) == content_key("run", Candidate.model_validate({"id": "c", **_LIVE,
                                                                                    "base": None}))
