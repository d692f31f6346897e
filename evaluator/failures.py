"""The one failure classifier: the outcome an exception that ends a run, or one attempt of it, stands for.

An ordered table maps each exception to its status, its reason and whose failure it is; the first row whose
type matches wins, so a subclass comes before its base. The run (:mod:`evaluator.run`), the worker's attempts and
rejudging all ask :func:`classify`; a new exception is added here, as one row. Which exceptions a stage lets
through is the stage's business; what they mean is decided here.

Whose failure it is decides what happens next:

- ``machinery``: the host failed beside the sandbox: it cannot encode video or build (another attempt would
  fail the same way), or the store or a bundle failed (another attempt may pass); an excluded ``infra_error``;
- ``sandbox``: the sandbox or its browser died or broke. It may be the machinery, or an app that kills its
  sandbox: the worker retries on a fresh sandbox, and a control page between two deaths says whose it was;
- ``app_if_loaded``: something in the sandbox answered for the machinery. It is the app's failure when the app
  was loaded (its tamper, scored), the machinery's before;
- ``model``: a model endpoint failed. ``retry`` says whether the same request may succeed later;
- ``budget``: the sweep's spending cap stopped a call: the run is deferred, not failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from evaluator.errors import (
    BrowserUnavailableError,
    BudgetExhaustedError,
    BuildUnavailableError,
    EncoderUnavailableError,
    EvidenceError,
    InfrastructureError,
    ModelRequestError,
    ModelUnavailableError,
    RequestTooLargeError,
    SandboxError,
    StoreError,
    TamperError,
    UnreadableEvidenceError,
)
from evaluator.models import AppFailure, Outcome, OutcomeReason, OutcomeStatus, ReasonCode


class Blame(StrEnum):
    """Whose failure an exception is (see the module's docstring)."""

    MACHINERY = "machinery"
    SANDBOX = "sandbox"
    APP_IF_LOADED = "app_if_loaded"
    MODEL = "model"
    BUDGET = "budget"


@dataclass(frozen=True)
class Failure:
    """What an exception stands for: the outcome's status and reason, whose failure it is, and whether another
    attempt may succeed."""

    status: OutcomeStatus
    code: ReasonCode
    blame: Blame
    retry: bool


_INFRA = OutcomeStatus.INFRA_ERROR
_TABLE: tuple[tuple[type[BaseException], Failure], ...] = (
    (BudgetExhaustedError, Failure(OutcomeStatus.DEFERRED, ReasonCode.BUDGET_EXHAUSTED, Blame.BUDGET, False)),
    # Too large for the server: judging falls back before it gets here (evaluator.run.judge_or_fall_back); where no
    # judge asked (a candidate's generation), the same request is refused again.
    (RequestTooLargeError, Failure(_INFRA, ReasonCode.MODEL_REQUEST_REFUSED, Blame.MODEL, False)),
    # The endpoint refuses the request itself (key, model id): the same request fails again.
    (ModelRequestError, Failure(_INFRA, ReasonCode.MODEL_REQUEST_REFUSED, Blame.MODEL, False)),
    (ModelUnavailableError, Failure(_INFRA, ReasonCode.MODEL_UNAVAILABLE, Blame.MODEL, True)),
    (TamperError, Failure(_INFRA, ReasonCode.SANDBOX_FAILED, Blame.APP_IF_LOADED, True)),
    (BrowserUnavailableError, Failure(_INFRA, ReasonCode.BROWSER_UNAVAILABLE, Blame.SANDBOX, True)),
    (EncoderUnavailableError, Failure(_INFRA, ReasonCode.ENCODER_FAILED, Blame.MACHINERY, False)),
    (BuildUnavailableError, Failure(_INFRA, ReasonCode.BUILD_UNAVAILABLE, Blame.MACHINERY, False)),
    (StoreError, Failure(_INFRA, ReasonCode.STORE_FAILED, Blame.MACHINERY, True)),
    # A committed bundle holding what no judge can read: judging scores it as the app's tampering
    # (evaluator.run.judge_or_fall_back); anywhere else it is the app's, as a tamper is.
    (UnreadableEvidenceError, Failure(_INFRA, ReasonCode.SANDBOX_FAILED, Blame.APP_IF_LOADED, True)),
    (EvidenceError, Failure(_INFRA, ReasonCode.STORE_FAILED, Blame.MACHINERY, True)),
    (SandboxError, Failure(_INFRA, ReasonCode.SANDBOX_FAILED, Blame.SANDBOX, True)),
    (InfrastructureError, Failure(_INFRA, ReasonCode.BROWSER_CRASHED, Blame.SANDBOX, True)),
)
_UNKNOWN = Failure(_INFRA, ReasonCode.INTERNAL_ERROR, Blame.SANDBOX, True)
"""Anything else is a bug or a dead browser: it costs one attempt, not the sweep."""

TIMED_OUT = Failure(OutcomeStatus.TIMEOUT, ReasonCode.RUN_TIMEOUT, Blame.SANDBOX, True)
"""A run past its time limit that the hang probe could not put on the app."""

_APP_FAILURES = {AppFailure.HANG: ReasonCode.APP_HANG, AppFailure.CRASH: ReasonCode.APP_CRASH,
                 AppFailure.TAMPER: ReasonCode.APP_TAMPER}

SANDBOX_DEATHS = frozenset({*(f.code for _, f in _TABLE if f.blame is Blame.SANDBOX), _UNKNOWN.code, TIMED_OUT.code})
"""The reasons an app in play may be behind (it killed or hung its sandbox): a control page decides."""


def classify(exc: BaseException) -> Failure:
    """What ``exc`` stands for: the first row of the table whose type it is an instance of."""
    return next((failure for kind, failure in _TABLE if isinstance(exc, kind)), _UNKNOWN)


def app_failure_code(failure: AppFailure) -> ReasonCode:
    """The reason of a judged run whose app hung, crashed or tampered."""
    return _APP_FAILURES[failure]


def as_failed(outcome: Outcome, failure: Failure, detail: str) -> Outcome:
    """``outcome`` turned into ``failure``: its scores and verdict cleared, the reason replaced."""
    return outcome.model_copy(update={
        "status": failure.status, "reason": OutcomeReason(code=failure.code, detail=detail[:2000]),
        "functional": None, "aesthetic": None, "verdict_key": None, "judge_label": None})
