"""axe-core audits in real Chromium, checked against axe-core installed from npm and run directly."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page
from pydantic import ValidationError

from evaluator.browser.context_pool import DESKTOP, ContextPool
from evaluator.browser.frozen_web import release
from evaluator.browser.serve import serve_directory
from evaluator.evidence.accessibility import AXE_VERSION, AccessibilityAudit, AxeViolation, audit_accessibility
from evaluator.evidence.perception import load
from tests.support import ROOT, with_browser

pytestmark = pytest.mark.browser

VENDORED = ROOT / "evaluator" / "scripts" / "vendor" / "axe.min.js"
PIXEL = "data:image/gif;base64,R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=="
COUNT = "document.querySelectorAll('*').length"


def _page(body: str, *, lang: str | None = "en", head: str = "") -> str:
    html_open = f'<html lang="{lang}">' if lang else "<html>"
    return (f'<!doctype html>{html_open}<head>{head}<meta charset="utf-8"><title>Test page</title></head>'
            f"<body>{body}</body></html>")


IMAGE_BUTTON_BODY = (
    f'<main><h1>Gallery</h1><img src="{PIXEL}" width="40" height="40"><img src="{PIXEL}" width="40" height="40">'
    '<button></button><button><svg width="16" height="16"><rect width="16" height="16"/></svg></button>'
    "<button>Next</button></main>"
)
PAGES = {
    "image-button.html": _page(IMAGE_BUTTON_BODY),
    "contrast-form.html": _page(
        '<main><h1>Sign up</h1><p style="color:#c8c8c8">Faint first line</p><p style="color:#cccccc">Faint second'
        '</p><p style="color:#d0d0d0;background:#fff">Faint third</p><input type="text"><input type="email">'
        '<label for="ok">Name</label><input id="ok" type="text"></main>'
    ),
    "no-lang.html": _page(
        '<main><h1>About</h1><p>Plain text.</p><a href="#top"></a></main><p>Outside any landmark</p>', lang=None
    ),
    "clean.html": _page(
        f'<header><p>Site</p></header><main><h1>Clean</h1><p>Readable text.</p><img src="{PIXEL}" alt="A dot">'
        '<label for="q">Search</label><input id="q" type="search"><button>Go</button>'
        '<div id="more"></div></main><footer><p>Footer</p></footer>'
        "<script>for (let i = 0; i < 25; i++) document.getElementById('more').append(document.createElement('span'));"
        "</script>"
    ),
}
EXPECTED = {
    "image-button.html": {"image-alt": 2, "button-name": 2},
    "contrast-form.html": {"color-contrast": 3, "label": 2},
    "no-lang.html": {"html-has-lang": 1, "link-name": 1, "region": 1},
    "clean.html": {},
}
HOSTILE = {
    # The brief's case: a page that brings its own do-nothing axe.
    "hostile-assign.html": "<script>window.axe = {run: () => ({violations: []}), version: '9.9.9'};</script>",
    # Worse: a fake axe nobody can replace, and the built-ins a page-world audit would rely on sabotaged.
    "hostile-locked.html": (
        "<script>Object.defineProperty(window, 'axe', {value: {run: async () => ({violations: []})},"
        " writable: false, configurable: false});"
        "Array.prototype.map = function () { return []; };"
        "Document.prototype.getElementsByTagName = function () { return []; };"
        "Element.prototype.getAttribute = function () { return 'x'; };"
        "window.getComputedStyle = () => ({});</script>"
    ),
}


@pytest.fixture(scope="module")
def axe_core_npm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The axe-core package of the pinned version, installed straight from npm: the independent path."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: cannot install axe-core from npm to run it directly for comparison")
    prefix = tmp_path_factory.mktemp("axe-core-npm")
    done = subprocess.run(
        [npm, "install", "--prefix", str(prefix), "--no-save", "--no-audit", "--no-fund", "--ignore-scripts",
         f"axe-core@{AXE_VERSION}"],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, f"npm install axe-core@{AXE_VERSION} failed:\n{done.stderr[-2000:]}"
    package = prefix / "node_modules" / "axe-core"
    assert json.loads((package / "package.json").read_text())["version"] == AXE_VERSION
    return package


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("a11y-pages")
    for name, html in PAGES.items():
        (root / name).write_text(html, encoding="utf-8")
    for name, script in HOSTILE.items():
        (root / name).write_text(_page(IMAGE_BUTTON_BODY, head=script), encoding="utf-8")
    return root


@dataclass
class Measured:
    """One page audited by evalgrid, with what the page's own world says around the audit."""

    audit: AccessibilityAudit
    elements_before: int
    elements_after: int
    page_world_axe: str


