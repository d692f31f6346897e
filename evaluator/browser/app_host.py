"""Where an app is served for the browser: the :class:`AppHost` protocol and its loopback default.

The evaluator does not know about containers. A sandbox backend (``cluster``'s Docker backend)
implements :class:`AppHost` to put the app's files next to *its* browser; the loopback host serves
them from this process and is for development only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Protocol

from evaluator.browser.serve import serve_directory
from evaluator.errors import BuildUnavailableError
from evaluator.evidence.soundtrack import AudioSource
from evaluator.models import BuildReport, MirroredPackage, Stack

BUILD_OUTPUT = "index.html"
"""Where a built app's page is: the build replaces the served directory's contents, as `vite preview` serves."""
BUILD_TIMEOUT_S = 90.0
"""A build still running then is killed and is the answer's failure; well inside a run's default time limit (180 s)."""


class AppHost(Protocol):
    """Serves an app's directory at an origin the run's browser can reach."""

    @property
    def label(self) -> str:
        """What the evidence manifest records as the sandbox; part of the evidence key."""
        ...

    @property
    def audio(self) -> AudioSource | None:
        """Where the browser's sound can be recorded, or ``None`` (the video then has no audio track)."""
        ...

    @property
    def mirror(self) -> list[MirroredPackage] | None:
        """The offline CDN mirror beside the browser, which then answers or refuses every external request
        itself; ``None`` when there is none (the driver blocks every external request)."""
        ...

    def serve(self, root: Path, log: list[str],
              requests: list[dict[str, str]] | None = None) -> AbstractAsyncContextManager[str]:
        """Serve ``root`` for the duration of the context; yields the origin, appends server log lines to ``log``
        and, on exit, the mirror's record of the page's external requests to ``requests``."""
        ...

    async def build(self, stack: Stack, entry: str) -> tuple[BuildReport, str]:
        """Build the served component or project (inside :meth:`serve`); the built app then takes the place of
        the source, its page at :data:`BUILD_OUTPUT`.

        Returns the report and the build log. A failed build is a report, not an exception; a host that
        cannot build raises :class:`~evaluator.errors.BuildUnavailableError`.
        """
        ...


class LoopbackHost:
    """Serves the app from this process on 127.0.0.1: request filtering only, NOT a sandbox."""

    label = "local (loopback only; NOT a sandbox)"
    audio: AudioSource | None = None  # Playwright mutes the Chromium it launches headless
    mirror: list[MirroredPackage] | None = None

    @asynccontextmanager
    async def _serve(self, root: Path, log: list[str]) -> AsyncIterator[str]:
        with serve_directory(root, log) as origin:
            yield origin

    def serve(self, root: Path, log: list[str],
              requests: list[dict[str, str]] | None = None) -> AbstractAsyncContextManager[str]:
        """Serve ``root`` on a free loopback port."""
        return self._serve(root, log)

    async def build(self, stack: Stack, entry: str) -> tuple[BuildReport, str]:
        """Not here: builds run against the toolchain in the sandbox image."""
        raise BuildUnavailableError(
            f"{entry} is a {stack} answer, which is built offline in the sandbox; run with the docker or "
            "kubernetes backend (the local backend has no build toolchain)")


LOOPBACK = LoopbackHost()
"""The development host used when no sandbox backend is given."""
