"""The repair-lift stage (``evalgrid repair-lift``): is a judge's UX report actionable?

For every judged run of the chosen candidates in a run directory:

1. the judge being measured writes a UX report on the stored bundle (``ux-v1``: seven dimensions,
   findings with evidence and a suggested change), stored under ``ux-reports/<key>.json``;
2. a fixed repairer gets the app's files, the report and the invariants and returns edited files,
   cached under ``repairs/<key>.md`` (keyed by the report, the files and the repairer);
3. the repaired apps become replayed answers of a sweep of their own (``repair-lift/<judge>/run``):
   perception, interaction and the sweep's judge, the full regime, resumable like any sweep;
4. a fixed evaluator writes a UX report on the original and on the repaired bundle; with the sweep's
   functional and aesthetic scores of both, that gives the lift per dimension.

Reports and repairs are content-addressed, so a second invocation pays only for what changed, and
the budget cap stops paid calls (the fixtures it did not reach are counted as deferred).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cluster.pairwise.pairs import first_cells, unusable
from cluster.reduce.reducer import RunDirectory, open_run_directory
from cluster.repair.summary import FixtureLift, RepairLiftSummary, dimension_lifts
from cluster.scheduling.judge_pool import resolve_pools_outside_ray
from cluster.scheduling.runner import run_sweep
from cluster.store.layout import RunFile
from cluster.sweep.spec import Sweep, read_sweep_record, recorded_endpoints
from evaluator import (
    BudgetExhaustedError,
    Candidate,
    ConfigError,
    EvidenceError,
    JudgeConfig,
    JudgeOutputError,
    ModelRequestError,
    Outcome,
    OutcomeStatus,
    StagePaths,
    UxReport,
    content_key,
    judge_dir_name,
    sha256_bytes,
    write_json_atomic,
)
from evaluator.answer import Repairer, RepairOptions, bundle_sources, files_digest, repair_key
from evaluator.evidence import EvidenceBundle, read_manifest
from evaluator.judges import UxJudge, UxJudgeOptions, ux_report_key
from evaluator.llm import Endpoint, ModelAccess, ResponseCache, SpendingCap


@dataclass(frozen=True)
class LiftOptions:
    """The three models of a repair-lift and what to repair."""

    judge: UxJudgeOptions
    """The judge being measured: it writes the reports the repairer acts on."""
    repairer: RepairOptions
    """The fixed repairer."""
    evaluator: UxJudgeOptions
    """The fixed evaluator of the seven UX dimensions, before and after."""
    candidates: Sequence[str] = ()
    """Whose apps to repair (default: every candidate's)."""
    concurrency: int = 2
    """Model calls in flight at once."""


@dataclass
class LiftResult:
    """What a repair-lift did."""

    summary: RepairLiftSummary
    out_dir: Path


@dataclass
class _Fixture:
    """One original run on its way through the stage."""

    outcome: Outcome
    bundle: EvidenceBundle
    status: str = "pending"
    detail: str | None = None
    report: UxReport | None = None
    before: UxReport | None = None
    answer_key: str | None = None


@dataclass
class _Stage:
    run_dir: Path
    options: LiftOptions
    models: ModelAccess
    judge: UxJudge
    evaluator: UxJudge
    repairer: Repairer
    slots: asyncio.Semaphore
    budget: SpendingCap | None = None
    skipped: dict[str, int] = field(default_factory=dict)
    progress: Callable[[str], None] | None = None


async def repair_lift(run_dir: Path, options: LiftOptions, *, endpoints: dict[str, Endpoint] | None = None,
                      budget: SpendingCap | None = None, on_progress: Callable[[str], None] | None = None
                      ) -> LiftResult:
    """Measure the repair lift of ``options.judge``'s reports on ``run_dir``'s judged runs (see the module docstring).

    Raises :class:`ConfigError` when ``run_dir`` is not a run directory or a candidate is unknown.
    """
    run_dir = run_dir.resolve()  # the repaired sweep's answers are found from its own folder
    directory = open_run_directory(run_dir)
    unknown = [c for c in options.candidates if c not in directory.candidates]
    if unknown:
        raise ConfigError(f"not a candidate of this sweep: {', '.join(unknown)} "
                          f"(candidates: {', '.join(directory.candidates)})")
    endpoints = await asyncio.to_thread(resolve_pools_outside_ray,
                                        recorded_endpoints(run_dir) if endpoints is None else endpoints)
    stage = _Stage(run_dir, options, ModelAccess(endpoints=endpoints, budget=budget,
                                                 cache=ResponseCache(run_dir / "cache" / "chat")),
                   UxJudge(options.judge), UxJudge(options.evaluator), Repairer(options.repairer),
                   asyncio.Semaphore(max(1, options.concurrency)), budget=budget, progress=on_progress)
    fixtures = _fixtures(directory, StagePaths(run_dir), options.candidates or directory.candidates, stage.skipped)
    await asyncio.gather(*(_report_and_repair(stage, f) for f in fixtures))
    out_dir = run_dir / RunFile.REPAIR_LIFT / _lift_dir_name(stage)
    repaired = [f for f in fixtures if f.status == "repaired"]
    runs = await _run_repaired(stage, directory, repaired, out_dir) if repaired else {}
    per_fixture = await asyncio.gather(*(_score(stage, f, runs, out_dir / "run") for f in fixtures))
    summary = RepairLiftSummary(
        sweep=directory.name, judge=_label(stage.judge, options.judge), judge_version=stage.judge.version,
        repairer=_label(stage.repairer, options.repairer), evaluator=_label(stage.evaluator, options.evaluator),
        absolute_judge=_absolute_judge(run_dir), fixtures=sum(1 for f in per_fixture if f.lift is not None),
        dimensions=dimension_lifts(per_fixture), per_fixture=list(per_fixture),
        dropped_findings=sum(f.report.dropped for f in fixtures if f.report is not None), skipped=stage.skipped)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out_dir / RunFile.LIFT, summary)
    return LiftResult(summary, out_dir)


