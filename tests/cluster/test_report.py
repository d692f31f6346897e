"""The static HTML report over a real small run: it renders, plays, seeks, links only to files that exist, escapes."""

from __future__ import annotations

import asyncio
import importlib
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from statistics import fmean
from typing import Any
from urllib.parse import unquote

import pytest
import yaml
from playwright.async_api import Browser, Page

from cluster.reduce.records import (
    CandidateSummary,
    Interval,
    JudgeStats,
    Pairwise,
    Rating,
    Recovery,
    Reduction,
    RunRow,
    SliceCell,
)
from cluster.report.html import run_page_name, write_report
from cluster.scheduling.runner import run_sweep
from cluster.store.results_log import ResultsLog
from cluster.sweep.spec import load_sweep
from evaluator.models import OutcomeStatus, Query, QuerySet, Verdict
from evaluator.preview.checks import DEFAULT_CHECKS
from tests.support import APPS, FIXTURES, with_browser

# The sweep runs on the local backend: what is under test is the report, and the Docker sandbox's runs are the
# machine lane's (this module joined the other lane to even the two out).
pytestmark = pytest.mark.browser

QUERIES = ["prod-todo", "viz-bar-chart"]
XSS = "<script>alert(1)</script>"
Built = tuple[Path, Reduction, list[RunRow], Path]


# ------------------------------------------------------------------------------------ the run


def _write_sweep(root: Path) -> Path:
    queries = yaml.safe_load((FIXTURES / "queries" / "cookie-mini.yaml").read_text(encoding="utf-8"))
    queries["queries"] = [q for q in queries["queries"] if q["id"] in QUERIES]
    (root / "queries.yaml").write_text(yaml.safe_dump(queries, allow_unicode=True), encoding="utf-8")
    apps = root / "answers" / "apps"
    apps.mkdir(parents=True)
    shutil.copy(APPS / "dead-button.html", apps / "prod-todo.html")
    shutil.copy(APPS / "error-on-click.html", apps / "viz-bar-chart.html")
    prose = root / "answers" / "prose"
    prose.mkdir(parents=True)
    for query in QUERIES:
        (prose / f"{query}.md").write_text(
            f"Sure! Here is how I would build it: {XSS} plan the layout, then add the logic.", encoding="utf-8")
    sweep = {
        "name": "report-mini", "queries": "queries.yaml", "concurrency": 2, "run_timeout_s": 120,
        "agent": {"max_steps": 3}, "sandbox": {"backend": "local"},
        "candidates": [{"id": "apps", "answers": "answers/apps"}, {"id": "prose", "answers": "answers/prose"}],
    }
    path = root / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep), encoding="utf-8")
    return path


def _interval(values: list[float]) -> Interval:
    return Interval(mean=fmean(values), low=min(values), high=max(values), n=len(values))


