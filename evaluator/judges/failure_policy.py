"""The failure policy: the verdict on an app that hung, crashed or tampered with the run, from the evidence up to it.

The sweep's judge scores the bundle the app cut short (marked ``incomplete`` in its manifest); this policy
then sets the functional score to 0.0 with a ``hang``, ``crash`` or ``tamper`` attribution citing the last screenshot
and the recorded end of the run, and keeps the judge's aesthetic verdict only when Static Perception was
complete (otherwise aesthetic 0.0: no design was seen). The wording is ``rubrics/failure-policy.yaml``.
"""

from __future__ import annotations

import functools

from evaluator.evidence.bundle import MANIFEST, BundleFile, EvidenceBundle
from evaluator.keys import sha256_bytes
from evaluator.models import (
    Dimension,
    EvidenceRef,
    FailureAttribution,
    IncompleteEvidence,
    JudgeInfo,
    Severity,
    Verdict,
)
from evaluator.package_data import YamlDocument, package_text, yaml_document

_FULL_SCALE = 8.0
"""The judge's own deductions on a zeroed dimension are dropped: the failure accounts for all of its points."""


@functools.cache
def _policy_text() -> str:
    return package_text("rubrics", "failure-policy.yaml")


def _policy() -> YamlDocument:
    return yaml_document(_policy_text(), "the failure policy")


def policy_version() -> str:
    """The policy's name and a hash of its text: part of the keys of the verdicts it issues."""
    return f"{_policy()['version']}@{sha256_bytes(_policy_text().encode())[:12]}"


def perceived(bundle: EvidenceBundle) -> bool:
    """Whether Static Perception finished before the app's failure (its screenshots are in the bundle)."""
    return bundle.has(BundleFile.screenshot("desktop")) and not bundle.has(BundleFile.STATIC_FAILURE)


def score_app_failure(judged: Verdict, bundle: EvidenceBundle, *, verdict_key: str) -> Verdict:
    """The failure policy's verdict, from the judge's verdict ``judged`` on the cut-short ``bundle``."""
    incomplete = bundle.manifest.incomplete
    if incomplete is None:
        raise ValueError(f"{bundle.root} is a complete bundle: judge it, the failure policy is for hangs and crashes")
    policy = _policy()
    rule = policy["failures"][incomplete.failure.value]
    words = {"phase": incomplete.phase, "steps": incomplete.steps, "failure": incomplete.failure.value,
             "probe": incomplete.probe.detail if incomplete.probe else "", "detail": incomplete.detail,
             "judge": judged.label, "reason": judged.aesthetic_reason}
    refs = _evidence(incomplete)
    attributions = [FailureAttribution(
        category=incomplete.failure.value, dimension=Dimension.FUNCTIONAL, severity=Severity(rule["severity"]),
        deduction=_FULL_SCALE, description=rule["description"].format(**words), evidence=refs)]
    if perceived(bundle):
        aesthetic, aesthetic_reason = judged.aesthetic, policy["aesthetic"]["perceived"].format(**words)
        attributions += [a for a in judged.attributions if a.dimension is Dimension.AESTHETIC]
        criteria = [c for c in judged.criteria if c.dimension is Dimension.AESTHETIC]
    else:
        aesthetic, aesthetic_reason, criteria = 0.0, policy["aesthetic"]["not_perceived"].format(**words), []
        attributions.append(FailureAttribution(
            category=incomplete.failure.value, dimension=Dimension.AESTHETIC, severity=Severity(rule["severity"]),
            deduction=_FULL_SCALE,
            description=policy["aesthetic"]["not_perceived_description"].format(**words), evidence=refs))
    flags = sorted({*judged.flags, *([rule["flag"]] if rule.get("flag") else [])})
    return judged.model_copy(update={
        "verdict_key": verdict_key, "functional": 0.0, "aesthetic": aesthetic, "flags": flags,
        "functional_reason": rule["functional_reason"].format(**words), "aesthetic_reason": aesthetic_reason,
        "criteria": criteria, "attributions": attributions,
        "label": f"{judged.label} + failure policy ({incomplete.failure.value}: functional 0)"})


def _evidence(incomplete: IncompleteEvidence) -> list[EvidenceRef]:
    """The last screenshot before the failure (with its step) and the recorded end of the run."""
    refs = []
    if incomplete.last_screenshot is not None:
        step = _step_of(incomplete.last_screenshot)
        refs.append(EvidenceRef(file=incomplete.last_screenshot, step=step,
                                detail=f"the last screenshot before the {incomplete.failure.value}"))
    refs.append(EvidenceRef(file=BundleFile.RESULT, detail=f"ended_by {incomplete.failure.value}: "
                                                                   f"{incomplete.detail[:300]}"))
    return refs


def _step_of(screenshot: str) -> int | None:
    """``interaction/steps/007.jpg`` → 7; a static screenshot has no step."""
    name = screenshot.rsplit("/", 1)[-1].split(".")[0]
    return int(name) if screenshot.startswith(f"{BundleFile.STEPS}/") and name.isdigit() else None


def score_unreadable_bundle(*, evidence_key: str, verdict_key: str, detail: str) -> Verdict:
    """The failure policy's verdict on a committed bundle a judge could not read because of what it holds: the
    app's tampering (functional and aesthetic 0.0, flagged ``tamper_attempted``), issued by the policy itself."""
    rule = _policy()["unreadable"]
    description = rule["description"].format(detail=detail[:500])
    # The manifest indexes every file the judge could not make sense of (which one failed is in the detail).
    refs = [EvidenceRef(file=MANIFEST, detail=detail[:200])]
    attributions = [FailureAttribution(category="tamper", dimension=dimension, severity=Severity(rule["severity"]),
                                       deduction=_FULL_SCALE, description=description, evidence=refs)
                    for dimension in (Dimension.FUNCTIONAL, Dimension.AESTHETIC)]
    return Verdict(verdict_key=verdict_key, evidence_key=evidence_key,
                   judge=JudgeInfo(name="failure-policy", kind="heuristic", rubric_version=policy_version()),
                   functional=0.0, aesthetic=0.0, functional_reason=rule["functional_reason"],
                   aesthetic_reason=rule["aesthetic_reason"], attributions=attributions, flags=[rule["flag"]],
                   label=rule["label"])
