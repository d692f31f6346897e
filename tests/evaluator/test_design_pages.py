"""The design qualities on real pages rendered by Chromium (``fixtures/apps/design/``).

The same habit-tracker content three ways: designed (one typeface, a type scale, a 4 px spacing unit, one hue,
a centred column), the designed page with its stylesheet removed, and a chaotic styling (a typeface and a
colour per element, ragged offsets, odd spacing). Static Perception's own capture (screenshot and page
facts) feeds the judge; the interaction is left out (a static presentation with no control), so only the
aesthetic dimension is at stake.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from playwright.async_api import Browser

from evaluator.browser.context_pool import DESKTOP, MOBILE
from evaluator.evidence.bundle import EvidenceBundle, EvidenceWriter
from evaluator.evidence.facts import LoadTimings
from evaluator.evidence.perception import capture
from evaluator.judges.heuristic import HeuristicJudge
from evaluator.models import AgentConfig, Kind, ToolVersions, Verdict
from tests.support import APPS, app_query, with_browser

pytestmark = pytest.mark.browser

DESIGNED = (APPS / "design" / "designed.html").read_text(encoding="utf-8")
CHAOTIC = (APPS / "design" / "chaotic.html").read_text(encoding="utf-8")
UNSTYLED = re.sub(r"<style>.*?</style>", "", DESIGNED, flags=re.S)  # every stylesheet removed


async def _bundle(browser: Browser, html: str, root: Path) -> Path:
    """Desktop and mobile impressions of ``html`` as Static Perception records them, in a committed bundle."""
    writer = EvidenceWriter(root)
    for name, size in (("desktop", DESKTOP), ("mobile", MOBILE)):
        context = await browser.new_context(viewport=size, device_scale_factor=1)
        page = await context.new_page()
        await page.set_content(html)
        await capture(page, name, writer, LoadTimings(load_s=0.1, settle_s=0.0, layout_stable=True))
        await context.close()
    writer.write_json("query.json", app_query("design", Kind.STATIC_PRESENTATION).model_dump(mode="json"))
    writer.write_json("interaction/trace.json", [])
    writer.write_json("interaction/result.json", {"ended_by": "policy", "coverage": {"salient": 0, "exercised": 0},
                                                "error": None, "console_entries_dropped": 0})
    writer.write_json("console.json", [])
    tools = ToolVersions(evalgrid="0", collector="test", browser="chromium", playwright="-", ffmpeg="-",
                         sandbox="local")
    writer.commit(evidence_key=f"ev-{root.name}", artifact_key="art", agent=AgentConfig(), tools=tools, timings={})
    return root


def _verdicts(tmp_path: Path) -> dict[str, Verdict]:
    pages = {"designed": DESIGNED, "unstyled": UNSTYLED, "chaotic": CHAOTIC}

    async def scenario(browser: Browser) -> dict[str, Path]:
        return {name: await _bundle(browser, html, tmp_path / name) for name, html in pages.items()}

    roots = with_browser(scenario)
    judge = HeuristicJudge()
    return {name: asyncio.run(judge(EvidenceBundle(root), verdict_key=name)) for name, root in roots.items()}


def _earned(verdict: Verdict) -> list[str]:
    return [c.criterion.removeprefix("quality:") for c in verdict.criteria
            if c.criterion.startswith("quality:") and c.reason.startswith("+0.5")]


def test_designed_beats_chaotic_beats_nothing_and_unstyled_is_the_baseline(tmp_path: Path) -> None:
    verdicts = _verdicts(tmp_path)
    designed, unstyled, chaotic = verdicts["designed"], verdicts["unstyled"], verdicts["chaotic"]
    assert designed.attributions == unstyled.attributions == []
    # the chaotic colours also cost contrast (pale green links on yellow): a deduction, not a quality
    assert [(a.category, a.deduction) for a in chaotic.attributions] == [("low_contrast_widespread", 1.0)]
    assert _earned(designed) == ["alignment", "type_scale", "spacing_rhythm", "palette", "hierarchy", "whitespace"]
    assert designed.aesthetic == 8.0
    # the chaotic page still sets its headings well above its body text, and nothing else
    assert _earned(chaotic) == ["hierarchy"]
    assert chaotic.aesthetic == 4.5  # 5.0 + 0.5 - 1.0
    assert unstyled.aesthetic == 1.0  # exactly the unstyled baseline: no quality lifts it
    assert "browser's default styles show" in unstyled.aesthetic_reason
    assert designed.aesthetic > chaotic.aesthetic > unstyled.aesthetic
    assert designed.functional == unstyled.functional == chaotic.functional == 8.0
