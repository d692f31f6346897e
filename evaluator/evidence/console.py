"""Classifying console output the way Cookie-Frame's protocol asks: only breaking errors count.

Font loading failures, favicon 404s, requests evalgrid itself blocked, and failures of CDN
resources are recorded but classed as noise; whether a missing CDN script broke the page shows up
in the render probes and in the uncaught errors it causes.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from playwright.async_api import Dialog, Page

    from evaluator.llm.client import WireObject


class ConsoleClass(StrEnum):
    """Class of one console message or page error."""

    UNCAUGHT = "uncaught"
    """An uncaught exception (``pageerror``): the strongest sign of broken behaviour."""
    ERROR = "error"
    """A ``console.error`` or a failed first-party request."""
    WARNING = "warning"
    """Console warnings: never reported as errors."""
    NOISE = "noise"
    """Fonts, favicon, blocked or CDN requests."""
    INFO = "info"
    """Logs and everything else."""


_FONT = re.compile(r"fonts\.(googleapis|gstatic)\.com|\.(woff2?|ttf|otf|eot)(\?|\b)|downloaded font|OTS parsing", re.I)
_FAVICON = re.compile(r"favicon", re.I)
# Refusals of the driver (local backend) and of the sandbox's mirror (a refused CONNECT, or its 403
# marked with the X-Evalgrid-Blocked header): the sandbox's doing, not the app's error.
_BLOCKED = re.compile(r"ERR_BLOCKED_BY_CLIENT|ERR_NAME_NOT_RESOLVED|ERR_INTERNET_DISCONNECTED|"
                      r"ERR_TUNNEL_CONNECTION_FAILED|blocked by the sandbox", re.I)
_CDN = re.compile(
    r"unpkg\.com|(cdn|fastly)\.jsdelivr\.net|cdnjs\.cloudflare\.com|esm\.sh|cdn\.skypack\.dev|cdn\.tailwindcss\.com|"
    r"code\.jquery\.com|(stackpath|maxcdn)\.bootstrapcdn\.com|ajax\.googleapis\.com|(kit|use)\.fontawesome\.com|"
    r"d3js\.org",
    re.I,
)


class ConsoleEntry(BaseModel):
    """One entry of ``console.json`` as a reader sees it: the log's entry (a plain dict while the page runs), its
    wall-clock time replaced by its place in the video."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    phase: str
    """The run's phase then (``load``, ``mobile``, ``interaction``, ...)."""
    kind: str
    """Playwright's message type, or ``pageerror``, ``requestfailed``, ``crash``, ``dialog``, ``popup``."""
    klass: ConsoleClass = Field(alias="class")
    """How much it counts against the page."""
    text: str
    url: str = ""
    """The script or request it came from."""
    line: int | None = None
    """The line in ``url``, when known."""
    video_time_s: float | None = None
    """Where it falls in the interaction's video (none before the video started)."""


@dataclass(frozen=True)
class LoggedEntry:
    """One entry of a :class:`PageLog` while the page runs: a :class:`ConsoleEntry` still on the wall clock."""

    wall: float
    phase: str
    kind: str
    klass: ConsoleClass
    text: str
    url: str
    line: int | None

    def as_json(self) -> WireObject:
        """The entry as the bundle's files hold it: ``network.json`` keeps the wall clock, ``console.json`` puts
        the video's clock in its place; ``line`` only where known."""
        return {"wall": self.wall, "phase": self.phase, "kind": self.kind, "class": self.klass.value,
                "text": self.text, "url": self.url, **({"line": self.line} if self.line is not None else {})}


_ERRORS = frozenset({ConsoleClass.UNCAUGHT, ConsoleClass.ERROR})


def _refusal(headers: dict[str, str]) -> str:
    return " (blocked by the sandbox)" if headers.get("x-evalgrid-blocked") else ""


