"""Typed records at evalgrid's boundaries: inputs, stage outputs and the recorded outcome.

Everything written to storage carries a ``version`` field. Identities (queries, candidates,
configs that enter a content key) are frozen.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

SCHEMA_VERSION = 1
MANIFEST_VERSION = 3
"""Evidence manifests: 2 adds ``incomplete`` (a bundle committed short of its end by the app's hang or crash),
3 adds ``caps`` (the evidence limits the run reached); version-1 manifests are read as complete bundles."""

_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
Identifier = Annotated[str, Field(pattern=_ID_PATTERN)]
Score = Annotated[float, Field(ge=0.0, le=8.0)]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class _Identity(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


# --------------------------------------------------------------------------------- inputs


class Kind(StrEnum):
    """What a query asks for (Cookie-Bench's two task kinds)."""

    STATIC_PRESENTATION = "static_presentation"
    INTERACTIVE_APPLICATION = "interactive_application"


class Difficulty(StrEnum):
    """Cookie-Bench's three difficulty tiers."""

    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"


class LanguageGroup(StrEnum):
    """The three target-language groups a sweep is sliced by."""

    ENGLISH = "english"
    CHINESE = "chinese"
    OTHER = "other"


class Query(_Identity):
    """One web-generation task given to every candidate."""

    id: Identifier
    """Stable identifier; also used in file names."""
    brief: str = Field(min_length=1)
    """The user's request, verbatim, in its target language."""
    domain: str = Field(min_length=1)
    """Top-level domain (one of Cookie-Bench's eleven, e.g. ``games``)."""
    leaf: str = Field(min_length=1)
    """Leaf category inside the domain (e.g. ``puzzle_games``)."""
    difficulty: Difficulty
    """Difficulty tier."""
    language: str = Field(pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
    """Target language of the page as a BCP-47 tag (``en``, ``zh``, ``es`` ...)."""
    kind: Kind
    """Static presentation or interactive application."""
    checklist: tuple[str, ...] = ()
    """Optional requirement checklist, in the brief's language."""

    @property
    def language_group(self) -> LanguageGroup:
        """English, Chinese or other, from the primary language subtag."""
        primary = self.language.split("-")[0]
        if primary == "en":
            return LanguageGroup.ENGLISH
        if primary == "zh":
            return LanguageGroup.CHINESE
        return LanguageGroup.OTHER


class QuerySet(_Record):
    """A file of queries."""

    version: int = SCHEMA_VERSION
    """Format version of this file."""
    queries: list[Query] = Field(min_length=1)
    """The queries, each with a unique id."""

    @field_validator("queries")
    @classmethod
    def _unique_ids(cls, queries: list[Query]) -> list[Query]:
        seen: set[str] = set()
        for q in queries:
            if q.id in seen:
                raise ValueError(f"query id {q.id!r} appears twice; query ids must be unique")
            seen.add(q.id)
        return queries


class GenerateConfig(_Identity):
    """How a live candidate makes its answer (``generate:``)."""

    mode: Literal["single", "agentic"] = "single"
    """``single``: one chat turn. ``agentic``: the model may call the app preview tool (``create_app_preview``)
    up to ``max_rounds`` times, then gives its final answer."""
    max_rounds: int = Field(default=3, ge=1, le=20)
    """Agentic: previews the model may ask for."""
    round_timeout_s: float = Field(default=120.0, gt=0, le=1800)
    """Agentic: how long one preview may take; past it the model is told it timed out."""


class Candidate(_Identity):
    """A model under evaluation and where its answers come from."""

    id: Identifier
    """Stable identifier of the candidate (appears on the leaderboard)."""
    provider: Literal["replay", "openai"] = "replay"
    """``replay`` reads stored raw answers from ``answers``; ``openai`` asks ``model`` on ``endpoint``."""
    answers: str | None = None
    """Replay: directory of raw answers, one ``<query_id>.{md,html,txt}`` file per query."""
    endpoint: str | None = None
    """Live: the name of an endpoint under the sweep's ``endpoints:``."""
    model: str | None = None
    """Live: the model id to ask."""
    system_prompt: str | None = None
    """Live: a system prompt replacing evalgrid's (``prompts/generate-v1.md``)."""
    params: dict[str, str | int | float | bool] = Field(default_factory=dict)
    """Generation parameters (``temperature``, ``max_tokens``, ``top_p`` ...); part of the artifact key."""
    generate: GenerateConfig = Field(default_factory=GenerateConfig)
    """Live: one turn (the default) or agentic, with the preview tool."""
    base: Identifier | None = None
    """Agentic: the sweep's candidate that is the same model in single mode; the reduction gives the score gain
    over it, query by query."""

    @model_serializer(mode="wrap")
    def _single_turn_adds_nothing(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        # The candidate's dump enters every key of its runs: the default mode must leave them as they were.
        data: dict[str, object] = handler(self)
        if self.generate.mode == "single":
            data.pop("generate", None)
        if self.base is None:
            data.pop("base", None)
        return data

    @model_validator(mode="after")
    def _source_of_answers(self) -> Candidate:
        if self.provider == "replay":
            if not self.answers:
                raise ValueError(f"candidate {self.id!r}: a replay candidate needs `answers:` (a directory)")
            if self.endpoint or self.model:
                raise ValueError(f"candidate {self.id!r}: endpoint and model are for provider: openai")
        elif not self.endpoint or not self.model:
            raise ValueError(f"candidate {self.id!r}: provider openai needs `endpoint:` and `model:`")
        if self.generate.mode == "agentic" and self.provider != "openai":
            raise ValueError(f"candidate {self.id!r}: generate: {{mode: agentic}} needs a live model (provider openai)")
        if self.base is not None and self.generate.mode != "agentic":
            raise ValueError(f"candidate {self.id!r}: base: names the single-turn twin of an agentic candidate; "
                             "this one is not agentic")
        return self


class AgentConfig(_Identity):
    """How the Agent-Driven Interaction stage explores an app. Part of the evidence key."""

    policy: str = "explorer"
    """Registered name of the agent policy."""
    options: dict[str, str | int | float | bool] = Field(default_factory=dict)
    """Policy-specific options (the ``llm`` policy's endpoint, model, temperature ...)."""
    max_steps: int = Field(default=20, ge=0, le=200)
    """Step budget for the interaction. 20 by default: the explorer also submits typed text with Enter and
    presses keys on keyboard-driven pages, and at 12 it ran out before reaching a typical app's later
    controls (a list's checkboxes and delete buttons)."""
    seed: int = 0
    """Seed for the human-like input jitter."""
    typing_delay_ms: int = Field(default=35, ge=0, le=1000)
    """Mean delay between keystrokes."""
    mouse_steps: int = Field(default=8, ge=1, le=100)
    """Intermediate points of each mouse path."""
    action_pause_ms: int = Field(default=120, ge=0, le=10000)
    """The window after each action in which the app's reaction is waited for before the page is observed again:
    with ``settle: signals``, the wait ends within it once no page timer is due before it closes."""
    settle: Literal["signals", "fixed"] = "signals"
    """How the loop decides an action's effect is over. ``signals``: once the layout is stable, no request the
    action started is in flight, and no finite animation ends nor page timer fires within ``action_pause_ms`` and
    the fixed pacing's render polls (a still page is observed as soon as it has painted; one that keeps scheduling
    timers gets the whole window).
    ``fixed``: always the whole ``action_pause_ms``, then a layout-stability poll (collector-7's pacing)."""
    coverage_gate: bool = True
    """Refuse to finish before the salient controls were exercised, unless the budget is spent."""


class JudgeConfig(_Identity):
    """Which judge scores the evidence. Part of the verdict key."""

    name: str = "heuristic"
    """Registered name of the judge."""
    options: dict[str, str | int | float | bool] = Field(default_factory=dict)
    """Judge-specific options (model id, prompt version, decoding parameters ...)."""


# -------------------------------------------------------------------------------- artifact


class Stack(StrEnum):
    """How an artifact is served."""

    HTML = "html"
    """A single self-contained HTML file."""
    STATIC = "static"
    """Several static files (HTML, CSS, JS, assets) served as they are."""
    COMPONENT = "component"
    """A React (JSX/TSX) or Vue (SFC) component and no HTML: mounted on a generated page and built."""
    PROJECT = "project"
    """A project with a ``package.json`` that needs a build (Vite, JSX, Vue): built, then served."""


class RejectedFile(_Record):
    """A file of the answer that was not admitted into the artifact."""

    name: str
    """The name as the answer gave it."""
    reason: str
    """Why it was rejected."""


class Artifact(_Record):
    """A runnable web app extracted from a model's raw answer."""

    version: int = SCHEMA_VERSION
    """Format version."""
    key: str
    """Content key: hash of candidate id, generation parameters, query and raw answer."""
    candidate_id: str
    """Candidate that produced it."""
    query_id: str
    """Query it answers."""
    files: dict[str, str]
    """Relative POSIX path → text content."""
    entrypoint: str
    """The file the browser opens."""
    stack: Stack
    """How it is served."""
    answer_sha256: str
    """Hash of the raw answer it came from."""
    rejected: list[RejectedFile] = Field(default_factory=list)
    """Files of the answer that were not admitted (unsafe names, binary content ...)."""
    notes: list[str] = Field(default_factory=list)
    """What extraction had to assume (e.g. a truncated answer)."""

    @model_validator(mode="after")
    def _entrypoint_exists(self) -> Artifact:
        if self.entrypoint not in self.files:
            raise ValueError(f"entrypoint {self.entrypoint!r} is not among the artifact's files")
        return self


# -------------------------------------------------------------------------------- evidence


class EvidenceFile(_Record):
    """One file of an evidence bundle."""

    path: str
    """Path relative to the bundle."""
    sha256: str
    """Hex digest of the content."""
    size: int
    """Size in bytes."""


class CapHit(_Record):
    """A limit on the evidence that the run reached: what was cut, so a reader knows the evidence is bounded there."""

    what: str
    """The capped thing (``screencast_fps``, ``screencast_bytes``, ``video_bitrate``, ``dom_snapshot``,
    ``bundle_size`` ...)."""
    limit: str
    """The limit, with its unit."""
    detail: str
    """What was dropped or cut, for a person."""


class ToolVersions(_Record):
    """Versions of everything that shaped the evidence."""

    evalgrid: str
    """evalgrid's package version."""
    collector: str
    """Version of the evidence collector (part of the evidence key)."""
    browser: str
    """Browser name and version."""
    playwright: str
    """Playwright version."""
    ffmpeg: str
    """ffmpeg version used to encode the screen video."""
    sandbox: str
    """Sandbox backend and image digest (``local`` when no container is used)."""


class BuildReport(_Record):
    """The offline build of a component or project answer, run in the sandbox before it is served."""

    ok: bool
    """Whether the build produced a page to serve."""
    stack: Stack
    """What was built."""
    entry: str
    """The answer's file the build started from (a component to mount, or a project's ``index.html``)."""
    seconds: float = Field(ge=0)
    """Wall time of the build."""
    exit_code: int
    """The build process's exit code (``-1`` when it was killed or could not start)."""
    timed_out: bool = False
    """The build outlived its time limit and was killed."""
    log_file: str = "build.log"
    """The build log in the bundle: what a developer's terminal would show (the judge's dev-server output)."""


class MirroredPackage(_Record):
    """One library the sandbox's offline CDN mirror holds."""

    name: str
    version: str
    family: str | None = None
    """The Google Fonts family it answers for (``@fontsource`` packages)."""


class WebEnvironment(_Record):
    """The frozen web the page ran in: what its CDN requests could get, and how rendering was pinned."""

    mirror: list[MirroredPackage] = Field(default_factory=list)
    """Libraries the offline CDN mirror answered from; empty without a mirror (every external request blocked)."""
    locale: str
    timezone: str
    start_time: str
    """The page clock's start (ISO 8601): every run begins at the same instant."""
    random_seed: int
    """``Math.random`` is a seeded generator, reset for every document."""


class AppFailure(StrEnum):
    """How an app can stop a run before its evidence is complete: each is the app's failure, scored."""

    HANG = "hang"
    """The page's main thread stopped answering while the browser still did."""
    CRASH = "crash"
    """Every attempt with the artifact failed its sandbox, and a control page passed on a fresh one between them."""
    TAMPER = "tamper"
    """Something in the app's sandbox answered in the machinery's place: a refused control reply, or page facts the
    page rewrote (:class:`~evaluator.errors.TamperError`)."""


class HangProbe(_Record):
    """What the hang probe saw when a run hit its time limit: whose the timeout is."""

    browser_answered: bool
    """The browser answered the DevTools protocol (``Browser.getVersion``) in time."""
    control_answered: bool
    """A new blank page in a new context of the same browser ran a script in time."""
    busy_pages: list[str] = Field(default_factory=list)
    """URLs of the run's pages whose main thread did not run ``1`` in time."""
    answering_pages: list[str] = Field(default_factory=list)
    """URLs of the run's pages that did."""
    timeout_s: float = Field(ge=0.0)
    """How long each check could take."""
    detail: str = ""
    """What failed, for a person."""

    @property
    def app_hung(self) -> bool:
        """Only a busy page beside a healthy browser is the app's hang; anything else is the machinery's."""
        return self.browser_answered and self.control_answered and bool(self.busy_pages)


class IncompleteEvidence(_Record):
    """Why a committed bundle stops short of the end: the app hung or crashed the run. It holds what came before."""

    failure: AppFailure
    """The app's failure that stopped the collection."""
    phase: str
    """What was under way (``load``, ``mobile``, ``interaction`` ...)."""
    detail: str
    """What happened, for a person."""
    steps: int = Field(default=0, ge=0)
    """Interaction steps recorded before it."""
    last_screenshot: str | None = None
    """The last screenshot taken before it (a bundle file), when there is one."""
    probe: HangProbe | None = None
    """The hang probe's findings (hangs only)."""


class EvidenceManifest(_Record):
    """Index of a committed evidence bundle; written last. Complete unless ``incomplete`` says why not."""

    version: int = MANIFEST_VERSION
    """Format version (see :data:`MANIFEST_VERSION`)."""
    evidence_key: str
    """Content key: hash of artifact key, agent config, sandbox image and collector version."""
    artifact_key: str
    """The artifact the evidence is about."""
    agent: AgentConfig
    """How the app was explored."""
    tools: ToolVersions
    """Versions of the tools used."""
    files: list[EvidenceFile]
    """Every file of the bundle with its hash."""
    timings: dict[str, float]
    """Seconds spent per phase (``static``, ``interaction``, ``encode`` ...)."""
    created_at: str
    """UTC time the bundle was committed (ISO 8601)."""
    build: BuildReport | None = None
    """The build of a component or project answer; ``None`` for answers served as they are."""
    web: WebEnvironment | None = None
    """The frozen web environment of the run."""
    incomplete: IncompleteEvidence | None = None
    """Set when the app hung or crashed the run: the bundle holds the evidence up to that point (version 2)."""
    caps: list[CapHit] = Field(default_factory=list)
    """The limits on the evidence the run reached (version 3; older manifests record none)."""


# --------------------------------------------------------------------------------- verdict


class Dimension(StrEnum):
    """The two verdicts Cookie-Frame issues."""

    FUNCTIONAL = "functional"
    AESTHETIC = "aesthetic"


class Severity(StrEnum):
    """Severity of a failure, mapped to a deduction by the judge's rubric."""

    CRITICAL = "critical"
    MAJOR = "major"
    MINOR = "minor"


class EvidenceRef(_Record):
    """Where in the evidence a claim can be checked."""

    file: str | None = None
    """A bundle file (screenshot, log ...)."""
    step: int | None = Field(default=None, ge=0)
    """Interaction step number."""
    video_time_s: float | None = Field(default=None, ge=0.0)
    """Time in the screen video, in seconds."""
    detail: str | None = None
    """What to look at there (selector, message ...)."""

    @model_validator(mode="after")
    def _points_somewhere(self) -> EvidenceRef:
        if self.file is None and self.step is None and self.video_time_s is None:
            raise ValueError("an evidence reference needs a file, a step or a video time")
        return self


class FailureAttribution(_Record):
    """One deduction with its cause and its evidence."""

    category: str
    """Failure category from the judge's rubric (e.g. ``dead_control``)."""
    dimension: Dimension
    """Which verdict it lowers."""
    severity: Severity
    """Severity, mapped to the deduction."""
    deduction: float = Field(ge=0.0, le=8.0)
    """Points taken off the dimension's score."""
    description: str
    """What went wrong, in one sentence."""
    evidence: list[EvidenceRef] = Field(min_length=1)
    """Where to see it."""


class CriterionReason(_Record):
    """A judge's reasoning on one criterion."""

    criterion: str
    """The criterion (e.g. ``baseline``, ``console_errors``)."""
    dimension: Dimension
    """Which verdict it belongs to."""
    reason: str
    """The reasoning, with the arithmetic where there is any."""


class JudgeInfo(_Record):
    """Identity of the judge that issued a verdict."""

    name: str
    """Registered judge name."""
    kind: Literal["heuristic", "llm"]
    """Heuristic judges measure; LLM judges read and reason."""
    rubric_version: str
    """Version of the rubric or prompt set used."""
    model_id: str | None = None
    """Exact model id for LLM judges."""


class Verdict(_Record):
    """Functional and aesthetic verdicts on Cookie-Frame's 0.0-8.0 scale."""

    version: int = SCHEMA_VERSION
    """Format version."""
    verdict_key: str
    """Content key: hash of evidence key and judge config."""
    evidence_key: str
    """The evidence judged."""
    judge: JudgeInfo
    """Who judged."""
    functional: Score
    """Functional score, 0.0-8.0."""
    aesthetic: Score
    """Aesthetic score, 0.0-8.0."""
    functional_reason: str
    """Step-by-step reasoning for the functional score."""
    aesthetic_reason: str
    """Step-by-step reasoning for the aesthetic score."""
    criteria: list[CriterionReason] = Field(default_factory=list)
    """Per-criterion reasons."""
    attributions: list[FailureAttribution] = Field(default_factory=list)
    """Every deduction with its evidence."""
    flags: list[str] = Field(default_factory=list)
    """Things a person should look at, e.g. ``prompt_injection`` (the app addressed the evaluator)."""
    label: str
    """Human-readable label shown wherever the verdict is shown (says ``heuristic`` when it is)."""



# -------------------------------------------------------------------------- pairwise and UX


class Preference(StrEnum):
    """A pairwise judge's choice between the app shown first and the app shown second."""

    FIRST = "first"
    SECOND = "second"
    TIE = "tie"


class PairChoice(_Record):
    """One dimension of a pairwise verdict: which app is better, why, and where to see it in each bundle."""

    dimension: Dimension
    """Functional or aesthetic."""
    choice: Preference
    """The app shown first, the app shown second, or neither."""
    reason: str
    """Why, in a sentence or two."""
    first_evidence: list[EvidenceRef] = Field(min_length=1)
    """Where the claim can be checked in the bundle shown first."""
    second_evidence: list[EvidenceRef] = Field(min_length=1)
    """Where the claim can be checked in the bundle shown second."""


class PairwiseVerdict(_Record):
    """A judge's comparison of two evidence bundles of one query, shown in one order."""

    version: int = SCHEMA_VERSION
    """Format version."""
    pairwise_key: str
    """Content key: both bundles, their order, the judge and its version."""
    first: str
    """Evidence key of the bundle shown first."""
    second: str
    """Evidence key of the bundle shown second."""
    judge: JudgeInfo
    """Who judged."""
    choices: list[PairChoice] = Field(default_factory=list)
    """At most one per dimension; a dimension is missing when its choice was dropped."""
    dropped: list[str] = Field(default_factory=list)
    """Choices dropped because they cited no usable evidence even after one repair request, each with why."""
    fitted: list[str] = Field(default_factory=list)
    """What the request left out to fit the judge server's limits (images), in words; empty when nothing was."""
    label: str
    """Human-readable judge label."""

    def choice(self, dimension: Dimension) -> Preference | None:
        """The choice on ``dimension``, or ``None`` when it was dropped."""
        return next((c.choice for c in self.choices if c.dimension is dimension), None)


class UxDimension(StrEnum):
    """UXBench's seven dimensions of a UX report."""

    GOAL_STATE_CLARITY = "goal_state_clarity"
    NAVIGATION_SCENT = "navigation_scent"
    ACTION_FEEDBACK = "action_feedback"
    FLOW_EFFICIENCY = "flow_efficiency"
    ERROR_RECOVERY = "error_recovery"
    TRUST_TRANSPARENCY = "trust_transparency"
    SCANABILITY_ACCESSIBILITY = "scanability_accessibility"


UxScore = Annotated[int, Field(ge=1, le=5)]


class UxFinding(_Record):
    """One UX problem a report names, with its evidence and a concrete change that would fix it."""

    dimension: UxDimension
    """Which UX dimension it hurts."""
    severity: Severity
    """How much it hurts."""
    description: str
    """What is wrong, as a user meets it."""
    evidence: list[EvidenceRef] = Field(min_length=1)
    """Where it shows in the trace (step, video time) or the files."""
    suggestion: str
    """The change that would fix it, concrete enough for a developer to make."""


class UxReport(_Record):
    """An evidence-grounded UX report on one bundle (``ux-v1``), stored beside the verdict, not inside it."""

    version: int = SCHEMA_VERSION
    """Format version."""
    report_key: str
    """Content key: the evidence judged, the judge and its version."""
    evidence_key: str
    """The evidence judged."""
    judge: JudgeInfo
    """Who wrote it."""
    scores: dict[UxDimension, UxScore]
    """Each of the seven dimensions, 1 (broken) to 5 (exemplary)."""
    findings: list[UxFinding] = Field(default_factory=list)
    """The problems found, each with evidence and a suggested change."""
    dropped: int = Field(default=0, ge=0)
    """Findings dropped because they cited no usable evidence even after one repair request."""
    flags: list[str] = Field(default_factory=list)
    """Things a person should look at, e.g. ``prompt_injection`` (the app addressed the evaluator)."""
    label: str
    """Human-readable judge label."""

    @field_validator("scores")
    @classmethod
    def _all_seven(cls, scores: dict[UxDimension, int]) -> dict[UxDimension, int]:
        missing = [d.value for d in UxDimension if d not in scores]
        if missing:
            raise ValueError(f"a UX report scores all seven dimensions; missing: {', '.join(missing)}")
        return scores


# --------------------------------------------------------------------------------- outcome


class OutcomeStatus(StrEnum):
    """How a run ended; every run ends with exactly one."""

    JUDGED = "judged"
    """Scored: a verdict, or the failure policy's for an app that hung or crashed (reason ``app_hang`` /
    ``app_crash``, functional 0)."""
    NON_ASSESSABLE = "non_assessable"
    """The answer held nothing runnable: scored 0.0 on both dimensions."""
    INFRA_ERROR = "infra_error"
    """The machinery failed: excluded from the means and counted."""
    TIMEOUT = "timeout"
    """The run hit its time limit and the hang probe did not find the app's page busy: the machinery's, excluded."""
    DEFERRED = "deferred"
    """Not final: the sweep's budget was reached first. Never recorded; the next invocation redoes the run."""


class ReasonCode(StrEnum):
    """Classified reason behind an outcome."""

    OK = "ok"
    MISSING_ANSWER = "missing_answer"
    NO_CODE = "no_code"
    BINARY_ANSWER = "binary_answer"
    TOO_LARGE = "too_large"
    UNSAFE_FILES_ONLY = "unsafe_files_only"
    UNSUPPORTED_STACK = "unsupported_stack"
    BUILD_FAILED = "build_failed"
    BUILD_UNAVAILABLE = "build_unavailable"
    BROWSER_UNAVAILABLE = "browser_unavailable"
    BROWSER_CRASHED = "browser_crashed"
    ENCODER_FAILED = "encoder_failed"
    RUN_TIMEOUT = "run_timeout"
    APP_HANG = "app_hang"
    APP_CRASH = "app_crash"
    APP_TAMPER = "app_tamper"
    WORKER_DIED = "worker_died"
    SANDBOX_FAILED = "sandbox_failed"
    STORE_FAILED = "store_failed"
    MODEL_REFUSED = "model_refused"
    MODEL_UNAVAILABLE = "model_unavailable"
    MODEL_REQUEST_REFUSED = "model_request_refused"
    JUDGE_OUTPUT_INVALID = "judge_output_invalid"
    JUDGE_REFUSED = "judge_refused"
    JUDGE_REQUEST_TOO_LARGE = "judge_request_too_large"
    BUDGET_EXHAUSTED = "budget_exhausted"
    INTERNAL_ERROR = "internal_error"


class OutcomeReason(_Record):
    """A classified reason with the details a person needs."""

    code: ReasonCode
    """Machine-readable class."""
    detail: str = ""
    """What happened, for a person."""


class ModelUsage(_Record):
    """Model calls of one run (or summed over runs) for one role, endpoint and model."""

    role: str
    """``generation``, ``agent``, ``judge`` or ``repair``."""
    endpoint: str
    """The endpoint's name in the sweep file."""
    model: str
    """The exact model id the endpoint reported."""
    calls: int = 0
    """Calls made (cached ones included)."""
    cached_calls: int = 0
    """Calls answered from the response cache (not paid again)."""
    prompt_tokens: int = 0
    """Prompt tokens."""
    completion_tokens: int = 0
    """Completion tokens."""
    cost_usd: float = 0.0
    """US dollars, at the endpoint's prices, of every call (cached ones at what they cost when made)."""


class PanelVerdict(_Record):
    """One more judge's verdict on a run's evidence."""

    judge_label: str
    """The verdict's label."""
    verdict_key: str
    """The verdict file."""
    functional: Score
    """Its functional score."""
    aesthetic: Score
    """Its aesthetic score."""


class PreviewUse(_Record):
    """How an agentic candidate used the preview tool in one run (``generate: {mode: agentic}``)."""

    rounds: int = Field(ge=0)
    """Previews it asked for (0: it never called the tool)."""
    first: Literal["ok", "errors"] | None = None
    """What its first preview reported (None: it never called the tool, or the preview did not run)."""
    final_clean: bool | None = None
    """Whether its final answer previews clean (None: never previewed)."""


class Outcome(_Record):
    """The single recorded result of one run (candidate × query × agent × judge)."""

    version: int = SCHEMA_VERSION
    """Format version."""
    run_key: str
    """Content key of the run."""
    candidate_id: str
    """Candidate evaluated."""
    query_id: str
    """Query answered."""
    status: OutcomeStatus
    """How the run ended."""
    reason: OutcomeReason
    """Why."""
    attempts: int = Field(ge=1)
    """How many attempts it took."""
    artifact_key: str | None = None
    """Artifact produced, if any."""
    evidence_key: str | None = None
    """Evidence collected, if any."""
    verdict_key: str | None = None
    """Verdict issued, if any."""
    functional: Score | None = None
    """Functional score when judged."""
    aesthetic: Score | None = None
    """Aesthetic score when judged."""
    judge_label: str | None = None
    """The verdict's label (says ``heuristic`` for heuristic judges)."""
    variant: str | None = None
    """Prompt variant of the answer, when the sweep has variants."""
    sample: int = 0
    """Sample number within its (candidate, query, variant) cell."""
    panel: list[PanelVerdict] = Field(default_factory=list)
    """Verdicts of the sweep's other judges on the same evidence."""
    disagreement: dict[str, float] = Field(default_factory=dict)
    """Largest difference between any two judges' scores, per dimension (with a panel)."""
    flags: list[str] = Field(default_factory=list)
    """Flags of the verdicts (e.g. ``prompt_injection``)."""
    usage: list[ModelUsage] = Field(default_factory=list)
    """Model calls the run made, per role and model (empty for replay and heuristic runs)."""
    preview: PreviewUse | None = None
    """An agentic candidate's use of the preview tool (None for any other candidate)."""
    duration_s: float = Field(ge=0.0)
    """Wall time of the run."""
    finished_at: str
    """UTC time the outcome was recorded (ISO 8601)."""


class RunSpec(_Identity):
    """Everything one run depends on: candidate × query under an agent and a judge."""

    run_key: str
    """Content key of the run (candidate, query, agent, judge, collector version)."""
    candidate: Candidate
    """The model evaluated."""
    query: Query
    """The task."""
    agent: AgentConfig
    """How the app is explored."""
    judge: JudgeConfig
    """Who scores it."""
    answers_dir: str | None = None
    """Absolute directory the replay provider reads this candidate's answers from."""
    panel: tuple[JudgeConfig, ...] = ()
    """More judges of the same evidence (their verdicts are stored; ``judge`` gives the outcome's scores)."""
    variant: str | None = None
    """Prompt variant the answer was generated under (``unguided``, ``little_guidance`` ...)."""
    sample: int = Field(default=0, ge=0)
    """Which of the n samples of its (candidate, query, variant) cell this run is."""
