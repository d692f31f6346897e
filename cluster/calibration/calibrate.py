"""``evalgrid calibrate``: how well a (judge, agent) pair tells working apps from their broken twins.

The suite (``fixtures/calibration/``) is a set of working apps, each an answer file with a YAML record of
its query and the features it has. Twins are made from them by ``cluster.calibration.twins``; the apps and their twins
become one sweep that runs through the grid like any other (one candidate; a query per app and per twin,
``<app>.<original|operator>.<answer hash>``), so verdicts are reused by content key. The measures:

- functional pairwise accuracy: a functional twin must score strictly below its original (a tie is wrong),
  overall and per operator;
- AUC of the functional score, working apps against functional twins;
- aesthetic-twin accuracy: a design-damaged twin must score strictly below its original on aesthetics;
- functional drift on aesthetic twins: how far the functional score moved when only the design changed.

A pair whose either run was not judged (an infrastructure failure or timeout) is left out and counted. A
functional twin whose first screenshot differs from its original's (beyond what rendering noise explains)
is left out too: the operators promise an identical first screen, except ``scripts_removed``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import cv2
import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rich.table import Table

from cluster.calibration.twins import EXCLUDED_BY, REQUIRES, Operator, make_twin
from evaluator.errors import ConfigError
from evaluator.keys import content_key, sha256_bytes
from evaluator.models import AgentConfig, JudgeConfig, Outcome, OutcomeStatus, Query

SUITE = Path(__file__).resolve().parents[2] / "fixtures" / "calibration"
CANDIDATE = "calibration"
ORIGINAL = "original"
Feature = Literal["enter", "checkbox", "delete", "click", "keyboard", "canvas"]
# A functional twin's first screenshot may differ from its original's by rendering noise only.
_SAME_SCREEN_MAX_CHANGED = 0.005


class SuiteApp(BaseModel):
    """One working app of the calibration suite: its query, its stack and the behaviours it has."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,35}$")
    """Query id; the answer is ``<id>.md`` beside the record."""
    stack: Literal["vanilla", "react-umd", "vue-cdn", "jquery", "alpine", "react-component", "vue-sfc"]
    """How the app is written."""
    brief: str
    domain: str
    leaf: str
    difficulty: Literal["easy", "medium", "hard"]
    language: str
    kind: Literal["interactive_application", "static_presentation"]
    checklist: list[str] = Field(default_factory=list)
    features: list[Feature]
    """Behaviours the app has; an operator that breaks one the app lacks makes no twin of it."""

    def query(self, query_id: str | None = None) -> Query:
        """The app's query, under ``query_id`` (a twin's) or its own id."""
        fields = self.model_dump(exclude={"stack", "features"})
        return Query.model_validate({**fields, "id": query_id or self.id})


class PairResult(BaseModel):
    """An original and one twin, as judged."""

    app: str
    operator: Operator
    original: tuple[float, float] | None
    """(functional, aesthetic) of the original, or None when it was not judged."""
    twin: tuple[float, float] | None
    """The same for the twin."""
    excluded: str | None = None
    """Why the pair does not count, when it does not."""


class OperatorScore(BaseModel):
    """One operator's pairs."""

    pairs: int
    correct: int
    accuracy: float | None


class Calibration(BaseModel):
    """``calibration.json``: one (judge version, agent config) pair's discrimination on the suite."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    key: str
    """Content key of (judge version, judge config, agent config): calibrations of the same pair match."""
    judge_version: str
    """The judge's version as its verdicts give it (rubric or prompt version)."""
    judge: JudgeConfig
    agent: AgentConfig
    apps: int
    """Working apps run."""
    functional_pairwise_accuracy: float | None
    """Share of functional twins scored strictly below their original (ties count as wrong)."""
    functional_per_operator: dict[str, OperatorScore]
    auc: float | None
    """Probability that a working app outscores a functional twin on the functional score (ties count half)."""
    aesthetic_twin_accuracy: float | None
    """Share of aesthetic twins scored strictly below their original on aesthetics."""
    aesthetic_per_operator: dict[str, OperatorScore]
    functional_drift_max: float | None
    """Largest functional score change on an aesthetic twin (the function did not change)."""
    functional_drift_within_1: float | None
    """Share of aesthetic twins whose functional score moved by at most 1.0."""
    excluded: dict[str, int]
    """Pairs left out, by reason."""
    pairs: list[PairResult]


