"""One run, end to end: answer → artifact → evidence → verdict → one :class:`Outcome`.

Each stage's output is stored under its content key and reused when present, so a re-run pays
only for what is missing and ``rejudge`` never needs a browser. Failures of the app or the answer
are outcomes; only infrastructure failures raise.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NamedTuple

from playwright.async_api import Browser

from evaluator.answer.agentic import generate_agentic, rounds_digest
from evaluator.answer.extract import NotAssessable, extract_app
from evaluator.answer.generate import KeptPreviewRound, answer_digest, generate, read_answer
from evaluator.atomic import write_json_atomic
from evaluator.browser.app_host import LOOPBACK, AppHost
from evaluator.browser.context_pool import ContextPool
from evaluator.clock import utc_now
from evaluator.errors import (
    BuildUnavailableError,
    EncoderUnavailableError,
    JudgeOutputError,
    ModelRequestError,
    RequestTooLargeError,
    UnreadableEvidenceError,
)
from evaluator.evidence.bundle import BundleFile, EvidenceBundle, read_manifest
from evaluator.evidence.collect import EvidenceCollection
from evaluator.failures import app_failure_code, classify
from evaluator.judges import create_judge
from evaluator.judges.failure_policy import policy_version, score_app_failure, score_unreadable_bundle
from evaluator.judges.llm_judge import INJECTION_FLAG
from evaluator.keys import COLLECTOR_VERSION, content_key, run_key, sha256_bytes
from evaluator.llm.client import ModelAccess
from evaluator.models import (
    AgentConfig,
    Artifact,
    Candidate,
    EvidenceManifest,
    JudgeConfig,
    Outcome,
    OutcomeReason,
    OutcomeStatus,
    PanelVerdict,
    PreviewUse,
    Query,
    ReasonCode,
    RunSpec,
    Verdict,
)
from evaluator.preview.preview import AppPreviewer
from evaluator.progress import RunProgress
from evaluator.stages import StagePaths

FALLBACK_JUDGE = JudgeConfig(name="heuristic")
"""Scores a run whose model judge refused or answered unusably: it reads measured evidence only, no page text."""
def make_run_spec(
    *, candidate: Candidate, query: Query, agent: AgentConfig, judge: JudgeConfig, judge_version: str,
    answers_dir: Path | None, panel: tuple[tuple[JudgeConfig, str], ...] = (), cell: tuple[str | None, int] = (None, 0),
) -> RunSpec:
    """A run with its content key (candidate, query, agent, judges and their versions, collector version, and a
    replayed answer's digest).

    ``judge_version`` is ``create_judge(judge).version`` (and ``panel`` pairs each further judge with
    its version), computed once per sweep by the caller. ``cell`` is the run's prompt variant and sample
    number (a sweep's ``(variant, sample)``).
    """
    variant, sample = cell
    replayed = (answer_digest(answers_dir, query.id),) if candidate.provider == "replay" and answers_dir else ()
    key = run_key(candidate, query, agent, judge, judge_version, panel=panel, cell=cell, replayed=replayed)
    return RunSpec(run_key=key, candidate=candidate, query=query, agent=agent, judge=judge,
                   answers_dir=str(answers_dir) if answers_dir is not None else None,
                   panel=tuple(config for config, _ in panel), variant=variant, sample=sample)


async def execute_run(spec: RunSpec, *, browser: Browser, paths: StagePaths, attempt: int = 1,
                      host: AppHost = LOOPBACK, models: ModelAccess | None = None,
                      contexts: ContextPool | None = None, progress: RunProgress | None = None) -> Outcome:
    """Run every missing stage of ``spec`` and return its outcome.

    ``host`` serves the app beside ``browser``; its label is part of the evidence key, so evidence
    collected in a sandbox is never confused with evidence collected on loopback. ``models`` is
    what generation, an LLM agent and LLM judges may call; the outcome carries what they used.
    ``contexts``: a pool on ``browser`` that makes the run's browser contexts ahead (see
    :class:`~evaluator.evidence.collect.EvidenceCollection`). ``progress`` says when the answer was ready and is
    filled by the evidence collection (for a worker that times the run, or abandons it). A bundle the app cut short
    (a hang or crash its worker committed) is scored by the failure policy: ``judged`` with reason ``app_hang`` /
    ``app_crash`` and functional 0.

    A failure that another attempt would meet again (a model endpoint that refuses the request, a host that cannot
    encode video or build) is an ``infra_error`` outcome. Raises :class:`~evaluator.errors.InfrastructureError`
    when the sandbox or its browser fails (the caller decides on retries) and
    :class:`~evaluator.errors.BudgetExhaustedError` when the sweep's budget stops a call (the caller defers the
    run); :func:`~evaluator.failures.classify` says what each stands for.
    """
    run = _Run(spec, paths, attempt=attempt, models=models)
    notes: list[str] = []
    raw = await run.answer(notes, previewer=AppPreviewer(browser, host=host))
    if progress is not None:
        progress.answered_at = time.monotonic()
    if isinstance(raw, Outcome):
        return raw
    artifact = run.artifact(raw, notes)
    if isinstance(artifact, Outcome):
        return artifact
    evidence = await run.evidence(artifact, browser=browser, host=host, contexts=contexts, progress=progress)
    if isinstance(evidence, Outcome):
        return evidence
    return await run.judge(*evidence)


class _Run:
    """The stages of one run; each returns the run's outcome instead of its output when the run ends there."""

    def __init__(self, spec: RunSpec, paths: StagePaths, *, attempt: int, models: ModelAccess | None) -> None:
        self._started = time.monotonic()
        self._spec, self._paths, self._attempt = spec, paths, attempt
        self._access = models.for_run() if models is not None else ModelAccess()
        self._artifact_key: str | None = None
        self._history: str | None = None
        """The digest of an agentic answer's preview rounds."""
        self._preview: PreviewUse | None = None
        self._rounds: list[KeptPreviewRound] = []
        """An agentic answer's rounds as the bundle keeps them (file names, not files)."""
        self._evidence_key: str | None = None

    def outcome(self, status: OutcomeStatus, code: ReasonCode, detail: str = "", *, verdict: Verdict | None = None,
                panel: list[Verdict] | None = None, flags: tuple[str, ...] = ()) -> Outcome:
        """The run's outcome, with the keys of the stages it reached and what it used of the models."""
        spec = self._spec
        everyone = [verdict, *(panel or [])] if verdict is not None else []
        disagreement = ({dim: round(max(getattr(v, dim) for v in everyone) - min(getattr(v, dim) for v in everyone), 3)
                         for dim in ("functional", "aesthetic")} if len(everyone) > 1 else {})
        return Outcome(
            run_key=spec.run_key, candidate_id=spec.candidate.id, query_id=spec.query.id, status=status,
            reason=OutcomeReason(code=code, detail=detail[:2000]), attempts=self._attempt,
            artifact_key=self._artifact_key, evidence_key=self._evidence_key,
            verdict_key=verdict.verdict_key if verdict else None,
            functional=verdict.functional if verdict else None, aesthetic=verdict.aesthetic if verdict else None,
            judge_label=verdict.label if verdict else None, variant=spec.variant, sample=spec.sample,
            panel=[PanelVerdict(judge_label=v.label, verdict_key=v.verdict_key, functional=v.functional,
                                aesthetic=v.aesthetic) for v in panel or []],
            disagreement=disagreement, flags=sorted({*flags, *(flag for v in everyone for flag in v.flags)}),
            usage=self._access.meter.usage(), preview=self._preview,
            duration_s=round(time.monotonic() - self._started, 3),
            finished_at=utc_now(),
        )

    def failed(self, exc: BaseException) -> Outcome:
        """The outcome a stage's exception stands for (:func:`~evaluator.failures.classify`)."""
        failure = classify(exc)
        return self.outcome(failure.status, failure.code, str(exc))

    async def answer(self, notes: list[str], *, previewer: AppPreviewer) -> bytes | Outcome:
        """The candidate's answer, replayed from its file or generated (``notes``: what the artifact should say
        about it; ``previewer``: the preview tool an agentic candidate may call)."""
        spec = self._spec
        if spec.candidate.provider == "replay":
            raw = read_answer(Path(spec.answers_dir or "."), spec.query.id)
            if raw is None:
                return self.outcome(OutcomeStatus.NON_ASSESSABLE, ReasonCode.MISSING_ANSWER,
                                    f"no answer file for {spec.query.id!r} in {spec.answers_dir}")
            return raw
        store = self._paths.root / "generations"
        try:
            if spec.candidate.generate.mode == "agentic":
                generation = await generate_agentic(spec.candidate, spec.query, variant=spec.variant,
                                                    sample=spec.sample, models=self._access, store=store,
                                                    previewer=previewer)
            else:
                generation = await generate(spec.candidate, spec.query, variant=spec.variant, sample=spec.sample,
                                            models=self._access, store=store)
        except ModelRequestError as exc:
            return self.failed(exc)
        if generation.refusal and not generation.content.strip():
            return self.outcome(OutcomeStatus.NON_ASSESSABLE, ReasonCode.MODEL_REFUSED,
                                f"the candidate model refused: {generation.refusal[:500]}")
        if generation.finish_reason == "length":
            notes.append("the answer was cut off at max_tokens")
        if generation.answer_from_last_preview:
            notes.append("the model's final answer held no app: the files it last previewed are the answer")
        self._history = rounds_digest(generation.rounds) if generation.rounds else None
        self._rounds = [r.kept() for r in generation.rounds]
        if spec.candidate.generate.mode == "agentic":
            first = generation.rounds[0].report if generation.rounds else None
            self._preview = PreviewUse(rounds=len(generation.rounds), first=first.status if first else None,
                                       final_clean=None if generation.final_status is None else
                                       generation.final_status == "ok")
        return generation.content.encode("utf-8")

    def artifact(self, raw: bytes, notes: list[str]) -> Artifact | Outcome:
        """The app extracted from the answer, stored under its key."""
        spec = self._spec
        # An agentic answer's key covers its round history too: the same final files reached two ways differ.
        history = () if self._history is None else ({"rounds": self._history},)
        self._artifact_key = key = content_key("artifact", spec.candidate.id, spec.candidate.params, spec.query,
                                               sha256_bytes(raw), *history)
        extracted = extract_app(raw)
        if isinstance(extracted, NotAssessable):
            return self.outcome(OutcomeStatus.NON_ASSESSABLE, extracted.code, extracted.detail)
        artifact = Artifact(
            key=key, candidate_id=spec.candidate.id, query_id=spec.query.id, files=extracted.files,
            entrypoint=extracted.entrypoint, stack=extracted.stack, answer_sha256=sha256_bytes(raw),
            rejected=extracted.rejected, notes=[*extracted.notes, *notes],
        )
        artifact_path = self._paths.artifact(key)
        if not artifact_path.exists():
            artifact_path.parent.mkdir(parents=True, exist_ok=True)
            write_json_atomic(artifact_path, artifact)
        return artifact

    async def evidence(self, artifact: Artifact, *, browser: Browser, host: AppHost, contexts: ContextPool | None,
                       progress: RunProgress | None) -> tuple[str, EvidenceManifest] | Outcome:
        """The evidence key and the committed bundle's manifest, collected unless stored; the outcome instead when
        the collection could not run or the app did not build."""
        self._evidence_key = key = content_key("evidence", artifact.key, self._spec.agent, host.label,
                                               COLLECTOR_VERSION)
        bundle_dir = self._paths.evidence(key)
        manifest = read_manifest(bundle_dir)
        if manifest is None:
            shutil.rmtree(bundle_dir, ignore_errors=True)  # a partial bundle from a crashed attempt
            try:
                collection = EvidenceCollection(_pool_on(browser, contexts), bundle_dir, artifact=artifact,
                                                query=self._spec.query, agent=self._spec.agent, evidence_key=key,
                                                host=host, models=self._access)
                collection.keep_preview_rounds(self._rounds)
                manifest = await collection.run(progress)
            except (EncoderUnavailableError, BuildUnavailableError) as exc:
                return self.failed(exc)  # the host cannot record or build: a fresh sandbox would not either
        if manifest.build is not None and not manifest.build.ok:
            # The answer does not build offline against the sandbox's packages: the model's failure, with its log.
            log_tail = (bundle_dir / manifest.build.log_file).read_text(encoding="utf-8", errors="replace")[-1500:]
            return self.outcome(OutcomeStatus.NON_ASSESSABLE, ReasonCode.BUILD_FAILED,
                                f"the {manifest.build.stack} build failed; its log ends:\n{log_tail}")
        return key, manifest

    async def judge(self, evidence_key: str, manifest: EvidenceManifest) -> Outcome:
        """The verdicts of the run's judge and panel on the evidence: the run's outcome."""
        spec, bundle_dir = self._spec, self._paths.evidence(evidence_key)
        verdicts: list[Verdict] = []
        flags: list[str] = evidence_flags(bundle_dir)
        code, detail = ReasonCode.OK, ""
        for config in (spec.judge, *spec.panel):
            try:
                judged = await judge_or_fall_back(config, evidence_key, manifest, bundle_dir, self._paths,
                                                  self._access)
            except ModelRequestError as exc:
                return self.failed(exc)
            flags += judged.flags
            if judged.fallback is None:
                verdicts.append(judged.verdict)
            elif config is spec.judge:  # a panel judge that could not judge just leaves the panel
                code, detail = judged.fallback
                verdicts.append(judged.verdict)
        if manifest.incomplete is not None:
            cut = manifest.incomplete
            code = app_failure_code(cut.failure)
            detail = (f"the app's {cut.failure.value} during {cut.phase}: {cut.detail}"
                      + (f"\n{detail}" if detail else ""))
        return self.outcome(OutcomeStatus.JUDGED, code, detail, verdict=verdicts[0], panel=verdicts[1:],
                            flags=tuple(flags))


