"""Pairwise judges: which of two apps built for one query is better, on stored evidence only.

A pairwise judge is shown two committed bundles in one order (the app shown first, the app shown
second) and answers, per dimension, first, second or tie, citing evidence in both bundles. The
compare stage (:mod:`cluster.pairwise`) asks every pair in both orders, which is what exposes a judge
that picks by position (WiserUI-Bench's FA/SA/AA/CA).

Judges are ``heuristic`` (the heuristic judge's two absolute scores compared with a stated tie
margin: no model, so the whole path runs anywhere) and ``llm`` (:mod:`evaluator.judges.llm_pairwise`).
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from evaluator.evidence.bundle import BundleFile, EvidenceBundle
from evaluator.judges import create_judge
from evaluator.judges.failure_policy import score_app_failure
from evaluator.judges.heuristic import DEFAULT_RUBRIC
from evaluator.keys import content_key
from evaluator.llm.client import ModelAccess
from evaluator.models import (
    Dimension,
    EvidenceRef,
    JudgeConfig,
    JudgeInfo,
    PairChoice,
    PairwiseVerdict,
    Preference,
    Verdict,
)
from evaluator.registry import Registry


class PairwiseJudge(Protocol):
    """Compares two evidence bundles of one query, shown in a given order."""

    @property
    def version(self) -> str:
        """Identity of everything that shapes the choices; part of the pairwise keys."""
        ...

    async def compare(self, first: EvidenceBundle, second: EvidenceBundle, *, pairwise_key: str,
                      models: ModelAccess | None = None) -> PairwiseVerdict:
        """The verdict on ``first`` (shown first) against ``second``, keyed ``pairwise_key``."""
        ...


pairwise_judges: Registry[PairwiseJudge] = Registry(
    "pairwise judge", builtins=("evaluator.judges.pairwise", "evaluator.judges.llm_pairwise"))
"""Registry of pairwise judges; ``pairwise_judges.create(name, **options)`` builds one."""


def create_pairwise_judge(config: JudgeConfig) -> PairwiseJudge:
    """Build the pairwise judge a :class:`JudgeConfig` names (a wrong option is a ConfigError)."""
    return pairwise_judges.create(config.name, **pairwise_judges.check(config.name, config.options))


def pairwise_key(first_evidence: str, second_evidence: str, config: JudgeConfig, version: str) -> str:
    """The content key of one ordered comparison: both bundles, their order, the judge and its version."""
    return content_key("pairwise", first_evidence, second_evidence, config, version)


class HeuristicPairwiseOptions(BaseModel):
    """Options of the ``heuristic`` pairwise judge."""

    model_config = ConfigDict(extra="forbid")
    rubric: str = DEFAULT_RUBRIC
    """The heuristic judge's deduction table whose absolute scores are compared."""
    tie_margin: float = Field(0.5, ge=0.0, le=8.0)
    """Scores closer than this (0-8 scale) are a tie: one deduction's worth of noise is no preference."""


class HeuristicPairwiseJudge:
    """The heuristic judge's absolute scores of both apps, compared per dimension with a tie margin.

    It cannot be position-biased by construction (the order never enters the scores), which makes
    it the reference against which a model judge's order swap is read.
    """

    def __init__(self, options: HeuristicPairwiseOptions) -> None:
        self._options = options
        self._judge = create_judge(JudgeConfig(name="heuristic", options={"rubric": options.rubric}))
        # pairwise2: an app that hung or crashed is compared with the failure policy's scores, as its outcome has.
        self._version = f"heuristic-pairwise2:{self._judge.version}:margin={options.tie_margin:g}"
        # A bundle meets k-1 others in two orders each: score it once (the heuristic judge is deterministic).
        self._scored: dict[str, Verdict] = {}

    @property
    def version(self) -> str:
        """The absolute judge's version and the tie margin."""
        return self._version

    async def compare(self, first: EvidenceBundle, second: EvidenceBundle, *, pairwise_key: str,
                      models: ModelAccess | None = None) -> PairwiseVerdict:
        """Score both bundles with the heuristic judge and prefer the higher score beyond the margin."""
        scores = [await self._score(bundle) for bundle in (first, second)]
        choices = [self._choice(dimension, *scores) for dimension in Dimension]
        return PairwiseVerdict(
            pairwise_key=pairwise_key, first=first.manifest.evidence_key, second=second.manifest.evidence_key,
            judge=JudgeInfo(name="heuristic", kind="heuristic", rubric_version=self._version), choices=choices,
            label=f"heuristic pairwise ({self._options.rubric}, tie within {self._options.tie_margin:g})")

    async def _score(self, bundle: EvidenceBundle) -> Verdict:
        key = bundle.manifest.evidence_key
        if key not in self._scored:
            verdict = await self._judge(bundle, verdict_key=f"pairwise-side-{key}")
            if bundle.manifest.incomplete is not None:
                verdict = score_app_failure(verdict, bundle, verdict_key=verdict.verdict_key)
            self._scored[key] = verdict
        return self._scored[key]

    def _choice(self, dimension: Dimension, first: Verdict, second: Verdict) -> PairChoice:
        a, b = getattr(first, dimension.value), getattr(second, dimension.value)
        margin = self._options.tie_margin
        # Equal scores are a tie whatever the margin (at 0 too): an order must never break a tie.
        tied = a == b or abs(a - b) < margin
        choice = Preference.TIE if tied else Preference.FIRST if a > b else Preference.SECOND
        return PairChoice(dimension=dimension, choice=choice,
                          reason=f"{dimension.value} {a:g} (first) against {b:g} (second); a tie within {margin:g}",
                          first_evidence=_cited(first, dimension), second_evidence=_cited(second, dimension))


def _cited(verdict: Verdict, dimension: Dimension) -> list[EvidenceRef]:
    """The evidence the absolute verdict's deductions on ``dimension`` cite; the first screenshot when none."""
    refs = [ref for a in verdict.attributions if a.dimension is dimension for ref in a.evidence][:4]
    return refs or [EvidenceRef(file=BundleFile.screenshot("desktop"))]


pairwise_judges.register("heuristic", options=HeuristicPairwiseOptions)(
    lambda **options: HeuristicPairwiseJudge(HeuristicPairwiseOptions.model_validate(options)))
