"""The report's pairwise-judging and repair-lift sections, in a real Chromium: they show the numbers of the
summaries in the run directory, say which command makes them when there are none, skip files of another
format, and escape the judges' labels."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Browser, Page

from cluster.pairwise.summary import (
    DimensionSummary,
    HumanComparison,
    OrderEffects,
    PairwiseSummary,
    PositionConsistency,
    SummaryDimension,
    read_summaries,
)
from cluster.reduce.records import CandidateSummary, Interval, Pairwise, Rating, Reduction, RunRow
from cluster.repair.summary import DimensionLift, FixtureLift, RepairLiftSummary, read_lifts
from cluster.report.html import COMPARE_COMMAND, LIFT_COMMAND, write_report
from cluster.store.layout import RunFile
from tests.cluster.test_report import XSS, _assert_links_resolve
from tests.support import with_browser

pytestmark = pytest.mark.browser

CANDIDATES = ["alpha", "beta", "gamma"]
HOSTILE = f'{XSS}"><img src=x onerror=alert(1)>'
JUDGE = "HEURISTIC pairwise judge"
LIFT_JUDGE = "gpt-judge"
ABSOLUTE = [Rating(candidate_id="alpha", elo=1100, low=1020, high=1180),
            Rating(candidate_id="beta", elo=1000, low=930, high=1070),
            Rating(candidate_id="gamma", elo=900, low=820, high=980)]
PAIRWISE = [Rating(candidate_id="alpha", elo=1050, low=980, high=1120),
            Rating(candidate_id="beta", elo=1000, low=940, high=1060),
            Rating(candidate_id="gamma", elo=950, low=880, high=1020)]
HUMAN = [Rating(candidate_id="alpha", elo=1080, low=990, high=1170),
         Rating(candidate_id="gamma", elo=920, low=830, high=1010)]


# --------------------------------------------------------------------------- a run directory, by hand


def _reduction() -> tuple[Reduction, list[RunRow]]:
    """Three candidates on one query, without evidence: the report needs no sweep for these sections."""
    runs = [RunRow(run_key=f"run-{c}", candidate_id=c, query_id="q1", brief="A todo app.", domain="productivity",
                   leaf="todo", difficulty="easy", language="en", language_group="english",
                   kind="interactive_application", status="judged", reason_code="ok", reason_detail="",
                   judge="heuristic-v1", functional=f, aesthetic=f, evidence_key=None, verdict_key=None,
                   axe_violations=None, dom_elements=None)
            for c, f in zip(CANDIDATES, (6.0, 4.0, 2.0), strict=True)]
    candidates = [CandidateSummary(rank=i, candidate_id=r.candidate_id, runs=1, judged=1, non_assessable=0,
                                   infra_error=0, timeout=0,
                                   functional=Interval(mean=r.functional or 0.0, low=0.0, high=8.0, n=1),
                                   aesthetic=Interval(mean=r.aesthetic or 0.0, low=0.0, high=8.0, n=1),
                                   overall=Interval(mean=r.functional or 0.0, low=0.0, high=8.0, n=1), pass_rate=0.0)
                  for i, r in enumerate(runs, start=1)]
    reduction = Reduction(sweep="pairwise-mini", judge_labels=["HEURISTIC judge"], pass_threshold=4.0,
                          bootstrap_samples=10, candidates=candidates, slices=[],
                          pairwise=[Pairwise(a="alpha", b="gamma", wins=1, losses=0, ties=0, win_rate=1.0)],
                          ratings=ABSOLUTE, judges=[], judge_agreement=[], human_agreement=[])
    return reduction, runs


def _dimension(name: SummaryDimension, known: PositionConsistency | None) -> DimensionSummary:
    head_to_head = [Pairwise(a="alpha", b="beta", wins=2, losses=0, ties=1, win_rate=0.8333),
                    Pairwise(a="alpha", b="gamma", wins=0, losses=1, ties=2, win_rate=0.3333),
                    Pairwise(a="beta", b="gamma", wins=1, losses=1, ties=1, win_rate=0.5)]
    unknown = OrderEffects(pairs=2, consistency=0.0, first_position=1.0)
    return DimensionSummary(dimension=name, known=known, unknown=unknown,
                            ratings=PAIRWISE, head_to_head=head_to_head, kendall_tau=0.3333)


def _pairwise_summary(judge: str, known: bool, human: bool) -> PairwiseSummary:
    """A position-biased judge: always the app shown first (FA 1, SA 0, CA 0)."""
    position = PositionConsistency(pairs=3, fa=1.0, sa=0.0, aa=0.5, ca=0.0) if known else None
    votes = HumanComparison(votes=5, matched=3, agreement=0.6667, ratings=HUMAN,
                            head_to_head=[Pairwise(a="alpha", b="gamma", wins=4, losses=1, ties=0, win_rate=0.8)])
    return PairwiseSummary(
        sweep="pairwise-mini", judge=judge, judge_version="pairwise-v1", selection="all", candidates=CANDIDATES,
        known_order=CANDIDATES if known else [], pairs=3, skipped={"no_bundle": 2, "budget": 1}, dropped_choices=4,
        failed=[f"q1 alpha vs beta: refused {XSS}"], tau_note="overall ratings against mean overall scores",
        dimensions=[_dimension(d, position) for d in ("functional", "aesthetic", "overall")],
        human=votes if human else None)


def _iv(mean: float, low: float, high: float) -> Interval:
    return Interval(mean=mean, low=low, high=high, n=3)


def _lift_summary(judge: str, gain: float) -> RepairLiftSummary:
    """Goal-state clarity up by ``gain``, action feedback down by a quarter, functional unchanged."""
    dimensions = [
        DimensionLift(dimension="goal_state_clarity", scale="1-5", fixtures=2, original=_iv(2.5, 2.0, 3.0),
                      repaired=_iv(2.5 + gain, 2.0 + gain, 3.0 + gain), lift=_iv(gain, gain - 0.5, gain + 0.5)),
        DimensionLift(dimension="action_feedback", scale="1-5", fixtures=2, original=_iv(3.0, 2.5, 3.5),
                      repaired=_iv(2.75, 2.5, 3.0), lift=_iv(-0.25, -0.75, 0.25)),
        DimensionLift(dimension="functional", scale="0-8", fixtures=2, original=_iv(6.0, 5.0, 7.0),
                      repaired=_iv(6.0, 5.0, 7.0), lift=_iv(0.0, -1.0, 1.0)),
    ]
    scores = {"goal_state_clarity": 2.0, "action_feedback": 3.0, "functional": 6.0}
    fixtures = [
        FixtureLift(query_id="q1", candidate="alpha", status="repaired", findings=3, original=scores,
                    repaired=scores, lift={"goal_state_clarity": 1.0, "action_feedback": -0.5, "functional": 0.0}),
        FixtureLift(query_id="q2", candidate="beta", status="repaired", findings=1, original=scores,
                    repaired=scores, lift={"goal_state_clarity": 0.5, "action_feedback": 0.0, "functional": 0.0}),
        FixtureLift(query_id="q3", candidate="gamma", status="repair_failed", findings=2, original=scores,
                    detail=f"the repaired app did not load {XSS}"),
    ]
    return RepairLiftSummary(sweep="pairwise-mini", judge=judge, judge_version="ux-v1", repairer="vllm:repairer",
                             evaluator="vllm:evaluator", absolute_judge="heuristic-v1", fixtures=2,
                             dimensions=dimensions, per_fixture=fixtures, dropped_findings=1,
                             skipped={"no_bundle": 1})


def _put(run_dir: Path, folder: str, slug: str, name: str, text: str) -> None:
    path = run_dir / folder / slug / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _garbage(run_dir: Path) -> None:
    """Files of another format where the summaries go: broken JSON and a record of another shape."""
    _put(run_dir, RunFile.PAIRWISE, "broken", RunFile.PAIRWISE_SUMMARY, '{"version": 1, "judge": ')
    _put(run_dir, RunFile.PAIRWISE, "other", RunFile.PAIRWISE_SUMMARY, '{"version": 2, "format": "something else"}')
    _put(run_dir, RunFile.REPAIR_LIFT, "broken", RunFile.LIFT, "\x00not json at all")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report with two pairwise judges (one hostile), two repair lifts (one hostile) and garbage beside them."""
    run_dir = tmp_path_factory.mktemp("pairwise") / "run"
    _put(run_dir, RunFile.PAIRWISE, "heuristic", RunFile.PAIRWISE_SUMMARY,
         _pairwise_summary(JUDGE, known=True, human=True).model_dump_json())
    _put(run_dir, RunFile.PAIRWISE, "hostile", RunFile.PAIRWISE_SUMMARY,
         _pairwise_summary(HOSTILE, known=False, human=False).model_dump_json())
    _put(run_dir, RunFile.REPAIR_LIFT, "gpt", RunFile.LIFT, _lift_summary(LIFT_JUDGE, 0.75).model_dump_json())
    _put(run_dir, RunFile.REPAIR_LIFT, "hostile", RunFile.LIFT, _lift_summary(HOSTILE, 0.25).model_dump_json())
    _garbage(run_dir)
    reduction, runs = _reduction()
    return write_report(run_dir, reduction, runs, run_dir / "report")


