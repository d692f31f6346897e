"""Tests of evalgrid's boundary records (evaluator.models) and content keys (evaluator.keys).

Records are validated strictly (unknown fields, scores, ids, references) and identities are frozen,
because they enter content keys; keys must be stable for equal content and differ otherwise.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from evaluator.keys import content_key, sha256_bytes
from evaluator.models import (
    AgentConfig,
    Artifact,
    Candidate,
    Dimension,
    EvidenceRef,
    FailureAttribution,
    JudgeConfig,
    JudgeInfo,
    LanguageGroup,
    Outcome,
    OutcomeReason,
    OutcomeStatus,
    Query,
    QuerySet,
    ReasonCode,
    Severity,
    Stack,
    Verdict,
)

QUERY: dict[str, Any] = {
    "id": "game-tictactoe",
    "brief": "Build a two-player tic-tac-toe game with win and draw detection.",
    "domain": "games",
    "leaf": "board_games",
    "difficulty": "easy",
    "language": "en",
    "kind": "interactive_application",
    "checklist": ["3x3 board", "turn indicator"],
}


def _query(**changes: Any) -> Query:
    return Query.model_validate({**QUERY, **changes})


def _verdict(**changes: Any) -> Verdict:
    data: dict[str, Any] = {
        "verdict_key": "verdict-abc", "evidence_key": "evidence-abc",
        "judge": {"name": "heuristic", "kind": "heuristic", "rubric_version": "heuristic-v1"},
        "functional": 6.5, "aesthetic": 5.0, "functional_reason": "8 - 1.5 (dead control)",
        "aesthetic_reason": "8 - 3 (low contrast)", "label": "heuristic judge",
    }
    return Verdict.model_validate({**data, **changes})


def _outcome(**changes: Any) -> Outcome:
    data: dict[str, Any] = {
        "run_key": "run-1", "candidate_id": "careful", "query_id": "game-tictactoe", "status": "judged",
        "reason": {"code": "ok"}, "attempts": 1, "functional": 7.0, "aesthetic": 6.0,
        "duration_s": 3.2, "finished_at": "2024-05-01T12:00:00Z",
    }
    return Outcome.model_validate({**data, **changes})


# ------------------------------------------------------------------------------ scores


@pytest.mark.parametrize("score", [0.0, 4.25, 8.0])
def test_scores_inside_the_scale_are_accepted(score: float) -> None:
    assert _verdict(functional=score, aesthetic=score).functional == score
    assert _outcome(functional=score, aesthetic=score).aesthetic == score


@pytest.mark.parametrize("score", [-0.1, 8.01, 10.0, -8.0])
@pytest.mark.parametrize("field", ["functional", "aesthetic"])
def test_scores_outside_the_scale_are_rejected(field: str, score: float) -> None:
    with pytest.raises(ValidationError, match=field):
        _verdict(**{field: score})
    with pytest.raises(ValidationError, match=field):
        _outcome(**{field: score})


def test_deduction_outside_the_scale_is_rejected() -> None:
    ref = {"file": "shots/load.png"}
    base = {"category": "dead_control", "dimension": "functional", "severity": "major",
            "description": "The Start button does nothing.", "evidence": [ref]}
    assert FailureAttribution.model_validate({**base, "deduction": 1.5}).dimension is Dimension.FUNCTIONAL
    with pytest.raises(ValidationError):
        FailureAttribution.model_validate({**base, "deduction": 9.0})
    with pytest.raises(ValidationError):
        FailureAttribution.model_validate({**base, "deduction": 1.0, "evidence": []})


def test_outcome_needs_at_least_one_attempt() -> None:
    with pytest.raises(ValidationError, match="attempts"):
        _outcome(attempts=0)


# ------------------------------------------------------------------------------ evidence refs


def test_evidence_ref_with_nowhere_to_look_is_rejected() -> None:
    with pytest.raises(ValidationError, match="needs a file, a step or a video time"):
        EvidenceRef()
    with pytest.raises(ValidationError, match="needs a file, a step or a video time"):
        EvidenceRef(detail="button#start")


@pytest.mark.parametrize(
    "kwargs", [{"file": "console.json"}, {"step": 0}, {"video_time_s": 12.5}, {"step": 3, "detail": "#start"}]
)
def test_evidence_ref_with_one_location_is_accepted(kwargs: dict[str, Any]) -> None:
    EvidenceRef(**kwargs)


def test_evidence_ref_rejects_negative_step_and_time() -> None:
    with pytest.raises(ValidationError):
        EvidenceRef(step=-1)
    with pytest.raises(ValidationError):
        EvidenceRef(video_time_s=-0.5)


# ------------------------------------------------------------------------------ artifact


def _artifact(**changes: Any) -> Artifact:
    data: dict[str, Any] = {
        "key": "artifact-1", "candidate_id": "careful", "query_id": "game-tictactoe",
        "files": {"index.html": "<!DOCTYPE html><html></html>", "app.js": "console.log(1)"},
        "entrypoint": "index.html", "stack": "static", "answer_sha256": sha256_bytes(b"answer"),
    }
    return Artifact.model_validate({**data, **changes})


def test_artifact_with_entrypoint_among_its_files() -> None:
    artifact = _artifact()
    assert artifact.stack is Stack.STATIC
    assert artifact.rejected == [] and artifact.notes == []


def test_artifact_whose_entrypoint_is_not_a_file_is_rejected() -> None:
    with pytest.raises(ValidationError, match="entrypoint 'main.html' is not among"):
        _artifact(entrypoint="main.html")
    with pytest.raises(ValidationError, match="entrypoint"):
        _artifact(files={}, entrypoint="index.html")


def test_artifact_round_trips_through_json() -> None:
    artifact = _artifact(rejected=[{"name": "../evil.html", "reason": "unsafe"}], notes=["bare HTML answer"])
    assert Artifact.model_validate_json(artifact.model_dump_json()) == artifact


# ------------------------------------------------------------------------------ queries


@pytest.mark.parametrize("query_id", ["q1", "game-tictactoe", "edu.quiz_2", "A", "x" * 64])
def test_valid_query_ids(query_id: str) -> None:
    assert _query(id=query_id).id == query_id


@pytest.mark.parametrize(
    "query_id",
    ["", "..", "../etc", "a/b", "a/../b", "/abs", "..\\x", ".hidden", "-flag", "_x", "has space", "q1\n",
     "x" * 65, "名字"],
)
def test_invalid_query_ids_are_rejected(query_id: str) -> None:
    with pytest.raises(ValidationError, match="id"):
        _query(id=query_id)


@pytest.mark.parametrize(
    ("language", "group"),
    [("en", LanguageGroup.ENGLISH), ("en-GB", LanguageGroup.ENGLISH), ("zh", LanguageGroup.CHINESE),
     ("zh-Hans", LanguageGroup.CHINESE), ("es", LanguageGroup.OTHER), ("de", LanguageGroup.OTHER),
     ("ja", LanguageGroup.OTHER)],
)
def test_language_group(language: str, group: LanguageGroup) -> None:
    assert _query(language=language).language_group is group


@pytest.mark.parametrize("language", ["EN", "english", "e", "zh_CN", ""])
def test_invalid_language_tags_are_rejected(language: str) -> None:
    with pytest.raises(ValidationError, match="language"):
        _query(language=language)


def test_query_requires_a_non_empty_brief() -> None:
    with pytest.raises(ValidationError, match="brief"):
        _query(brief="")


def test_queryset_rejects_duplicate_ids() -> None:
    with pytest.raises(ValidationError, match="'game-tictactoe' appears twice"):
        QuerySet.model_validate({"queries": [QUERY, {**QUERY, "brief": "Another brief"}]})


def test_queryset_accepts_distinct_ids_and_rejects_empty() -> None:
    qs = QuerySet.model_validate({"queries": [QUERY, {**QUERY, "id": "game-memory", "language": "zh"}]})
    assert [q.id for q in qs.queries] == ["game-tictactoe", "game-memory"]
    with pytest.raises(ValidationError):
        QuerySet.model_validate({"queries": []})


# ------------------------------------------------------------------------------ strictness


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (Query, {**QUERY, "prompt": "typo of brief"}),
        (QuerySet, {"queries": [QUERY], "extra": 1}),
        (QuerySet, {"queries": [{**QUERY, "dificulty": "easy"}]}),
        (Candidate, {"id": "careful", "answers": "answers/careful", "modle": "gpt"}),
        (AgentConfig, {"max_step": 3}),
        (JudgeConfig, {"name": "heuristic", "temperature": 0}),
        (EvidenceRef, {"file": "a.png", "line": 3}),
        (JudgeInfo, {"name": "h", "kind": "heuristic", "rubric_version": "1", "extra": True}),
        (OutcomeReason, {"code": "ok", "message": "fine"}),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else "",
)
def test_unknown_fields_are_rejected(model: type, data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        model.model_validate(data)  # type: ignore[attr-defined]


def test_unknown_fields_are_rejected_in_verdicts_and_outcomes() -> None:
    with pytest.raises(ValidationError, match="Extra inputs"):
        _verdict(score=7)
    with pytest.raises(ValidationError, match="Extra inputs"):
        _outcome(notes="x")


def test_enum_fields_reject_unknown_values() -> None:
    with pytest.raises(ValidationError):
        _outcome(status="crashed")
    with pytest.raises(ValidationError):
        _outcome(reason={"code": "mystery"})
    with pytest.raises(ValidationError):
        Candidate(id="c", answers="a", provider="openai")  # type: ignore[arg-type]
    assert _outcome(status="timeout", reason={"code": "run_timeout"}).status is OutcomeStatus.TIMEOUT
    assert OutcomeReason(code=ReasonCode.NO_CODE).detail == ""
    assert Severity("critical") is Severity.CRITICAL


@pytest.mark.parametrize(
    ("obj", "field", "value"),
    [
        (_query(), "id", "other"),
        (_query(), "checklist", ("x",)),
        (Candidate(id="careful", answers="answers/careful"), "answers", "/tmp"),
        (AgentConfig(), "max_steps", 99),
        (JudgeConfig(), "name", "llm"),
    ],
    ids=["query-id", "query-checklist", "candidate", "agent", "judge"],
)
def test_identity_models_are_frozen(obj: Any, field: str, value: Any) -> None:
    before = getattr(obj, field)
    with pytest.raises(ValidationError, match="frozen"):
        setattr(obj, field, value)
    assert getattr(obj, field) == before


def test_agent_config_bounds() -> None:
    with pytest.raises(ValidationError):
        AgentConfig(max_steps=201)
    with pytest.raises(ValidationError):
        AgentConfig(mouse_steps=0)
    assert AgentConfig(max_steps=0).max_steps == 0


# ------------------------------------------------------------------------------ content keys


def test_content_key_is_stable_across_dict_ordering() -> None:
    a = {"temperature": 0.2, "top_p": 0.9, "model": "m-1"}
    b = {"model": "m-1", "top_p": 0.9, "temperature": 0.2}
    assert list(a) != list(b)
    assert content_key("artifact", "careful", a) == content_key("artifact", "careful", b)
    ca = Candidate(id="c", answers="x", params=a)
    cb = Candidate(id="c", answers="x", params=b)
    assert content_key("run", ca) == content_key("run", cb)


def test_content_key_shape_and_determinism() -> None:
    key = content_key("run", _query(), AgentConfig(), JudgeConfig(), "collector-1")
    assert key == content_key("run", _query(), AgentConfig(), JudgeConfig(), "collector-1")
    prefix, digest = key.split("-", 1)
    assert prefix == "run"
    assert len(digest) == 24 and all(c in "0123456789abcdef" for c in digest)


def test_content_key_models_and_their_dumps_agree() -> None:
    query = _query()
    assert content_key("q", query) == content_key("q", query.model_dump(mode="json"))


@pytest.mark.parametrize(
    "changed",
    [
        ("evidence", _query(), AgentConfig(), JudgeConfig(), "collector-1"),
        ("run", _query(brief="A different brief"), AgentConfig(), JudgeConfig(), "collector-1"),
        ("run", _query(language="zh"), AgentConfig(), JudgeConfig(), "collector-1"),
        ("run", _query(checklist=()), AgentConfig(), JudgeConfig(), "collector-1"),
        ("run", _query(), AgentConfig(seed=1), JudgeConfig(), "collector-1"),
        ("run", _query(), AgentConfig(), JudgeConfig(options={"model": "x"}), "collector-1"),
        ("run", _query(), AgentConfig(), JudgeConfig(), "collector-2"),
        ("run", _query(), AgentConfig(), JudgeConfig()),
        ("run", _query(), JudgeConfig(), AgentConfig(), "collector-1"),
    ],
    ids=["kind", "brief", "language", "checklist", "agent", "judge", "collector", "fewer-parts", "order"],
)
def test_content_key_differs_when_any_part_changes(changed: tuple[Any, ...]) -> None:
    base = content_key("run", _query(), AgentConfig(), JudgeConfig(), "collector-1")
    assert content_key(*changed) != base


def test_content_key_distinguishes_value_types() -> None:
    assert content_key("k", 1) != content_key("k", "1")
    assert content_key("k", {"a": 1}) != content_key("k", {"a": 2})
    assert content_key("k", "中文") != content_key("k", "中")


def test_sha256_bytes() -> None:
    assert sha256_bytes(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_interaction_result_writes_the_keys_its_readers_know() -> None:
    """``interaction/result.json`` as the report and the judges read it: null fields stay, a missing track says why,
    and a bundle with no interaction has no ``audio`` at all."""
    from evaluator.agents.observation import AudioTrack, Coverage, InteractionResult

    ended = InteractionResult(ended_by="policy", coverage=Coverage(salient=2, exercised=1, remaining=[3]), steps=4,
                              video_duration_s=3.5, frames=80, wall_duration_s=3.6, console_entries_dropped=0,
                              audio=AudioTrack(track=True, offset_s=0.01, lag_s=0.002, captured_s=3.4))
    assert ended.model_dump(mode="json") == {
        "version": 1, "ended_by": "policy", "error": None,
        "coverage": {"salient": 2, "exercised": 1, "remaining": [3]}, "steps": 4, "video_duration_s": 3.5,
        "frames": 80, "wall_duration_s": 3.6, "console_entries_dropped": 0, "console_errors_dropped": 0,
        "audio": {"track": True, "offset_s": 0.01, "lag_s": 0.002, "captured_s": 3.4}}
    silent = InteractionResult(ended_by="hang", error="stuck", console_entries_dropped=2,
                               audio=AudioTrack(track=False, note="no video"))
    assert silent.model_dump(mode="json")["audio"] == {"track": False, "note": "no video"}
    failed = InteractionResult(ended_by="build_failure", error="exit 1", console_entries_dropped=0)
    assert list(failed.model_dump(mode="json")) == ["version", "ended_by", "error", "coverage", "steps",
                                                    "video_duration_s", "frames", "wall_duration_s",
                                                    "console_entries_dropped", "console_errors_dropped"]


def test_a_runs_cell_enters_its_key_as_its_variant_and_sample() -> None:
    from evaluator.keys import run_key
    from evaluator.run import make_run_spec

    candidate, query, agent, judge = Candidate(id="c", answers="a"), _query(), AgentConfig(), JudgeConfig()
    plain = make_run_spec(candidate=candidate, query=query, agent=agent, judge=judge, judge_version="v",
                          answers_dir=None)
    assert plain.run_key == run_key(candidate, query, agent, judge, "v")
    assert (plain.variant, plain.sample) == (None, 0)
    spec = make_run_spec(candidate=candidate, query=query, agent=agent, judge=judge, judge_version="v",
                         answers_dir=None, cell=("unguided", 2))
    assert spec.run_key == run_key(candidate, query, agent, judge, "v", cell=("unguided", 2)) != plain.run_key
    assert (spec.variant, spec.sample) == ("unguided", 2)
