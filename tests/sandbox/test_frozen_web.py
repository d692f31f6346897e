"""The frozen web environment, for real: model-written answers that load their libraries from CDNs or
need a build, run in the Docker sandbox (no network) against its offline CDN mirror and toolchain.

Fixtures and what each must do: ``fixtures/frozen-web/expectations.yaml``.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import yaml
from playwright.async_api import Browser, Page, async_playwright

from cluster.sandbox.docker_backend import DockerSandbox
from evaluator.answer.extract import ExtractedApp, extract_app
from evaluator.browser.app_host import BUILD_OUTPUT
from evaluator.browser.context_pool import ContextPool
from evaluator.evidence.bundle import EvidenceWriter, read_manifest
from evaluator.evidence.console import PageLog
from evaluator.evidence.perception import perceive
from evaluator.models import (
    AgentConfig,
    Candidate,
    JudgeConfig,
    Outcome,
    OutcomeStatus,
    ReasonCode,
    Stack,
)
from evaluator.run import execute_run, make_run_spec
from evaluator.stages import StagePaths
from tests.budget import full_suite
from tests.support import FIXTURES, app_query, require_docker

pytestmark = [pytest.mark.browser, pytest.mark.docker]

FROZEN = FIXTURES / "frozen-web"
EXPECTATIONS: list[dict[str, Any]] = yaml.safe_load((FROZEN / "expectations.yaml").read_text())["fixtures"]
RENDERED = [f for f in EXPECTATIONS if f["expect"] == "render"]
BUILD_FAILURES = [f for f in EXPECTATIONS if f["expect"] == "build_failure"]


@dataclass
class _Grid:
    sandbox: DockerSandbox
    browser: Browser
    loop: asyncio.AbstractEventLoop

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)


@pytest.fixture(scope="module")
def grid() -> Iterator[_Grid]:
    """One sandbox and its browser for the module: the fixtures run one after another on it, as a worker's runs do."""
    require_docker()
    loop = asyncio.new_event_loop()

    async def start() -> tuple[Any, DockerSandbox, Browser]:
        playwright = await async_playwright().start()
        sandbox = DockerSandbox()
        await sandbox.start()
        return playwright, sandbox, await sandbox.browser(playwright)

    playwright, sandbox, browser = loop.run_until_complete(start())
    try:
        yield _Grid(sandbox, browser, loop)
    finally:
        loop.run_until_complete(sandbox.close())
        loop.run_until_complete(playwright.stop())
        loop.close()


def _app(fixture: dict[str, Any]) -> ExtractedApp:
    app = extract_app((FROZEN / fixture["answer"]).read_bytes())
    assert isinstance(app, ExtractedApp), app
    assert app.stack == Stack(fixture["stack"])
    return app


@asynccontextmanager
async def _served(grid: _Grid, app: ExtractedApp, requests: list[dict[str, str]]) -> AsyncIterator[str]:
    """The app loaded (and built) in the sandbox; yields its page's URL."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, content in app.files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(content, encoding="utf-8")
        async with grid.sandbox.serve(root, [], requests) as origin:
            if app.stack in (Stack.COMPONENT, Stack.PROJECT):
                report, log = await grid.sandbox.build(app.stack, app.entrypoint)
                assert report.ok, log
                yield f"{origin}/{BUILD_OUTPUT}"
            else:
                yield f"{origin}/{app.entrypoint}"


async def _check(page: Page, fixture: dict[str, Any]) -> list[str]:
    """The fixture's checks that did not hold."""
    if fixture.get("ready"):
        try:
            await page.wait_for_function(fixture["ready"], timeout=15_000)
        except Exception:  # noqa: BLE001 - the checks below name what is missing
            pass
    failed = []
    for check in fixture.get("checks", []):
        try:
            if await page.evaluate(f"async () => ({check})") is not True:
                failed.append(check)
        except Exception as exc:  # noqa: BLE001 - a throwing check is a failed one
            failed.append(f"{check} -> {exc}")
    return failed


@pytest.mark.parametrize("fixture", RENDERED, ids=[f["id"] for f in RENDERED])
def test_fixture_renders_offline_from_the_mirror(grid: _Grid, fixture: dict[str, Any]) -> None:
    app = _app(fixture)
    requests: list[dict[str, str]] = []

    async def scenario() -> list[str]:
        async with _served(grid, app, requests) as url:
            context, page = await ContextPool(grid.browser).open(url, [], mobile=False, confine=False)
            try:
                await page.goto(url, wait_until="load", timeout=30_000)
                await page.clock.resume()  # a live page: the checks click and wait on timers
                return await _check(page, fixture)
            finally:
                await context.close()

    failed = grid.run(scenario())
    assert not failed, f"checks failed: {failed}\nmirror: {requests}"
    hosts = {r["url"].split("/")[2] for r in requests if r["kind"] == "served"}
    assert set(fixture.get("hosts", [])) <= hosts, requests
    missed = [r for r in requests if r["kind"] == "miss"]
    assert not missed, missed
    blocked = {r["url"].split("/")[2] for r in requests if r["kind"] == "blocked"}
    assert blocked == set(fixture.get("blocked_hosts", [])), requests


# Canvas animations: in some runs Chart.js's 2D canvas differs by a few anti-aliased pixels (measured:
# at most 0.02 % of a screenshot). The three.js scene (WebGL, software-rendered) usually does too, but
# one clean-clone CI run (2026-11-24) saw 1.5 % of its mobile screenshot differ: the WebGL frame on
# screen at capture time is not always the same one (not investigated further). Every other fixture
# must match exactly.
_CANVAS_TOLERANCE = {"chartjs-jsdelivr": 0.001, "cdnjs-mix": 0.03}


