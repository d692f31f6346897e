"""The app preview tool on real Chromium: what it reports on working and broken apps, and only what it checks.

All cases share one browser (one preview is a Static Perception, about two seconds).
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import Browser

from evaluator.preview import AppPreviewer, PreviewCheck, PreviewReport
from tests.support import with_browser

pytestmark = pytest.mark.browser

_WORKING = {
    "index.html": "<!doctype html><html><head><title>Tally</title><link rel=stylesheet href=style.css></head>"
                  "<body><h1>Tally</h1><button id=add>Add</button><p id=n>0</p><script src=app.js></script></body>"
                  "</html>",
    "style.css": "body { font-family: sans-serif; background: #fafafa; color: #222; padding: 2rem; }",
    "app.js": "let n = 0;\ndocument.getElementById('add').onclick = () => {\n"
              "  document.getElementById('n').textContent = ++n;\n};\n",
}
_BROKEN = {
    "index.html": "<!doctype html><html><head><title>Tally</title></head><body><h1>Tally</h1><p id=n>0</p>"
                  "<script src=app.js></script><script src=missing.js></script></body></html>",
    "app.js": "const total = 0;\nconsole.error('could not load the saved tally');\n\n"
              "document.getElementById('add').onclick = () => {};\n",
}
_STORM = {"index.html": "<!doctype html><html><body><h1>Storm</h1><p>Logs a lot.</p><script>"
                       "for (let i = 0; i < 300; i++) console.error('noise ' + i);\n"
                       "null.boom();</script></body></html>"}
_PROJECT = {"package.json": '{"name": "app", "private": true, "scripts": {"build": "vite build"}, '
                            '"dependencies": {"react": "18.3.1", "react-dom": "18.3.1"}}',
            "index.html": "<!doctype html><html><body><div id=root></div>"
                          "<script type=module src=/src/main.jsx></script></body></html>",
            "src/main.jsx": "import React from 'react';\nexport default function App() { return <h1>Hi</h1>; }\n"}
_BLANK = {"index.html": "<!doctype html><html><body><div id=root></div><script>window.x = 1;</script></body></html>"}


def _previews(*cases: tuple[dict[str, str], tuple[PreviewCheck, ...] | None]) -> list[Any]:
    async def scenario(browser: Browser) -> list[Any]:
        results = []
        for files, checks in cases:
            previewer = AppPreviewer(browser) if checks is None else AppPreviewer(browser, checks=checks)
            results.append(await previewer.preview(files))
        return results

    return with_browser(scenario)


@pytest.fixture(scope="module")
def previews() -> list[Any]:
    return _previews((_WORKING, None), (_BROKEN, None), (_BLANK, None),
                     (_BROKEN, (PreviewCheck.BLANK_RENDER,)), ({"notes.txt": "no app here"}, None),
                     (_STORM, None), ({**_WORKING, "my notes.js": "let x = 1;"}, None), (_PROJECT, None))


def _kinds(report: PreviewReport) -> dict[str, list[tuple[str | None, int | None]]]:
    kinds: dict[str, list[tuple[str | None, int | None]]] = {}
    for problem in report.problems:
        kinds.setdefault(problem.kind, []).append((problem.file, problem.line))
    return kinds


def test_a_working_app_previews_clean_with_its_screenshot(previews: list[Any]) -> None:
    working = previews[0]
    assert working.report.status == "ok" and working.report.problems == []
    assert working.report.checks == list(PreviewCheck)
    assert working.screenshot_png is not None and working.screenshot_png.startswith(b"\x89PNG")
    assert "No problem" in working.report.next_action


def test_a_broken_app_gets_each_problem_with_its_file_and_line_and_a_next_action(previews: list[Any]) -> None:
    report = previews[1].report
    kinds = _kinds(report)
    assert report.status == "errors"
    assert ("app.js", 4) in kinds["runtime_exceptions"], report.problems  # the null element's onclick
    assert ("app.js", 2) in kinds["console_errors"], report.problems
    # the missing script is a 404: Chromium reports it as a console error naming the file
    assert any(file == "missing.js" for file, _ in kinds["console_errors"] + kinds.get("failed_requests", []))
    assert report.next_action and all(p.diagnosis for p in report.problems)
    seen = [(p.kind, p.message, p.file, p.line) for p in report.problems]
    assert len(seen) == len(set(seen)), "a problem both viewports saw is told once"
    text = report.as_text()
    assert "app.js:4" in text and "next action:" in text and "checks: build_errors" in text


def test_a_blank_page_is_reported_as_a_blank_render(previews: list[Any]) -> None:
    assert "blank_render" in _kinds(previews[2].report)


def test_only_the_configured_checks_are_revealed(previews: list[Any]) -> None:
    limited = previews[3].report
    assert limited.checks == [PreviewCheck.BLANK_RENDER]
    assert limited.status == "ok" and limited.problems == []  # the exception and console errors stay untold


def test_files_that_are_no_app_get_a_report_not_an_exception(previews: list[Any]) -> None:
    report = previews[4].report
    assert report.status == "errors" and [p.kind for p in report.problems] == ["not_an_app"]
    assert previews[4].screenshot_png is None


def test_a_console_storm_does_not_bury_the_exception(previews: list[Any]) -> None:
    report = previews[5].report
    assert report.problems[0].kind == "runtime_exceptions", report.problems[:3]
    assert report.more_problems > 100 and len(report.problems) <= 20
    assert report.next_action == previews[1].report.next_action  # the exception's, not the console's


def test_a_path_a_fenced_answer_cannot_carry_is_refused_by_name(previews: list[Any]) -> None:
    report = previews[6].report
    assert [p.kind for p in report.problems] == ["not_an_app"] and "my notes.js" in report.problems[0].message


def test_a_project_on_a_host_that_cannot_build_gets_a_build_error(previews: list[Any]) -> None:
    report = previews[7].report
    assert report.status == "errors" and [p.kind for p in report.problems] == ["build_errors"], report