def _watch(page: Page) -> list[str]:
    """Page errors, console errors and dialogs (an ``alert`` that ran) as they happen."""
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    page.on("dialog", lambda dialog: problems.append(f"dialog: {dialog.message}"))
    return problems


async def _texts(page: Page, selector: str) -> list[str]:
    return [t.strip() for t in await page.locator(selector).all_inner_texts()]


# ----------------------------------------------------------------------------------------- checks


async def _check_pairwise(page: Page) -> None:
    block = page.locator(f'.pairwise-judge[data-judge="{JUDGE}"]')
    assert await block.is_visible()
    assert (await block.locator("h3").inner_text()).strip() == JUDGE
    assert "selection all" in await block.locator(".pairwise-meta").inner_text()
    position = block.locator("table.position-consistency")
    overall = position.locator('tr[data-dimension="overall"]')
    cells = [await overall.locator(f"td.{c}").inner_text() for c in ("pairs", "fa", "sa", "aa", "ca")]
    assert cells == ["3", "100.0%", "0.0%", "50.0%", "0.0%"]
    assert await position.locator("tbody tr").count() == 3
    assert "CA by chance: 25 %" in await position.locator("caption").inner_text()
    order = block.locator('table.order-effects tr[data-dimension="overall"]')
    assert await order.locator("td.consistency").inner_text() == "0.0%"
    assert await order.locator("td.first-position").inner_text() == "100.0%"

    ratings = block.locator("table.pairwise-ratings tbody tr")
    assert await ratings.evaluate_all("rows => rows.map(r => r.dataset.candidate)") == CANDIDATES
    alpha = block.locator('table.pairwise-ratings tr[data-candidate="alpha"]')
    assert await alpha.locator("td.pairwise-elo").inner_text() == "1050 [980, 1120]"
    assert await alpha.locator("td.absolute-elo").inner_text() == "1100 [1020, 1180]"
    assert await alpha.locator("td.human-elo").inner_text() == "1080 [990, 1170]"
    assert await block.locator('table.pairwise-ratings tr[data-candidate="beta"] td.human-elo').inner_text() == "—"
    assert "66.7%" in await block.locator("table.human-votes").inner_text()

    matrix = block.locator("table.pairwise-matrix tbody tr")
    assert await matrix.count() == 3
    assert (await matrix.nth(0).locator("td").all_inner_texts())[1].startswith("83%")  # alpha over beta
    assert (await matrix.nth(1).locator("td").all_inner_texts())[0].startswith("17%")  # beta over alpha, mirrored
    assert await block.locator("table.human-matrix tbody tr").count() == 2
    tau = await block.locator(".kendall-tau").inner_text()
    assert "0.33" in tau and "overall ratings against mean overall scores" in tau
    counts = await block.locator(".pairwise-counts").inner_text()
    assert "budget: 1" in counts and "no_bundle: 2" in counts and "evidence: 4" in counts and "failed: 1" in counts


