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
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from rich.table import Table

from cluster.calibration.twins import EXCLUDED_BY, REQUIRES, Operator, make_twin
from evaluator import (
    AgentConfig,
    ConfigError,
    JudgeConfig,
    Outcome,
    OutcomeStatus,
    Query,
    StagePaths,
    content_key,
    sha256_bytes,
)
from evaluator.evidence import BundleFile

SUITE = Path(__file__).resolve().parents[2] / "fixtures" / "calibration"
BUILT_IN = "built-in"
"""The name a calibration gives the suite at :data:`SUITE`."""
CANDIDATE = "calibration"
ORIGINAL = "original"
Feature = Literal["enter", "checkbox", "delete", "click", "keyboard", "canvas"]
Style = Literal["forms_compute", "forms_store", "drag_drop", "sliders", "keyboard_game", "pointer_canvas",
                "multi_view", "media_timers"]
Split = Literal["dev", "test"]
LABELS = "labels.yaml"
# A functional twin's first screenshot may differ from its original's by rendering noise only.
_SAME_SCREEN_MAX_CHANGED = 0.005


class Provenance(BaseModel):
    """Where a third-party app of the real-app suite comes from, and what was changed to run it offline."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    package: str
    """The npm package whose demo or example page the app is."""
    version: str
    license: str
    files: list[str]
    """Paths inside the package's tarball that were used."""
    changes: list[str]
    """Every change made to run it offline (inlined, dropped); never one of behaviour."""


class Edit(BaseModel):
    """One edit of a per-app twin: ``find`` occurs exactly once in the answer."""

    model_config = ConfigDict(extra="forbid")

    find: str = Field(min_length=1)
    replace: str


class SuiteApp(BaseModel):
    """One working app of a calibration suite: its query, its stack and the behaviours it has."""

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
    style: Style | None = None
    """Interaction style (the real-app suite reports its measures per style)."""
    provenance: Provenance | None = None
    """Set for a third-party app; its package name decides the app's half of the suite."""
    patches: dict[Operator, list[Edit]] = Field(default_factory=dict)
    """The app's own twins for the patched operators (``core_dead``, ``wrong_result``, ``drop_dead``)."""

    @field_validator("patches")
    @classmethod
    def _only_patched(cls, patches: dict[Operator, list[Edit]]) -> dict[Operator, list[Edit]]:
        if generic := [op.value for op in patches if not op.patched]:
            raise ValueError(f"{', '.join(generic)} are generic operators, not per-app patches")
        return patches

    @property
    def split(self) -> Split | None:
        """``test`` or ``dev`` by a hash of the package name (fixed, never chosen); None for a suite's own apps."""
        if self.provenance is None:
            return None
        return "test" if int(sha256_bytes(self.provenance.package.encode())[:2], 16) % 2 else "dev"

    def twin(self, answer: str, operator: Operator) -> str | None:
        """``answer`` with ``operator`` applied, or None when it does not apply to this app."""
        if operator.patched:
            edits = self.patches.get(operator)
            return _patched(self.id, operator, answer, edits) if edits else None
        needs, immune = REQUIRES[operator], EXCLUDED_BY.get(operator)
        if (needs is not None and needs not in self.features) or immune in self.features:
            return None
        return make_twin(answer, operator)

    def query(self, query_id: str | None = None) -> Query:
        """The app's query, under ``query_id`` (a twin's) or its own id."""
        fields = self.model_dump(exclude={"stack", "features", "style", "provenance", "patches"})
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


class GroupScore(BaseModel):
    """The measures on one group of apps (a half of the suite, or one interaction style in it)."""

    apps: int
    functional_pairs: int
    functional_correct: int
    functional_accuracy: float | None
    auc: float | None
    aesthetic_pairs: int
    aesthetic_correct: int
    aesthetic_accuracy: float | None
    drift_max: float | None
    drift_within_1: float | None


class Calibration(BaseModel):
    """``calibration.json``: one (judge version, agent config) pair's discrimination on the suite."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    key: str
    """Content key of (judge version, judge config, agent config), and of the suite and half when they are not the
    built-in suite whole: calibrations of the same pair on the same suite match."""
    suite: str = BUILT_IN
    """The suite: ``built-in`` (``fixtures/calibration``) or the directory name of another (``realapps``)."""
    split: str = "all"
    """The half of the suite run: ``all``, ``dev`` or ``test``."""
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
    groups: dict[str, GroupScore] = Field(default_factory=dict)
    """Per half of the suite (``dev``, ``test``) and per ``<half>/<style>``, for a suite whose apps have them."""
    excluded: dict[str, int]
    """Pairs left out, by reason."""
    pairs: list[PairResult]


def _patched(app: str, operator: Operator, answer: str, edits: list[Edit]) -> str:
    for edit in edits:
        if (count := answer.count(edit.find)) != 1:
            raise ConfigError(f"{app}: a {operator.value} edit's find text occurs {count} times in the answer "
                              f"(it must occur exactly once): {edit.find[:80]!r}")
        answer = answer.replace(edit.find, edit.replace)
    return answer


class Label(BaseModel):
    """What an app's play-test said of one version (the original or a twin)."""

    model_config = ConfigDict(extra="forbid")

    label: Literal["works", "broken"]
    answer: str
    """The first 12 hex digits of the version's answer hash: a label is stale once the answer changes."""
    reason: str = ""
    """Why the play-test failed, for a broken version."""


