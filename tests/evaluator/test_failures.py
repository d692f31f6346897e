"""The one failure classifier: each exception evalgrid raises stands for one status, reason and blame, decided in
one module."""

from __future__ import annotations

import inspect
import re

import pytest

from evaluator import errors
from evaluator.failures import SANDBOX_DEATHS, Blame, app_failure_code, classify
from evaluator.models import AppFailure, OutcomeStatus, ReasonCode
from tests.support import ROOT

pytestmark = pytest.mark.pure

# Every error class of the hierarchy, with what it stands for when it ends a run or an attempt. A new error class
# fails the first test until it is given a row here and, where it needs one, in evaluator/failures.py.
EXPECTED: dict[str, tuple[ReasonCode, Blame, bool]] = {
    "EvalgridError": (ReasonCode.INTERNAL_ERROR, Blame.SANDBOX, True),
    "ConfigError": (ReasonCode.INTERNAL_ERROR, Blame.SANDBOX, True),
    "RegistryError": (ReasonCode.INTERNAL_ERROR, Blame.SANDBOX, True),
    "InfrastructureError": (ReasonCode.BROWSER_CRASHED, Blame.SANDBOX, True),
    "BrowserUnavailableError": (ReasonCode.BROWSER_UNAVAILABLE, Blame.SANDBOX, True),
    "EncoderUnavailableError": (ReasonCode.ENCODER_FAILED, Blame.MACHINERY, False),
    "SandboxError": (ReasonCode.SANDBOX_FAILED, Blame.SANDBOX, True),
    "StoreError": (ReasonCode.STORE_FAILED, Blame.MACHINERY, True),
    "ModelUnavailableError": (ReasonCode.MODEL_UNAVAILABLE, Blame.MODEL, True),
    "ModelRequestError": (ReasonCode.MODEL_REQUEST_REFUSED, Blame.MODEL, False),
    "RequestTooLargeError": (ReasonCode.MODEL_REQUEST_REFUSED, Blame.MODEL, False),
    "BudgetExhaustedError": (ReasonCode.BUDGET_EXHAUSTED, Blame.BUDGET, False),
    "DiskBudgetError": (ReasonCode.INTERNAL_ERROR, Blame.SANDBOX, True),
    "TamperError": (ReasonCode.SANDBOX_FAILED, Blame.APP_IF_LOADED, True),
    "ForgedMeasurementError": (ReasonCode.SANDBOX_FAILED, Blame.APP_IF_LOADED, True),
    "JudgeOutputError": (ReasonCode.INTERNAL_ERROR, Blame.SANDBOX, True),
    "WorkerStartError": (ReasonCode.BROWSER_CRASHED, Blame.SANDBOX, True),
    "BuildUnavailableError": (ReasonCode.BUILD_UNAVAILABLE, Blame.MACHINERY, False),
    "EvidenceError": (ReasonCode.STORE_FAILED, Blame.MACHINERY, True),
    "UnreadableEvidenceError": (ReasonCode.SANDBOX_FAILED, Blame.APP_IF_LOADED, True),
}


def _instance(kind: type[errors.EvalgridError]) -> errors.EvalgridError:
    return kind("invalid", "x") if kind is errors.JudgeOutputError else kind("x")  # type: ignore[call-arg]


def test_every_error_class_stands_for_the_failure_it_was_given() -> None:
    classes = {name: kind for name, kind in inspect.getmembers(errors, inspect.isclass)
               if issubclass(kind, errors.EvalgridError) and kind.__module__ == errors.__name__}
    assert set(classes) == set(EXPECTED), "give each new error class a row in EXPECTED (and the classifier)"
    for name, kind in classes.items():
        failure = classify(_instance(kind))
        assert (failure.code, failure.blame, failure.retry) == EXPECTED[name], name
        deferred = failure.code is ReasonCode.BUDGET_EXHAUSTED
        assert failure.status is (OutcomeStatus.DEFERRED if deferred else OutcomeStatus.INFRA_ERROR), name


def test_a_subclass_is_classified_before_its_base_and_a_stranger_is_an_internal_error() -> None:
    assert classify(errors.ModelUnavailableError("x")).code is ReasonCode.MODEL_UNAVAILABLE  # not BROWSER_CRASHED
    assert classify(RuntimeError("a bug")).code is ReasonCode.INTERNAL_ERROR
    assert classify(TimeoutError()).code is ReasonCode.INTERNAL_ERROR
    assert {ReasonCode.SANDBOX_FAILED, ReasonCode.BROWSER_CRASHED, ReasonCode.RUN_TIMEOUT} <= SANDBOX_DEATHS
    assert not {ReasonCode.ENCODER_FAILED, ReasonCode.STORE_FAILED, ReasonCode.MODEL_UNAVAILABLE} & SANDBOX_DEATHS
    assert [app_failure_code(f) for f in AppFailure] == [ReasonCode.APP_HANG, ReasonCode.APP_CRASH,
                                                          ReasonCode.APP_TAMPER]


def test_only_the_classifier_spells_the_reasons_exceptions_stand_for() -> None:
    """Elsewhere a stage catches an exception and asks :func:`classify`; it never picks the reason itself."""
    from_exceptions = {code.name for name, (code, _, _) in EXPECTED.items() if code is not ReasonCode.INTERNAL_ERROR}
    spelled = re.compile(r"ReasonCode\.(" + "|".join(sorted(from_exceptions)) + r")\b")
    elsewhere = [f"{path.relative_to(ROOT)}: {match.group(0)}"
                 for top in ("evaluator", "cluster") for path in sorted((ROOT / top).rglob("*.py"))
                 if path.name != "failures.py" for match in spelled.finditer(path.read_text(encoding="utf-8"))]
    assert len(from_exceptions) == 9 and elsewhere == [], elsewhere
