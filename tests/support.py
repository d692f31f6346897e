"""Shared test helpers: a real Chromium per test, fixture paths, artifacts from fixture apps."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from playwright.async_api import Browser, async_playwright

from evaluator.browser import launch_browser
from evaluator.models import Artifact, Difficulty, Kind, Query, Stack

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
APPS = FIXTURES / "apps"

T = TypeVar("T")


def with_browser(scenario: Callable[[Browser], Awaitable[T]]) -> T:
    """Run ``scenario`` against a freshly launched real Chromium."""

    async def main() -> T:
        async with async_playwright() as playwright:
            browser = await launch_browser(playwright)
            try:
                return await scenario(browser)
            finally:
                await browser.close()

    return asyncio.run(main())


def app_artifact(name: str) -> Artifact:
    """An artifact made of one purpose-built app from ``fixtures/apps``."""
    html = (APPS / name).read_text(encoding="utf-8")
    return Artifact(key=f"artifact-{name}", candidate_id="fixture", query_id=name.removesuffix(".html"),
                    files={"index.html": html}, entrypoint="index.html", stack=Stack.HTML, answer_sha256="0" * 64)


def app_query(name: str, kind: Kind = Kind.INTERACTIVE_APPLICATION) -> Query:
    """A query to go with a purpose-built app."""
    return Query(id=name.removesuffix(".html"), brief="A small app used by evalgrid's tests.", domain="tests",
                 leaf="fixtures", difficulty=Difficulty.EASY, language="en", kind=kind)