def load_labels(root: Path) -> dict[str, dict[str, Label]] | None:
    """The play-test labels of a suite (``labels.yaml``), or None for a suite without play-tests."""
    path = root / LABELS
    if not path.is_file():
        return None
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return {app: {name: Label.model_validate(label) for name, label in versions.items()}
                for app, versions in raw.items()}
    except (ValidationError, yaml.YAMLError, AttributeError) as exc:
        raise ConfigError(f"{path}: not a labels file ({exc}); write it again with "
                          "`python -m cluster.calibration.playtest --write`") from exc


def versions(app: SuiteApp, answer: str, operators: Iterable[Operator]) -> list[tuple[str, str]]:
    """(name, answer) of the original and of each twin that ``operators`` make of ``app``."""
    made: list[tuple[str, str]] = [(ORIGINAL, answer)]
    for op in operators:
        if (text := app.twin(answer, op)) is not None:
            made.append((op.value, text))
    return made


def confirmed(labels: dict[str, dict[str, Label]] | None, app: str, name: str, text: str) -> bool:
    """Whether a version joins the sweep: every version of a suite without play-tests does; with them, an
    original its play-test passes and a functional twin its play-test fails, on this very answer. An aesthetic
    twin keeps the function by construction and is not play-tested (a drag aimed at a styled layout may miss
    the unstyled one)."""
    if labels is None or (name != ORIGINAL and Operator(name).aesthetic):
        return True
    label = labels.get(app, {}).get(name)
    if label is None or label.answer != sha256_bytes(text.encode())[:12]:
        return False
    return label.label == ("works" if name == ORIGINAL else "broken")


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
                agent: AgentConfig, judge: JudgeConfig, concurrency: int,
                labels: dict[str, dict[str, Label]] | None = None) -> tuple[Path, list[str]]:
    """Write the suite as a sweep under ``work`` (queries, answers, sweep file).

    Returns the sweep file and the versions left out because their play-test label does not confirm them
    (``<app>.<version>``; always empty without ``labels``).
    """
    answers = work / "answers" / CANDIDATE
    answers.mkdir(parents=True, exist_ok=True)
    queries: list[dict[str, object]] = []
    unconfirmed: list[str] = []
    operators = list(operators)
    for app, answer in apps:
        # A run is keyed by its query, not by its answer: the answer's hash in the query id makes an edited
        # app (or operator) run again instead of reusing the outcome of its previous version.
        for name, text in versions(app, answer, operators):
            if not confirmed(labels, app.id, name, text):
                unconfirmed.append(f"{app.id}.{name}")
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
    return path, unconfirmed


def measure(outcomes: Iterable[Outcome], run_dir: Path, *, agent: AgentConfig, judge: JudgeConfig,
            suite: Iterable[SuiteApp] = (), unconfirmed: Iterable[str] = (), suite_name: str = BUILT_IN,
            split: str = "all") -> Calibration:
    """The calibration measures from a finished suite sweep's outcomes (and its evidence, for the screen check).

    ``suite``: the apps, for the measures per half and style of a suite whose apps have them; ``unconfirmed``:
    versions their play-test did not confirm (counted among the pairs left out); ``suite_name`` and ``split``:
    which suite, and which half of it, the outcomes are from.
    """
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
        elif op.aesthetic and _changed_share(run_dir, original, twin, full=True) == 0.0:
            pair.excluded = "looks exactly like the original (the operator changed nothing visible)"
        pairs.append(pair)
    working = {a: s[0] for a in apps if (s := _scores(by_version[(a, ORIGINAL)])) is not None}
    overall = _group_score(pairs, working)
    versions = {o.judge_label for o in by_query.values() if o.judge_label}
    version = stored_judge_version(run_dir, by_query.values()) or ", ".join(sorted(versions)) or judge.name
    excluded: dict[str, int] = defaultdict(int)
    for p in pairs:
        if p.excluded:
            excluded[p.excluded] += 1
    if skipped := len(list(unconfirmed)):
        excluded["not confirmed by the app's play-test"] = skipped
    counted = [p for p in pairs if p.excluded is None]
    configs = (version, judge.model_dump(mode="json"), agent.model_dump(mode="json"))
    # the built-in suite whole keeps the key it always had, so its stored records still name their files
    where = () if (suite_name, split) == (BUILT_IN, "all") else (suite_name, split)
    return Calibration(
        key=content_key("calibration", *configs, *where), suite=suite_name, split=split,
        judge_version=version, judge=judge, agent=agent, apps=len(apps),
        functional_pairwise_accuracy=overall.functional_accuracy,
        functional_per_operator=_per_operator([p for p in counted if not p.operator.aesthetic], 0),
        auc=overall.auc,
        aesthetic_twin_accuracy=overall.aesthetic_accuracy,
        aesthetic_per_operator=_per_operator([p for p in counted if p.operator.aesthetic], 1),
        functional_drift_max=overall.drift_max,
        functional_drift_within_1=overall.drift_within_1,
        groups=_groups(pairs, working, list(suite)),
        excluded=dict(excluded), pairs=pairs,
    )


