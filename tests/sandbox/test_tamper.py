"""The red-team suite: each attack of issue 17's security review, reproduced as a model answer, fails.

The attacks run against the real Docker sandbox through a real worker (``fixtures/apps/tamper/``): a
Vite project and a Vue component whose build code goes after the machinery (findings 1 and 2), a page
that once made the CDN mirror run a CLI inside the supervisor (3), a candidate that would stop the sweep or
go unscored (4), a page that addresses the evaluator (5), a page of full-screen noise (8) and a server-log
flood (9). A forged control reply is also
written from inside the machinery's own container, standing in for anything that could ever get there:
it must be refused and the run scored as the app's. How far the injection detector generalises is measured in
``tests/llm/test_injection_corpus.py``; findings 6 and 7 (Kubernetes) are tested in ``tests/k8s`` and ``tests/helm``
against the rendered chart and the fake API server (no cluster runs here).
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cluster.sandbox.docker_backend import docker
from cluster.scheduling.runner import GridOptions, run_sweep
from cluster.scheduling.worker import RunWorker, WorkerSettings
from evaluator.evidence.bundle import BundleFile, read_manifest
from evaluator.evidence.screencast import MAX_BITRATE
from evaluator.models import (
    AgentConfig,
    Candidate,
    Difficulty,
    JudgeConfig,
    Kind,
    Outcome,
    OutcomeStatus,
    Query,
    ReasonCode,
)
from evaluator.run import make_run_spec
from tests.support import APPS, require_docker, write_sweep

pytestmark = [pytest.mark.browser, pytest.mark.docker]

TAMPER = APPS / "tamper"
CONTROL_HTML = (APPS / "dead-button.html").read_text(encoding="utf-8")
_REPORT = re.compile(r"EVALGRID-TAMPER-REPORT (\{.*\})")


def _query(qid: str) -> Query:
    return Query(id=qid, brief="A small app.", domain="tests", leaf="tamper", difficulty=Difficulty.EASY,
                 language="en", kind=Kind.INTERACTIVE_APPLICATION)


@dataclass
class _Worker:
    """One Docker worker shared by the suite (its sandbox survives attacks, or the suite says so)."""

    worker: RunWorker
    loop: asyncio.AbstractEventLoop
    answers: Path
    run_dir: Path
    baseline: Outcome

    def run(self, qid: str, answer: str, *, suffix: str = ".md", max_steps: int = 3) -> Outcome:
        (self.answers / f"{qid}{suffix}").write_text(answer, encoding="utf-8")
        spec = make_run_spec(candidate=Candidate(id="tamper", answers=str(self.answers)), query=_query(qid),
                             agent=AgentConfig(max_steps=max_steps), judge=JudgeConfig(), judge_version="test",
                             answers_dir=self.answers)
        return self.loop.run_until_complete(self.worker.execute(spec))

    def control(self, tag: str) -> Outcome:
        """The same well-behaved app, made unique so no stage output is reused."""
        return self.run(f"control-{tag}", CONTROL_HTML + f"<!-- after {tag} -->", suffix=".html")

    def bundle(self, outcome: Outcome) -> Path:
        return self.run_dir / "evidence" / str(outcome.evidence_key)

    @property
    def sandbox_name(self) -> str:
        assert self.worker.sandbox is not None
        return self.worker.sandbox.name


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Worker]:
    require_docker()
    root = tmp_path_factory.mktemp("tamper")
    answers = root / "answers"
    answers.mkdir()
    loop = asyncio.new_event_loop()
    worker = RunWorker(WorkerSettings(run_dir=str(root / "run"), run_timeout_s=90), "tamper")
    fresh = RunWorker(WorkerSettings(run_dir=str(root / "fresh"), run_timeout_s=90), "fresh")
    loop.run_until_complete(worker.start())
    try:
        loop.run_until_complete(fresh.start())
        (answers / "control-fresh.html").write_text(CONTROL_HTML, encoding="utf-8")
        spec = make_run_spec(candidate=Candidate(id="tamper", answers=str(answers)), query=_query("control-fresh"),
                             agent=AgentConfig(max_steps=3), judge=JudgeConfig(), judge_version="test",
                             answers_dir=answers)
        baseline = loop.run_until_complete(fresh.execute(spec))
        loop.run_until_complete(fresh.close())
        assert baseline.status is OutcomeStatus.JUDGED
        yield _Worker(worker, loop, answers, root / "run", baseline)
    finally:
        loop.run_until_complete(worker.close())
        loop.close()


def _same_verdict(a: Outcome, b: Outcome) -> bool:
    return a.status is b.status is OutcomeStatus.JUDGED and (a.functional, a.aesthetic) == (b.functional, b.aesthetic)


def _machinery_processes(grid: _Worker) -> list[tuple[str, str]]:
    """(uid, command line) of every process in the machinery's container."""
    _, out, _ = grid.loop.run_until_complete(docker(
        "exec", "--user", "10001", grid.sandbox_name, "sh", "-c",
        "for d in /proc/[0-9]*; do echo \"$(stat -c %u $d) $(tr '\\0' ' ' < $d/cmdline)\"; done"))
    return [tuple(line.split(" ", 1)) for line in out.splitlines() if line.strip()]  # type: ignore[misc]


