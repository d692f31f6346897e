"""The compare stage: pairs of stored bundles judged in both orders, with no browser (like ``rejudge``).

It runs after the absolute verdicts, from ``evalgrid compare RUN_DIR`` or at the end of a sweep with
``pairwise:``. Each ordered comparison is content-addressed (both bundles, their order, the judge and
its version) and stored under ``pairwise/verdicts/``, so a second run pays nothing and a new judge pays
only its own calls. The summary of one judge goes to ``pairwise/<judge>/summary.json`` beside
``comparisons.jsonl`` (which verdicts it read); the sweep's outcomes and keys are never touched.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from cluster.pairwise.pairs import TWIN_LABELS, Pair, Selection, check_selection, select_pairs, twin_order
from cluster.pairwise.summary import (
    Comparison,
    KnownOrder,
    PairwiseSummary,
    SummaryDimension,
    human_comparison,
    known_order,
    summarise_dimensions,
)
from cluster.pairwise.votes import read_votes
from cluster.reduce.reducer import open_run_directory
from cluster.reduce.scoring import candidate_means, run_scores
from cluster.scheduling.judge_pool import resolve_pools_outside_ray
from cluster.store.layout import RunFile
from cluster.sweep.spec import recorded_endpoints
from evaluator import (
    BudgetExhaustedError,
    ConfigError,
    EvidenceError,
    JudgeConfig,
    JudgeOutputError,
    ModelRequestError,
    Outcome,
    PairwiseVerdict,
    StagePaths,
    content_key,
    judge_dir_name,
    write_json_atomic,
)
from evaluator.evidence import EvidenceBundle, read_manifest
from evaluator.judges import PairwiseJudge, create_pairwise_judge, pairwise_key
from evaluator.llm import Budget, Endpoint, ModelAccess, ResponseCache


@dataclass(frozen=True)
class CompareOptions:
    """What to compare and what is known about it."""

    candidates: Sequence[str] = ()
    """Candidates to compare (default: all of the sweep's)."""
    pairs: str = "all"
    """``all``, ``adjacent`` or ``sample:N`` (see :mod:`cluster.pairwise.pairs`)."""
    known_order: Sequence[str] = ()
    """Candidates in known order of quality, best first (e.g. the demo's careful, sloppy, broken)."""
    human_votes: Path | None = None
    """Arena-style votes to set beside the judge's (``query,a,b,winner`` CSV)."""
    seed: int = 0
    """Seed of ``sample:N``."""
    concurrency: int = 4
    """Comparisons in flight at once."""


@dataclass
class CompareResult:
    """What a compare did: its summary and where it was written."""

    summary: PairwiseSummary
    out_dir: Path
    comparisons: list[Comparison] = field(default_factory=list)


async def compare(run_dir: Path, judge: JudgeConfig, options: CompareOptions = CompareOptions(), *,
                  endpoints: dict[str, Endpoint] | None = None, budget: Budget | None = None,
                  on_progress: Callable[[int, int], None] | None = None) -> CompareResult:
    """Judge the selected pairs of ``run_dir`` in both orders with ``judge`` and summarise them.

    Raises :class:`ConfigError` when ``run_dir`` is not a run directory, a candidate is unknown, the
    selection or the votes file is wrong, or the judge cannot be built.
    """
    directory = open_run_directory(run_dir)
    check_selection(options.pairs)
    twins = options.pairs == "twins"
    candidates = list(TWIN_LABELS) if twins else _candidates(options, directory.candidates)
    votes = read_votes(options.human_votes, candidates) if options.human_votes else None
    pairwise_judge = create_pairwise_judge(judge)
    paths = StagePaths(run_dir)
    selection = select_pairs(directory.outcomes, candidates, options.pairs, seed=options.seed,
                             has_bundle=lambda o: o.evidence_key is not None
                             and read_manifest(paths.evidence(o.evidence_key)) is not None)
    if endpoints is None:
        endpoints = recorded_endpoints(run_dir)
    endpoints = await asyncio.to_thread(resolve_pools_outside_ray, endpoints)
    models = ModelAccess(endpoints=endpoints, budget=budget, cache=ResponseCache(run_dir / "cache" / "chat"))
    asker = _Asker(pairwise_judge, judge, paths, models, max(1, options.concurrency))
    asker.progress = (lambda done: on_progress(done, 2 * len(selection.pairs))) if on_progress else None
    results = await asyncio.gather(*(asker.both_orders(pair) for pair in selection.pairs))
    comparisons = [c for c in results if c is not None]
    summary = _summary(directory.name, judge, pairwise_judge, candidates, options, selection, comparisons, asker)
    if votes is not None:
        summary.human = human_comparison(votes, comparisons, candidates)
    out_dir = run_dir / RunFile.PAIRWISE / _summary_dir(judge, pairwise_judge.version, candidates, options)
    _write(out_dir, summary, comparisons)
    return CompareResult(summary, out_dir, comparisons)


def _summary_dir(judge: JudgeConfig, version: str, candidates: list[str], options: CompareOptions) -> str:
    """One summary per judge and question asked (candidates, selection, its seed, the known order, the votes): a
    sweep's ``all`` is not overwritten by a later ``adjacent`` or by a compare of other candidates."""
    asked = content_key("compare", sorted(candidates), options.pairs, options.seed, list(options.known_order),
                        str(options.human_votes) if options.human_votes else None)
    return f"{judge_dir_name(judge, version)}-{options.pairs.replace(':', '')}-{asked[-6:]}"


def _candidates(options: CompareOptions, known: list[str]) -> list[str]:
    chosen = list(options.candidates) or known
    unknown = [c for c in [*chosen, *options.known_order] if c not in known]
    if unknown:
        raise ConfigError(f"not a candidate of this sweep: {', '.join(unknown)} (candidates: {', '.join(known)})")
    if len(chosen) < 2:
        raise ConfigError("compare needs at least two candidates")
    return chosen


class _Asker:
    """Ordered comparisons, stored under their keys, ``slots`` at once; failures and deferrals counted."""

    def __init__(self, judge: PairwiseJudge, config: JudgeConfig, paths: StagePaths, models: ModelAccess,
                 slots: int) -> None:
        self.judge, self.config, self.paths, self.models = judge, config, paths, models
        self.slots = asyncio.Semaphore(slots)
        self.failed: list[str] = []
        self.deferred_pairs = 0
        """Pairs left out because the budget stopped one of their orders."""
        self.dropped = 0
        self.done = 0
        self.progress: Callable[[int], None] | None = None

    async def both_orders(self, pair: Pair) -> Comparison | None:
        """``pair`` judged with ``a`` first and with ``b`` first; ``None`` when either order could not be."""
        ab, ba = await asyncio.gather(self.ordered(pair.a, pair.b), self.ordered(pair.b, pair.a))
        if not isinstance(ab, PairwiseVerdict) or not isinstance(ba, PairwiseVerdict):
            self.deferred_pairs += "deferred" in (ab, ba)
            return None
        self.dropped += len(ab.dropped) + len(ba.dropped)
        return Comparison(pair.query_id, *pair.sides, ab, ba)

    async def ordered(self, first: Outcome, second: Outcome) -> PairwiseVerdict | Literal["deferred", "failed"]:
        """The stored or new verdict on ``first`` shown before ``second``, or why there is none."""
        assert first.evidence_key is not None and second.evidence_key is not None  # pairs hold bundles only
        key = pairwise_key(first.evidence_key, second.evidence_key, self.config, self.judge.version)
        path = self.paths.root / RunFile.PAIRWISE / StagePaths.VERDICTS / f"{key}.json"
        if path.exists():
            self._tick()
            return PairwiseVerdict.model_validate_json(path.read_bytes())
        async with self.slots:
            try:
                # A bundle the app cut short (hang, crash) is compared as it is: the evidence up to the failure
                # is what a user would have met.
                verdict = await self.judge.compare(
                    EvidenceBundle(self.paths.evidence(first.evidence_key), allow_incomplete=True),
                    EvidenceBundle(self.paths.evidence(second.evidence_key), allow_incomplete=True),
                    pairwise_key=key, models=self.models.for_run())
            except BudgetExhaustedError:
                return "deferred"
            except (JudgeOutputError, ModelRequestError, EvidenceError) as exc:
                self.failed.append(f"{first.query_id}: {first.candidate_id} first, {second.candidate_id} second: "
                                   f"{str(exc)[:300]}")
                return "failed"
            finally:
                self._tick()
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, verdict)
        return verdict

    def _tick(self) -> None:
        self.done += 1
        if self.progress:
            self.progress(self.done)


