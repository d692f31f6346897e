"""The recovery table comes out as constructed: who never called the tool, whose first preview failed, who
recovered, and the rounds used. Rows are built by hand (plain records; no run is needed)."""

from __future__ import annotations

import pytest

from cluster.reduce.records import RunRow
from cluster.reduce.recovery import recovery_table

pytestmark = pytest.mark.pure


def _row(candidate: str, i: int, rounds: int | None, first: str | None = None, clean: bool | None = None) -> RunRow:
    return RunRow(run_key=f"{candidate}-{i}", candidate_id=candidate, query_id=f"q{i}", brief="b", domain="d",
                  leaf="l", difficulty="easy", language="en", language_group="english",
                  kind="interactive_application", status="judged", reason_code="ok", reason_detail="", judge=None,
                  functional=5.0, aesthetic=5.0, evidence_key=None, verdict_key=None, axe_violations=None,
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
    agent, stubborn = recovery_table(rows, samples=500, seed=1)
    assert (agent.candidate_id, agent.runs, agent.never_called, agent.first_errors, agent.recovered) == \
        ("agent", 10, 2, 6, 4)
    assert agent.first_errors_rate == pytest.approx(6 / 8)
    assert agent.recovery_rate is not None and agent.recovery_rate.mean == pytest.approx(4 / 6)
    assert agent.recovery_rate.low < 4 / 6 < agent.recovery_rate.high and agent.recovery_rate.n == 6
    assert agent.mean_rounds == pytest.approx((4 * 2 + 2 * 3 + 2 * 1) / 8)
    assert stubborn.recovered == 0 and stubborn.recovery_rate is not None and stubborn.recovery_rate.high == 0.0


def test_a_candidate_that_never_previews_has_no_rates_only_counts() -> None:
    [quiet] = recovery_table([_row("quiet", i, 0) for i in range(3)], samples=100, seed=0)
    assert (quiet.runs, quiet.never_called, quiet.first_errors_rate, quiet.recovery_rate, quiet.mean_rounds) == \
        (3, 3, None, None, None)
