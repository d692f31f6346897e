"""The driver's side of one sandbox: the machinery's container or pod, and the app's build containers.

A sandbox has two principals that never share a process, a uid or a writable file:

- the **machinery** (uid :data:`SANDBOX_USER`): the supervisor, Chromium, the CDN mirror, in one long-lived
  container or pod per worker. It serves the app's files as data and runs no process of the app;
- the **app** (uid :data:`APP_USER`): a component or project answer's build runs in a container or pod made
  for that one build (no network, limits of its own) and thrown away with everything it started. Its
  files go in with the request; the built files come back and are loaded into the machinery as data.

Backends differ only in how these are created and removed and in how the driver gets in (``docker exec``
relays, or TCP connections to a pod's gate). Everything else is shared here: the authenticated control
channel (every reply must carry its request's id and this sandbox's nonce, or it is refused and the run
is the app's failure: :class:`~evaluator.errors.TamperError`), the browser over CDP through a
:class:`~cluster.sandbox.channel_devtools.Bridge`, the watcher that cuts every connection the moment the sandbox
dies, and the order of tear-down.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import secrets
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, Playwright
from playwright.async_api import Error as PlaywrightError

from cluster.sandbox.channel_devtools import Bridge, OpenUpstream, Upstream
from evaluator import BrowserUnavailableError, BuildReport, MirroredPackage, SandboxError, Stack, TamperError
from evaluator.browser import BUILD_TIMEOUT_S
from evaluator.evidence import AudioSource

APP_ORIGIN = "http://127.0.0.1:8080"
"""Where the sandbox's Chromium loads the app from (the supervisor's server, inside the sandbox)."""
SANDBOX_USER = "10001"
"""The machinery's user: the supervisor, Chromium and the mirror."""
APP_USER = "10002"
"""The app's user: its build container and everything the answer's build code starts."""
BUILD_LOG_LIMIT = 256 * 1024
"""The most of a build's log kept (buildd.js keeps the same; the driver does not trust it to)."""
BUILD_OUTPUT_LIMIT = 96 * 1024 * 1024
"""The most a build may hand back (the machinery's app directory holds 128 MiB); more is the answer's failure."""
BUILD_REPLY_LIMIT = 160 * 1024 * 1024
"""The longest reply line a build container may send (its output, base64, inside JSON)."""


@dataclass(frozen=True)
class SandboxLimits:
    """Hard limits of one sandbox container, and of each build container beside it."""

    memory: str = "1536m"
    cpus: float = 1.0
    pids: int = 256
    shm: str = "64m"
    tmp: str = "512m"
    app: str = "128m"


@dataclass(frozen=True)
class BuildRequest:
    """One build for an app container: the answer's files and what to build."""

    stack: Stack
    entry: str
    files: dict[str, str]
    """Relative path → base64 content."""
    timeout_s: float

    def line(self, **extra: str) -> bytes:
        """The request as buildd.js reads it: one JSON line."""
        body = {"stack": str(self.stack), "entry": self.entry, "timeout_s": self.timeout_s, "files": self.files}
        return json.dumps({**body, **extra}).encode() + b"\n"


