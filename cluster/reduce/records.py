"""Records the reducer writes and the report reads: the wire format between the two.

``runs.parquet`` (and ``runs.json``) hold one :class:`RunRow` per run; ``reduction.json`` holds a
:class:`Reduction`. Scores are on Cookie-Frame's 0.0-8.0 scale; intervals are 95% bootstrap
intervals resampling queries.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from cluster.reduce.scoring import OutcomeCounts
from evaluator import ModelUsage


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class RunRow(_Model):
    """One run, flattened for tables, exports and the report's run pages."""

    run_key: str
    """Content key of the run."""
    candidate_id: str
    """Candidate."""
    query_id: str
    """Query."""
    brief: str
    """The query's brief."""
    domain: str
    """Query domain."""
    leaf: str
    """Query leaf category."""
    difficulty: str
    """easy / medium / hard."""
    language: str
    """Target language tag."""
    language_group: str
    """english / chinese / other."""
    kind: str
    """static_presentation / interactive_application."""
    status: str
    """judged / non_assessable / infra_error / timeout (an app hang or crash: judged, reason app_hang / app_crash)."""
    reason_code: str
    """Classified reason of the outcome."""
    reason_detail: str
    """The reason, for a person."""
    judge: str | None
    """Judge version that issued the verdict, when judged."""
    functional: float | None
    """Functional score (non-assessable runs: 0.0; excluded runs: null)."""
    aesthetic: float | None
    """Aesthetic score (non-assessable runs: 0.0; excluded runs: null)."""
    evidence_key: str | None
    """Evidence bundle, relative to the run directory as ``evidence/<key>``."""
    verdict_key: str | None
    """Verdict file, relative to the run directory as ``verdicts/<key>.json``."""
    axe_violations: int | None
    """axe-core violations (instances: one per affected element), when measured."""
    dom_elements: int | None
    """DOM element count when axe ran."""
    variant: str | None = None
    """Prompt variant of the answer, when the sweep has variants."""
    sample: int = 0
    """Sample number within its (candidate, query, variant) cell."""
    cost_usd: float = 0.0
    """Model spending of the run (generation, agent and judges)."""
    tokens: int = 0
    """Prompt and completion tokens of the run's model calls."""
    flags: str = ""
    """The verdicts' flags, comma-separated (e.g. ``prompt_injection``)."""
    preview_rounds: int | None = None
    """Agentic candidates: previews the model asked for (0: it never called the tool); null for others."""
    preview_first: str | None = None
    """Agentic: what the first preview reported (``ok`` / ``errors``), when there was one."""
    preview_final_clean: bool | None = None
    """Agentic: whether the final answer previews clean, when it was previewed."""

    @model_serializer(mode="wrap")
    def _agentic_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # The preview columns exist only for agentic runs: other sweeps export what they always exported.
        data: dict[str, Any] = handler(self)
        if self.preview_rounds is None:
            for name in ("preview_rounds", "preview_first", "preview_final_clean"):
                data.pop(name, None)
        return data


class Interval(_Model):
    """A mean with its 95% bootstrap interval."""

    mean: float
    """Point estimate."""
    low: float
    """Lower bound (2.5th percentile of the bootstrap)."""
    high: float
    """Upper bound (97.5th percentile)."""
    n: int
    """Number of observations (queries)."""


class Recovery(_Model):
    """How one agentic candidate used the preview tool and recovered from what it reported (LH-Bench's recovery
    rate: of the runs whose first preview had errors, the share whose final answer previews clean).

    The counts add up: ``runs = never_called + first_unknown + first_errors + (first previews that were clean)``,
    and ``first_errors = recovered + (not recovered) + final_unknown``. A run whose status is unknown is counted
    apart and left out of the rate it cannot inform, rather than counted as a failure."""

    candidate_id: str
    """The candidate (``generate: {mode: agentic}``)."""
    runs: int
    """Its runs with a recorded use of the tool (every generated run, whatever its outcome)."""
    never_called: int
    """Runs in which it never called the tool: counted apart, in no rate below."""
    first_unknown: int = 0
    """Runs that called the tool but whose first round has no report (the preview timed out or broke, or the
    call's arguments held no files): counted apart, in no rate below."""
    first_errors: int
    """Runs whose first round's report had errors."""
    first_errors_rate: float | None
    """``first_errors`` over the runs whose first round has a report (those that called the tool, less
    ``first_unknown``); None when there is none."""
    recovered: int
    """Of ``first_errors``, the runs whose final answer previews clean."""
    final_unknown: int = 0
    """Of ``first_errors``, the runs whose final answer's preview status is unknown (its preview timed out or
    broke, or the answer holds no app): counted apart, neither recovered nor not."""
    recovery_rate: Interval | None
    """``recovered`` over ``first_errors - final_unknown``, with its 95% Wilson score interval (``n`` is that
    denominator); None when it is 0."""
    mean_rounds: float | None
    """Mean previews per run that called the tool."""
    base: str | None = None
    """The same model in one turn (the candidate's ``base:``), when named."""
    gain: Interval | None = None
    """Overall score minus the base's with its 95% bootstrap interval over queries (``n``: queries). A query's
    difference is the mean over its (query, variant) cells both have scores for; the queries are resampled, not
    the cells, because a query's variants are not independent of one another."""


