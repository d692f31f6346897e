"""The driver's side of one sandbox: a container or pod holding Chromium and the app server.

Backends differ only in how the sandbox is created and removed and in how the driver gets in (a
``docker exec`` session, or a TCP connection to the pod's gate). Everything else is shared here:
the control channel (load an app, start an app process, read the server log), the browser over
CDP through a :class:`~cluster.bridge.Bridge`, the watcher that cuts every connection the moment the
sandbox dies, and the order of tear-down.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import Browser, Playwright
from playwright.async_api import Error as PlaywrightError

from cluster.bridge import Bridge, OpenUpstream, Upstream
from evaluator.errors import BrowserUnavailableError, SandboxError
from evaluator.models import BuildReport, MirroredPackage, Stack
from evaluator.sandbox import BUILD_TIMEOUT_S
from evaluator.soundtrack import AudioSource

APP_ORIGIN = "http://127.0.0.1:8080"
"""Where the sandbox's Chromium loads the app from (the supervisor's server, inside the sandbox)."""
DEVTOOLS_PORT = 9222
"""Chromium's DevTools port on the sandbox's loopback."""
SANDBOX_USER = "10001"
"""The unprivileged user everything in the sandbox runs as."""


@dataclass(frozen=True)
class SandboxLimits:
    """Hard limits of one sandbox."""

    memory: str = "1536m"
    cpus: float = 1.0
    pids: int = 256
    shm: str = "64m"
    tmp: str = "512m"
    app: str = "128m"


class ContainerSandbox(ABC):
    """One sandbox and the Chromium inside it, seen from the driver.

    Implements :class:`evaluator.sandbox.AppHost`: :meth:`serve` unpacks the app into the sandbox,
    where the browser from :meth:`browser` loads it from :data:`APP_ORIGIN`.
    """

    def __init__(self, image: str, *, limits: SandboxLimits) -> None:
        self.image = image
        self.limits = limits
        self.name = ""
        self._bridge: Bridge | None = None
        self._endpoint = ""
        self._browser: Browser | None = None
        self._control: Upstream | None = None
        self._control_lock = asyncio.Lock()
        self._watcher: asyncio.Task[None] | None = None
        self._mirror: list[MirroredPackage] | None = None

    # ------------------------------------------------------------------ what a backend provides

    @property
    @abstractmethod
    def label(self) -> str:
        """The evidence manifest's sandbox description; part of the evidence key."""

    @property
    @abstractmethod
    def audio(self) -> AudioSource | None:
        """Where the sandbox's sound can be recorded."""

    @abstractmethod
    async def _create(self) -> None:
        """Create and start the sandbox (set :attr:`name`); ready for :meth:`_open_control` when it returns."""

    @abstractmethod
    async def _open_control(self) -> Upstream:
        """A new control channel: JSON request lines in, JSON reply lines out."""

    @abstractmethod
    def _devtools(self) -> OpenUpstream:
        """How the bridge opens one connection to Chromium's DevTools port."""

    @abstractmethod
    async def _wait_gone(self, name: str) -> None:
        """Return when sandbox ``name`` has stopped (killed, out of memory, deleted)."""

    @abstractmethod
    async def _remove(self) -> None:
        """Remove the sandbox; a sandbox that is already gone is not an error."""

    # ------------------------------------------------------------------------------- shared

    async def start(self) -> None:
        """Create the sandbox, the bridge to its DevTools port and the control channel."""
        await self._create()
        self._bridge = Bridge(self._devtools())
        self._endpoint = await self._bridge.start()
        # One long-lived control channel: loading an app costs a message, not a new process, and
        # it still works when the app has used up the pids limit.
        self._control = await self._open_control()
        self._watcher = asyncio.ensure_future(self._watch(self.name))
        packages = (await self._request({"op": "mirror"})).get("packages")
        self._mirror = [MirroredPackage.model_validate(p) for p in packages] if isinstance(packages, list) else []

    async def _watch(self, name: str) -> None:
        """When the sandbox stops, cut every connection into it at once.

        A forwarded connection does not always notice its sandbox died; without this, a run could
        wait on a DevTools reply from a dead sandbox until its time limit.
        """
        await self._wait_gone(name)
        if name != self.name:
            return  # an earlier sandbox of this object, already replaced
        if self._bridge is not None:
            await self._bridge.close()
        control = self._control
        if control is not None:
            await control.close()

    async def browser(self, playwright: Playwright, *, wait_s: float = 20.0) -> Browser:
        """The sandbox's Chromium over CDP, connected on first use and again after a crash."""
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        deadline = time.monotonic() + wait_s
        last = ""
        while (left := deadline - time.monotonic()) > 0:
            try:
                # Straight to the browser target's WebSocket, once Chromium listens: each forwarded
                # connection costs a `docker exec`, and HTTP discovery first would be a second one.
                target = await self._request({"op": "devtools", "timeout_s": left}, timeout=left + 5)
                endpoint = self._endpoint.replace("http://", "ws://", 1) + str(target["path"])
                self._browser = await playwright.chromium.connect_over_cdp(endpoint, timeout=5000)
                return self._browser
            except SandboxError as exc:
                if self._control is None:  # the sandbox is gone or its supervisor stopped answering
                    raise BrowserUnavailableError(f"no browser in sandbox {self.name}: {exc}") from exc
                last = str(exc).splitlines()[0]
            except PlaywrightError as exc:
                last = str(exc).splitlines()[0]
            await asyncio.sleep(0.1)
        raise BrowserUnavailableError(f"Chromium in sandbox {self.name} did not answer within {wait_s:.0f} s: {last}")

    @property
    def mirror(self) -> list[MirroredPackage] | None:
        """What the sandbox's offline CDN mirror holds (read from the sandbox when it started)."""
        return self._mirror

    def serve(self, root: Path, log: list[str],
              requests: list[dict[str, str]] | None = None) -> AbstractAsyncContextManager[str]:
        """Serve ``root`` as the sandbox's app: processes of the last app are killed first, and its own when it ends."""
        return self._serve(root, log, requests)

    @asynccontextmanager
    async def _serve(self, root: Path, log: list[str],
                     requests: list[dict[str, str]] | None) -> AsyncIterator[str]:
        await self._request({"op": "load", "files": _files(root)})
        try:
            yield APP_ORIGIN
        finally:
            reply = await self._request({"op": "stop"})
            log.extend(line for line in str(reply.get("log", "")).splitlines() if line)
            if requests is not None:
                requests.extend(_mirror_records(str(reply.get("mirror", ""))))

    async def build(self, stack: Stack, entry: str) -> tuple[BuildReport, str]:
        """Build the loaded component or project in the sandbox (offline, against the image's toolchain)."""
        reply = await self._request({"op": "build", "stack": str(stack), "entry": entry,
                                     "timeout_s": BUILD_TIMEOUT_S}, timeout=BUILD_TIMEOUT_S + 30)
        code = int(str(reply.get("exit_code", -1)))
        report = BuildReport(ok=code == 0, stack=stack, entry=entry, seconds=round(float(str(reply["seconds"])), 3),
                             exit_code=code, timed_out=bool(reply.get("timed_out")))
        return report, str(reply.get("log", ""))

    async def start_app_process(self, argv: list[str]) -> int:
        """Start a process of the app (a dev server) in the app directory; the next :meth:`serve` kills it."""
        reply = await self._request({"op": "start", "argv": argv})
        return int(str(reply["pid"]))

    async def _request(self, request: dict[str, object], timeout: float = 30.0) -> dict[str, object]:
        """One request on the control channel; an error or silence means the sandbox is unusable."""
        async with self._control_lock:
            control = self._control
            if control is None:
                raise SandboxError(f"sandbox {self.name or '(not started)'} has no control channel; start it")
            try:
                control.writer.write(json.dumps(request).encode() + b"\n")
                await control.writer.drain()
                line = await asyncio.wait_for(control.reader.readline(), timeout)
                if not line:
                    raise ConnectionError("closed (sandbox gone?)")
                reply: dict[str, object] = json.loads(line)
            except (ConnectionError, TimeoutError, ValueError) as exc:
                # A reply that comes late would be read as the answer to the next request.
                self._control = None
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(control.close(), 5)
                raise SandboxError(f"sandbox {self.name}: control channel failed ({exc!r})") from exc
        if not reply.get("ok"):
            raise SandboxError(f"sandbox {self.name}: {request['op']} failed: {reply.get('error')}")
        return reply

    async def close(self) -> None:
        """Remove the sandbox; safe to call twice."""
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
        browser, self._browser = self._browser, None
        if browser is not None:
            try:
                await asyncio.wait_for(browser.close(), 5)
            except (PlaywrightError, TimeoutError):
                pass  # the sandbox is removed below either way
        bridge, self._bridge = self._bridge, None
        if bridge is not None:
            await bridge.close()
        control, self._control = self._control, None
        if control is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(control.close(), 5)
        if self.name:
            await self._remove()


def _mirror_records(text: str) -> list[dict[str, str]]:
    """The mirror's log lines (one JSON object each); a line the app made unreadable is skipped."""
    records = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append({str(k): str(v) for k, v in record.items()})
    return records


def _files(root: Path) -> dict[str, str]:
    """The app's regular files (symlinks are not followed: they could point anywhere on the host), base64."""
    return {path.relative_to(root).as_posix(): base64.b64encode(path.read_bytes()).decode()
            for path in sorted(root.rglob("*")) if path.is_file() and not path.is_symlink()}
