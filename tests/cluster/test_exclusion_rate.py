"""Infra-error rates and the biased-exclusion warning (leaderboard text and Markdown, reduction, HTML report),
the matching calibration beside the report's leaderboard, and old results logs."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from cluster.calibration.calibrate import Calibration, GroupScore
from cluster.reduce.leaderboard import build_leaderboard, leaderboard_markdown, leaderboard_table
from cluster.reduce.reducer import reduce_run_dir
from cluster.report.html import write_report
from cluster.store.results_log import ResultsLog
from cluster.sweep.spec import SweepSpec
from evaluator.models import (
    AgentConfig,
    JudgeConfig,
    JudgeInfo,
    Outcome,
    OutcomeReason,
    OutcomeStatus,
    ReasonCode,
    Verdict,
)

RUBRIC = "heuristic-v2@abc"


def _outcome(candidate: str, query: str, status: OutcomeStatus, code: ReasonCode = ReasonCode.OK,
             score: float | None = None) -> Outcome:
    judged = status is OutcomeStatus.JUDGED
    return Outcome(run_key=f"run-{candidate}-{query}", candidate_id=candidate, query_id=query, status=status,
                   reason=OutcomeReason(code=code), attempts=1, functional=score if judged else None,
                   aesthetic=score if judged else None, verdict_key=f"verdict-{candidate}-{query}" if judged else None,
                   evidence_key=f"evidence-{candidate}-{query}" if judged else None,
                   duration_s=1.0, finished_at="2026-01-01T00:00:00+00:00")


def _sweep(infra_a: int, runs: int = 20, hangs_b: int = 0) -> list[Outcome]:
    """Candidate a loses ``infra_a`` of ``runs`` runs to the machinery; b loses none (and hangs ``hangs_b``)."""
    out = []
    for i in range(runs):
        out.append(_outcome("a", f"q{i}", OutcomeStatus.INFRA_ERROR, ReasonCode.SANDBOX_FAILED) if i < infra_a
                   else _outcome("a", f"q{i}", OutcomeStatus.JUDGED, score=4.0))
        out.append(_outcome("b", f"q{i}", OutcomeStatus.JUDGED, ReasonCode.APP_HANG, score=0.0) if i < hangs_b
                   else _outcome("b", f"q{i}", OutcomeStatus.JUDGED, score=6.0))
    return out


def _text(board: object) -> str:
    console = Console(width=250, record=True)
    console.print(leaderboard_table(board))  # type: ignore[arg-type]
    return console.export_text()


def test_a_spread_of_exactly_5_points_is_not_warned_about() -> None:
    board = build_leaderboard("s", ["a", "b"], _sweep(infra_a=1))  # 5% against 0%
    rates = {r.candidate_id: r.infra_error_rate for r in board.rows}
    assert rates == {"a": 0.05, "b": 0.0}
    assert board.exclusion_warning is None
    assert "WARNING" not in leaderboard_markdown(board) and "WARNING" not in _text(board)
    assert "| 5.0% |" in leaderboard_markdown(board) and "5.0%" in _text(board)


def test_more_than_5_points_is_warned_about_in_text_and_markdown() -> None:
    board = build_leaderboard("s", ["a", "b"], _sweep(infra_a=2))  # 10% against 0%
    assert board.exclusion_warning is not None and "10.0 percentage points" in board.exclusion_warning
    assert "> **WARNING:** Biased exclusion" in leaderboard_markdown(board)
    assert "WARNING: Biased exclusion" in _text(board)


def test_hangs_count_in_the_means_and_not_in_the_infra_error_rate() -> None:
    board = build_leaderboard("s", ["a", "b"], _sweep(infra_a=0, hangs_b=10))
    b = next(r for r in board.rows if r.candidate_id == "b")
    assert b.hang == 10 and b.infra_error_rate == 0.0 and b.functional == 3.0  # (10 × 0 + 10 × 6) / 20
    assert board.exclusion_warning is None


def _run_dir(tmp_path: Path, outcomes: list[Outcome], calibrations: dict[str, str]) -> Path:
    """A run directory as `evalgrid run` leaves it (its sweep file gone: the recorded outcomes are used)."""
    run_dir = tmp_path / "run"
    (run_dir / "verdicts").mkdir(parents=True)
    spec = SweepSpec.model_validate({"name": "s", "queries": "q.yaml", "agent": {"max_steps": 7},
                                     "candidates": [{"id": "a", "answers": "a"}, {"id": "b", "answers": "b"}]})
    (run_dir / "sweep.json").write_text(json.dumps({"path": str(tmp_path / "gone.yaml"),
                                                    "spec": spec.model_dump(mode="json")}), encoding="utf-8")
    log = ResultsLog(run_dir / "results.jsonl")
    for o in outcomes:
        log.append(o)
        if o.verdict_key:
            verdict = Verdict(verdict_key=o.verdict_key, evidence_key=str(o.evidence_key),
                              judge=JudgeInfo(name="heuristic", kind="heuristic", rubric_version=RUBRIC),
                              functional=o.functional or 0.0, aesthetic=o.aesthetic or 0.0, functional_reason="",
                              aesthetic_reason="", label="HEURISTIC test")
            (run_dir / "verdicts" / f"{o.verdict_key}.json").write_text(verdict.model_dump_json(), encoding="utf-8")
    (run_dir / "calibrations").mkdir()
    for key, version in calibrations.items():
        record = Calibration(key=key, judge_version=version, judge=JudgeConfig(), agent=AgentConfig(max_steps=7),
                             apps=3, functional_pairwise_accuracy=0.917, functional_per_operator={}, auc=0.96,
                             aesthetic_twin_accuracy=0.8, aesthetic_per_operator={}, functional_drift_max=0.5,
                             functional_drift_within_1=1.0, excluded={}, pairs=[])
        (run_dir / "calibrations" / f"{key}.json").write_text(record.model_dump_json(), encoding="utf-8")
    return run_dir


def _report(run_dir: Path) -> str:
    reduction, rows = reduce_run_dir(run_dir, samples=50)
    return write_report(run_dir, reduction, rows, run_dir / "report").read_text(encoding="utf-8")


def test_the_report_shows_rates_warns_and_shows_only_the_matching_calibration(tmp_path: Path) -> None:
    run_dir = _run_dir(tmp_path, _sweep(infra_a=3), {"calibration-old": "heuristic:heuristic-v1@old",
                                                     "calibration-now": f"heuristic:{RUBRIC}"})
    reduction, _ = reduce_run_dir(run_dir, samples=50)
    assert reduction.exclusion_warning is not None
    assert {c.candidate_id: c.infra_error_rate for c in reduction.candidates} == {"a": 0.15, "b": 0.0}
    html = _report(run_dir)
    assert 'id="exclusion-warning"' in html and "Biased exclusion" in html
    assert "15.0%" in html and "infra-error rate" in html
    assert 'data-key="calibration-now"' in html and "calibration-old" not in html and "0.917" in html


def test_the_report_shows_the_built_in_and_the_real_app_calibrations_with_their_halves(tmp_path: Path) -> None:
    """One table per suite, the built-in first (and found by its old id); a real-app record shows its dev and test
    halves' measures."""
    run_dir = _run_dir(tmp_path, _sweep(infra_a=1), {"calibration-real": f"heuristic:{RUBRIC}",
                                                     "calibration-now": f"heuristic:{RUBRIC}"})
    path = run_dir / "calibrations" / "calibration-real.json"
    real = Calibration.model_validate_json(path.read_text(encoding="utf-8"))
    half = GroupScore(apps=19, functional_pairs=43, functional_correct=33, functional_accuracy=0.767, auc=0.816,
                      aesthetic_pairs=19, aesthetic_correct=14, aesthetic_accuracy=0.737, drift_max=8.0,
                      drift_within_1=0.58)
    path.write_text(real.model_copy(update={"suite": "realapps", "groups": {"dev": half, "dev/sliders": half}})
                    .model_dump_json(), encoding="utf-8")
    html = _report(run_dir)
    assert html.index('data-key="calibration-now"') < html.index('data-key="calibration-real"')
    assert 'id="calibration" data-key="calibration-now" data-suite="built-in"' in html
    assert 'id="calibration-realapps-all" data-key="calibration-real" data-suite="realapps"' in html
    assert "on the realapps suite: 3 working apps" in html
    assert "dev half: functional pairwise accuracy / AUC / aesthetic twin accuracy" in html
    assert "0.767 / 0.816 / 0.737" in html and "dev/sliders" not in html


