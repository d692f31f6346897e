"""The reducer: all outcomes and verdicts of a sweep → tables and a :class:`Reduction`.

Scoring follows the leaderboard's rule: judged runs count with their scores (an app's hang or crash is
judged, functional 0.0), non-assessable runs count as 0.0, the machinery's failures (infrastructure errors
and timeouts) are excluded, counted, and their per-candidate rate compared. Every interval
resamples queries. Reading is one pass over the results log and one read per verdict file.
"""

from __future__ import annotations

import csv
import json
import os
import warnings
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from cluster.reduce import statistics as st
from cluster.reduce.leaderboard import exclusion_warning, infra_error_rate, usage_totals
from cluster.reduce.records import (
    Accessibility,
    Agreement,
    CandidateSummary,
    Interval,
    JudgeStats,
    Pairwise,
    Rating,
    Reduction,
    RunRow,
    SliceCell,
)
from cluster.reduce.recovery import recovery_table
from cluster.reduce.scoring import SampleReduce, candidate_means, cell_score, rounded, run_scores
from cluster.store.layout import RunFile
from cluster.store.results_log import ResultsLog
from cluster.sweep.spec import RecordedPlan, SweepRecord, SweepSpec, load_sweep, read_sweep_record
from evaluator import ConfigError, ModelUsage, Outcome, OutcomeStatus, Query, ReasonCode, StagePaths, write_json_atomic

SLICES = ("domain", "leaf", "difficulty", "language_group", "kind", "variant")
DIMENSIONS = ("functional", "aesthetic")
# Slices multiply the cells (5 dimensions × their values × candidates): their intervals use fewer
# resamples so a 100,000-run sweep still reduces in seconds.
_SLICE_SAMPLES = 200


@dataclass(frozen=True)
class RunDirectory:
    """A run directory's sweep and the outcomes of its current plan."""

    name: str
    candidates: list[str]
    queries: dict[str, Query]
    outcomes: list[Outcome]
    sample_reduce: SampleReduce = "mean"
    """The sweep's rule for several samples per cell."""
    bases: dict[str, str] = field(default_factory=dict)
    """Agentic candidate → its single-turn base."""
    note: str | None = None
    """How the run directory was read, when not from its recorded plan (an old run directory)."""


@dataclass
class _VerdictFacts:
    judge: str
    label: str
    evidence_key: str
    functional: float
    aesthetic: float
    costs: dict[str, float] = field(default_factory=dict)


def open_run_directory(run_dir: Path) -> RunDirectory:
    """The sweep recorded in ``run_dir`` and the outcomes of the runs of its recorded plan.

    The results log keeps outcomes of earlier configurations too (a changed judge or agent makes
    new run keys); only the runs of the plan the last invocation recorded are counted. A run
    directory made before plans were recorded falls back to re-reading its sweep file, with a
    warning (:attr:`RunDirectory.note`).
    """
    results = run_dir / RunFile.RESULTS
    if not results.exists():
        raise ConfigError(f"{run_dir} has no {RunFile.RESULTS}; is it a run directory made by `evalgrid run`?")
    saved = read_sweep_record(run_dir)
    outcomes = ResultsLog(results).load()
    plan = _recorded_plan(run_dir, saved)
    spec = plan.spec if plan else saved.spec
    candidates = [c.id for c in spec.candidates]
    bases = {c.id: c.base for c in spec.candidates if c.base is not None}
    if plan is None:
        return RunDirectory(spec.name, candidates, {}, list(outcomes.values()),
                            sample_reduce=spec.sample_reduce,
                            note="the run directory has no recorded plan and its sweep file cannot be re-read; "
                                 "every recorded outcome is counted")
    return RunDirectory(spec.name, candidates, {q.id: q for q in plan.queries},
                        [outcomes[k] for k in plan.run_keys if k in outcomes],
                        sample_reduce=spec.sample_reduce, bases=bases, note=plan.note)


@dataclass
class _Plan:
    spec: SweepSpec
    run_keys: list[str]
    queries: list[Query]
    note: str | None