async def _evalgrid_page(browser: Browser, origin: str, name: str) -> Page:
    """The page as Static Perception leaves it: confined, pinned context, loaded, settled and running again."""
    _, page = await ContextPool(browser).open(origin, [], mobile=False)
    _, still = await load(page, f"{origin}/{name}")
    await release(page, still)
    return page


async def _evalgrid_audit(browser: Browser, origin: str, name: str) -> Measured:
    page = await _evalgrid_page(browser, origin, name)
    try:
        before = await page.evaluate(COUNT)
        audit = await audit_accessibility(page)
        after = await page.evaluate(COUNT)
        return Measured(audit, before, after, await page.evaluate("typeof window.axe"))
    finally:
        await page.context.close()


async def _direct_axe(browser: Browser, url: str, axe_js: Path) -> dict[str, int]:
    """Per-rule violating-node counts from npm's axe-core, run the plain way in the page's own world."""
    context = await browser.new_context(viewport=DESKTOP, locale="en-US")
    try:
        page = await context.new_page()
        await page.goto(url, wait_until="load")
        await page.add_script_tag(path=axe_js)
        counts: dict[str, int] = await page.evaluate(
            "async () => Object.fromEntries((await axe.run()).violations.map((v) => [v.id, v.nodes.length]))"
        )
        return counts
    finally:
        await context.close()


def _by_rule(audit: AccessibilityAudit) -> dict[str, int]:
    return {v.rule_id: v.nodes for v in audit.violations}


@pytest.fixture(scope="module")
def audited(site: Path, axe_core_npm: Path) -> dict[str, tuple[Measured, dict[str, int]]]:
    """Every page of ``PAGES`` and ``HOSTILE``: evalgrid's audit and npm's axe-core run directly."""

    async def scenario(browser: Browser) -> dict[str, tuple[Measured, dict[str, int]]]:
        with serve_directory(site, []) as origin:
            return {name: (await _evalgrid_audit(browser, origin, name),
                           await _direct_axe(browser, f"{origin}/{name}", axe_core_npm / "axe.js"))
                    for name in (*PAGES, *HOSTILE)}

    return with_browser(scenario)


def test_vendored_axe_is_byte_identical_to_the_npm_release(axe_core_npm: Path) -> None:
    vendored = VENDORED.read_bytes()
    assert vendored.startswith(f"/*! axe v{AXE_VERSION}\n * Copyright (c) 2015 - 2026 Deque Systems".encode())
    assert vendored == (axe_core_npm / "axe.min.js").read_bytes()
    assert (VENDORED.parent / "axe-core.LICENSE").read_bytes() == (axe_core_npm / "LICENSE").read_bytes()


@pytest.mark.parametrize("name", list(PAGES))
def test_counts_equal_axe_core_run_directly(audited: dict[str, tuple[Measured, dict[str, int]]], name: str) -> None:
    measured, direct = audited[name]
    audit = measured.audit
    assert audit.error is None and audit.axe_version == AXE_VERSION
    assert _by_rule(audit) == direct
    assert audit.defect_count == sum(direct.values())
    for rule, nodes in EXPECTED[name].items():
        assert _by_rule(audit).get(rule) == nodes, (rule, _by_rule(audit))
    for violation in audit.violations:
        assert len(violation.targets) == min(violation.nodes, 10)
        assert violation.help_url.startswith("https://dequeuniversity.com/rules/axe/4.14/")
    if name == "clean.html":
        assert audit.violations == [] and audit.defect_count == 0
    else:
        assert audit.defect_count > 0


def test_wcag_criteria_and_levels_come_from_axe_tags(audited: dict[str, tuple[Measured, dict[str, int]]]) -> None:
    rules = {v.rule_id: v for measured, _ in audited.values() for v in measured.audit.violations}
    assert (rules["color-contrast"].wcag, rules["color-contrast"].wcag_level) == (["1.4.3"], "AA")
    assert (rules["html-has-lang"].wcag, rules["html-has-lang"].wcag_level) == (["3.1.1"], "A")
    assert (rules["image-alt"].wcag, rules["image-alt"].wcag_level) == (["1.1.1"], "A")
    assert (rules["link-name"].wcag, rules["link-name"].wcag_level) == (["2.4.4", "4.1.2"], "A")
    assert (rules["region"].wcag, rules["region"].wcag_level) == ([], None)  # best practice, no WCAG criterion
    assert rules["color-contrast"].impact == "serious" and rules["label"].impact == "critical"


