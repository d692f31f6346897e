"""The one exception hierarchy of evalgrid.

::

    EvalgridError                    base: every error evalgrid raises on purpose
    ├── ConfigError                  a sweep, query file, option or package data file is wrong; fix it
    ├── RegistryError                an unknown or duplicate policy / judge name
    ├── InfrastructureError          the machinery failed, not the app: retry or fix the host
    │   ├── BrowserUnavailableError  Chromium could not be found or launched
    │   ├── EncoderUnavailableError  ffmpeg is missing or failed to encode the video
    │   ├── SandboxError             a sandbox container could not be started, reached or removed
    │   ├── StoreError               the object store failed even after retries
    │   ├── ModelUnavailableError    a model endpoint failed even after retries (down, 5xx, 429, timeouts)
    │   └── WorkerStartError         a worker could not get a browser at all; the sweep stops
    ├── ModelRequestError            a model endpoint refused the request itself (auth, unknown model)
    │   └── RequestTooLargeError     ... for its size: more images or tokens than the server takes
    ├── BudgetExhaustedError         the sweep's spending cap is reached; no new paid call is made
    ├── DiskBudgetError              the sweep's evidence reached its disk budget; the sweep stops
    ├── TamperError                  something in the sandbox answered for the machinery: the app's failure
    │   └── ForgedMeasurementError   an in-page measurement came back malformed: the page rewrote it
    ├── JudgeOutputError             a judge model's answer was unusable after one repair, or a refusal
    ├── BuildUnavailableError        the app host cannot build component or project answers
    └── EvidenceError                an evidence bundle is missing, incomplete or corrupted
        └── UnreadableEvidenceError  a committed bundle's file is not the record it names: no judge can read it

Failures of the thing under evaluation (an app that crashes, a blank page, an answer without
code) are *results*, never exceptions: they become an :class:`~evaluator.models.Outcome`.
"""

from __future__ import annotations


class EvalgridError(Exception):
    """Base class of every error evalgrid raises on purpose."""


class ConfigError(EvalgridError):
    """A sweep file, query file or option is invalid, or evalgrid's own package data is missing or of another
    version; the message says what to change."""


class RegistryError(EvalgridError):
    """A name that is not registered, or registered twice."""


class InfrastructureError(EvalgridError):
    """The evaluation machinery failed (browser, encoder, disk), not the app under test."""


class BrowserUnavailableError(InfrastructureError):
    """Chromium could not be found or launched."""


class EncoderUnavailableError(InfrastructureError):
    """ffmpeg is missing or could not encode the screen video."""


class SandboxError(InfrastructureError):
    """A sandbox container could not be started, reached or removed (Docker engine, control channel)."""


class StoreError(InfrastructureError):
    """The object store could not be reached, or refused a read or write even after retries."""


class ModelUnavailableError(InfrastructureError):
    """A model endpoint could not answer even after retries (unreachable, 5xx, rate limited, timed out)."""


class ModelRequestError(EvalgridError):
    """A model endpoint refused the request itself (bad key, unknown model, invalid request): retrying cannot help."""


class RequestTooLargeError(ModelRequestError):
    """A model endpoint refused the request for its size: more images in one prompt, or more tokens, than the
    server takes. Where a model judges, that is the judge's failure on that run (the fallback judge scores it,
    flagged), not the machinery's; lower ``max_images`` or ``context_tokens`` on the endpoint to fit."""


class BudgetExhaustedError(EvalgridError):
    """The sweep's spending cap would be exceeded by the next call; raise ``budget_usd`` and re-run."""


class DiskBudgetError(EvalgridError):
    """The sweep's evidence on this machine reached its ``disk_budget_gib``: the sweep stops, every finished run
    recorded. Free space or raise the budget, then re-run the same command to resume."""


class TamperError(EvalgridError):
    """A reply on a sandbox's control channel did not carry the request's id and the sandbox's nonce: something
    other than the machinery wrote it. Never an infrastructure error (retrying would let the app choose to go
    unscored): the run is scored as the app's failure, flagged ``tamper_attempted``, and the sandbox replaced."""


class ForgedMeasurementError(TamperError):
    """A measurement evalgrid takes inside the page (its facts) came back without its fields or with fields of the
    wrong kind: the page rewrote what evalgrid measures. The app's tampering, scored like any other (functional 0,
    flagged ``tamper_attempted``), never a crash of the judge that would leave the app unscored."""


class JudgeOutputError(EvalgridError):
    """A judge model's answer could not become a verdict (invalid twice, or a refusal). Not retried: at
    temperature 0 the same evidence would get the same answer."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        """``invalid`` or ``refused``."""


class WorkerStartError(InfrastructureError):
    """A worker could not get a browser at all (no image, no Docker engine, no Chromium): stop the sweep."""


class BuildUnavailableError(EvalgridError):
    """The app host cannot build component or project answers (the local backend); use a sandbox backend."""


class EvidenceError(EvalgridError):
    """An evidence bundle is missing, incomplete or does not match its manifest."""


class UnreadableEvidenceError(EvidenceError):
    """A committed bundle holds a file that is not the record its name says (the collector validates what the page
    measures, but an older collector stored it unchecked). Judging scores it as the app's tampering
    (:func:`~evaluator.run.judge_or_fall_back`), as it scores any evidence a judge cannot read."""