def _reduce_by_hand(run_dir: Path, queries: dict[str, Query]) -> tuple[Reduction, list[RunRow]]:
    """A minimal stand-in for the reducer: real outcomes and verdicts, crude intervals (min-max)."""
    outcomes = list(ResultsLog(run_dir / "results.jsonl").load().values())
    verdicts: dict[str, Verdict] = {}
    for o in outcomes:
        if o.verdict_key:
            path = run_dir / "verdicts" / f"{o.verdict_key}.json"
            verdicts[o.run_key] = Verdict.model_validate_json(path.read_text(encoding="utf-8"))
    rows = []
    for o in outcomes:
        q = queries[o.query_id]
        scored = o.status in (OutcomeStatus.JUDGED, OutcomeStatus.NON_ASSESSABLE)
        verdict = verdicts.get(o.run_key)
        rows.append(RunRow(
            run_key=o.run_key, candidate_id=o.candidate_id, query_id=o.query_id, brief=q.brief, domain=q.domain,
            leaf=q.leaf, difficulty=q.difficulty.value, language=q.language, language_group=q.language_group.value,
            kind=q.kind.value, status=o.status.value, reason_code=o.reason.code.value, reason_detail=o.reason.detail,
            judge=verdict.judge.rubric_version if verdict else None,
            functional=(o.functional or 0.0) if scored else None, aesthetic=(o.aesthetic or 0.0) if scored else None,
            evidence_key=o.evidence_key, verdict_key=o.verdict_key, axe_violations=None, dom_elements=None))
    candidates = []
    for cid in sorted({r.candidate_id for r in rows}):
        mine = [r for r in rows if r.candidate_id == cid]
        scored_rows = [r for r in mine if r.functional is not None and r.aesthetic is not None]
        func = [r.functional or 0.0 for r in scored_rows]
        aest = [r.aesthetic or 0.0 for r in scored_rows]
        costs: dict[str, float] = {}
        for r in mine:
            verdict = verdicts.get(r.run_key)
            for a in verdict.attributions if verdict else []:
                costs[a.category] = costs.get(a.category, 0.0) + a.deduction / max(len(scored_rows), 1)
        count = {s: sum(r.status == s.value for r in mine) for s in OutcomeStatus}
        candidates.append(CandidateSummary(
            rank=0, candidate_id=cid, runs=len(mine), judged=count[OutcomeStatus.JUDGED],
            non_assessable=count[OutcomeStatus.NON_ASSESSABLE], infra_error=count[OutcomeStatus.INFRA_ERROR],
            timeout=count[OutcomeStatus.TIMEOUT], functional=_interval(func) if func else None,
            aesthetic=_interval(aest) if aest else None,
            overall=_interval([(f + a) / 2 for f, a in zip(func, aest, strict=True)]) if func else None,
            pass_rate=fmean([(f + a) / 2 >= 4.0 for f, a in zip(func, aest, strict=True)]) if func else None,
            failure_costs=dict(sorted(costs.items(), key=lambda kv: -kv[1]))))
    candidates.sort(key=lambda c: -(c.overall.mean if c.overall else -1.0))
    candidates = [c.model_copy(update={"rank": i}) for i, c in enumerate(candidates, start=1)]
    slices = []
    for dim in ("domain", "difficulty"):
        for cid in {r.candidate_id for r in rows}:
            for value in sorted({getattr(r, dim) for r in rows}):
                cell = [r for r in rows
                        if r.candidate_id == cid and getattr(r, dim) == value and r.functional is not None]
                if cell:
                    fun = fmean(r.functional or 0.0 for r in cell)
                    aes = fmean(r.aesthetic or 0.0 for r in cell)
                    slices.append(SliceCell(slice=dim, value=value, candidate_id=cid, n=len(cell), functional=fun,
                                            aesthetic=aes, overall=(fun + aes) / 2))
    best, worst = candidates[0].candidate_id, candidates[-1].candidate_id
    pairwise = [Pairwise(a=best, b=worst, wins=1, losses=0, ties=1, win_rate=0.75)]
    ratings = [Rating(candidate_id=best, elo=1100, low=1020, high=1180),
               Rating(candidate_id=worst, elo=900, low=820, high=980)]
    judged = list(verdicts.values())
    judges = [JudgeStats(judge="heuristic-v1", dimension=d, n=len(judged),
                         mean=fmean(getattr(v, d) for v in judged), variance=0.0) for d in ("functional", "aesthetic")]
    reduction = Reduction(sweep="report-mini", judge_labels=sorted({v.label for v in judged}), pass_threshold=4.0,
                          bootstrap_samples=0, candidates=candidates, slices=slices, pairwise=pairwise,
                          ratings=ratings, judges=judges, judge_agreement=[], human_agreement=[])
    return reduction, rows