def _fixtures(directory: RunDirectory, paths: StagePaths, candidates: Sequence[str],
              skipped: dict[str, int]) -> list[_Fixture]:
    """The judged runs of ``candidates`` whose bundle is on this machine (sample 0 of each cell)."""
    def has_bundle(outcome: Outcome) -> bool:
        return read_manifest(paths.evidence(str(outcome.evidence_key))) is not None

    fixtures = []
    for _, outcome in sorted(first_cells(directory.outcomes, set(candidates)).items()):
        why = unusable(outcome, has_bundle)
        if why is not None:
            _count(skipped, why)
        else:
            assert outcome.evidence_key is not None  # unusable says why a run has no bundle
            fixtures.append(_Fixture(outcome, EvidenceBundle(paths.evidence(outcome.evidence_key),
                                                             allow_incomplete=True)))
    return fixtures


async def _report_and_repair(stage: _Stage, fixture: _Fixture) -> None:
    """The judge's report, the evaluator's report of the original, and the repair; the fixture's status says
    how far it got (and which step failed)."""
    failed = "report_failed"
    try:
        fixture.report = await _ux_report(stage, stage.judge, stage.options.judge, fixture.bundle)
        failed = "evaluation_failed"
        fixture.before = await _ux_report(stage, stage.evaluator, stage.options.evaluator, fixture.bundle)
        failed = "repair_failed"
        fixture.answer_key = await _repair(stage, fixture)
        fixture.status = "repaired"
    except BudgetExhaustedError:
        fixture.status, fixture.detail = "deferred", "the budget was reached before this fixture"
    except (JudgeOutputError, ModelRequestError, EvidenceError) as exc:
        fixture.status, fixture.detail = failed, str(exc)[:500]
    if stage.progress:
        stage.progress(f"{fixture.outcome.query_id} ({fixture.outcome.candidate_id}): {fixture.status}")


async def _ux_report(stage: _Stage, judge: UxJudge, options: UxJudgeOptions, bundle: EvidenceBundle) -> UxReport:
    key = ux_report_key(bundle.manifest.evidence_key, options, judge.version)
    path = stage.run_dir / RunFile.UX_REPORTS / f"{key}.json"
    if path.exists():
        return UxReport.model_validate_json(path.read_bytes())
    async with stage.slots:
        report = await judge.report(bundle, report_key=key, models=stage.models.for_run())
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, report)
    return report


async def _repair(stage: _Stage, fixture: _Fixture) -> str:
    """The repaired answer's key; the answer is stored under ``repairs/``."""
    assert fixture.report is not None  # reported first
    files = bundle_sources(fixture.bundle)
    key = repair_key(fixture.report.report_key, files_digest(files), stage.options.repairer, stage.repairer.version)
    path = stage.run_dir / RunFile.REPAIRS / f"{key}.md"
    if path.exists():
        return key
    query = fixture.bundle.query()
    async with stage.slots:
        answer = await stage.repairer.repair(files, query, fixture.report, models=stage.models.for_run())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(answer, encoding="utf-8")
    return key