def _summary(sweep: str, config: JudgeConfig, judge: PairwiseJudge, candidates: list[str], options: CompareOptions,
             selection: Selection, comparisons: list[Comparison], asker: _Asker) -> PairwiseSummary:
    skipped = dict(selection.skipped)
    if asker.deferred_pairs:
        skipped["budget"] = asker.deferred_pairs
    labels = {c.ab.label for c in comparisons}
    twins = selection.how == "twins"
    known = list(TWIN_LABELS) if twins else list(options.known_order)
    better: KnownOrder = twin_order if twins else known_order(options.known_order)
    return PairwiseSummary(
        sweep=sweep, judge=", ".join(sorted(labels)) or config.name, judge_version=judge.version,
        selection=selection.how, candidates=candidates, known_order=known,
        pairs=len(comparisons), skipped=skipped, dropped_choices=asker.dropped, failed=asker.failed,
        tau_note=(f"Kendall τ between the pairwise ratings and the absolute mean scores (of the same dimension) of "
                  f"the same runs, on the {selection.how} selection ({len(comparisons)} pairs)"),
        dimensions=summarise_dimensions(comparisons, candidates, better, _absolute_means(selection.pairs)))


def _absolute_means(pairs: Sequence[Pair]) -> dict[SummaryDimension, dict[str, float]]:
    """Each side's mean absolute score per dimension over the runs that were paired (the leaderboard's rule)."""
    runs = {(side, o.run_key): o for pair in pairs for side, o in zip(pair.sides, (pair.a, pair.b), strict=True)}
    cells: dict[str, list[tuple[float, float]]] = {}
    for (side, _), o in runs.items():
        scores = run_scores(o.status, o.functional, o.aesthetic)
        assert scores is not None  # a paired run was judged
        cells.setdefault(side, []).append(scores)
    means = {side: candidate_means(side_cells) for side, side_cells in cells.items()}
    return {"functional": {side: m[0] for side, m in means.items()},
            "aesthetic": {side: m[1] for side, m in means.items()},
            "overall": {side: m[2] for side, m in means.items()}}


def _write(out_dir: Path, summary: PairwiseSummary, comparisons: list[Comparison]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out_dir / RunFile.PAIRWISE_SUMMARY, summary)
    lines = [json.dumps({"query": c.query_id, "a": c.a, "b": c.b, "ab": c.ab.pairwise_key,
                         "ba": c.ba.pairwise_key}) for c in comparisons]
    (out_dir / "comparisons.jsonl").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