@pytest.mark.parametrize("fixture", ["escape-project", "escape-sfc"])
def test_build_code_cannot_reach_the_machinery_nor_outlive_its_build(grid: _Worker, fixture: str) -> None:
    """Attacks 1 and 2 from the answer's own build code (vite.config.js; postcss.config.js, which Vite loads even
    with configFile: false). What the code saw is its own report, in the build log the evidence keeps."""
    outcome = grid.run(f"tamper-{fixture}", (TAMPER / f"{fixture}.md").read_text(encoding="utf-8"))
    assert outcome.status is OutcomeStatus.JUDGED, outcome.reason
    build_log = (grid.bundle(outcome) / "build.log").read_text(encoding="utf-8")
    found = _REPORT.search(build_log)
    assert found is not None, build_log[-2000:]
    report: dict[str, Any] = json.loads(found[1])
    assert report["uid"] == 10002  # the app's user, never the machinery's
    assert report["state"] == "refused: ENOENT"  # no supervisor state in its world at all
    machinery = ("sandboxd", "chromium", "relay.js", "mirror.js", "pulseaudio")
    assert not [cmd for cmd in report["processes"] if any(name in cmd for name in machinery)]
    if fixture == "escape-project":
        assert report["own_children"] == "refused: ENOENT"
        assert report["forged"] == []  # no channel of evalgrid's in sight to forge a reply into
        assert json.loads(report["ports"]) == {"9222": "ECONNREFUSED", "8079": "ECONNREFUSED",
                                               "8080": "ECONNREFUSED"}
    # Nothing of the build survives it: no container, no stray in the machinery's container.
    _, left, _ = grid.loop.run_until_complete(docker("ps", "--all", "--filter", "name=evalgrid-build-",
                                                     "--format", "{{.Names}}"))
    assert left.strip() == ""
    processes = _machinery_processes(grid)
    assert all(uid == "10001" for uid, _ in processes), processes
    assert not [cmd for _, cmd in processes if "setInterval" in cmd]
    # The next run on the same worker is untouched.
    assert _same_verdict(grid.control(fixture), grid.baseline)


def test_a_forged_control_reply_is_refused_and_the_run_scored_as_the_apps_tamper(grid: _Worker) -> None:
    """No process of the app can reach the control channel any more; a line written into it from inside the
    machinery's container (as a compromised renderer could) stands in for one. The driver takes only replies
    with the request's id and the sandbox's nonce: the forged line is refused, the run is the app's failure,
    flagged, and the sandbox replaced."""
    before = grid.sandbox_name
    forge = ("for d in /proc/[0-9]*; do if tr '\\0' ' ' < $d/cmdline | grep -q 'relay.js control'; then "
             "printf '{\"ok\": true, \"log\": \"forged\"}\\n' > $d/fd/1; echo forged; fi; done")

    async def later() -> str:
        await asyncio.sleep(1.0)  # the run takes about 3 s: this lands in the middle of it
        _, out, _ = await docker("exec", "--user", "10001", before, "sh", "-c", forge)
        return out

    forger = grid.loop.create_task(later())
    outcome = grid.run("tamper-forged-reply", CONTROL_HTML + "<!-- forged -->", suffix=".html", max_steps=4)
    assert "forged" in grid.loop.run_until_complete(forger)
    assert outcome.status is OutcomeStatus.JUDGED and outcome.reason.code is ReasonCode.APP_TAMPER, outcome.reason
    assert "tamper_attempted" in outcome.flags
    assert outcome.functional == 0.0
    manifest = read_manifest(grid.bundle(outcome))
    assert manifest is not None and manifest.incomplete is not None
    assert "did not come from the supervisor" in manifest.incomplete.detail
    code, _, _ = grid.loop.run_until_complete(docker("inspect", before))
    assert code != 0  # the sandbox it happened in is gone ...
    assert _same_verdict(grid.control("forged-reply"), grid.baseline)
    assert grid.sandbox_name != before  # ... and the next run had a new one


def test_the_purgecss_cli_leaves_the_sandbox_alive_and_the_page_judged(grid: _Worker) -> None:
    """Attack 3: the mirror never loads package code, and the ES-module path builds no command-line script."""
    before, restarts = grid.sandbox_name, grid.worker.health.sandbox_restarts
    outcome = grid.run("tamper-purgecss", (TAMPER / "purgecss.md").read_text(encoding="utf-8"))
    assert outcome.status is OutcomeStatus.JUDGED and outcome.attempts == 1, outcome.reason
    assert grid.sandbox_name == before and grid.worker.health.sandbox_restarts == restarts
    bundle = grid.bundle(outcome)
    assert "<title>purgecss:404;lodash:function</title>" in (bundle / "static" / "dom.html").read_text()
    network = json.loads((bundle / "network.json").read_text())
    assert "https://esm.sh/purgecss@4.1.3/bin/purgecss.js" in network["mirror"]["missed"]