def _pool_on(browser: Browser, contexts: ContextPool | None) -> ContextPool:
    if contexts is None:
        return ContextPool(browser)
    if contexts.browser is not browser:
        raise ValueError("execute_run: the context pool belongs to another browser; pass the pool made on it")
    return contexts


# What a judge raises on a committed bundle that holds what it cannot read: facts the app's page returned malformed
# (the collector validates the page facts, but a judge reads more than those, and older collectors stored them
# unchecked), or a file that is not its record. The bundle's only untrusted content is the app's, and a bug of a
# judge's own would show on honest apps too.
_UNREADABLE = (UnreadableEvidenceError, KeyError, TypeError, ValueError, IndexError, AttributeError)


class Judged(NamedTuple):
    """A judge's verdict on stored evidence, or, when the judge could not give one, the fallback judge's or the
    failure policy's."""

    verdict: Verdict
    flags: list[str]
    """``judge_refused`` / ``judge_invalid`` / ``judge_request_too_large`` and ``judge_fallback`` when the fallback
    judged."""
    fallback: tuple[ReasonCode, str] | None
    """Why another gave the verdict (reason code and detail), or ``None``."""


async def judge_or_fall_back(config: JudgeConfig, evidence_key: str, manifest: EvidenceManifest, bundle_dir: Path,
                             paths: StagePaths, models: ModelAccess) -> Judged:
    """:func:`judge_stored_evidence`, and when the judge refuses, answers unusably or sends its server a request too
    large for it, :data:`FALLBACK_JUDGE`'s verdict; when a judge cannot read what the bundle holds, the failure
    policy's (``app_tamper``).

    A page can make a model judge refuse or ramble on purpose, or return facts that break a judge; neither may let
    it go unscored (excluded as an infrastructure error, which a retry on the same stored evidence meets again).
    The fallback reads measured evidence only, no page text. Raises :class:`~evaluator.errors.ModelRequestError`
    (the endpoint refused the request itself: the machinery's).
    """
    try:
        try:
            verdict = await judge_stored_evidence(config, evidence_key, manifest, bundle_dir, paths, models)
            return Judged(verdict, [], None)
        except (JudgeOutputError, RequestTooLargeError) as exc:
            # A request too large for the judge's server is the judge's failure on this run, like an unusable
            # answer: the same evidence would be refused again, and the app must not go unscored.
            code, flag = ((ReasonCode.JUDGE_REQUEST_TOO_LARGE, "judge_request_too_large")
                          if isinstance(exc, RequestTooLargeError) else
                          (ReasonCode.JUDGE_REFUSED if exc.code == "refused" else ReasonCode.JUDGE_OUTPUT_INVALID,
                           f"judge_{exc.code}"))
            verdict = await judge_stored_evidence(FALLBACK_JUDGE, evidence_key, manifest, bundle_dir, paths, models)
            return Judged(verdict, [flag, "judge_fallback"],
                          (code, f"judge {config.name}: {exc}; scored by the {FALLBACK_JUDGE.name} judge on the same "
                                 "evidence"))
    except _UNREADABLE as exc:
        detail = f"judge {config.name} could not read the evidence: {type(exc).__name__}: {str(exc)[:300]}"
        verdict_key = content_key("verdict", evidence_key, config, "unreadable", policy_version())
        verdict = score_unreadable_bundle(evidence_key=evidence_key, verdict_key=verdict_key, detail=detail)
        verdict_path = paths.verdict(verdict_key)
        verdict_path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(verdict_path, verdict)
        return Judged(verdict, [], (ReasonCode.APP_TAMPER, detail))


