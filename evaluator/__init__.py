"""evalgrid's single-run engine: one (candidate × query) run of the Cookie-Frame regime, no distribution.

Static Perception, Agent-Driven Interaction with the page frozen during each deliberation, and a
judge's functional and aesthetic verdicts on the evidence. ``evaluator`` never imports ``cluster``.

The public names below are loaded on first use (PEP 562): ``import evaluator`` loads no browser,
video or model client, and the built-in judges and policies register on the registries' first lookup.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# The two registries share their modules' names: bound here, after their modules, or the first import of
# ``evaluator.judges`` would leave ``evaluator.judges`` naming the module instead of the registry.
from evaluator.judges import judges
from evaluator.policies import policies

if TYPE_CHECKING:
    from evaluator.collect import collect_evidence
    from evaluator.context_pool import ContextPool
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
    from evaluator.evidence import EvidenceBundle, verify_bundle
    from evaluator.extract import ExtractedApp, NotAssessable, extract_app
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
    from evaluator.observation import Action, ActionKind, AgentSummary, Observation, StepRecord
    from evaluator.policies import Policy
    from evaluator.run import StagePaths, execute_run, make_run_spec
    from evaluator.sandbox import LOOPBACK, AppHost

_WHERE = {
    "Action": "evaluator.observation",
    "ActionKind": "evaluator.observation",
    "AgentConfig": "evaluator.models",
    "AgentSummary": "evaluator.observation",
    "AppHost": "evaluator.sandbox",
    "Artifact": "evaluator.models",
    "BrowserUnavailableError": "evaluator.errors",
    "BuildReport": "evaluator.models",
    "BuildUnavailableError": "evaluator.errors",
    "Candidate": "evaluator.models",
    "collect_evidence": "evaluator.collect",
    "ConfigError": "evaluator.errors",
    "ContextPool": "evaluator.context_pool",
    "create_judge": "evaluator.judges",
    "Difficulty": "evaluator.models",
    "Dimension": "evaluator.models",
    "EncoderUnavailableError": "evaluator.errors",
    "EvalgridError": "evaluator.errors",
    "EvidenceBundle": "evaluator.evidence",
    "EvidenceError": "evaluator.errors",
    "EvidenceManifest": "evaluator.models",
    "EvidenceRef": "evaluator.models",
    "execute_run": "evaluator.run",
    "extract_app": "evaluator.extract",
    "ExtractedApp": "evaluator.extract",
    "FailureAttribution": "evaluator.models",
    "InfrastructureError": "evaluator.errors",
    "Judge": "evaluator.judges",
    "JudgeConfig": "evaluator.models",
    "judges": "evaluator.judges",
    "Kind": "evaluator.models",
    "LanguageGroup": "evaluator.models",
    "LOOPBACK": "evaluator.sandbox",
    "make_run_spec": "evaluator.run",
    "MirroredPackage": "evaluator.models",
    "NotAssessable": "evaluator.extract",
    "Observation": "evaluator.observation",
    "Outcome": "evaluator.models",
    "OutcomeStatus": "evaluator.models",
    "policies": "evaluator.policies",
    "Policy": "evaluator.policies",
    "Query": "evaluator.models",
    "QuerySet": "evaluator.models",
    "ReasonCode": "evaluator.models",
    "RegistryError": "evaluator.errors",
    "RunSpec": "evaluator.models",
    "SandboxError": "evaluator.errors",
    "Severity": "evaluator.models",
    "Stack": "evaluator.models",
    "StagePaths": "evaluator.run",
    "StepRecord": "evaluator.observation",
    "Verdict": "evaluator.models",
    "verify_bundle": "evaluator.evidence",
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
    "judges",
    "make_run_spec",
    "policies",
    "verify_bundle",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'evaluator' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