async def _run_repaired(stage: _Stage, directory: RunDirectory, fixtures: list[_Fixture], out_dir: Path
                        ) -> dict[tuple[str, str], Outcome | None]:
    """Run every repaired app through the full regime, as replayed answers of a sweep of their own.

    Returns each (query, repaired candidate)'s outcome; ``None`` for a run the budget deferred.
    """
    spec = read_sweep_record(stage.run_dir).spec
    candidates: list[Candidate] = []
    for candidate in sorted({f.outcome.candidate_id for f in fixtures}):
        mine = [f for f in fixtures if f.outcome.candidate_id == candidate]
        repairs = stage.run_dir / RunFile.REPAIRS
        answers = {f.outcome.query_id: (repairs / f"{f.answer_key}.md").read_bytes() for f in mine}
        # The folder is named by the answers' bytes: a replayed answer's run key covers its path, not its bytes,
        # so a repair that changed must not reuse the run of the old one. (A candidate's apps share one folder:
        # when one more of them is repaired, the others run again too.)
        digest = sha256_bytes(b"".join(q.encode() + b"\0" + a for q, a in sorted(answers.items())))[:12]
        folder = out_dir / "answers" / f"{candidate}-{digest}"
        folder.mkdir(parents=True, exist_ok=True)
        for query, answer in answers.items():
            (folder / f"{query}.md").write_bytes(answer)
        candidates.append(Candidate(id=_repaired_id(candidate), answers=str(folder)))
    queries = [directory.queries[q] for q in sorted({f.outcome.query_id for f in fixtures}) if q in directory.queries]
    # The endpoints as resolved for this stage (a judge pool's servers by URL), the spending under the stage's cap.
    repaired_spec = spec.model_copy(update={
        "name": f"{spec.name}-repaired"[:64], "candidates": candidates, "pairwise": None, "only_queries": None,
        "variants": None, "samples": 1, "endpoints": stage.models.endpoints})
    sweep = Sweep(spec=repaired_spec, path=out_dir / "sweep.yaml", queries=queries)
    result = await run_sweep(sweep, out_dir / "run", budget=stage.budget)
    cells: dict[tuple[str, str], Outcome | None] = {
        (o.query_id, o.candidate_id): o for o in result.outcomes.values()}
    deferred = set(result.deferred)
    for run in sweep.plan():
        if run.run_key in deferred:
            cells[(run.query.id, run.candidate.id)] = None
    return cells


def _repaired_id(candidate: str) -> str:
    name = f"{candidate}.repaired"
    return name if len(name) <= 64 else f"{candidate[:45]}.repaired.{sha256_bytes(candidate.encode())[:8]}"


async def _score(stage: _Stage, fixture: _Fixture, runs: dict[tuple[str, str], Outcome | None], run_dir: Path
                 ) -> FixtureLift:
    """The fixture's scores before and after, and the lift; a fixture that did not get that far says why."""
    original, query = fixture.outcome, fixture.outcome.query_id
    base = FixtureLift(query_id=query, candidate=original.candidate_id, status=fixture.status,
                       findings=len(fixture.report.findings) if fixture.report else 0,
                       original=_scores(fixture.before, original), detail=fixture.detail)
    if fixture.status != "repaired":
        _count(stage.skipped, fixture.status)
        return base
    cell = (query, _repaired_id(original.candidate_id))
    after = runs.get(cell)
    if cell in runs and after is None:
        _count(stage.skipped, "deferred")
        return base.model_copy(update={"status": "deferred", "detail": "the budget was reached before its run"})
    if after is None or after.status is not OutcomeStatus.JUDGED or after.evidence_key is None:
        status = "not_assessable" if after and after.status is OutcomeStatus.NON_ASSESSABLE else "run_failed"
        detail = after.reason.detail[:500] if after else "the repaired app's run has no outcome"
        _count(stage.skipped, status)
        return base.model_copy(update={"status": status, "detail": detail})
    try:
        bundle = EvidenceBundle(StagePaths(run_dir).evidence(after.evidence_key), allow_incomplete=True)
        report = await _ux_report(stage, stage.evaluator, stage.options.evaluator, bundle)
    except BudgetExhaustedError:
        _count(stage.skipped, "deferred")
        return base.model_copy(update={"status": "deferred", "detail": "the budget was reached before its evaluation"})
    except (JudgeOutputError, ModelRequestError, EvidenceError) as exc:
        _count(stage.skipped, "evaluation_failed")
        return base.model_copy(update={"status": "evaluation_failed", "detail": str(exc)[:500]})
    repaired = _scores(report, after)
    lift = {d: round(repaired[d] - v, 3) for d, v in base.original.items() if d in repaired}
    return base.model_copy(update={"repaired": repaired, "lift": lift})


def _scores(report: UxReport | None, outcome: Outcome) -> dict[str, float]:
    scores = {d.value: float(s) for d, s in report.scores.items()} if report is not None else {}
    if outcome.functional is not None and outcome.aesthetic is not None:
        scores |= {"functional": outcome.functional, "aesthetic": outcome.aesthetic}
    return scores


def _label(plugin: UxJudge | Repairer, options: UxJudgeOptions | RepairOptions) -> str:
    return f"{options.model} @ {options.endpoint} ({plugin.version.split(':', 1)[0]})"


def _absolute_judge(run_dir: Path) -> str:
    judge = read_sweep_record(run_dir).spec.judge_panel[0]
    return judge.name + (f" ({judge.options.get('model')})" if judge.options.get("model") else "")


def _lift_dir_name(stage: _Stage) -> str:
    """One folder per measured judge, and per fixed repairer and evaluator (a lift is relative to both)."""
    key = content_key("lift", stage.judge.version, stage.repairer.version, stage.evaluator.version,
                      stage.options.judge, stage.options.repairer, stage.options.evaluator)
    return judge_dir_name(JudgeConfig(name="ux", options={"model": stage.options.judge.model}), key)


def _count(counts: dict[str, int], reason: str) -> None:
    counts[reason] = counts.get(reason, 0) + 1