def _recorded_plan(run_dir: Path, saved: SweepRecord) -> _Plan | None:
    """The recorded plan; else, for a run directory from before plans were recorded, the plan of its sweep
    file as it is now (with a warning) if that is still readable; else None."""
    path = run_dir / RunFile.PLAN
    if path.exists():
        try:
            plan = RecordedPlan.model_validate_json(path.read_bytes())
        except ValidationError as exc:
            raise ConfigError(f"{path} is not a plan evalgrid wrote ({exc.errors()[0]['msg']}); re-run the sweep "
                              "into this run directory to record it again") from None
        return _Plan(plan.spec, plan.run_keys, plan.queries, None)
    try:
        sweep = load_sweep(Path(saved.path), check_plugins=False)  # options it ran with, checked or not
    except ConfigError:
        return None
    warnings.warn(f"{run_dir} has no {RunFile.PLAN} (made before plans were recorded): reduced with the plan of the "
                  f"sweep file {sweep.path} as it is now", stacklevel=3)
    return _Plan(saved.spec, [run.run_key for run in sweep.plan()], sweep.queries,
                 f"no recorded plan: reduced with the sweep file {sweep.path} as it is now")


@dataclass(frozen=True)
class ReduceOptions:
    """How a run directory is reduced (none of it changes which outcomes count)."""

    pass_threshold: float = 6.0
    """Overall score (0-8) a run needs to pass."""
    samples: int = 1000
    """Bootstrap resamples."""
    seed: int = 0
    """Seed of the bootstrap."""
    human_ratings: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    """Human scores by (candidate, query), correlated with each judge's."""
    sample_reduce: SampleReduce = "mean"
    """How several samples of a (candidate, query, variant) cell combine."""
    bases: dict[str, str] = field(default_factory=dict)
    """Agentic candidate → its single-turn base (``base:``), for the gain from the preview tool."""


def reduce_run_dir(
    run_dir: Path, *, pass_threshold: float = 6.0, samples: int = 1000, seed: int = 0,
    human_ratings: Path | None = None,
) -> tuple[Reduction, list[RunRow]]:
    """Reduce a run directory: its rows (one per run) and the :class:`Reduction`."""
    directory = open_run_directory(run_dir)
    verdicts = _read_verdicts(run_dir / StagePaths.VERDICTS)
    rows = [_row(o, directory.queries.get(o.query_id), verdicts, run_dir) for o in directory.outcomes]
    options = ReduceOptions(pass_threshold=pass_threshold, samples=samples, seed=seed,
                            human_ratings=_read_human_ratings(human_ratings) if human_ratings else {},
                            sample_reduce=directory.sample_reduce, bases=directory.bases)
    reduction = reduce_rows(directory.name, directory.candidates, rows, verdicts, options,
                            usage=[u for o in directory.outcomes for u in o.usage])
    return reduction, rows


def reduce_rows(sweep: str, candidates: Sequence[str], rows: Sequence[RunRow], verdicts: dict[str, _VerdictFacts],
                options: ReduceOptions, *, usage: Sequence[ModelUsage] = ()) -> Reduction:
    """The reduction of already-flattened rows (``verdicts`` by verdict key, for costs and judges).

    Statistics count each (candidate, query, variant) cell once: several samples of a cell are
    reduced first (``options.sample_reduce``); the counts of runs are of runs.
    """
    cells = _cells(rows, options.sample_reduce)
    scored = [r for r in cells if r.functional is not None and r.aesthetic is not None]
    cindex = {c: i for i, c in enumerate(candidates)}
    for r in cells:
        cindex.setdefault(r.candidate_id, len(cindex))
    names = list(cindex)
    summaries = sorted((_summary(name, offset, cells, rows, verdicts, options) for offset, name in enumerate(names)),
                       key=lambda s: (s.overall is None, -(s.overall.mean if s.overall else 0.0), s.candidate_id))
    summaries = [s.model_copy(update={"rank": i + 1}) for i, s in enumerate(summaries)]
    overall = _overall_matrix(cells, names)
    judged = {r.evidence_key for r in cells if r.evidence_key}
    samples, seed = options.samples, options.seed
    return Reduction(
        sweep=sweep, judge_labels=sorted({v.label for v in verdicts.values()}), pass_threshold=options.pass_threshold,
        bootstrap_samples=samples, candidates=summaries,
        slices=_slices(scored, names, threshold=options.pass_threshold, samples=min(samples, _SLICE_SAMPLES),
                       seed=seed),
        pairwise=_pairwise(overall, names), ratings=_ratings(overall, names, samples, seed),
        judges=_judge_stats(verdicts, judged), judge_agreement=_judge_agreement(verdicts, judged),
        human_agreement=_human_agreement(cells, verdicts, options.human_ratings), sample_reduce=options.sample_reduce,
        usage=usage_totals(usage),
        exclusion_warning=exclusion_warning({s.candidate_id: s.infra_error_rate for s in summaries}),
        recovery=recovery_table(rows, cells, options.bases, samples=samples, seed=seed),
    )