def classify_console(kind: str, text: str, url: str = "") -> ConsoleClass:
    """Class of a console message (``kind`` is Playwright's message type, or ``pageerror``)."""
    if kind in ("pageerror", "crash"):
        return ConsoleClass.UNCAUGHT
    subject = f"{text} {url}"
    if kind in ("error", "requestfailed"):
        if _FAVICON.search(subject) or _FONT.search(subject) or _CDN.search(subject) or _BLOCKED.search(subject):
            return ConsoleClass.NOISE
        return ConsoleClass.ERROR
    if kind == "warning":
        return ConsoleClass.WARNING
    return ConsoleClass.INFO


class PageLog:
    """Console messages, uncaught errors, failed requests, dialogs and popups of one page, timestamped.

    Dialogs are dismissed and popups closed as they appear, so an app cannot stall the run with an
    ``alert`` storm or a ``window.open`` flood; both are recorded.

    Errors (uncaught exceptions, console errors, failed requests) have a budget of their own beside the rest's:
    a page that floods its console with logs first cannot push its errors out of the record. What either budget
    drops is counted (``dropped``, ``errors_dropped``), and dropped errors still count against the page.
    """

    def __init__(self, *, limit: int = 5000, error_limit: int = 2000) -> None:
        self.entries: list[LoggedEntry] = []
        self.dropped = 0
        """Entries past either budget, errors included."""
        self.errors_dropped = 0
        """Errors past the error budget."""
        self._limits = {True: error_limit, False: limit}
        self._kept = {True: 0, False: 0}

    def attach(self, page: Page, phase: Callable[[], str]) -> None:
        """Record ``page``'s events; ``phase`` names the current phase at each event."""

        def add(kind: str, text: str, url: str = "", line: int | None = None) -> None:
            klass = classify_console(kind, text, url)
            error = klass in _ERRORS
            if self._kept[error] >= self._limits[error]:
                self.dropped += 1  # a console storm must not grow memory without bound
                self.errors_dropped += error
                return
            self._kept[error] += 1
            self.entries.append(LoggedEntry(wall=time.time(), phase=phase(), kind=kind, klass=klass, text=text[:2000],
                                            url=url[:500], line=line))

        page.on("console", lambda m: add(m.type, m.text, *_console_source(m.location)))
        page.on("pageerror", lambda e: add("pageerror", f"{e.name}: {e.message}" if e.name else str(e),
                                           *_stack_source(e.stack or "")))
        page.on("requestfailed", lambda r: add("requestfailed", f"{r.failure or 'failed'}: {r.url}", r.url))
        page.on("response", lambda r: add("error", f"HTTP {r.status}{_refusal(r.headers)}: {r.url}", r.url)
                if r.status >= 400 else None)
        page.on("crash", lambda _: add("crash", "the page crashed"))

        async def dismiss(dialog: Dialog) -> None:
            add("dialog", f"{dialog.type}: {dialog.message[:300]}")
            await _quietly(dialog.dismiss())

        async def close_popup(popup: Page) -> None:
            add("popup", f"window.open: {popup.url}")
            await _quietly(popup.close())

        page.on("dialog", dismiss)
        page.on("popup", close_popup)

    def since(self, wall: float, *classes: ConsoleClass) -> list[LoggedEntry]:
        """Entries from ``wall`` on, optionally of the given classes."""
        return [e for e in self.entries if e.wall >= wall and (not classes or e.klass in classes)]


async def _quietly(action: Awaitable[None]) -> None:
    """Await a clean-up whose target may already be gone (a closed page, a dismissed dialog)."""
    try:
        await action
    except Exception:  # noqa: BLE001 - the target vanished first; nothing left to clean up
        pass


_STACK_FRAME = re.compile(r"(?:at |@)\(?(?P<url>[a-z][\w+.-]*://[^\s()]+?):(?P<line>\d+):\d+\)?")


def _console_source(location: Mapping[str, object] | None) -> tuple[str, int | None]:
    """Where a console message was written: its script's URL and line (1-based), when the browser says."""
    location = location or {}
    line = location.get("lineNumber")
    url = location.get("url")
    return (str(url) if url else "", line + 1 if isinstance(line, int) and url else None)


def _stack_source(stack: str) -> tuple[str, int | None]:
    """The script URL and line of an uncaught exception's innermost frame that names one."""
    match = _STACK_FRAME.search(stack)
    return (match["url"], int(match["line"])) if match else ("", None)
