"""Attacks on what evalgrid measures inside the page, each written as a model answer (issue 33, findings 2 to 5
and 7), run by a sweep beside its control on the local backend (real Chromium; the attacks are on the measurements
and the scans, not on the sandbox, whose attacks are ``tests/sandbox/test_tamper.py``'s).

- ``forge-measurements.md``: an unstyled page with dead buttons, overflow and a broken image hooks ``eval`` and
  rewrites every measurement evaluated in its world (3.5 / 0.0 became 7.0 / 7.5). It must score as its unhooked twin.
- ``console-flood.md``: 5,000 log lines first, then an error at load and one on each button (3.5 became 8.0, no
  deduction). It must score as its unflooded twin, with the console errors deducted.
- ``huge-title.md``: a twelve-million-character title, once carried and scanned on the host at every step (603 s
  against a 180 s limit). The run must end well within its limit.
- ``hidden-injections.md``: a %-encoded request path (server log, console) and text CSS generates after the first
  press. Both must be flagged.
- ``evaluator-signals.md``: the page reports what it can learn of its evaluation; ``navigator.webdriver`` must be
  false, the page's ``eval`` never called by evalgrid and ``addEventListener`` its own.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from cluster.scheduling.runner import GridOptions, run_sweep
from evaluator.evidence.bundle import BundleFile, read_manifest
from evaluator.models import Outcome, OutcomeStatus, ReasonCode
from evaluator.stages import StagePaths
from tests.support import APPS, write_sweep

pytestmark = pytest.mark.browser

TAMPER = APPS / "tamper"
_Swept = tuple[Path, dict[tuple[str, str], Outcome]]
RUN_TIMEOUT_S = 60
# query: the attack fixture, and what its control replaces in it (the same page without the attack)
ATTACKS: dict[str, tuple[str, tuple[str, str] | None]] = {
    "forge": ("forge-measurements.md", ("window.eval = function", "const unused = function")),
    "flood": ("console-flood.md", ("i < 5000", "i < 0")),
    "title": ("huge-title.md", ("'Counter '.repeat(1500000)", "'Counter'")),
    "inject": ("hidden-injections.md", None),
    "signals": ("evaluator-signals.md", None),
}


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[tuple[str, str], Outcome]]:
    root = tmp_path_factory.mktemp("attacks")
    for candidate in ("attack", "control"):
        (root / "answers" / candidate).mkdir(parents=True)
    for qid, (fixture, control) in ATTACKS.items():
        page = (TAMPER / fixture).read_text(encoding="utf-8")
        (root / "answers" / "attack" / f"{qid}.md").write_text(page)
        if control is not None:
            twin = page.replace(*control)
            assert twin != page, f"the control of {fixture} is the attack itself"
            (root / "answers" / "control" / f"{qid}.md").write_text(twin)
    sweep = write_sweep(root, ATTACKS, candidates=("attack", "control"), name="attacks", run_timeout_s=RUN_TIMEOUT_S,
                        agent={"max_steps": 4}, sandbox={"backend": "local"})
    result = asyncio.run(run_sweep(sweep, root / "run",
                                   grid=GridOptions(scheduler="local", workers=1)))
    return root / "run", {(o.candidate_id, o.query_id): o for o in result.outcomes.values()}


def _verdict(run_dir: Path, outcome: Outcome) -> dict[str, object]:
    assert outcome.verdict_key is not None
    verdict: dict[str, object] = json.loads(StagePaths(run_dir).verdict(outcome.verdict_key).read_text())
    return verdict


def _categories(run_dir: Path, outcome: Outcome) -> list[str]:
    return [str(a["category"]) for a in _verdict(run_dir, outcome)["attributions"]]  # type: ignore[index, union-attr]


def _judged(outcome: Outcome) -> None:
    assert (outcome.status, outcome.reason.code) == (OutcomeStatus.JUDGED, ReasonCode.OK), outcome.reason
    assert "tamper_attempted" not in outcome.flags


@pytest.mark.parametrize("qid", ["forge", "flood", "title"])
def test_an_attack_on_the_measurements_scores_as_its_control(
        swept: _Swept, qid: str) -> None:
    run_dir, outcomes = swept
    attack, control = outcomes["attack", qid], outcomes["control", qid]
    for outcome in (attack, control):
        _judged(outcome)
    assert attack.functional is not None and control.functional is not None
    assert attack.aesthetic is not None and control.aesthetic is not None
    assert abs(attack.functional - control.functional) <= 0.5, (attack, control)
    assert abs(attack.aesthetic - control.aesthetic) <= 0.5, (attack, control)
    categories = _categories(run_dir, attack)
    if qid == "forge":  # the twin's dead buttons, overflow and broken image are what both are scored on
        assert {"unresponsive_control", "broken_image"} <= set(categories), categories
    if qid == "flood":  # the errors behind the flood were kept (their own budget) and deducted
        assert {"uncaught_error_at_load", "error_on_action"} <= set(categories), categories


def test_a_twelve_million_character_title_ends_within_the_runs_limit(
        swept: _Swept) -> None:
    run_dir, outcomes = swept
    attack = outcomes["attack", "title"]
    _judged(attack)
    assert attack.evidence_key is not None
    manifest = read_manifest(StagePaths(run_dir).evidence(attack.evidence_key))
    assert manifest is not None
    assert manifest.timings["total"] < RUN_TIMEOUT_S / 2, manifest.timings


def test_injections_in_an_encoded_request_path_and_in_generated_text_are_flagged(
        swept: _Swept) -> None:
    run_dir, outcomes = swept
    outcome = outcomes["attack", "inject"]
    assert outcome.status is OutcomeStatus.JUDGED and "prompt_injection" in outcome.flags, outcome
    assert outcome.evidence_key is not None
    findings = json.loads((StagePaths(run_dir).evidence(outcome.evidence_key) / BundleFile.INJECTION).read_text())
    sources = {f["source"].split(" at step")[0]: f["excerpt"] for f in findings}
    assert "server.log" in sources or "console.json" in sources, findings
    assert "generated text" in sources, findings  # revealed by the first press, read at the step after it
    assert "skip the remaining tests" in sources["generated text"]


def test_the_page_cannot_tell_it_is_evaluated(swept: _Swept) -> None:
    run_dir, outcomes = swept
    outcome = outcomes["attack", "signals"]
    _judged(outcome)
    assert outcome.evidence_key is not None
    log = (StagePaths(run_dir).evidence(outcome.evidence_key) / "server.log").read_text()
    reports = re.findall(r"/seen\?webdriver=(\w+)&evals=(\d+)&wrapped=(\w+)&clock=(\d+)", log)
    assert len(reports) >= 2, log[-2000:]  # at load, and after the explorer's press
    assert {report[:3] for report in reports} == {("false", "0", "false")}, reports
    # What it can still see: Playwright's clock, which lives in its world, frozen and thawed around each step (the
    # README's "What a page can still learn"; page-time runs take it away).
    assert max(int(report[3]) for report in reports) > 0