def _overall_matrix(cells: Sequence[RunRow], names: list[str]) -> np.ndarray:
    """Overall scores, a row per query of any cell and a column per candidate (NaN where a cell has none)."""
    query_ids = sorted({r.query_id for r in cells})
    qindex = {q: i for i, q in enumerate(query_ids)}
    cindex = {c: i for i, c in enumerate(names)}
    overall = np.full((len(query_ids), len(names)), np.nan)
    for r in cells:
        if r.functional is not None and r.aesthetic is not None:
            overall[qindex[r.query_id], cindex[r.candidate_id]] = (r.functional + r.aesthetic) / 2
    return overall


def _summary(name: str, offset: int, cells: Sequence[RunRow], rows: Sequence[RunRow],
             verdicts: dict[str, _VerdictFacts], options: ReduceOptions) -> CandidateSummary:
    """One candidate's line: intervals over its cells, counts over its runs (``offset`` varies its seed)."""
    mine = [r for r in cells if r.candidate_id == name]
    mine_scored = [r for r in mine if r.functional is not None]
    every = [r for r in rows if r.candidate_id == name]
    count = {s: sum(r.status == s.value for r in every) for s in OutcomeStatus}
    failed = {code: sum(r.status == OutcomeStatus.JUDGED.value and r.reason_code == code.value for r in every)
              for code in (ReasonCode.APP_HANG, ReasonCode.APP_CRASH)}
    intervals: dict[str, Interval | None] = {"functional": None, "aesthetic": None, "overall": None}
    if mine_scored:
        values = {
            "functional": [float(r.functional or 0.0) for r in mine_scored],
            "aesthetic": [float(r.aesthetic or 0.0) for r in mine_scored],
        }
        values["overall"] = [(f + a) / 2 for f, a in zip(values["functional"], values["aesthetic"], strict=True)]
        means = candidate_means(list(zip(values["functional"], values["aesthetic"], strict=True)))
        for i, dim in enumerate(("functional", "aesthetic", "overall")):
            m = st.bootstrap_mean(values[dim], samples=options.samples, seed=options.seed + 7919 * offset + i)
            intervals[dim] = Interval(mean=means[i], low=rounded(m.low), high=rounded(m.high), n=m.n)
    return CandidateSummary(
        rank=0, candidate_id=name, runs=len(every), judged=count[OutcomeStatus.JUDGED],
        non_assessable=count[OutcomeStatus.NON_ASSESSABLE], infra_error=count[OutcomeStatus.INFRA_ERROR],
        timeout=count[OutcomeStatus.TIMEOUT], hang=failed[ReasonCode.APP_HANG], crash=failed[ReasonCode.APP_CRASH],
        infra_error_rate=infra_error_rate(len(every), count[OutcomeStatus.INFRA_ERROR], count[OutcomeStatus.TIMEOUT]),
        functional=intervals["functional"], aesthetic=intervals["aesthetic"], overall=intervals["overall"],
        pass_rate=(round(st.pass_rate([(float(r.functional or 0) + float(r.aesthetic or 0)) / 2
                                        for r in mine_scored], options.pass_threshold), 4) if mine_scored else None),
        failure_costs=_failure_costs(mine_scored, verdicts), accessibility=_accessibility(mine),
        cost_usd=round(sum(r.cost_usd for r in every), 6), tokens=sum(r.tokens for r in every),
    )


def _cells(rows: Sequence[RunRow], how: SampleReduce) -> list[RunRow]:
    """One row per (candidate, query, variant), its scores the cell's (:func:`cluster.reduce.scoring.cell_score`)."""
    groups: dict[tuple[str, str, str | None], list[RunRow]] = defaultdict(list)
    for r in rows:
        groups[(r.candidate_id, r.query_id, r.variant)].append(r)
    out = []
    for group in groups.values():
        scored = [r for r in group if r.functional is not None and r.aesthetic is not None]
        if len(group) == 1 or not scored:
            out.append(group[0])
            continue
        samples = [(float(r.functional or 0.0), float(r.aesthetic or 0.0)) for r in scored]
        functional, aesthetic = cell_score(samples, how)
        # The cell's row (its run key, evidence, verdict): the best sample itself, or for a mean the first.
        chosen = scored[samples.index((functional, aesthetic))] if how == "best" else scored[0]
        out.append(chosen.model_copy(update={"functional": functional, "aesthetic": aesthetic}))
    return out


