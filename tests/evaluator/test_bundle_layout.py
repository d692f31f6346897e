"""The bundle's layout is spelled in one place: every other module names a bundle's files through ``BundleFile``."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from evaluator.agents.observation import ActionKind, ResultStatus
from evaluator.answer.generate import PreviewRound
from evaluator.errors import EvidenceError
from evaluator.evidence.bundle import INCOMPLETE, MANIFEST, PREVIEW_ROUNDS, BundleFile, EvidenceBundle, EvidenceWriter
from evaluator.evidence.console import ConsoleClass
from evaluator.llm.client import ModelAccess
from evaluator.models import AgentConfig, JudgeConfig, ReasonCode, ToolVersions
from evaluator.preview.report import PreviewCheck, PreviewReport
from evaluator.run import judge_or_fall_back
from evaluator.stages import StagePaths
from tests.evaluator.test_heuristic_categories import _healthy
from tests.support import ROOT

pytestmark = pytest.mark.pure

_HOME = "evaluator/evidence/bundle.py"
_EXCEPTIONS = {("evaluator/models.py", "build.log")}
"""``BuildReport.log_file``'s default: the record module cannot import the bundle module, which reads records."""


def _names() -> set[str]:
    # (``source`` alone is too common a word to look for: its files are looked for as ``source/...``.)
    names = {value for key, value in vars(BundleFile).items() if key.isupper() and isinstance(value, str)} - {
        BundleFile.SOURCE} | {f"{BundleFile.SOURCE}/", MANIFEST, INCOMPLETE, PREVIEW_ROUNDS}
    return names | {BundleFile.screenshot(v, full=f) for v in ("desktop", "mobile") for f in (False, True)} | {
        BundleFile.page_facts(v) for v in ("desktop", "mobile")}