def test_the_report_says_when_no_calibration_matches_this_judge(tmp_path: Path) -> None:
    run_dir = _run_dir(tmp_path, _sweep(infra_a=1), {"calibration-old": "heuristic:heuristic-v1@old"})
    html = _report(run_dir)
    assert 'id="exclusion-warning"' not in html
    assert 'id="calibration-none"' in html and "No calibration for this judge/agent" in html
    assert "evalgrid calibrate --judge heuristic --agent explorer --agent-option max_steps=7" in html
    assert "calibration-old" not in html and 'id="calibration"' not in html


def test_an_old_results_log_still_loads_and_its_timeouts_stay_excluded(tmp_path: Path) -> None:
    """A line written before app hangs were scored: version 1, ``timeout`` / ``run_timeout``."""
    old = {"version": 1, "run_key": "run-old", "candidate_id": "a", "query_id": "q", "status": "timeout",
           "reason": {"code": "run_timeout", "detail": "the run exceeded its 180 s limit"}, "attempts": 1,
           "artifact_key": None, "evidence_key": None, "verdict_key": None, "functional": None, "aesthetic": None,
           "judge_label": None, "duration_s": 180.0, "finished_at": "2025-01-01T00:00:00+00:00"}
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(old) + "\n", encoding="utf-8")
    loaded = ResultsLog(path).load()
    assert loaded["run-old"].status is OutcomeStatus.TIMEOUT
    row = build_leaderboard("s", ["a"], loaded.values()).rows[0]
    assert row.timeout == 1 and row.functional is None and row.infra_error_rate == 1.0