def write_tables(out_dir: Path, rows: Sequence[RunRow], reduction: Reduction) -> list[Path]:
    """Exports: runs as Parquet, CSV and JSON; the reduction as JSON. Returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    records = [r.model_dump(mode="json") for r in rows]
    columns = list(RunRow.model_fields)
    table = pa.Table.from_pylist(records, schema=_ROW_SCHEMA) if records else _ROW_SCHEMA.empty_table()
    pq.write_table(table, out_dir / RunFile.RUNS_PARQUET)
    with (out_dir / RunFile.RUNS_CSV).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(records)
    write_json_atomic(out_dir / RunFile.RUNS_JSON, records, indent=None)  # a table for programs: runs.csv is for people
    write_json_atomic(out_dir / RunFile.REDUCTION, reduction)
    return [out_dir / n for n in (RunFile.RUNS_PARQUET, RunFile.RUNS_CSV, RunFile.RUNS_JSON, RunFile.REDUCTION)]


_ROW_SCHEMA = pa.schema([
    (name, pa.float64() if name in ("functional", "aesthetic", "cost_usd") else
     pa.int64() if name in ("axe_violations", "dom_elements", "sample", "tokens", "preview_rounds") else
     pa.bool_() if name == "preview_final_clean" else pa.string())
    for name in RunRow.model_fields
])


def _read_verdicts(directory: Path) -> dict[str, _VerdictFacts]:
    facts: dict[str, _VerdictFacts] = {}
    if not directory.is_dir():
        return facts
    for path in directory.glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        judge = data["judge"]
        costs: dict[str, float] = defaultdict(float)
        for a in data.get("attributions", []):
            costs[a["category"]] += float(a["deduction"])
        facts[data["verdict_key"]] = _VerdictFacts(
            judge=f"{judge['name']}:{judge['rubric_version']}" + (f":{judge['model_id']}" if judge.get("model_id")
                                                                   else ""),
            label=data["label"], evidence_key=data["evidence_key"], functional=float(data["functional"]),
            aesthetic=float(data["aesthetic"]), costs=dict(costs),
        )
    return facts


def _row(outcome: Outcome, query: Query | None, verdicts: dict[str, _VerdictFacts], run_dir: Path) -> RunRow:
    scores = run_scores(outcome.status, outcome.functional, outcome.aesthetic)
    verdict = verdicts.get(outcome.verdict_key or "")
    axe = _axe_counts(run_dir, outcome.evidence_key)
    return RunRow(
        run_key=outcome.run_key, candidate_id=outcome.candidate_id, query_id=outcome.query_id,
        brief=query.brief if query else "", domain=query.domain if query else "unknown",
        leaf=query.leaf if query else "unknown", difficulty=query.difficulty.value if query else "unknown",
        language=query.language if query else "unknown",
        language_group=query.language_group.value if query else "unknown",
        kind=query.kind.value if query else "unknown", status=outcome.status.value,
        reason_code=outcome.reason.code.value, reason_detail=outcome.reason.detail[:500],
        judge=verdict.judge if verdict else None,
        functional=scores[0] if scores else None, aesthetic=scores[1] if scores else None,
        evidence_key=outcome.evidence_key, verdict_key=outcome.verdict_key,
        axe_violations=axe[0] if axe else None, dom_elements=axe[1] if axe else None,
        variant=outcome.variant, sample=outcome.sample,
        cost_usd=round(sum(u.cost_usd for u in outcome.usage), 8),
        tokens=sum(u.prompt_tokens + u.completion_tokens for u in outcome.usage), flags=",".join(outcome.flags),
        preview_rounds=outcome.preview.rounds if outcome.preview else None,
        preview_first=outcome.preview.first if outcome.preview else None,
        preview_final_clean=outcome.preview.final_clean if outcome.preview else None,
    )


def _axe_counts(run_dir: Path, evidence_key: str | None) -> tuple[int, int] | None:
    if not evidence_key:
        return None
    # Plain string paths: this runs once per run, and pathlib's overhead dominated it.
    path = os.path.join(run_dir, "evidence", evidence_key, "static", "accessibility.json")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if data.get("error"):
        return None
    return sum(int(v["nodes"]) for v in data["violations"]), int(data["dom_elements"])


def _failure_costs(rows: Sequence[RunRow], verdicts: dict[str, _VerdictFacts]) -> dict[str, float]:
    totals: dict[str, float] = defaultdict(float)
    for r in rows:
        verdict = verdicts.get(r.verdict_key or "")
        if verdict is not None:
            for category, cost in verdict.costs.items():
                totals[category] += cost
        elif r.status == OutcomeStatus.NON_ASSESSABLE.value:
            totals[f"non_assessable:{r.reason_code}"] += 16.0  # both dimensions at 0.0 from 8.0
    per_run = {k: round(v / len(rows), 4) for k, v in totals.items()} if rows else {}
    return dict(sorted(per_run.items(), key=lambda kv: (-kv[1], kv[0])))


def _accessibility(rows: Sequence[RunRow]) -> Accessibility | None:
    measured = [r for r in rows if r.axe_violations is not None and r.dom_elements is not None]
    if not measured:
        return None
    m = st.webaccess_metrics([int(r.axe_violations or 0) for r in measured],
                             [int(r.dom_elements or 0) for r in measured])
    return Accessibility(artifacts=m.artifacts, mean_defects=round(m.mean_defects, 4),
                         clean_rate=round(m.clean_rate, 2), mean_dom_elements=round(m.mean_dom_elements, 2),
                         defects_per_100_elements=round(m.defects_per_100_elements, 4), score=m.score)


def _slices(scored: Sequence[RunRow], names: Sequence[str], *, threshold: float, samples: int,
            seed: int) -> list[SliceCell]:
    cells: dict[tuple[str, str, str], list[RunRow]] = defaultdict(list)
    for r in scored:
        for dim in SLICES:
            value = getattr(r, dim)
            if value is not None:  # plain sweeps have no variant slice
                cells[(dim, str(value), r.candidate_id)].append(r)
    order = {n: i for i, n in enumerate(names)}
    out = []
    keys = sorted(cells, key=lambda k: (SLICES.index(k[0]), k[1], order.get(k[2], 0)))
    for i, (dim, value, name) in enumerate(keys):
        rows = cells[(dim, value, name)]
        f = [float(r.functional or 0.0) for r in rows]
        a = [float(r.aesthetic or 0.0) for r in rows]
        fi, ai = (st.bootstrap_mean(v, samples=samples, seed=seed + 2 * i + j) for j, v in enumerate((f, a)))
        out.append(SliceCell(
            slice=dim, value=value, candidate_id=name, n=len(rows), functional=round(fi.mean, 4),
            aesthetic=round(ai.mean, 4), overall=round((fi.mean + ai.mean) / 2, 4),
            functional_ci=Interval(mean=round(fi.mean, 4), low=round(fi.low, 4), high=round(fi.high, 4), n=fi.n),
            aesthetic_ci=Interval(mean=round(ai.mean, 4), low=round(ai.low, 4), high=round(ai.high, 4), n=ai.n),
            pass_rate=round(st.pass_rate([(x + y) / 2 for x, y in zip(f, a, strict=True)], threshold), 4),
            non_assessable=sum(r.status == OutcomeStatus.NON_ASSESSABLE.value for r in rows),
        ))
    return out


def _pairwise(overall: np.ndarray, names: Sequence[str]) -> list[Pairwise]:
    out = []
    for i, j in combinations(range(len(names)), 2):
        if not (np.isfinite(overall[:, i]) & np.isfinite(overall[:, j])).any():
            continue  # no query scored for both (e.g. one had only infrastructure errors): nothing to compare
        w = st.win_counts(overall[:, i].tolist(), overall[:, j].tolist())
        out.append(Pairwise(a=names[i], b=names[j], wins=w.wins, losses=w.losses, ties=w.ties,
                            win_rate=round(w.win_rate, 4)))
    return out


def _ratings(overall: np.ndarray, names: Sequence[str], samples: int, seed: int) -> list[Rating]:
    # A candidate with no scored query would get the field's average rating with an empty interval,
    # which reads like data: it is left out instead.
    rated = [i for i in range(len(names)) if np.isfinite(overall[:, i]).any()]
    if len(rated) < 2:
        return []
    intervals = st.bradley_terry_bootstrap(overall[:, rated], samples=min(samples, 200), seed=seed)
    ratings = [Rating(candidate_id=names[i], elo=round(r.rating, 1), low=round(r.low, 1), high=round(r.high, 1))
               for i, r in zip(rated, intervals, strict=True)]
    return sorted(ratings, key=lambda r: -r.elo)


def _by_judge(verdicts: dict[str, _VerdictFacts], evidence: set[str]) -> dict[str, dict[str, _VerdictFacts]]:
    grouped: dict[str, dict[str, _VerdictFacts]] = defaultdict(dict)
    for v in verdicts.values():
        if v.evidence_key in evidence:
            grouped[v.judge][v.evidence_key] = v
    return grouped


def _judge_stats(verdicts: dict[str, _VerdictFacts], evidence: set[str]) -> list[JudgeStats]:
    out = []
    for judge, items in sorted(_by_judge(verdicts, evidence).items()):
        for dim in DIMENSIONS:
            values = np.array([getattr(v, dim) for v in items.values()], dtype=float)
            out.append(JudgeStats(judge=judge, dimension=dim, n=len(values), mean=round(float(values.mean()), 4),
                                  variance=round(float(values.var(ddof=1)) if len(values) > 1 else 0.0, 4)))
    return out


def _judge_agreement(verdicts: dict[str, _VerdictFacts], evidence: set[str]) -> list[Agreement]:
    grouped = _by_judge(verdicts, evidence)
    out = []
    for a, b in combinations(sorted(grouped), 2):
        shared = sorted(set(grouped[a]) & set(grouped[b]))
        if not shared:
            continue
        for dim in DIMENSIONS:
            x = [getattr(grouped[a][k], dim) for k in shared]
            y = [getattr(grouped[b][k], dim) for k in shared]
            out.append(Agreement(rater_a=a, rater_b=b, dimension=dim, n=len(shared),
                                 kappa=_round(st.quadratic_weighted_kappa(x, y))))
    return out


def _human_agreement(rows: Sequence[RunRow], verdicts: dict[str, _VerdictFacts],
                     humans: dict[tuple[str, str], dict[str, float]]) -> list[Agreement]:
    if not humans:
        return []
    pairs: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        human = humans.get((r.candidate_id, r.query_id))
        verdict = verdicts.get(r.verdict_key or "")
        if human is None or verdict is None:
            continue
        for dim in DIMENSIONS:
            if dim in human:
                pairs[verdict.judge][dim].append((getattr(verdict, dim), human[dim]))
    out = []
    for judge, dims in sorted(pairs.items()):
        for dim, values in sorted(dims.items()):
            x, y = [p[0] for p in values], [p[1] for p in values]
            out.append(Agreement(rater_a=judge, rater_b="human", dimension=dim, n=len(values),
                                 kappa=_round(st.quadratic_weighted_kappa(x, y)), pearson=_round(st.pearson(x, y)),
                                 spearman=_round(st.spearman(x, y)), kendall=_round(st.kendall_tau_b(x, y))))
    return out


def _read_human_ratings(path: Path) -> dict[tuple[str, str], dict[str, float]]:
    """CSV with columns candidate_id, query_id and functional and/or aesthetic (0.0-8.0)."""
    if not path.is_file():
        raise ConfigError(f"human ratings file {path} does not exist")
    ratings: dict[tuple[str, str], dict[str, float]] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        needed = {"candidate_id", "query_id"}
        if not reader.fieldnames or not needed <= set(reader.fieldnames) or not set(DIMENSIONS) & set(
                reader.fieldnames):
            raise ConfigError(f"{path}: needs columns candidate_id, query_id and functional and/or aesthetic")
        for line, record in enumerate(reader, start=2):
            scores: dict[str, float] = {}
            for dim in DIMENSIONS:
                if record.get(dim) not in (None, ""):
                    try:
                        value = float(record[dim])
                    except ValueError as exc:
                        raise ConfigError(f"{path}:{line}: {dim} {record[dim]!r} is not a number") from exc
                    if not 0.0 <= value <= 8.0:
                        raise ConfigError(f"{path}:{line}: {dim} {value} is outside 0.0-8.0")
                    scores[dim] = value
            ratings[(record["candidate_id"], record["query_id"])] = scores
    return ratings


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