def _reduce(run_dir: Path, queries: dict[str, Query]) -> tuple[Reduction, list[RunRow]]:
    """The real reducer when it is there, else the stand-in."""
    try:
        module = importlib.import_module("cluster.reduce.reducer")
    except ModuleNotFoundError as exc:
        if exc.name != "cluster.reduce.reducer":
            raise
        return _reduce_by_hand(run_dir, queries)
    reduce_run_dir: Callable[[Path], tuple[Reduction, list[RunRow]]] | None = getattr(module, "reduce_run_dir", None)
    return reduce_run_dir(run_dir) if reduce_run_dir else _reduce_by_hand(run_dir, queries)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    root = tmp_path_factory.mktemp("report")
    sweep_path = _write_sweep(root)
    run_dir = root / "run"
    result = asyncio.run(run_sweep(load_sweep(sweep_path), run_dir))
    assert len(result.outcomes) == 4
    queries = {q.id: q for q in QuerySet.model_validate(yaml.safe_load((root / "queries.yaml").read_text())).queries}
    reduction, runs = _reduce(run_dir, queries)
    index = write_report(run_dir, reduction, runs, run_dir / "report")
    return run_dir, reduction, runs, index


def _run(runs: list[RunRow], candidate: str, query: str) -> RunRow:
    return next(r for r in runs if r.candidate_id == candidate and r.query_id == query)


# -------------------------------------------------------------------------------------- checks


async def _assert_links_resolve(page: Page, page_path: Path) -> int:
    """Every href/src on the page is relative and names an existing file (or an element of the page)."""
    refs: list[str] = await page.eval_on_selector_all(
        "[href], [src]", "els => els.map(e => e.getAttribute('href') ?? e.getAttribute('src'))")
    assert refs
    for ref in refs:
        assert not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", ref) and not ref.startswith("//"), ref
        if ref.startswith("#"):
            assert await page.locator(f"[id='{ref[1:]}']").count() == 1, ref
            continue
        path = unquote(ref.partition("#")[0])
        assert (page_path.parent / path).resolve().is_file(), ref
    return len(refs)


