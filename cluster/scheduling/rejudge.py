"""Rejudge: score a run directory's stored evidence with another judge, without a browser.

Evidence bundles are frozen and content-addressed, so a new judge (another model, a new prompt
version, another rubric) costs only judging. Verdicts are stored under their own keys beside the
sweep's (the reducer then reports both judges and their agreement); the new judge's leaderboard is
written to ``rejudged/<judge>/``. The sweep's own outcomes are left as they are.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cluster.reduce.leaderboard import Leaderboard, build_leaderboard, leaderboard_markdown
from cluster.reduce.reducer import open_run_directory
from cluster.scheduling.judge_pool import resolve_pools_outside_ray
from cluster.store.layout import RunFile
from cluster.sweep.spec import recorded_endpoints
from evaluator import (
    BudgetExhaustedError,
    ConfigError,
    EvidenceManifest,
    JudgeConfig,
    ModelRequestError,
    Outcome,
    OutcomeReason,
    OutcomeStatus,
    StagePaths,
    as_failed,
    classify,
    evidence_flags,
    judge_dir_name,
    judge_or_fall_back,
    utc_now,
    write_json_atomic,
)
from evaluator.evidence import read_manifest
from evaluator.judges import create_judge
from evaluator.llm import Budget, Endpoint, ModelAccess, ResponseCache


@dataclass
class RejudgeResult:
    """What a rejudge did."""

    judge_version: str
    """The new judge's version (part of its verdicts' keys)."""
    outcomes: list[Outcome] = field(default_factory=list)
    """The sweep's outcomes with the new judge's scores (non-assessable runs stay 0.0)."""
    judged: int = 0
    """Bundles the new judge scored (or found scored before)."""
    failed: list[str] = field(default_factory=list)
    """Runs the new judge could not score, with why (its endpoint refused the request itself)."""
    fell_back: list[str] = field(default_factory=list)
    """Runs the new judge refused or answered unusably, scored by the fallback judge instead (flagged), with why."""
    deferred: int = 0
    """Runs left unjudged because the budget was reached."""
    leaderboard: Leaderboard | None = None
    """The new judge's leaderboard."""
    out_dir: Path | None = None
    """Where it was written."""


async def rejudge(run_dir: Path, judge: JudgeConfig, *, endpoints: dict[str, Endpoint] | None = None,
                  concurrency: int = 4, budget: Budget | None = None,
                  on_progress: Callable[[int, int], None] | None = None) -> RejudgeResult:
    """Score every stored bundle of ``run_dir``'s current plan with ``judge``.

    ``endpoints`` default to the sweep's. Raises :class:`ConfigError` when ``run_dir`` is not a run
    directory or the judge cannot be built.
    """
    directory = open_run_directory(run_dir)
    if endpoints is None:
        endpoints = recorded_endpoints(run_dir)
    endpoints = await asyncio.to_thread(resolve_pools_outside_ray, endpoints)
    result = RejudgeResult(judge_version=create_judge(judge).version)
    paths = StagePaths(run_dir)
    manifests = {o.run_key: manifest for o in directory.outcomes
                 if o.status is OutcomeStatus.JUDGED and o.evidence_key
                 and (manifest := read_manifest(paths.evidence(o.evidence_key))) is not None}
    todo = [o for o in directory.outcomes if o.run_key in manifests]
    models = ModelAccess(endpoints=endpoints, budget=budget, cache=ResponseCache(run_dir / "cache" / "chat"))
    rescorer = _Rescorer(judge, paths, manifests, models, result, concurrency)
    rescorer.progress = (lambda done: on_progress(done, len(todo))) if on_progress else None
    rescored = {o.run_key: o for o in await asyncio.gather(*(rescorer.rescore(o) for o in todo)) if o is not None}
    # Runs the sweep's judge could not judge keep their outcome; judged runs the new judge did not
    # reach (deferred, or no bundle on this machine) are left out of its leaderboard.
    result.outcomes = [rescored.get(o.run_key, o) for o in directory.outcomes
                       if o.run_key in rescored or o.status is not OutcomeStatus.JUDGED]
    result.leaderboard = build_leaderboard(directory.name, directory.candidates, result.outcomes,
                                           sample_reduce=directory.sample_reduce)
    result.out_dir = run_dir / RunFile.REJUDGED / judge_dir_name(judge, result.judge_version)
    _write_rejudged(result, judge)
    return result


