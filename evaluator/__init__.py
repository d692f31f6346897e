"""evalgrid's single-run engine: one (candidate × query) run of the Cookie-Frame regime, no distribution.

Static Perception, Agent-Driven Interaction with the page frozen during each deliberation, and a
judge's functional and aesthetic verdicts on the evidence. ``evaluator`` never imports ``cluster``.
"""

from evaluator import heuristic as _heuristic  # noqa: F401 - registers the embedded default judge
from evaluator import llm_agent as _llm_agent  # noqa: F401 - registers the LLM agent policy
from evaluator import llm_judge as _llm_judge  # noqa: F401 - registers the LLM judge
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
from evaluator.judges import Judge, create_judge, judges
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
from evaluator.policies import Policy, policies
from evaluator.run import StagePaths, execute_run, make_run_spec
from evaluator.sandbox import LOOPBACK, AppHost

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