def test_report_renders_plays_seeks_and_links_only_existing_files(built: Built) -> None:
    run_dir, reduction, runs, index = built
    target = _run(runs, "apps", "viz-bar-chart")
    assert target.status == "judged" and target.verdict_key
    verdict = Verdict.model_validate_json((run_dir / "verdicts" / f"{target.verdict_key}.json").read_text())
    cited = [ref.video_time_s for a in verdict.attributions for ref in a.evidence if ref.video_time_s is not None]
    assert cited, "the error-on-click app should have deductions with video times"
    run_page = index.parent / "runs" / run_page_name(target.run_key)

    async def scenario(browser: Browser) -> None:
        page = await browser.new_page()
        problems: list[str] = []
        page.on("pageerror", lambda exc: problems.append(str(exc)))
        page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)

        await page.goto(index.as_uri())
        board = await page.locator("#leaderboard tbody tr").all_inner_texts()
        assert [row.split("\t")[1] for row in board] == [c.candidate_id for c in reduction.candidates]
        assert {"apps", "prose"} <= {c.candidate_id for c in reduction.candidates}
        assert re.search(r"\d\.\d\d \[\d\.\d, \d\.\d\]", board[0])
        assert "heuristic" in (await page.locator(".judge-banner").inner_text()).lower()
        assert await page.locator(".judge-banner").is_visible()
        assert await page.locator("svg#plot-overall .ci-row").count() >= 1
        slices = await page.eval_on_selector_all("svg.heatmap", "els => els.map(e => e.dataset.slice)")
        assert {"domain", "difficulty"} <= set(slices)
        assert await page.locator("svg.heatmap .cell:not(.empty) text").count() >= 4
        assert await page.locator("svg#plot-failures rect.segment").count() >= 1
        assert await page.locator("#pairwise").count() == 1 and await page.locator("#ratings").count() == 1
        assert await page.locator("#runs tbody tr").count() == len(runs)
        await _assert_links_resolve(page, index)

        await page.click(f'#runs a[href="runs/{run_page_name(target.run_key)}"]')
        await page.wait_for_url(run_page.as_uri())
        assert "heuristic" in (await page.locator("#judge-label").inner_text()).lower()
        assert await page.locator("#steps tbody tr").count() >= 1
        assert await page.locator("#console-errors tbody tr").count() >= 1

        # The video loads and plays from file://.
        await page.wait_for_function("() => document.getElementById('video').readyState >= 2", timeout=15_000)
        start = await page.evaluate(
            "async () => { const v = document.getElementById('video'); v.muted = true; await v.play();"
            " return v.currentTime; }")
        await page.wait_for_function("t => document.getElementById('video').currentTime > t + 0.1", arg=start,
                                     timeout=10_000)
        duration = await page.evaluate("document.getElementById('video').duration")

        # Every attribution's seek button puts the video at its cited time.
        buttons = page.locator("#attributions tr.attribution button[data-seek]")
        assert await buttons.count() >= 1
        checked = 0
        for i in range(await buttons.count()):
            button = buttons.nth(i)
            want = float(await button.get_attribute("data-seek") or "nan")
            assert any(abs(want - t) < 0.001 for t in cited), want
            if want > duration:
                continue
            await button.click()
            await page.wait_for_function(
                "t => Math.abs(document.getElementById('video').currentTime - t) < 0.3", arg=want, timeout=5_000)
            checked += 1
        assert checked >= 1

        # A step reference jumps to its row of the timeline.
        step_link = page.locator("#attributions a.step-ref").first
        if await step_link.count():
            href = await step_link.get_attribute("href")
            await step_link.click()
            assert await page.evaluate("location.hash") == href

        assert await _assert_links_resolve(page, run_page) > 5
        assert not problems, problems

        # A run without evidence says why, and links back.
        missing = _run(runs, "prose", "prod-todo")
        await page.goto((index.parent / "runs" / run_page_name(missing.run_key)).as_uri())
        text = await page.locator("#no-evidence").inner_text()
        assert missing.reason_code in text and await page.locator("video").count() == 0
        await _assert_links_resolve(page, index.parent / "runs" / run_page_name(missing.run_key))
        await page.close()

    with_browser(scenario)


def test_every_run_has_a_page_and_nothing_points_outside(built: Built) -> None:
    run_dir, _, runs, index = built
    pages = {p.name for p in (index.parent / "runs").glob("*.html")}
    assert pages == {run_page_name(r.run_key) for r in runs}
    assert not list((index.parent).rglob("*.mp4")), "videos must be referenced, not copied"
    for page in [index, *(index.parent / "runs").glob("*.html")]:
        text = page.read_text(encoding="utf-8")
        for ref in re.findall(r'(?:href|src)="([^"]*)"', text):
            assert "://" not in ref and not ref.startswith("/"), (page.name, ref)
    # The prose answer carried a script; it never reaches a page unescaped.
    assert XSS not in "".join(p.read_text(encoding="utf-8") for p in (index.parent / "runs").glob("*.html"))
    assert run_dir.joinpath("report", "assets", "run.js").is_file()


# ------------------------------------------------------------------------------------- escaping


