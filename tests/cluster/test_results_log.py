"""Tests of cluster.store.results_log.ResultsLog: the append-only JSONL of outcomes that resume relies on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cluster.store.results_log import ResultsLog
from evaluator.models import Outcome, OutcomeReason, OutcomeStatus, ReasonCode


def _outcome(run_key: str, **changes: Any) -> Outcome:
    data: dict[str, Any] = {
        "run_key": run_key, "candidate_id": "careful", "query_id": "game-tictactoe",
        "status": OutcomeStatus.JUDGED, "reason": OutcomeReason(code=ReasonCode.OK), "attempts": 1,
        "artifact_key": "artifact-1", "evidence_key": "evidence-1", "verdict_key": "verdict-1",
        "functional": 6.5, "aesthetic": 5.75, "judge_label": "heuristic judge (not an LLM)",
        "duration_s": 4.2, "finished_at": "2024-05-01T12:00:00Z",
    }
    data.update(changes)
    return Outcome(**data)


@pytest.fixture
def log(tmp_path: Path) -> ResultsLog:
    return ResultsLog(tmp_path / "runs" / "demo" / "results.jsonl")


def test_load_of_a_missing_log_is_empty(log: ResultsLog) -> None:
    assert log.load() == {}
    assert log.torn_lines == 0
    assert not log.path.exists()


def test_append_creates_parent_dirs_and_round_trips(log: ResultsLog) -> None:
    judged = _outcome("run-a")
    refused = _outcome("run-b", status=OutcomeStatus.NON_ASSESSABLE, attempts=1, functional=None, aesthetic=None,
                       reason=OutcomeReason(code=ReasonCode.NO_CODE, detail="the answer contains no code block"))
    log.append(judged)
    log.append(refused)
    loaded = ResultsLog(log.path).load()
    assert loaded == {"run-a": judged, "run-b": refused}
    assert loaded["run-b"].reason.code is ReasonCode.NO_CODE


def test_one_json_line_per_outcome(log: ResultsLog) -> None:
    for key in ("run-a", "run-b", "run-c"):
        log.append(_outcome(key))
    raw = log.path.read_text(encoding="utf-8")
    assert raw.endswith("\n")
    lines = raw.splitlines()
    assert [json.loads(line)["run_key"] for line in lines] == ["run-a", "run-b", "run-c"]


def test_non_ascii_details_survive(log: ResultsLog) -> None:
    outcome = _outcome("run-zh", query_id="game-memory",
                       reason=OutcomeReason(code=ReasonCode.OK, detail="翻牌记忆配对游戏 — ¡listo!"))
    log.append(outcome)
    assert log.load()["run-zh"].reason.detail == "翻牌记忆配对游戏 — ¡listo!"


def test_last_line_per_run_key_wins(log: ResultsLog) -> None:
    log.append(_outcome("run-a", status=OutcomeStatus.INFRA_ERROR, functional=None, aesthetic=None,
                        reason=OutcomeReason(code=ReasonCode.BROWSER_CRASHED)))
    log.append(_outcome("run-b"))
    log.append(_outcome("run-a", attempts=2, functional=7.0))
    loaded = log.load()
    assert set(loaded) == {"run-a", "run-b"}
    assert loaded["run-a"].status is OutcomeStatus.JUDGED
    assert loaded["run-a"].attempts == 2
    assert loaded["run-a"].functional == 7.0


def test_torn_trailing_line_is_ignored_and_counted(log: ResultsLog) -> None:
    log.append(_outcome("run-a"))
    full = _outcome("run-b").model_dump_json()
    with log.path.open("a", encoding="utf-8") as handle:
        handle.write(full[: len(full) // 2])  # the writer died mid-line: no newline
    loaded = log.load()
    assert set(loaded) == {"run-a"}
    assert log.torn_lines == 1


def test_append_after_a_torn_line_starts_a_new_line(log: ResultsLog) -> None:
    log.append(_outcome("run-a"))
    full = _outcome("run-b").model_dump_json()
    with log.path.open("a", encoding="utf-8") as handle:
        handle.write(full[: len(full) // 2])
    log.append(_outcome("run-b", attempts=2))
    log.append(_outcome("run-c"))
    fresh = ResultsLog(log.path)
    loaded = fresh.load()
    assert set(loaded) == {"run-a", "run-b", "run-c"}
    assert loaded["run-b"].attempts == 2
    assert fresh.torn_lines == 1
    lines = log.path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4
    assert lines[1] == full[: len(full) // 2]


def test_torn_line_count_is_reset_on_each_load(log: ResultsLog) -> None:
    log.append(_outcome("run-a"))
    with log.path.open("a", encoding="utf-8") as handle:
        handle.write('{"run_key": "run-b", "candid')
    log.load()
    log.load()
    assert log.torn_lines == 1


def test_blank_lines_and_invalid_bytes_are_tolerated(log: ResultsLog) -> None:
    log.append(_outcome("run-a"))
    with log.path.open("ab") as handle:
        handle.write(b"\n\n\xff\xfe garbage\n")
    log.append(_outcome("run-b"))
    loaded = log.load()
    assert set(loaded) == {"run-a", "run-b"}
    assert log.torn_lines == 1


def test_a_valid_json_line_that_is_not_an_outcome_is_skipped(log: ResultsLog) -> None:
    log.append(_outcome("run-a"))
    with log.path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"run_key": "run-x", "status": "judged"}) + "\n")
    assert set(log.load()) == {"run-a"}
    assert log.torn_lines == 1