class ContainerSandbox(ABC):
    """One sandbox and the Chromium inside it, seen from the driver.

    Implements :class:`evaluator.browser.app_host.AppHost`: :meth:`serve` loads the app into the sandbox, where the
    browser from :meth:`browser` loads it from :data:`APP_ORIGIN`; :meth:`build` builds it in an app container.
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
        self._nonce = ""
        self._ids = itertools.count(1)
        self._watcher: asyncio.Task[None] | None = None
        self._mirror: list[MirroredPackage] | None = None
        self._served: Path | None = None

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
        """How the bridge opens one connection to Chromium's DevTools pipe."""

    @abstractmethod
    async def _wait_gone(self, name: str) -> None:
        """Return when sandbox ``name`` has stopped (killed, out of memory, deleted)."""

    @abstractmethod
    async def _remove(self) -> None:
        """Remove the sandbox; a sandbox that is already gone is not an error."""

    @abstractmethod
    async def _build_in_app_container(self, request: BuildRequest) -> bytes:
        """Run one build in a new app container and return its reply line (``b""`` if it ended without one).

        Raises :class:`SandboxError` only when the container could not be made or reached (the machinery's
        failure); whatever the container itself does or sends is the app's.
        """

    async def _started(self) -> None:  # noqa: B027 - a hook with nothing to do by default, not an abstract step
        """A hook for backends: runs once the control channel answers (the Kubernetes egress probe)."""

    # ------------------------------------------------------------------------------- shared

    async def start(self) -> None:
        """Create the sandbox, the bridge to its DevTools pipe and the authenticated control channel."""
        await self._create()
        self._bridge = Bridge(self._devtools())
        self._endpoint = await self._bridge.start()
        # One long-lived control channel: loading an app costs a message, not a new process.
        self._control = await self._open_control()
        self._nonce = secrets.token_hex(16)
        self._ids = itertools.count(1)
        self._watcher = asyncio.ensure_future(self._watch(self.name))
        await self._request({"op": "hello", "nonce": self._nonce})
        await self._started()
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
        """The sandbox's Chromium over CDP, connected on first use and again after a crash.

        Each connection gets a Chromium no earlier connection used (the supervisor restarts it).
        """
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        deadline = time.monotonic() + wait_s
        last = ""
        while (left := deadline - time.monotonic()) > 0:
            try:
                # Ready: a browser started and the CDN mirror listens (the first page finds it answering).
                await self._request({"op": "ready", "timeout_s": left}, timeout=left + 5)
                self._browser = await playwright.chromium.connect_over_cdp(self._endpoint, timeout=10000)
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
        """Serve ``root`` as the sandbox's app (the last app's files go first); its logs are collected when it ends."""
        return self._serve(root, log, requests)

    @asynccontextmanager
    async def _serve(self, root: Path, log: list[str],
                     requests: list[dict[str, str]] | None) -> AsyncIterator[str]:
        await self._request({"op": "load", "files": _files(root)})
        self._served = root
        try:
            yield APP_ORIGIN
        finally:
            self._served = None
            reply = await self._request({"op": "stop"})
            dropped = int(str(reply.get("log_dropped", 0)))
            if dropped:
                log.append(f"[evalgrid: {dropped} earlier server log lines dropped; the sandbox keeps the last "
                           "256 KiB]")
            log.extend(line for line in str(reply.get("log", "")).splitlines() if line)
            if requests is not None:
                requests.extend(_mirror_records(str(reply.get("mirror", ""))))

    async def build(self, stack: Stack, entry: str) -> tuple[BuildReport, str]:
        """Build the served component or project in a new app container; the built files then take its place.

        The container's reply is the app's: a reply that cannot be read, or a missing one, is the answer's
        failed build, never the machinery's.
        """
        if self._served is None:
            raise SandboxError("build() needs an app being served (call it inside serve())")
        request = BuildRequest(stack=stack, entry=entry, files=_files(self._served), timeout_s=BUILD_TIMEOUT_S)
        started = time.monotonic()
        line = await self._build_in_app_container(request)
        seconds = round(time.monotonic() - started, 3)
        try:
            reply: dict[str, Any] = json.loads(line) if line else {}
            if not isinstance(reply, dict):
                raise ValueError("not a JSON object")
            code = int(reply.get("exit_code", -1))
            files = _build_output(reply.get("files") or {}) if code == 0 else {}
            log = str(reply.get("log", ""))
            if len(log) > BUILD_LOG_LIMIT:
                log = log[:BUILD_LOG_LIMIT] + f"\n[evalgrid: build log cut at {BUILD_LOG_LIMIT} characters]"
            timed_out = bool(reply.get("timed_out"))
        except (ValueError, TypeError) as exc:
            code, files, timed_out = -1, {}, False
            log = f"evalgrid: the build container's reply could not be read ({exc})"
        if not line:
            code, files, timed_out = -1, {}, seconds >= BUILD_TIMEOUT_S
            log = ("evalgrid: the build container ended without a reply (killed at the time limit, out of memory, "
                   "or ended by the answer's own build code)")
        if code == 0:
            await self._request({"op": "load", "files": files})
        report = BuildReport(ok=code == 0, stack=stack, entry=entry, seconds=seconds, exit_code=code,
                             timed_out=timed_out)
        return report, log

    async def egress(self, targets: list[str], timeout_s: float = 2.0) -> list[dict[str, str]]:
        """Which of ``targets`` (``host:port``) the sandbox can open a TCP connection to, as it reports it."""
        reply = await self._request({"op": "egress", "targets": targets, "timeout_s": timeout_s},
                                    timeout=timeout_s + 10)
        results = reply.get("results")
        return [{str(k): str(v) for k, v in r.items()} for r in results if isinstance(r, dict)] \
            if isinstance(results, list) else []

    async def _request(self, request: dict[str, object], timeout: float = 30.0) -> dict[str, object]:
        """One request on the control channel; an error or silence means the sandbox is unusable.

        Only a reply carrying this request's id and the sandbox's nonce is taken: anything else was written by
        something other than the supervisor, and ends the run as the app's failure.
        """
        async with self._control_lock:
            control = self._control
            if control is None:
                raise SandboxError(f"sandbox {self.name or '(not started)'} has no control channel; start it")
            request_id = next(self._ids)
            try:
                control.writer.write(json.dumps({**request, "id": request_id}).encode() + b"\n")
                await control.writer.drain()
                line = await asyncio.wait_for(control.reader.readline(), timeout)
                if not line:
                    raise ConnectionError("closed (sandbox gone?)")
                reply = json.loads(line)
                if not isinstance(reply, dict):
                    raise ValueError("a reply that is not a JSON object")
            except (ConnectionError, TimeoutError, ValueError) as exc:
                # A reply that comes late would be read as the answer to the next request.
                await self._drop_control(control)
                raise SandboxError(f"sandbox {self.name}: control channel failed ({exc!r})") from exc
            if reply.get("id") != request_id or reply.get("nonce") != self._nonce:
                await self._drop_control(control)
                raise TamperError(f"sandbox {self.name}: a reply to {request['op']!r} did not come from the "
                                  f"supervisor (id {reply.get('id')!r}, expected {request_id}; nonce "
                                  f"{'matches' if reply.get('nonce') == self._nonce else 'missing or wrong'}); "
                                  "refused")
        if not reply.get("ok"):
            raise SandboxError(f"sandbox {self.name}: {request['op']} failed: {reply.get('error')}")
        return reply

    async def _drop_control(self, control: Upstream) -> None:
        self._control = None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(control.close(), 5)

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


def _build_output(files: object) -> dict[str, str]:
    """A build reply's files, checked before the machinery loads them: the reply is the app's to forge."""
    if not isinstance(files, dict):
        raise ValueError("its files are not an object")
    size = 0
    for rel, data in files.items():
        parts = str(rel).split("/")
        if not isinstance(data, str) or not rel or str(rel).startswith("/") or "\\" in str(rel) or "\0" in str(rel) \
                or any(part in ("", ".", "..") for part in parts):
            raise ValueError(f"it names a file the app may not write: {str(rel)[:100]!r}")
        size += len(data) * 3 // 4
        if size > BUILD_OUTPUT_LIMIT:
            raise ValueError(f"its files exceed {BUILD_OUTPUT_LIMIT // (1024 * 1024)} MiB")
    return {str(rel): str(data) for rel, data in files.items()}


def _mirror_records(text: str) -> list[dict[str, str]]:
    """The mirror's log lines (one JSON object each); a line that is not one is skipped."""
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