def _hostile_run(root: Path) -> tuple[Path, Reduction, list[RunRow]]:
    """A run directory whose every string from data is hostile."""
    run_dir = root / "run"
    bundle = run_dir / "evidence" / "evidence-hostile"
    (bundle / "interaction" / "steps").mkdir(parents=True)
    (bundle / "interaction" / "steps" / "000.jpg").write_bytes(b"\xff\xd8\xff\xd9")
    (bundle / "interaction" / "video.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42")
    (bundle / "source").mkdir()
    (bundle / "source" / "index.html").write_text(f"<h1>app</h1>{XSS}", encoding="utf-8")
    step: dict[str, Any] = {
        "step": 0, "observation_state": "s", "element_count": 1, "screenshot": "interaction/steps/000.jpg",
        "action": {"kind": "type", "element": 0, "text": XSS, "amount": None, "reason": XSS, "summary": None},
        "target": {"index": 0, "selector": f"div[title='{XSS}']", "tag": "input", "label": XSS, "x": 1.0,
                   "y": 1.0, "width": 1.0, "height": 1.0, "in_viewport": True},
        "result": {"status": "failed", "detail": XSS, "errors": [XSS]},
        "observed_at_s": 0.0, "deliberation_s": 0.0, "action_start_s": 0.2, "action_end_s": 0.4,
    }
    (bundle / "interaction" / "trace.json").write_text(json.dumps([step]), encoding="utf-8")
    (bundle / "console.json").write_text(json.dumps([
        {"phase": "interaction", "kind": "pageerror", "class": "uncaught", "text": XSS, "url": f"x{XSS}",
         "video_time_s": 0.3}]), encoding="utf-8")
    (bundle / "agent_summary.json").write_text(json.dumps(
        {"actions_performed": [XSS], "observations": [XSS], "overall_observation": XSS}), encoding="utf-8")
    (bundle / "generation").mkdir()
    (bundle / "generation" / "rounds.json").write_text(json.dumps([
        {"round": 1, "files": [f"{XSS}.js"], "files_sha256": "0", "error": None,
         "report": {"status": "errors", "problems": [{"kind": XSS, "message": XSS, "file": f"{XSS}.js", "line": 2}]}},
        {"round": XSS, "files": "not a list", "report": None, "error": XSS}, "not a round"]), encoding="utf-8")
    (bundle / "manifest.json").write_text(json.dumps({"files": [{"path": "source/index.html"},
                                                                {"path": f"{XSS}.png"}]}), encoding="utf-8")
    (run_dir / "verdicts").mkdir()
    verdict = {
        "verdict_key": "verdict-hostile", "evidence_key": "evidence-hostile",
        "judge": {"name": "heuristic", "kind": "heuristic", "rubric_version": "heuristic-v1"},
        "functional": 3.0, "aesthetic": 4.0, "functional_reason": XSS, "aesthetic_reason": XSS,
        "criteria": [{"criterion": XSS, "dimension": "functional", "reason": XSS}],
        "attributions": [{
            "category": XSS, "dimension": "functional", "severity": "major", "deduction": 1.5, "description": XSS,
            "evidence": [{"file": "../../../../etc/passwd", "step": 0, "video_time_s": 0.2,
                          "detail": '"><img src=x onerror=alert(1)>'},
                         {"file": "source/index.html"}]}],
        "label": f"HEURISTIC judge {XSS}",
    }
    (run_dir / "verdicts" / "verdict-hostile.json").write_text(json.dumps(verdict), encoding="utf-8")
    common: dict[str, Any] = {
        "candidate_id": XSS, "brief": XSS, "domain": XSS, "leaf": XSS, "difficulty": XSS,
        "language": '"><b>', "language_group": "other", "kind": XSS, "judge": XSS, "axe_violations": None,
        "dom_elements": None,
    }
    runs = [
        RunRow(run_key="run-hostile", query_id="q1", status="judged", reason_code="ok", reason_detail=XSS,
               functional=3.0, aesthetic=4.0, evidence_key="evidence-hostile", verdict_key="verdict-hostile", **common),
        RunRow(run_key="../../escape", query_id=XSS, status="non_assessable", reason_code="no_code",
               reason_detail=XSS, functional=0.0, aesthetic=0.0, evidence_key=None, verdict_key=None, **common),
    ]
    iv = Interval(mean=3.5, low=3.0, high=4.0, n=1)
    reduction = Reduction(
        sweep=XSS, judge_labels=[f"HEURISTIC {XSS}"], pass_threshold=4.0, bootstrap_samples=10,
        candidates=[CandidateSummary(rank=1, candidate_id=XSS, runs=2, judged=1, non_assessable=1, infra_error=0,
                                     timeout=0, functional=iv, aesthetic=iv, overall=iv, pass_rate=0.0,
                                     failure_costs={XSS: 0.75})],
        slices=[SliceCell(slice=XSS, value=XSS, candidate_id=XSS, n=1, functional=3.0, aesthetic=4.0, overall=3.5)],
        pairwise=[Pairwise(a=XSS, b="other", wins=1, losses=0, ties=0, win_rate=1.0)],
        ratings=[Rating(candidate_id=XSS, elo=1000, low=900, high=1100)],
        judges=[JudgeStats(judge=XSS, dimension="functional", n=1, mean=3.0, variance=0.0)],
        judge_agreement=[], human_agreement=[],
        recovery=[Recovery(candidate_id=XSS, runs=6, never_called=1, first_unknown=1, first_errors=3,
                           first_errors_rate=0.75, recovered=1, final_unknown=1,
                           recovery_rate=Interval(mean=0.5, low=0.0945, high=0.9055, n=2), mean_rounds=2.5)])
    return run_dir, reduction, runs