async def _check_lift(page: Page) -> None:
    block = page.locator(f'.repair-lift[data-judge="{LIFT_JUDGE}"]')
    assert await block.is_visible()
    rows = block.locator("table.lift-dimensions tbody tr")
    assert await rows.count() == 3
    gain = block.locator('table.lift-dimensions tr[data-dimension="goal_state_clarity"] td.lift')
    loss = block.locator('table.lift-dimensions tr[data-dimension="action_feedback"] td.lift')
    flat = block.locator('table.lift-dimensions tr[data-dimension="functional"] td.lift')
    assert (await gain.inner_text()).startswith("+0.75 [+0.25, +1.25]")
    assert (await loss.inner_text()).startswith("−0.25 [−0.75, +0.25]")
    assert (await flat.inner_text()).startswith("±0.00")
    assert "positive" in (await gain.get_attribute("class") or "")
    assert "negative" in (await loss.get_attribute("class") or "")
    assert "neutral" in (await flat.get_attribute("class") or "")
    colours = [await cell.evaluate("e => getComputedStyle(e).color") for cell in (gain, loss)]
    assert colours[0] != colours[1], "the stylesheet colours the sign too"
    original = await block.locator('tr[data-dimension="goal_state_clarity"] td').nth(2).inner_text()
    assert original == "2.50 [2.00, 3.00]"

    fixtures = block.locator("table.lift-fixtures tbody tr")
    assert await fixtures.evaluate_all("rows => rows.map(r => r.dataset.query)") == ["q1", "q2", "q3"]
    q1 = await block.locator('table.lift-fixtures tr[data-query="q1"] .fixture-lift').inner_text()
    assert "GSC +1.0" in q1 and "AF −0.5" in q1 and "func ±0.0" in q1
    q3 = await block.locator('table.lift-fixtures tr[data-query="q3"]').inner_text()
    assert "repair-failed" in q3 and f"the repaired app did not load {XSS}" in q3
    comparison = await page.locator("#lift-comparison").inner_text()
    assert comparison.startswith(f"Largest mean lift on the UX dimensions: {LIFT_JUDGE} (+0.25)")