def test_no_module_but_the_bundles_spells_a_bundle_file_name() -> None:
    names = _names()
    assert {"interaction/result.json", "console.json", "static/desktop-viewport.png"} <= names
    folders = sorted({n.split("/")[0] for n in names if "/" in n.rstrip("/")})
    assert {"interaction", "static"} <= set(folders)
    # A name spelled whole or at the start of a text (``"static/desktop-facts.json (design)"``), a string that
    # starts in a bundle folder (``p.startswith("static/")``), or a folder joined piece by piece
    # (``root / "interaction" / "video.mp4"``).
    spelled = re.compile(r"""["'](?:""" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
                         + r""")(?:[/ ][^"'\n]*)?["']|["'](?:""" + "|".join(folders) + r""")(?:["']\s*/|/)""")
    found = []
    for top in ("evaluator", "cluster"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            if rel == _HOME:
                continue
            for match in spelled.finditer(path.read_text(encoding="utf-8")):
                if (rel, match.group(0).strip("\"'")) not in _EXCEPTIONS:
                    found.append(f"{rel}: {match.group(0)}")
    assert found == [], found


def test_the_layout_names_the_files_collectors_wrote_before() -> None:
    """Bundles written before keep reading the same: the names are the ones on disk since collector-1."""
    assert (BundleFile.TRACE, BundleFile.RESULT, BundleFile.VIDEO) == (
        "interaction/trace.json", "interaction/result.json", "interaction/video.mp4")
    assert BundleFile.screenshot("mobile", full=True) == "static/mobile-full.png"
    assert BundleFile.step_shot(7) == "interaction/steps/007.jpg" and BundleFile.in_source("source/app.js")


def test_the_judges_read_the_trace_result_console_and_summary_only_as_records() -> None:
    """``bundle.trace()``, ``interaction()``, ``console()`` and ``agent_summary()`` are how a reader gets them: a
    module reading them as raw JSON would read dicts the type checker cannot follow. (The HTML report keeps its
    own tolerant reader: it shows damaged bundles too.)"""
    raw = re.compile(r"\.json\(BundleFile\.(TRACE|RESULT|CONSOLE|AGENT_SUMMARY)\b")
    found = [f"{path.relative_to(ROOT)}: {m.group(0)}" for top in ("evaluator", "cluster")
             for path in sorted((ROOT / top).rglob("*.py")) if str(path.relative_to(ROOT)) not in (
                 _HOME, "cluster/report/html.py")
             for m in raw.finditer(path.read_text(encoding="utf-8"))]
    assert found == [], found


def _committed(root: Path, files: dict[str, Any]) -> EvidenceBundle:
    writer = EvidenceWriter(root)
    for rel, data in files.items():
        writer.write_json(rel, data)
    tools = ToolVersions(evalgrid="0", collector="collector-7", browser="none", playwright="none", ffmpeg="none",
                         sandbox="local")
    writer.commit(evidence_key="ev", artifact_key="art", agent=AgentConfig(), tools=tools, timings={})
    return EvidenceBundle(root)


_OLD_STEP = {"step": 1, "observation_state": "s0", "element_count": 3, "screenshot": "interaction/steps/001.jpg",
             "action": {"kind": "click", "element": 0, "text": None, "amount": None, "reason": "try it"},
             "target": {"index": 0, "selector": "#add", "tag": "button", "label": "Add", "x": 1.0, "y": 2.0,
                        "width": 80.0, "height": 30.0, "in_viewport": True},
             "result": {"status": "changed", "detail": "", "dom_changed": True, "visual_changed": True, "errors": []},
             "observed_at_s": 0.5, "deliberation_s": 0.1, "action_start_s": 0.7, "action_end_s": 1.2}
"""A step as collector-7 wrote it: no ``input_at_s``, no effect, probe, shape or intent (added since)."""


def test_records_written_by_an_older_collector_read_as_records(tmp_path: Path) -> None:
    bundle = _committed(tmp_path / "b", {
        BundleFile.TRACE: [_OLD_STEP],
        BundleFile.RESULT: {"ended_by": "policy", "error": None, "coverage": None, "steps": 1, "video_duration_s": 2.5,
                            "frames": 40, "wall_duration_s": 2.6, "console_entries_dropped": 0,
                            "audio": {"track": False, "note": "no video"}},
        BundleFile.CONSOLE: [{"phase": "load", "kind": "pageerror", "class": "uncaught", "text": "TypeError: x",
                              "url": ""}],
    })
    [step] = bundle.trace()
    assert (step.action.kind, step.target and step.target.selector, step.result.status) == (
        ActionKind.CLICK, "#add", ResultStatus.CHANGED)
    assert step.input_at_s is None and step.result.effect is None
    result = bundle.interaction()
    assert (result.version, result.video_duration_s, result.console_errors_dropped) == (1, 2.5, 0)
    [entry] = bundle.console()
    assert (entry.klass, entry.video_time_s, entry.line) == (ConsoleClass.UNCAUGHT, None, None)
    assert bundle.agent_summary() is None


def test_a_trace_the_collector_did_not_write_is_an_evidence_error_that_says_recollect(tmp_path: Path) -> None:
    bundle = _committed(tmp_path / "b", {BundleFile.TRACE: [{**_OLD_STEP, "action": {"kind": "teleport"}}]})
    with pytest.raises(EvidenceError, match=r"interaction/trace.json is not what the collector writes.*recollect"):
        bundle.trace()
    with pytest.raises(EvidenceError, match="missing from the bundle"):
        bundle.interaction()
    assert bundle.console() == []


def test_a_preview_round_is_kept_byte_for_byte_as_bundles_held_it() -> None:
    """Bundles wrote each round as its record without the files' contents, then the sorted names (key order too:
    the manifest hashes the file)."""
    report = PreviewReport(version="preview-v1", status="errors", problems=[], next_action="fix it",
                           checks=[PreviewCheck.CONSOLE_ERRORS])
    sent = PreviewRound(round=1, files={"index.html": "<p>", "app.js": "x()"}, files_sha256="ab" * 32, report=report)
    before = {**sent.model_dump(mode="json", exclude={"files"}), "files": sorted(sent.files)}
    assert json.dumps(sent.kept().model_dump(mode="json")) == json.dumps(before)


def test_a_bundle_no_judge_can_read_is_scored_as_the_apps_tampering_not_retried(tmp_path: Path) -> None:
    """A trace that is not a trace (an older collector stored what a hooked page made of it): an infrastructure
    error would be retried on the same stored evidence and leave the app unscored; it is scored as tampering."""
    files = {rel: data for rel, data in _healthy().items() if not isinstance(data, bytes)}
    files[BundleFile.TRACE] = [{**_OLD_STEP, "action": {"kind": "teleport"}}]
    bundle = _committed(tmp_path / "b", files)
    judged = asyncio.run(judge_or_fall_back(JudgeConfig(), "ev", bundle.manifest, bundle.root,
                                            StagePaths(tmp_path / "run"), ModelAccess()))
    assert judged.fallback is not None and judged.fallback[0] is ReasonCode.APP_TAMPER
    assert "UnreadableEvidenceError" in judged.fallback[1] and "0.action.kind" in judged.fallback[1]
    assert (judged.verdict.functional, judged.verdict.flags) == (0.0, ["tamper_attempted"])