def load_suite(root: Path = SUITE, only: Iterable[str] | None = None) -> list[tuple[SuiteApp, str]]:
    """The suite's apps with their answers, in id order (``only``: these ids)."""
    apps_dir = root / "apps"
    if not apps_dir.is_dir():
        raise ConfigError(f"no calibration suite at {root} (expected {apps_dir}/<id>.yaml and <id>.md)")
    wanted = set(only) if only else None
    apps = []
    for record in sorted(apps_dir.glob("*.yaml")):
        try:
            app = SuiteApp.model_validate(yaml.safe_load(record.read_text(encoding="utf-8")))
        except (ValidationError, yaml.YAMLError) as exc:
            raise ConfigError(f"{record}: not a calibration app record: {exc}") from exc
        if app.id != record.stem:
            raise ConfigError(f"{record}: id {app.id!r} must match the file name")
        if wanted is not None and app.id not in wanted:
            continue
        answer = record.with_suffix(".md")
        if not answer.is_file():
            raise ConfigError(f"{record}: its answer {answer.name} is missing")
        apps.append((app, answer.read_text(encoding="utf-8")))
    if wanted is not None and (unknown := wanted - {app.id for app, _ in apps}):
        raise ConfigError(f"no calibration app {', '.join(sorted(unknown))} in {apps_dir}")
    if not apps:
        raise ConfigError(f"the calibration suite at {apps_dir} has no apps")
    return apps


def write_sweep(apps: list[tuple[SuiteApp, str]], operators: Iterable[Operator], work: Path, *,
                agent: AgentConfig, judge: JudgeConfig, concurrency: int) -> Path:
    """Write the suite as a sweep under ``work`` (queries, answers, sweep file); return the sweep file."""
    answers = work / "answers" / CANDIDATE
    answers.mkdir(parents=True, exist_ok=True)
    queries: list[dict[str, object]] = []
    for app, answer in apps:
        # A run is keyed by its query, not by its answer: the answer's hash in the query id makes an edited
        # app (or operator) run again instead of reusing the outcome of its previous version.
        versions: list[tuple[str, str | None]] = [(ORIGINAL, answer)]
        for op in operators:
            needs, immune = REQUIRES[op], EXCLUDED_BY.get(op)
            applies = (needs is None or needs in app.features) and immune not in app.features
            versions.append((op.value, make_twin(answer, op) if applies else None))
        for name, text in versions:
            if text is None:
                continue
            query_id = f"{app.id}.{name}.{sha256_bytes(text.encode())[:8]}"
            (answers / f"{query_id}.md").write_text(text, encoding="utf-8")
            queries.append(app.query(query_id).model_dump(mode="json"))
    (work / "queries.yaml").write_text(yaml.safe_dump({"version": 1, "queries": queries}, sort_keys=False,
                                                      allow_unicode=True), encoding="utf-8")
    sweep = {"name": "calibration", "queries": "queries.yaml",
             "candidates": [{"id": CANDIDATE, "answers": f"answers/{CANDIDATE}"}],
             "agent": agent.model_dump(mode="json"), "judge": judge.model_dump(mode="json"),
             "concurrency": concurrency}
    path = work / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep, sort_keys=False), encoding="utf-8")
    return path


def measure(outcomes: Iterable[Outcome], run_dir: Path, *, agent: AgentConfig, judge: JudgeConfig) -> Calibration:
    """The calibration measures from a finished suite sweep's outcomes (and its evidence, for the screen check)."""
    by_version: dict[tuple[str, str], Outcome] = {}
    for outcome in outcomes:
        app, name, _ = outcome.query_id.split(".")
        by_version[(app, name)] = outcome
    by_query = {f"{app}.{name}": o for (app, name), o in by_version.items()}
    apps = sorted(app for app, name in by_version if name == ORIGINAL)
    pairs: list[PairResult] = []
    for (app, name), twin in sorted(by_version.items()):
        if name == ORIGINAL or (app, ORIGINAL) not in by_version:
            continue
        original, op = by_version[(app, ORIGINAL)], Operator(name)
        pair = PairResult(app=app, operator=op, original=_scores(original), twin=_scores(twin))
        if pair.original is None or pair.twin is None:
            pair.excluded = "not judged (infrastructure failure or timeout)"
        elif (not op.aesthetic and op is not Operator.SCRIPTS_REMOVED
              and not _same_first_screen(run_dir, original, twin)):
            pair.excluded = "first screenshot differs from the original's"
        pairs.append(pair)
    counted = [p for p in pairs if p.excluded is None]
    functional = [p for p in counted if not p.operator.aesthetic]
    aesthetic = [p for p in counted if p.operator.aesthetic]
    drift = [abs(p.twin[0] - p.original[0]) for p in aesthetic if p.twin and p.original]
    working = [s[0] for a in apps if (s := _scores(by_version[(a, ORIGINAL)])) is not None]
    broken = [p.twin[0] for p in functional if p.twin]
    versions = {o.judge_label for o in by_query.values() if o.judge_label}
    version = stored_judge_version(run_dir, by_query.values()) or ", ".join(sorted(versions)) or judge.name
    excluded: dict[str, int] = defaultdict(int)
    for p in pairs:
        if p.excluded:
            excluded[p.excluded] += 1
    return Calibration(
        key=content_key("calibration", version, judge.model_dump(mode="json"), agent.model_dump(mode="json")),
        judge_version=version, judge=judge, agent=agent, apps=len(apps),
        functional_pairwise_accuracy=_accuracy(functional, 0),
        functional_per_operator=_per_operator(functional, 0),
        auc=_auc(working, broken),
        aesthetic_twin_accuracy=_accuracy(aesthetic, 1),
        aesthetic_per_operator=_per_operator(aesthetic, 1),
        functional_drift_max=round(max(drift), 2) if drift else None,
        functional_drift_within_1=round(sum(d <= 1.0 for d in drift) / len(drift), 4) if drift else None,
        excluded=dict(excluded), pairs=pairs,
    )


