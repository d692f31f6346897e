"""Work on a page that stops as soon as the page's renderer dies: calls into a crashed page may never return."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from types import TracebackType
from typing import Any, Self, TypeVar

from playwright.async_api import Page

T = TypeVar("T")


class PageCrashed(Exception):  # noqa: N818 - named for what happened to the page
    """The tab's renderer died (out of memory, killed): the app's failure, not the browser's."""


class CrashWatch:
    """Listens for ``page``'s crash while open; :meth:`run` abandons work the moment it happens."""

    def __init__(self, page: Page) -> None:
        self._page = page
        self._event = asyncio.Event()

    @property
    def crashed(self) -> bool:
        """Whether the page crashed while watched."""
        return self._event.is_set()

    def _on_crash(self, _: Page) -> None:
        self._event.set()

    def start(self) -> Self:
        """Listen from now on, for as long as the page lives (``async with`` listens for its block only)."""
        self._page.on("crash", self._on_crash)
        return self

    async def __aenter__(self) -> Self:
        return self.start()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self._page.remove_listener("crash", self._on_crash)

    async def run(self, work: Awaitable[T]) -> T:
        """Await ``work``; raises :class:`PageCrashed` (and cancels it) if the page crashes first."""
        task = asyncio.ensure_future(work)
        crash = asyncio.ensure_future(self._event.wait())
        try:
            waiters: set[asyncio.Future[Any]] = {task, crash}
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                return task.result()
            raise PageCrashed("the page crashed: its renderer process died (out of memory or killed)")
        finally:
            for pending in (task, crash):
                pending.cancel()
            await asyncio.gather(task, crash, return_exceptions=True)