def test_an_app_that_addresses_the_evaluator_is_flagged_whichever_judge_scores_it(grid: _Worker) -> None:
    """Attack 5, end to end in the sandbox: the passages are recorded in the bundle and flag the run (the heuristic
    judge reads no page text; the LLM judge's redaction is tested in tests/llm)."""
    outcome = grid.run("tamper-injection", (TAMPER / "injection.md").read_text(encoding="utf-8"))
    assert outcome.status is OutcomeStatus.JUDGED and "prompt_injection" in outcome.flags, outcome.reason
    findings = json.loads((grid.bundle(outcome) / BundleFile.INJECTION).read_text())
    excerpts = " ".join(f["excerpt"] for f in findings)
    assert "automated grader" in excerpts and "bewertende Sprachmodell" in excerpts


def test_text_for_the_evaluator_made_only_by_the_build_is_flagged_in_its_log(grid: _Worker) -> None:
    """Issue 33, finding 4: the passage is in no file of the answer (character codes), only in the build's output,
    which the judge reads as the dev server's log: the scan reads the build and server logs too."""
    outcome = grid.run("tamper-build-log", (TAMPER / "build-log-injection.md").read_text(encoding="utf-8"))
    assert outcome.status is OutcomeStatus.JUDGED and "prompt_injection" in outcome.flags, outcome
    findings = json.loads((grid.bundle(outcome) / BundleFile.INJECTION).read_text())
    assert {f["source"] for f in findings} <= {"build.log", "server.log"}, findings
    assert any("skip testing" in f["excerpt"] for f in findings), findings


def test_the_video_of_a_noisy_page_stays_under_its_caps(grid: _Worker) -> None:
    """Attack 8: a screen that changes every frame, incompressibly; uncapped it made ~124 MB of video per 20 s."""
    outcome = grid.run("tamper-noisy-canvas", (TAMPER / "noisy-canvas.md").read_text(encoding="utf-8"), max_steps=4)
    assert outcome.status is OutcomeStatus.JUDGED, outcome.reason
    bundle = grid.bundle(outcome)
    manifest = read_manifest(bundle)
    assert manifest is not None
    result = json.loads((bundle / "interaction" / "result.json").read_text())
    video = (bundle / "interaction" / "video.mp4").stat().st_size
    ceiling = int(MAX_BITRATE[:-1]) * 1000 / 8 * (result["video_duration_s"] + 2)  # the cap, plus its buffer
    rate = result["frames"] / max(result["wall_duration_s"], 0.001)
    print(f"noisy canvas: {video} bytes of video for {result['video_duration_s']} s, {rate:.1f} frames/s kept; "
          f"caps {manifest.caps}")
    assert video <= ceiling
    assert rate <= 26  # the screencast's frame cap (this machine's one CPU may not reach it; the unit test does)
    assert "video_bitrate" in {cap.what for cap in manifest.caps}


def test_a_flooded_server_log_is_capped_and_the_run_judged(grid: _Worker) -> None:
    """Attack 9: the server log the evidence (and the control channel) carries is its last 256 KiB."""
    before = grid.sandbox_name
    outcome = grid.run("tamper-log-flood", (TAMPER / "log-flood.md").read_text(encoding="utf-8"))
    assert outcome.status is OutcomeStatus.JUDGED and outcome.attempts == 1, outcome.reason
    log = (grid.bundle(outcome) / "server.log").read_text(encoding="utf-8")
    assert len(log.encode()) <= 256 * 1024 + 1024
    assert re.search(r"\[evalgrid: \d+ earlier server log lines dropped", log)
    assert grid.sandbox_name == before


@pytest.mark.slow
def test_a_hostile_candidate_can_neither_stop_the_sweep_nor_go_unscored(tmp_path: Path) -> None:
    """Attack 4: a sweep that stops at the first infrastructure error (max_infra_streak=1), a hostile candidate
    whose answers once each ended as one, and an honest one. Every run is recorded, none as infra_error."""
    require_docker()
    answers = tmp_path / "answers"
    for candidate, files in {"hostile": {"q-1.md": "purgecss.md", "q-2.md": "escape-sfc.md"},
                             "honest": {"q-1.html": None, "q-2.html": None}}.items():
        (answers / candidate).mkdir(parents=True)
        for name, source in files.items():
            target = answers / candidate / name
            if source is None:
                target.write_text(CONTROL_HTML, encoding="utf-8")
            else:
                shutil.copy(TAMPER / source, target)
    sweep = write_sweep(tmp_path, ("q-1", "q-2"), candidates=("hostile", "honest"), name="hostile", run_timeout_s=90,
                        agent={"max_steps": 3}, sandbox={"backend": "docker"})
    result = asyncio.run(run_sweep(sweep, tmp_path / "run", grid=GridOptions(scheduler="local", workers=1),
                                   max_infra_streak=1))
    outcomes = list(result.outcomes.values())
    assert len(outcomes) == 4
    assert not [o for o in outcomes if o.status is OutcomeStatus.INFRA_ERROR]
    assert all(o.status is OutcomeStatus.JUDGED for o in outcomes if o.candidate_id == "honest")
    assert all(o.status is OutcomeStatus.JUDGED for o in outcomes if o.candidate_id == "hostile")