def _scores(outcome: Outcome) -> tuple[float, float] | None:
    if outcome.status is OutcomeStatus.JUDGED and outcome.functional is not None and outcome.aesthetic is not None:
        return float(outcome.functional), float(outcome.aesthetic)
    if outcome.status is OutcomeStatus.NON_ASSESSABLE:  # the candidate's failure: scored 0, as in leaderboards
        return 0.0, 0.0
    return None


def _lower(pair: PairResult, dimension: int) -> bool:
    assert pair.original is not None and pair.twin is not None
    return pair.twin[dimension] < pair.original[dimension]


def _accuracy(pairs: list[PairResult], dimension: int) -> float | None:
    return round(sum(_lower(p, dimension) for p in pairs) / len(pairs), 4) if pairs else None


def _per_operator(pairs: list[PairResult], dimension: int) -> dict[str, OperatorScore]:
    grouped: dict[str, list[PairResult]] = defaultdict(list)
    for p in pairs:
        grouped[p.operator.value].append(p)
    return {op: OperatorScore(pairs=len(ps), correct=sum(_lower(p, dimension) for p in ps),
                              accuracy=_accuracy(ps, dimension)) for op, ps in sorted(grouped.items())}


def _auc(positives: list[float], negatives: list[float]) -> float | None:
    if not positives or not negatives:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return round(wins / (len(positives) * len(negatives)), 4)


def _same_first_screen(run_dir: Path, original: Outcome, twin: Outcome) -> bool:
    shots = [run_dir / "evidence" / (o.evidence_key or "-") / "static" / "desktop-viewport.png"
             for o in (original, twin)]
    if not all(shot.is_file() for shot in shots):
        return False
    a, b = (cv2.imread(str(shot), cv2.IMREAD_COLOR) for shot in shots)
    if a is None or b is None or a.shape != b.shape:
        return False
    changed = np.count_nonzero(np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2) > 16)
    return bool(changed / (a.shape[0] * a.shape[1]) <= _SAME_SCREEN_MAX_CHANGED)


def stored_judge_version(run_dir: Path, outcomes: Iterable[Outcome]) -> str | None:
    """``name:rubric_version`` of the judge that issued the first stored verdict among ``outcomes``, if any.

    Calibrations are keyed by it, and a sweep's scores are matched to a calibration by it.
    """
    for outcome in outcomes:
        path = run_dir / "verdicts" / f"{outcome.verdict_key}.json"
        if outcome.verdict_key and path.is_file():
            judge = json.loads(path.read_text(encoding="utf-8")).get("judge", {})
            return f"{judge.get('name')}:{judge.get('rubric_version')}"
    return None


def calibration_table(calibration: Calibration) -> Table:
    """The measures per operator, for the terminal."""
    table = Table(title=f"evalgrid calibration — {calibration.judge_version}, agent {calibration.agent.policy} "
                        f"({calibration.apps} apps)")
    for column in ("operator", "dimension", "pairs", "ordered right", "accuracy"):
        table.add_column(column, justify="left" if column in ("operator", "dimension") else "right")
    for dimension, scores in (("functional", calibration.functional_per_operator),
                              ("aesthetic", calibration.aesthetic_per_operator)):
        for op, score in scores.items():
            table.add_row(op, dimension, str(score.pairs), str(score.correct), _fmt(score.accuracy))
    table.add_section()
    table.add_row("all functional twins", "functional", "", "", _fmt(calibration.functional_pairwise_accuracy))
    table.add_row("AUC (working vs broken)", "functional", "", "", _fmt(calibration.auc))
    table.add_row("all aesthetic twins", "aesthetic", "", "", _fmt(calibration.aesthetic_twin_accuracy))
    table.add_row("functional drift on aesthetic twins", "max |Δ|", "", "", _fmt(calibration.functional_drift_max))
    for reason, count in calibration.excluded.items():
        table.add_row(f"left out: {reason}", "", str(count), "", "")
    return table


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"
