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

from evaluator.serve import serve_directory
from evaluator.soundtrack import AudioSource


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

    def serve(self, root: Path, log: list[str]) -> AbstractAsyncContextManager[str]:
        """Serve ``root`` for the duration of the context; yields the origin, appends server log lines to ``log``."""
        ...


class LoopbackHost:
    """Serves the app from this process on 127.0.0.1: request filtering only, NOT a sandbox."""

    label = "local (loopback only; NOT a sandbox)"
    audio: AudioSource | None = None  # Playwright mutes the Chromium it launches headless

    @asynccontextmanager
    async def _serve(self, root: Path, log: list[str]) -> AsyncIterator[str]:
        with serve_directory(root, log) as origin:
            yield origin

    def serve(self, root: Path, log: list[str]) -> AbstractAsyncContextManager[str]:
        """Serve ``root`` on a free loopback port."""
        return self._serve(root, log)


LOOPBACK = LoopbackHost()
"""The development host used when no sandbox backend is given."""
