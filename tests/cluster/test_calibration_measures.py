"""The calibration measures (cluster/calibration/calibrate.py) on outcomes with known scores, and the suite's records.

The outcomes are made here rather than run (the grid path is tested by test_calibrate_sweep.py): each
measure is asserted to its exact value, and the screen check on real image files.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from cluster.calibration.calibrate import SUITE, load_suite, measure, write_sweep
from cluster.calibration.twins import REQUIRES, Operator
from evaluator.errors import ConfigError
from evaluator.keys import content_key
from evaluator.models import AgentConfig, JudgeConfig, Outcome, OutcomeReason, OutcomeStatus, ReasonCode

AGENT, JUDGE = AgentConfig(), JudgeConfig()


def _outcome(query_id: str, functional: float | None, aesthetic: float | None = 7.0,
             status: OutcomeStatus = OutcomeStatus.JUDGED) -> Outcome:
    code = ReasonCode.OK if status is OutcomeStatus.JUDGED else ReasonCode.SANDBOX_FAILED
    return Outcome(run_key=f"run-{query_id}", candidate_id="calibration", query_id=query_id, status=status,
                   reason=OutcomeReason(code=code), attempts=1, evidence_key=f"ev-{query_id}",
                   functional=functional, aesthetic=aesthetic if functional is not None else None,
                   duration_s=1.0, finished_at="2026-11-24T00:00:00Z")


def _screens(run_dir: Path, outcomes: list[Outcome], differ: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    for o in outcomes:
        shot = np.full((80, 128, 3), 200, np.uint8)
        if o.query_id in differ:
            shot[:40] = 30  # half the screen changed: not rendering noise
        path = run_dir / "evidence" / (o.evidence_key or "") / "static" / "desktop-viewport.png"
        path.parent.mkdir(parents=True)
        cv2.imwrite(str(path), shot)


def test_measures_on_known_scores(tmp_path: Path) -> None:
    outcomes = [
        _outcome("a.original.h1", 8.0, 7.0), _outcome("b.original.h2", 7.5, 6.0),
        _outcome("a.enter_swallowed.h1", 6.5), _outcome("b.enter_swallowed.h2", 7.5),  # a tie counts as wrong
        _outcome("a.keys_swallowed.h1", 5.0), _outcome("b.keys_swallowed.h2", 8.0),
        _outcome("a.click_throws.h1", 4.0),
        _outcome("b.click_throws.h2", None, status=OutcomeStatus.INFRA_ERROR),  # left out, counted
        _outcome("a.checkbox_dead.h1", 6.0),  # its first screen differs: left out
        _outcome("a.css_removed.h1", 7.0, 1.0), _outcome("b.css_removed.h2", 8.0, 6.0),  # drifts 1.0 and 0.5
    ]
    _screens(tmp_path, outcomes, differ={"a.checkbox_dead.h1"})
    c = measure(outcomes, tmp_path, agent=AGENT, judge=JUDGE)
    assert c.apps == 2
    assert c.functional_per_operator["enter_swallowed"].model_dump() == {"pairs": 2, "correct": 1, "accuracy": 0.5}
    assert c.functional_per_operator["keys_swallowed"].correct == 1
    assert c.functional_per_operator["click_throws"].model_dump() == {"pairs": 1, "correct": 1, "accuracy": 1.0}
    assert "checkbox_dead" not in c.functional_per_operator
    assert c.functional_pairwise_accuracy == 0.6  # 3 of 5
    # working {8.0, 7.5} against broken {6.5, 7.5, 5.0, 8.0, 4.0}: wins 4+3, ties 0.5 (7.5=7.5) + 0.5 (8=8)
    assert c.auc == round((4 + 0.5 + 3 + 0.5) / 10, 4)
    assert c.aesthetic_twin_accuracy == 0.5 and c.aesthetic_per_operator["css_removed"].pairs == 2  # b: a tie
    assert c.functional_drift_max == 1.0 and c.functional_drift_within_1 == 1.0
    assert c.excluded == {"not judged (infrastructure failure or timeout)": 1,
                          "first screenshot differs from the original's": 1}


def test_an_aesthetic_twin_that_looks_exactly_like_its_original_is_left_out(tmp_path: Path) -> None:
    """A stylesheet removal that changed no pixel of the whole page (an app with no CSS, or styles the operator
    cannot reach, inside a web component) made no twin: no judge could see it, so the pair is left out and
    counted as such. One changed pixel region keeps it; a missing screenshot never leaves a pair out."""
    outcomes = [_outcome("a.original.h", 8.0, 1.0), _outcome("a.css_removed.h", 8.0, 1.0),
                _outcome("b.original.h", 8.0, 6.0), _outcome("b.css_removed.h", 8.0, 1.0),
                _outcome("c.original.h", 8.0, 6.0), _outcome("c.css_removed.h", 8.0, 6.0)]
    for o in outcomes[:4]:
        page = np.full((300, 128, 3), 200, np.uint8)
        if o.query_id == "b.css_removed.h":
            page[250:260, :20] = 0  # below the first screen: the full page shows it
        path = tmp_path / "evidence" / (o.evidence_key or "") / "static" / "desktop-full.png"
        path.parent.mkdir(parents=True)
        cv2.imwrite(str(path), page)
    c = measure(outcomes, tmp_path, agent=AGENT, judge=JUDGE)
    assert c.excluded == {"looks exactly like the original (the operator changed nothing visible)": 1}
    assert [p.app for p in c.pairs if p.excluded is None] == ["b", "c"]
    assert c.aesthetic_per_operator["css_removed"].model_dump() == {"pairs": 2, "correct": 1, "accuracy": 0.5}


def test_the_key_names_the_judge_agent_and_suite(tmp_path: Path) -> None:
    outcomes = [_outcome("a.original.h", 8.0), _outcome("a.css_removed.h", 8.0, 1.0)]
    first = measure(outcomes, tmp_path, agent=AGENT, judge=JUDGE)
    assert first.key == measure(outcomes, tmp_path, agent=AGENT, judge=JUDGE).key
    assert first.key != measure(outcomes, tmp_path, agent=AgentConfig(max_steps=30), judge=JUDGE).key
    assert first.key != measure(outcomes, tmp_path, agent=AGENT, judge=JudgeConfig(name="llm")).key
    # the built-in suite whole keeps the key it always had; another suite, or a half, has its own record
    assert first.key == content_key("calibration", first.judge_version, JUDGE.model_dump(mode="json"),
                                    AGENT.model_dump(mode="json"))
    assert (first.suite, first.split) == ("built-in", "all")
    dev = measure(outcomes, tmp_path, agent=AGENT, judge=JUDGE, suite_name="realapps", split="dev")
    test = measure(outcomes, tmp_path, agent=AGENT, judge=JUDGE, suite_name="realapps", split="test")
    assert len({first.key, dev.key, test.key}) == 3 and (dev.suite, dev.split) == ("realapps", "dev")


def test_the_built_in_suite_is_valid_and_broad() -> None:
    apps = load_suite(SUITE)
    assert len(apps) >= 20
    assert {app.stack for app, _ in apps} == {"vanilla", "react-umd", "vue-cdn", "jquery", "alpine",
                                              "react-component", "vue-sfc"}
    assert not any("todomvc" in answer.lower() for _, answer in apps)  # the held-out set's, never ours
    for op, feature in REQUIRES.items():
        if feature is not None:
            assert sum(feature in app.features for app, _ in apps) >= 3, f"too few apps for {op.value}"


def test_the_suite_becomes_one_sweep_with_a_query_per_app_and_applicable_twin(tmp_path: Path) -> None:
    apps = load_suite(SUITE, ["cal-snake-vanilla", "cal-pantry-vanilla"])
    sweep, _ = write_sweep(apps, list(Operator), tmp_path, agent=AGENT, judge=JUDGE, concurrency=2)
    answers = sorted(p.name.split(".")[1] for p in (tmp_path / "answers" / "calibration").iterdir()
                     if p.name.startswith("cal-snake-vanilla."))
    # a canvas game has no twin for the operators it is immune to or has no feature for
    assert "render_frozen" not in answers and "checkbox_dead" not in answers and "keys_swallowed" in answers
    assert "original" in answers and sweep.name == "sweep.yaml"
    with pytest.raises(ConfigError, match="no calibration app nope"):
        load_suite(SUITE, ["nope"])