def evidence_flags(bundle_dir: Path) -> list[str]:
    """Flags the evidence itself raises, whichever judge scores it (the heuristic one reads no page text)."""
    return [INJECTION_FLAG] if (bundle_dir / BundleFile.INJECTION).is_file() else []


async def judge_stored_evidence(config: JudgeConfig, evidence_key: str, manifest: EvidenceManifest,
                                bundle_dir: Path, paths: StagePaths, models: ModelAccess) -> Verdict:
    """One judge's verdict on a committed bundle: :func:`judge_evidence` for a complete one, the failure
    policy's (functional 0, aesthetic from Static Perception) for one the app cut short by a hang or crash."""
    if manifest.incomplete is None:
        return await judge_evidence(config, evidence_key, bundle_dir, paths, models)
    judge = create_judge(config)
    verdict_key = content_key("verdict", evidence_key, config, judge.version, policy_version())

    async def scored() -> Verdict:
        bundle = EvidenceBundle(bundle_dir, allow_incomplete=True)
        return score_app_failure(await judge(bundle, verdict_key=verdict_key, models=models), bundle,
                                 verdict_key=verdict_key)

    return await _stored_or_made(paths.verdict(verdict_key), scored)


async def judge_evidence(config: JudgeConfig, evidence_key: str, bundle_dir: Path, paths: StagePaths,
                  models: ModelAccess) -> Verdict:
    """One judge's verdict on the evidence, stored under its key (and reused when stored)."""
    judge = create_judge(config)
    verdict_key = content_key("verdict", evidence_key, config, judge.version)

    async def judged() -> Verdict:
        return await judge(EvidenceBundle(bundle_dir), verdict_key=verdict_key, models=models)

    return await _stored_or_made(paths.verdict(verdict_key), judged)


async def _stored_or_made(path: Path, make: Callable[[], Awaitable[Verdict]]) -> Verdict:
    """The verdict stored at ``path``; else ``make``'s, stored there."""
    if path.exists():
        return Verdict.model_validate_json(path.read_text(encoding="utf-8"))
    verdict = await make()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, verdict)
    return verdict


def failed_outcome(spec: RunSpec, status: OutcomeStatus, code: ReasonCode, detail: str, *,
                   attempts: int, duration_s: float) -> Outcome:
    """The outcome of a run that ended without a verdict for a reason outside the app (timeout, infra)."""
    return Outcome(
        run_key=spec.run_key, candidate_id=spec.candidate.id, query_id=spec.query.id, status=status,
        reason=OutcomeReason(code=code, detail=detail[:2000]), attempts=attempts,
        duration_s=round(duration_s, 3), finished_at=utc_now(),
    )