def _group_score(pairs: list[PairResult], working: dict[str, float]) -> GroupScore:
    counted = [p for p in pairs if p.excluded is None]
    functional = [p for p in counted if not p.operator.aesthetic]
    aesthetic = [p for p in counted if p.operator.aesthetic]
    drift = [abs(p.twin[0] - p.original[0]) for p in aesthetic if p.twin and p.original]
    return GroupScore(
        apps=len(working), functional_pairs=len(functional),
        functional_correct=sum(_lower(p, 0) for p in functional), functional_accuracy=_accuracy(functional, 0),
        auc=_auc(list(working.values()), [p.twin[0] for p in functional if p.twin]),
        aesthetic_pairs=len(aesthetic), aesthetic_correct=sum(_lower(p, 1) for p in aesthetic),
        aesthetic_accuracy=_accuracy(aesthetic, 1),
        drift_max=round(max(drift), 2) if drift else None,
        drift_within_1=round(sum(d <= 1.0 for d in drift) / len(drift), 4) if drift else None)


def _groups(pairs: list[PairResult], working: dict[str, float], suite: list[SuiteApp]) -> dict[str, GroupScore]:
    """Measures per half (``dev``, ``test``) and per ``<half>/<style>``, for apps that have them."""
    members: dict[str, set[str]] = defaultdict(set)
    for app in suite:
        if app.split is not None:
            members[app.split].add(app.id)
            if app.style is not None:
                members[f"{app.split}/{app.style}"].add(app.id)
    return {name: _group_score([p for p in pairs if p.app in ids], {a: s for a, s in working.items() if a in ids})
            for name, ids in sorted(members.items())}


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
    changed = _changed_share(run_dir, original, twin, full=False)
    return changed is not None and changed <= _SAME_SCREEN_MAX_CHANGED


def _changed_share(run_dir: Path, original: Outcome, twin: Outcome, *, full: bool) -> float | None:
    """The share of pixels that differ (beyond compression noise) between the two desktop screenshots, the
    first screen's or the ``full`` page's; None when either is missing or their sizes differ."""
    shots = [StagePaths(run_dir).evidence(o.evidence_key or "-") / BundleFile.screenshot("desktop", full=full)
             for o in (original, twin)]
    if not all(shot.is_file() for shot in shots):
        return None
    a, b = (cv2.imread(str(shot), cv2.IMREAD_COLOR) for shot in shots)
    if a is None or b is None or a.shape != b.shape:
        return None
    changed = np.count_nonzero(np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2) > 16)
    return float(changed / (a.shape[0] * a.shape[1]))


def stored_judge_version(run_dir: Path, outcomes: Iterable[Outcome]) -> str | None:
    """``name:rubric_version`` of the judge that issued the first stored verdict among ``outcomes``, if any.

    Calibrations are keyed by it, and a sweep's scores are matched to a calibration by it.
    """
    for outcome in outcomes:
        path = StagePaths(run_dir).verdict(outcome.verdict_key) if outcome.verdict_key else None
        if path is not None and path.is_file():
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
    if calibration.groups:
        table.add_section()
    for name, group in calibration.groups.items():
        table.add_row(f"{name} ({group.apps} apps)", "functional", str(group.functional_pairs),
                      str(group.functional_correct), _fmt(group.functional_accuracy))
        table.add_row("", "AUC", "", "", _fmt(group.auc))
        table.add_row("", "aesthetic", str(group.aesthetic_pairs), str(group.aesthetic_correct),
                      _fmt(group.aesthetic_accuracy))
    return table


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"