def test_strings_from_data_are_escaped_and_hostile_paths_are_not_followed(tmp_path: Path) -> None:
    run_dir, reduction, runs = _hostile_run(tmp_path)
    index = write_report(run_dir, reduction, runs, tmp_path / "site")
    pages = [index, *sorted((index.parent / "runs").glob("*.html"))]
    assert len(pages) == 3 and all(p.resolve().is_relative_to((tmp_path / "site").resolve()) for p in pages)
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
    hostile_page = index.parent / "runs" / run_page_name("run-hostile")
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert XSS not in text and "<img src=x" not in text and "<b>" not in text, page.name
        assert escaped in text, page.name
        # The only script on any page is the report's own run.js, on run pages with evidence.
        assert re.findall(r"<script\b[^>]*>", text) == (
            ['<script src="../assets/run.js">'] if page == hostile_page else []), page.name
        assert "passwd" not in "".join(re.findall(r'(?:href|src)="([^"]*)"', text)), page.name
    recovery = re.search(r'<table id="recovery">.*?</table>', index.read_text(encoding="utf-8"), re.S)
    assert recovery is not None and "1 of 2" in recovery.group(0) and escaped in recovery.group(0)
    hostile = hostile_page.read_text(encoding="utf-8")
    rounds = re.search(r'<section id="preview-rounds">.*?</section>', hostile, re.S)
    assert rounds is not None and rounds.group(0).count('class="round"') == 2 and ":2" in rounds.group(0)
    assert 'data-seek="0.200"' in hostile and 'href="#step-0"' in hostile
    # The model's own HTML is offered as a download, never opened by the report.
    assert re.search(r'<a href="[^"]*source/index\.html" download', hostile)


def test_the_recovery_table_adds_up_and_names_its_interval_and_the_tools_checks(tmp_path: Path) -> None:
    run_dir, reduction, runs = _hostile_run(tmp_path)
    index = write_report(run_dir, reduction, runs, tmp_path / "site")
    table = re.search(r'<table id="recovery">.*?</table>', index.read_text(encoding="utf-8"), re.S)
    assert table is not None
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", table.group(0))]
    # 6 runs = 1 never called + 1 first unknown + 4 with a first report, of which 3 had errors; of those 3, one
    # final is unknown, so the rate is 1 of 2, with its Wilson bounds in percent.
    assert cells[:7] == ["6", "1", "1", "3 of 4 (75.0%)", "1", "1 of 2", "50% [9%, 91%]"]
    assert 'title="95% Wilson score interval, n=2"' in table.group(0)
    caption = re.search(r"<caption>(.*?)</caption>", table.group(0), re.S)
    assert caption is not None and "95% Wilson score interval" in caption.group(1)
    assert "bootstrap interval over queries" in caption.group(1) and "preview-v1.yaml" in caption.group(1)
    assert all(check.replace("_", " ") in caption.group(1) for check in DEFAULT_CHECKS)