# What can make a first screenshot differ between runs, one fixture each: an asynchronous render with a JIT CSS
# CDN, a canvas chart, a web font, hosts nobody answers, a built project. All ten under `make test-full`.
_REPEATED = {"react-tailwind-babel", "chartjs-jsdelivr", "google-font", "unknown-host", "vite-project"}


def test_repeated_runs_give_pixel_identical_first_screenshots(grid: _Grid) -> None:
    """Static Perception twice per fixture; both viewports' first screenshots must match pixel for pixel."""
    fixtures = RENDERED if full_suite() else [f for f in RENDERED if f["id"] in _REPEATED]
    assert len(fixtures) >= len(_REPEATED)

    async def first_screenshots(app: ExtractedApp, out: Path) -> dict[str, Any]:
        async with _served(grid, app, []) as url:
            context, _ = await perceive(ContextPool(grid.browser), url=url,
                                        writer=EvidenceWriter(out), log=PageLog(), blocked=[], phase={"name": "load"},
                                        timings={}, confine=False)
            await context.close()
        return {view: cv2.imdecode(np.frombuffer((out / "static" / f"{view}-viewport.png").read_bytes(), np.uint8),
                                   cv2.IMREAD_COLOR) for view in ("desktop", "mobile")}

    differing: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for fixture in fixtures:
            app = _app(fixture)
            first = grid.run(first_screenshots(app, Path(tmp) / fixture["id"] / "1"))
            second = grid.run(first_screenshots(app, Path(tmp) / fixture["id"] / "2"))
            for view in first:
                a, b = first[view], second[view]
                if a.shape != b.shape or np.any(a != b):
                    changed = 1.0 if a.shape != b.shape else float(np.any(a != b, axis=2).mean())
                    differing[f"{fixture['id']}/{view}"] = changed
    identical = len(fixtures) * 2 - len(differing)
    print(f"pixel-identical first screenshots: {identical} of {len(fixtures) * 2}; differing: {differing}")
    exact = {name: share for name, share in differing.items() if name.split("/")[0] not in _CANVAS_TOLERANCE}
    assert not exact, f"fixtures without canvas animation must match exactly: {exact}"
    assert all(share <= _CANVAS_TOLERANCE[name.split("/")[0]] for name, share in differing.items()), differing


def _run(grid: _Grid, fixture: dict[str, Any], tmp_path: Path) -> tuple[Outcome, Path]:
    """One full run of the fixture's answer on the sandbox: its outcome and its evidence bundle."""
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / f"{fixture['id']}.md").write_bytes((FROZEN / fixture["answer"]).read_bytes())
    spec = make_run_spec(candidate=Candidate(id="frozen", provider="replay", answers=str(answers)),
                         query=app_query(fixture["id"]), agent=AgentConfig(max_steps=3), judge=JudgeConfig(),
                         judge_version="heuristic-v1", answers_dir=answers)
    paths = StagePaths(tmp_path / "run")
    outcome = grid.run(execute_run(spec, browser=grid.browser, paths=paths, host=grid.sandbox))
    return outcome, paths.evidence(outcome.evidence_key or "none")


def _fixture(fixture_id: str) -> dict[str, Any]:
    return next(f for f in EXPECTATIONS if f["id"] == fixture_id)


def test_unknown_external_host_is_blocked_recorded_and_the_page_still_judged(grid: _Grid, tmp_path: Path) -> None:
    fixture = _fixture("unknown-host")
    outcome, bundle = _run(grid, fixture, tmp_path)
    assert outcome.status is OutcomeStatus.JUDGED, outcome
    network = yaml.safe_load((bundle / "network.json").read_text())
    blocked_hosts = {url.split("/")[2] for url in network["blocked"]}
    assert set(fixture["blocked_hosts"]) <= blocked_hosts, network
    manifest = read_manifest(bundle)
    assert manifest is not None and manifest.web is not None
    names = {p.name for p in manifest.web.mirror}
    assert {"react", "react-dom", "vue", "chart.js", "three", "@babel/standalone"} <= names
    assert (manifest.web.locale, manifest.web.timezone) == ("en-US", "UTC")


@pytest.mark.parametrize("fixture", BUILD_FAILURES, ids=[f["id"] for f in BUILD_FAILURES])
def test_a_broken_build_is_a_classified_failure_with_its_log(grid: _Grid, fixture: dict[str, Any],
                                                              tmp_path: Path) -> None:
    outcome, bundle = _run(grid, fixture, tmp_path)
    assert (outcome.status, outcome.reason.code) == (OutcomeStatus.NON_ASSESSABLE, ReasonCode.BUILD_FAILED), outcome
    manifest = read_manifest(bundle)
    assert manifest is not None and manifest.build is not None and not manifest.build.ok
    log = (bundle / manifest.build.log_file).read_text()
    assert any(text in log for text in fixture["build_log_contains_any"]), log
    assert any(text in outcome.reason.detail for text in fixture["build_log_contains_any"])


def test_a_component_run_end_to_end_is_built_judged_and_keeps_its_build_log(grid: _Grid, tmp_path: Path) -> None:
    outcome, bundle = _run(grid, _fixture("jsx-component"), tmp_path)
    assert outcome.status is OutcomeStatus.JUDGED, outcome
    manifest = read_manifest(bundle)
    assert manifest is not None and manifest.build is not None and manifest.build.ok
    assert "evalgrid: built in" in (bundle / "build.log").read_text()
    assert "Pomodoro" in (bundle / "static" / "dom.html").read_text()