def test_dom_elements_counts_the_pages_own_elements_and_axe_leaves_nothing_behind(
    audited: dict[str, tuple[Measured, dict[str, int]]],
) -> None:
    for name in PAGES:
        measured, _ = audited[name]
        assert measured.audit.dom_elements == measured.elements_before == measured.elements_after, name
        assert measured.page_world_axe == "undefined", name  # axe never entered the page's own world
    assert audited["clean.html"][0].audit.dom_elements == 18 + 25  # 18 in the markup, 25 added by its script


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_page_with_its_own_axe_is_still_measured(
    audited: dict[str, tuple[Measured, dict[str, int]]], name: str,
) -> None:
    reference = audited["image-button.html"][0].audit
    measured, _ = audited[name]
    assert measured.audit.error is None and measured.audit.axe_version == AXE_VERSION
    assert _by_rule(measured.audit) == _by_rule(reference)
    assert measured.audit.defect_count == reference.defect_count > 0
    assert measured.audit.dom_elements == measured.elements_before  # querySelectorAll('*'), not the sabotaged call
    assert measured.page_world_axe == "object"  # the page keeps its fake; evalgrid did not need to touch it


def test_the_locked_fake_axe_does_fool_a_page_world_run(audited: dict[str, tuple[Measured, dict[str, int]]]) -> None:
    # Why the isolated world matters: injected into the page's own world, the real axe cannot replace the fake.
    assert audited["hostile-locked.html"][1] == {}
    assert audited["hostile-assign.html"][1] == _by_rule(audited["image-button.html"][0].audit)


def test_a_page_axe_cannot_measure_gives_an_audit_with_an_error(site: Path) -> None:
    async def scenario(browser: Browser) -> dict[str, Any]:
        out: dict[str, Any] = {}
        with serve_directory(site, []) as origin:
            page = await _evalgrid_page(browser, origin, "clean.html")
            crasher = await page.context.new_cdp_session(page)  # attached while the page still answers
            await page.evaluate("setTimeout(() => { for (;;) {} }, 50)")
            await asyncio.sleep(0.3)  # the page is now stuck in an endless loop
            started = time.monotonic()
            out["busy"] = await audit_accessibility(page, timeout_s=1.5)
            out["busy_s"] = time.monotonic() - started

            audit = asyncio.ensure_future(audit_accessibility(page, timeout_s=60))
            await asyncio.sleep(0.3)
            started = time.monotonic()
            with contextlib.suppress(TimeoutError):  # a renderer that crashed never answers
                await asyncio.wait_for(crasher.send("Page.crash"), 0.2)
            out["crashed_during"] = await audit
            out["crashed_during_s"] = time.monotonic() - started
            out["crashed_before"] = await audit_accessibility(page, timeout_s=10)
            await page.context.close()
            out["closed"] = await audit_accessibility(page)
        return out

    out = with_browser(scenario)
    assert out["busy"].error == "axe-core did not finish within 1.5 s" and out["busy_s"] < 5
    assert out["crashed_during"].error == "the page crashed" and out["crashed_during_s"] < 20
    assert out["crashed_before"].error == "the page crashed"
    assert out["closed"].error == "the page is closed"
    for key in ("busy", "crashed_during", "crashed_before", "closed"):
        assert out[key].violations == [] and out[key].defect_count == 0, key


def test_audit_record_round_trips_and_its_defect_count_must_add_up() -> None:
    violation = AxeViolation(rule_id="image-alt", impact="critical", description="d", help_url="https://x",
                             wcag=["1.1.1"], wcag_level="A", nodes=3, targets=["img"])
    audit = AccessibilityAudit(dom_elements=12, violations=[violation, violation])
    assert audit.defect_count == 6
    assert AccessibilityAudit.model_validate_json(audit.model_dump_json()) == audit
    with pytest.raises(ValidationError, match="defect_count"):
        AccessibilityAudit(violations=[violation], defect_count=1)
    with pytest.raises(ValidationError):
        AccessibilityAudit.model_validate({**audit.model_dump(), "surprise": 1})
    assert AccessibilityAudit.model_fields["defect_count"].description