def test_pairwise_and_lift_sections_show_the_summaries(site: Path) -> None:
    async def scenario(browser: Browser) -> None:
        page = await browser.new_page()
        problems = _watch(page)
        await page.goto(site.as_uri())
        for section in ("#pairwise-judging-section", "#repair-lift-section"):
            assert await page.locator(section).is_visible()
            assert await page.locator(f'nav.toc a[href="{section}"]').count() == 1
        # The garbage beside the summaries is skipped: two judges each, as written.
        assert await page.locator(".pairwise-judge").count() == 2
        assert await page.locator(".repair-lift").count() == 2
        assert await page.locator("#pairwise-judging-empty, #repair-lift-empty").count() == 0
        await _check_pairwise(page)
        await _check_lift(page)
        # The judge with no known order says so instead of a table of dashes.
        hostile = page.locator(".pairwise-judge").nth(1)
        assert "no pairs with a known better app" in await hostile.locator(".position-none").inner_text()
        assert await hostile.locator("table.position-consistency").count() == 0
        assert await hostile.locator("table.human-votes").count() == 0
        await _assert_links_resolve(page, site)
        assert not problems, problems
        await page.close()

    with_browser(scenario)


def test_hostile_judge_labels_are_escaped(site: Path) -> None:
    text = site.read_text(encoding="utf-8")
    assert XSS not in text and "<img src=x" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in text

    async def scenario(browser: Browser) -> None:
        page = await browser.new_page()
        problems = _watch(page)
        await page.goto(site.as_uri())
        assert await page.locator("script, img").count() == 0
        for block in (".pairwise-judge", ".repair-lift"):
            hostile = page.locator(block).nth(1)
            assert await hostile.get_attribute("data-judge") == HOSTILE
            assert (await hostile.locator("h3").inner_text()).strip() == HOSTILE
        failed = await page.locator(".pairwise-counts details").first.text_content()
        assert f"q1 alpha vs beta: refused {XSS}" in (failed or "")
        assert not problems, problems
        await page.close()

    with_browser(scenario)


def test_empty_sections_name_the_command_that_fills_them(tmp_path: Path) -> None:
    reduction, runs = _reduction()
    absent = write_report(tmp_path / "absent", reduction, runs, tmp_path / "absent-site")
    garbage_dir = tmp_path / "garbage"
    _garbage(garbage_dir)
    assert read_summaries(garbage_dir) == [] and read_lifts(garbage_dir) == []
    garbage = write_report(garbage_dir, reduction, runs, tmp_path / "garbage-site")

    async def scenario(browser: Browser) -> None:
        page = await browser.new_page()
        problems = _watch(page)
        for index in (absent, garbage):
            await page.goto(index.as_uri())
            assert COMPARE_COMMAND in await page.locator("#pairwise-judging-empty").inner_text()
            assert LIFT_COMMAND in await page.locator("#repair-lift-empty").inner_text()
            assert await page.locator("#pairwise-judging-empty code.command").inner_text() == COMPARE_COMMAND
            assert await page.locator("#repair-lift-empty").is_visible()
            assert await page.locator(".pairwise-judge, .repair-lift, #lift-comparison").count() == 0
            assert await page.locator("#leaderboard tbody tr").count() == len(CANDIDATES)
        assert not problems, problems
        await page.close()

    with_browser(scenario)