class Accessibility(_Model):
    """WebAccessBench's metrics for one candidate."""

    artifacts: int
    """Artifacts measured with axe-core."""
    mean_defects: float
    """E: mean defect instances per artifact."""
    clean_rate: float
    """Z: percentage of artifacts with zero defects."""
    mean_dom_elements: float
    """D: mean DOM element count."""
    defects_per_100_elements: float
    """R_dom: defects per 100 DOM elements (E when D is 0)."""
    score: int
    """WebAccessBench's overall 0-100 score: 0.5·Q_err + 0.3·Q_dom + 0.2·Z, rounded."""


class CandidateSummary(OutcomeCounts):
    """One candidate across the sweep."""

    functional: Interval | None
    """Functional mean with its interval."""
    aesthetic: Interval | None
    """Aesthetic mean with its interval."""
    overall: Interval | None
    """Mean of functional and aesthetic, with its interval."""
    pass_rate: float | None
    """Share of scored runs whose overall score reaches the pass threshold."""
    failure_costs: dict[str, float] = Field(default_factory=dict)
    """Failure category → points lost per scored run (both dimensions), largest first."""
    accessibility: Accessibility | None = None
    """axe-core metrics, when measured."""
    cost_usd: float = 0.0
    """Model spending on the candidate's runs."""
    tokens: int = 0
    """Tokens of those calls."""


class SliceCell(_Model):
    """A candidate's means on one slice of the queries."""

    slice: str
    """Slice dimension: domain, leaf, difficulty, language_group, kind or variant."""
    value: str
    """Slice value."""
    candidate_id: str
    """The candidate."""
    n: int
    """Scored runs in the cell."""
    functional: float
    """Mean functional score."""
    aesthetic: float
    """Mean aesthetic score."""
    overall: float
    """Mean overall score."""
    functional_ci: Interval | None = None
    """Functional mean with its bootstrap interval (fewer resamples than the candidate intervals)."""
    aesthetic_ci: Interval | None = None
    """Aesthetic mean with its bootstrap interval."""
    pass_rate: float | None = None
    """Share of the cell's scored runs whose overall score reaches the pass threshold."""
    non_assessable: int = 0
    """Scored runs in the cell that were non-assessable (counted as 0.0)."""


class Pairwise(_Model):
    """Head-to-head over the queries both candidates were scored on."""

    a: str
    """First candidate."""
    b: str
    """Second candidate."""
    wins: int
    """Queries where a scored higher overall."""
    losses: int
    """Queries where b scored higher."""
    ties: int
    """Equal scores."""
    win_rate: float
    """(wins + ties / 2) / queries."""


class Rating(_Model):
    """Bradley-Terry rating on the Elo scale (anchored so the mean rating is 1000)."""

    candidate_id: str
    """The candidate."""
    elo: float
    """Rating."""
    low: float
    """Lower bound of the 95% bootstrap interval."""
    high: float
    """Upper bound."""


class JudgeStats(_Model):
    """One judge's scores over the runs it judged."""

    judge: str
    """Judge version."""
    dimension: str
    """functional or aesthetic."""
    n: int
    """Verdicts."""
    mean: float
    """Mean score."""
    variance: float
    """Sample variance of the scores."""


class Agreement(_Model):
    """Agreement between two raters (two judges, or a judge and humans) on one dimension."""

    rater_a: str
    """First rater (judge version)."""
    rater_b: str
    """Second rater (judge version, or ``human``)."""
    dimension: str
    """functional or aesthetic."""
    n: int
    """Runs rated by both."""
    kappa: float | None
    """Quadratic-weighted Cohen's kappa on scores rounded to half points."""
    pearson: float | None = None
    """Pearson correlation (judge-human only)."""
    spearman: float | None = None
    """Spearman correlation (judge-human only)."""
    kendall: float | None = None
    """Kendall's tau-b (judge-human only)."""


class Reduction(_Model):
    """Everything the reducer concluded about a sweep."""

    version: int = 1
    """Format version."""
    sweep: str
    """Sweep name."""
    judge_labels: list[str]
    """Labels of the judges behind the scores."""
    pass_threshold: float
    """Overall score a run needs to pass."""
    bootstrap_samples: int
    """Bootstrap resamples behind every interval."""
    candidates: list[CandidateSummary]
    """Candidates, best first."""
    slices: list[SliceCell]
    """Per-slice means."""
    pairwise: list[Pairwise]
    """Head-to-head win rates."""
    ratings: list[Rating]
    """Bradley-Terry ratings, best first."""
    judges: list[JudgeStats]
    """Per-judge means and variances."""
    judge_agreement: list[Agreement]
    """Between every pair of judges that scored the same runs."""
    human_agreement: list[Agreement]
    """Between each judge and the human ratings, when given."""
    sample_reduce: str = "mean"
    """How several samples of a (candidate, query, variant) cell became the cell's one score."""
    usage: list[ModelUsage] = Field(default_factory=list)
    """Model calls of the sweep per role, endpoint and model."""
    exclusion_warning: str | None = None
    """Set when the candidates' infra-error rates differ by more than 5 percentage points (a biased exclusion)."""
    recovery: list[Recovery] = Field(default_factory=list)
    """Agentic candidates' use of the preview tool, one per candidate (left out without agentic candidates)."""

    @model_serializer(mode="wrap")
    def _recovery_when_agentic(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.recovery:
            data.pop("recovery", None)
        return data
