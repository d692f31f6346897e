"""evalgrid's single-run engine: one (candidate × query) run of the Cookie-Frame regime, no distribution.

Static Perception, Agent-Driven Interaction with the page frozen during each deliberation, and a
judge's functional and aesthetic verdicts on the evidence. ``evaluator`` never imports ``cluster``.

The public names below are loaded on first use (PEP 562): ``import evaluator`` loads no browser,
video or model client, and the built-in judges and policies register on the registries' first lookup.
The registries are ``evaluator.judges`` (the judges subpackage answers ``register``, ``create`` and
``names`` itself) and ``evaluator.policies``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator.lazy import lazy_exports

if TYPE_CHECKING:
    from evaluator.agents.observation import Action, ActionKind, AgentSummary, Observation, StepRecord
    from evaluator.agents.policies import Policy, policies
    from evaluator.answer.extract import ExtractedApp, NotAssessable, extract_app
    from evaluator.browser.app_host import LOOPBACK, AppHost
    from evaluator.browser.context_pool import ContextPool
    from evaluator.errors import (
        BrowserUnavailableError,
        BuildUnavailableError,
        ConfigError,
        EncoderUnavailableError,
        EvalgridError,
        EvidenceError,
        InfrastructureError,
        RegistryError,
        SandboxError,
        WorkerStartError,
    )
    from evaluator.evidence.bundle import EvidenceBundle, verify_bundle
    from evaluator.evidence.collect import collect_evidence
    from evaluator.judges import Judge, create_judge
    from evaluator.models import (
        AgentConfig,
        Artifact,
        BuildReport,
        Candidate,
        Difficulty,
        Dimension,
        EvidenceManifest,
        EvidenceRef,
        FailureAttribution,
        JudgeConfig,
        Kind,
        LanguageGroup,
        MirroredPackage,
        Outcome,
        OutcomeStatus,
        Query,
        QuerySet,
        ReasonCode,
        RunSpec,
        Severity,
        Stack,
        Verdict,
        WebEnvironment,
    )
    from evaluator.run import StagePaths, execute_run, make_run_spec

_WHERE = {
    "Action": "evaluator.agents.observation",
    "ActionKind": "evaluator.agents.observation",
    "AgentConfig": "evaluator.models",
    "AgentSummary": "evaluator.agents.observation",
    "AppHost": "evaluator.browser.app_host",
    "Artifact": "evaluator.models",
    "BrowserUnavailableError": "evaluator.errors",
    "BuildReport": "evaluator.models",
    "BuildUnavailableError": "evaluator.errors",
    "Candidate": "evaluator.models",
    "collect_evidence": "evaluator.evidence.collect",
    "ConfigError": "evaluator.errors",
    "ContextPool": "evaluator.browser.context_pool",
    "create_judge": "evaluator.judges",
    "Difficulty": "evaluator.models",
    "Dimension": "evaluator.models",
    "EncoderUnavailableError": "evaluator.errors",
    "EvalgridError": "evaluator.errors",
    "EvidenceBundle": "evaluator.evidence.bundle",
    "EvidenceError": "evaluator.errors",
    "EvidenceManifest": "evaluator.models",
    "EvidenceRef": "evaluator.models",
    "execute_run": "evaluator.run",
    "extract_app": "evaluator.answer.extract",
    "ExtractedApp": "evaluator.answer.extract",
    "FailureAttribution": "evaluator.models",
    "InfrastructureError": "evaluator.errors",
    "Judge": "evaluator.judges",
    "JudgeConfig": "evaluator.models",
    "Kind": "evaluator.models",
    "LanguageGroup": "evaluator.models",
    "LOOPBACK": "evaluator.browser.app_host",
    "make_run_spec": "evaluator.run",
    "MirroredPackage": "evaluator.models",
    "NotAssessable": "evaluator.answer.extract",
    "Observation": "evaluator.agents.observation",
    "Outcome": "evaluator.models",
    "OutcomeStatus": "evaluator.models",
    "policies": "evaluator.agents.policies",
    "Policy": "evaluator.agents.policies",
    "Query": "evaluator.models",
    "QuerySet": "evaluator.models",
    "ReasonCode": "evaluator.models",
    "RegistryError": "evaluator.errors",
    "RunSpec": "evaluator.models",
    "SandboxError": "evaluator.errors",
    "Severity": "evaluator.models",
    "Stack": "evaluator.models",
    "StagePaths": "evaluator.run",
    "StepRecord": "evaluator.agents.observation",
    "Verdict": "evaluator.models",
    "verify_bundle": "evaluator.evidence.bundle",
    "WebEnvironment": "evaluator.models",
    "WorkerStartError": "evaluator.errors",
}

__all__ = [
    "Action",
    "ActionKind",
    "AgentConfig",
    "AgentSummary",
    "AppHost",
    "Artifact",
    "BrowserUnavailableError",
    "BuildReport",
    "BuildUnavailableError",
    "Candidate",
    "ConfigError",
    "ContextPool",
    "Difficulty",
    "Dimension",
    "EncoderUnavailableError",
    "EvalgridError",
    "EvidenceBundle",
    "EvidenceError",
    "EvidenceManifest",
    "EvidenceRef",
    "ExtractedApp",
    "FailureAttribution",
    "InfrastructureError",
    "Judge",
    "JudgeConfig",
    "Kind",
    "LOOPBACK",
    "LanguageGroup",
    "MirroredPackage",
    "NotAssessable",
    "Observation",
    "Outcome",
    "OutcomeStatus",
    "Policy",
    "Query",
    "QuerySet",
    "ReasonCode",
    "RegistryError",
    "RunSpec",
    "SandboxError",
    "Severity",
    "Stack",
    "StagePaths",
    "StepRecord",
    "Verdict",
    "WebEnvironment",
    "WorkerStartError",
    "collect_evidence",
    "create_judge",
    "execute_run",
    "extract_app",
    "make_run_spec",
    "policies",
    "verify_bundle",
]


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