class _Rescorer:
    """One stored bundle at a time (``concurrency`` at once) scored by the new judge, into a new outcome."""

    def __init__(self, judge: JudgeConfig, paths: StagePaths, manifests: dict[str, EvidenceManifest],
                 models: ModelAccess, result: RejudgeResult, concurrency: int) -> None:
        self.judge, self.paths, self.manifests, self.models, self.result = judge, paths, manifests, models, result
        self.slots = asyncio.Semaphore(max(1, concurrency))
        self.done = 0
        self.progress: Callable[[int], None] | None = None

    async def rescore(self, outcome: Outcome) -> Outcome | None:
        """``outcome`` with the new judge's verdict; ``None`` when the budget ran out before it."""
        assert outcome.evidence_key is not None  # only outcomes with a stored bundle are rescored
        async with self.slots:
            access = self.models.for_run()
            bundle = self.paths.evidence(outcome.evidence_key)
            try:
                # A bundle the app cut short (hang, crash) is scored by the failure policy, the new judge
                # giving the aesthetic verdict on its Static Perception; a judge that refuses or answers
                # unusably is replaced by the fallback judge (flagged), as in a sweep.
                judged = await judge_or_fall_back(self.judge, outcome.evidence_key, self.manifests[outcome.run_key],
                                                  bundle, self.paths, access)
            except ModelRequestError as exc:
                self.result.failed.append(f"{outcome.run_key}: {exc}")
                return as_failed(outcome, classify(exc), str(exc))
            except BudgetExhaustedError:
                self.result.deferred += 1
                return None
            finally:
                self.done += 1
                if self.progress:
                    self.progress(self.done)
        self.result.judged += 1
        verdict = judged.verdict
        update: dict[str, object] = {
            "functional": verdict.functional, "aesthetic": verdict.aesthetic, "verdict_key": verdict.verdict_key,
            "judge_label": verdict.label, "usage": access.meter.usage(), "panel": [], "disagreement": {},
            "flags": sorted({*evidence_flags(bundle), *judged.flags, *verdict.flags}), "finished_at": utc_now()}
        if judged.fallback is not None:
            self.result.fell_back.append(f"{outcome.run_key}: {judged.fallback[1]}")
            update["reason"] = OutcomeReason(code=judged.fallback[0], detail=judged.fallback[1][:2000])
        return outcome.model_copy(update=update)


def _write_rejudged(result: RejudgeResult, judge: JudgeConfig) -> None:
    out, board = result.out_dir, result.leaderboard
    assert out is not None and board is not None
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / RunFile.LEADERBOARD, board)
    (out / RunFile.LEADERBOARD_MD).write_text(leaderboard_markdown(board), encoding="utf-8")
    write_json_atomic(out / "judge.json", {"judge": judge.model_dump(mode="json"), "version": result.judge_version,
                                           "failed": result.failed, "fell_back": result.fell_back,
                                           "deferred": result.deferred})
    with (out / RunFile.REJUDGED_OUTCOMES).open("w", encoding="utf-8") as handle:
        for outcome in result.outcomes:
            handle.write(outcome.model_dump_json() + "\n")


def parse_judge(name: str, options: list[str]) -> JudgeConfig:
    """A judge from the command line: a registered name and ``key=value`` options (numbers and booleans parsed)."""
    parsed: dict[str, str | int | float | bool] = {}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or not key:
            raise ConfigError(f"judge option {option!r} is not key=value")
        parsed[key] = _value(value)
    return JudgeConfig(name=name, options=parsed)


def _value(text: str) -> str | int | float | bool:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
