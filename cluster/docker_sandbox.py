"""The Docker sandbox backend: one hardened container with Chromium and the app server, reused across runs.

Hardening is not optional: no network at all (``--network none``; the driver reaches DevTools
through :class:`~cluster.cdp_bridge.ExecBridge`), a non-root user, every capability dropped,
``no-new-privileges``, a read-only root with size-capped tmpfs mounts, and limits on memory, CPU,
pids and ``/dev/shm``; tini is the init. Containers are labelled with their owner process so
:func:`collect_garbage` can remove the ones a killed driver left behind.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import Browser, Playwright
from playwright.async_api import Error as PlaywrightError

from cluster.cdp_bridge import ExecBridge
from evaluator.errors import BrowserUnavailableError, ConfigError, SandboxError
from evaluator.soundtrack import AudioSource, parec_arguments

DEFAULT_IMAGE = "evalgrid/sandbox:dev"
LABEL = "evalgrid.sandbox"
OWNER_LABEL = "evalgrid.owner"
APP_ORIGIN = "http://127.0.0.1:8080"
_PULSE_SERVER = "unix:/tmp/evalgrid/pulse/pulse.sock"
_CONTROL_LIMIT = 64 * 1024 * 1024  # the longest reply line (a server log) the driver accepts
_USER = "10001"


@dataclass(frozen=True)
class SandboxLimits:
    """Hard limits of one sandbox container."""

    memory: str = "1536m"
    cpus: float = 1.0
    pids: int = 256
    shm: str = "64m"
    tmp: str = "512m"
    app: str = "128m"


def _owner_id(pid: int | None = None) -> str:
    """Who owns a container: host, pid namespace, pid and the process's start time.

    The namespace tells a process in another container (same hostname, other pids) apart; the start
    time tells a live owner from a later process that reused its pid.
    """
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{_pid_namespace()}:{pid}:{_start_time(pid)}"


def _pid_namespace() -> int:
    return os.stat("/proc/self/ns/pid").st_ino


def _start_time(pid: int) -> str:
    """Field 22 of /proc/PID/stat (clock ticks since boot), or "" when the process does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat[stat.rindex(")") + 2:].split()[19]


async def docker(*args: str, timeout: float = 60.0) -> tuple[int, str, str]:
    """Run the docker CLI; returns (exit code, stdout, stderr). Raises when the CLI is missing or hangs."""
    try:
        proc = await asyncio.create_subprocess_exec(
            "docker", *args, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
    except FileNotFoundError as exc:
        raise SandboxError("the docker CLI is not installed; run `make setup` (installs docker.io)") from exc
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError as exc:
        raise SandboxError(f"`docker {' '.join(args[:2])}` did not answer within {timeout:.0f} s") from exc
    finally:
        if proc.returncode is None:  # timed out or cancelled: the CLI must not outlive the call
            proc.kill()
            await proc.wait()
    return proc.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")


async def _resolve_image(image: str) -> str:
    """The image's id; a clear error when it has not been built."""
    code, out, err = await docker("image", "inspect", "--format", "{{.Id}}", image)
    if code != 0:
        if "Cannot connect" in err or "daemon" in err.lower() and "running" in err.lower():
            raise SandboxError(f"the Docker engine is not running ({err.strip()}); start dockerd "
                               "or run `make setup`")
        raise ConfigError(f"sandbox image {image} not found; build it with `make images`")
    return out.strip()


class DockerSandbox:
    """One sandbox container and the Chromium inside it, seen from the driver.

    Implements :class:`evaluator.sandbox.AppHost`: :meth:`serve` unpacks the app into the container,
    where the browser from :meth:`browser` loads it from ``http://127.0.0.1:8080``.
    """

    def __init__(self, image: str = DEFAULT_IMAGE, *, limits: SandboxLimits = SandboxLimits()) -> None:
        self.image = image
        self.limits = limits
        self.name = ""
        self._image_id = ""
        self._bridge: ExecBridge | None = None
        self._endpoint = ""
        self._browser: Browser | None = None
        self._control: asyncio.subprocess.Process | None = None
        self._control_lock = asyncio.Lock()
        self._watcher: asyncio.Task[None] | None = None

    @property
    def label(self) -> str:
        """The evidence manifest's sandbox description (the image id makes it part of the evidence key)."""
        return (f"docker {self.image} {self._image_id[:19]} (no network, non-root, read-only root, "
                f"caps dropped, mem {self.limits.memory}, cpus {self.limits.cpus}, pids {self.limits.pids})")

    async def start(self) -> None:
        """Create and start the container, and the bridge to its DevTools port."""
        if not self._image_id:
            self._image_id = await _resolve_image(self.image)
        self.name = f"evalgrid-sbx-{uuid.uuid4().hex[:10]}"
        limits = self.limits
        code, _, err = await docker(
            "run", "--detach", "--name", self.name,
            "--label", f"{LABEL}=1", "--label", f"{OWNER_LABEL}={_owner_id()}",
            "--network", "none", "--user", _USER, "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
            "--read-only", "--tmpfs", f"/tmp:rw,nosuid,nodev,size={limits.tmp}",
            "--tmpfs", f"/srv/app:rw,nosuid,nodev,uid={_USER},size={limits.app}",
            "--memory", limits.memory, "--memory-swap", limits.memory, "--cpus", str(limits.cpus),
            "--pids-limit", str(limits.pids), "--shm-size", limits.shm, "--ulimit", "nofile=4096:4096",
            # By id, not tag: a `make images` during a sweep must not change what the evidence key names.
            self._image_id,
        )
        if code != 0:
            raise SandboxError(f"could not start a sandbox container from {self.image}: {err.strip()}")
        self._bridge = ExecBridge(self.name)
        self._endpoint = await self._bridge.start()
        # One long-lived control channel: loading an app costs a message, not a `docker exec`, and
        # it still works when the app has used up the pids limit.
        self._control = await asyncio.create_subprocess_exec(
            "docker", "exec", "-i", self.name, "node", "/opt/evalgrid/control.js",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            limit=_CONTROL_LIMIT,
        )
        self._watcher = asyncio.ensure_future(self._watch(self.name))
        await self._request({"op": "ping"})

    async def _watch(self, name: str) -> None:
        """When the container stops (killed, out of memory), cut every connection into it at once.

        A `docker exec` session does not always notice its container died; without this, a run
        could wait on a DevTools reply from a dead sandbox until its time limit.
        """
        proc = await asyncio.create_subprocess_exec("docker", "wait", name, stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=asyncio.subprocess.DEVNULL,
                                                    stderr=asyncio.subprocess.DEVNULL)
        try:
            await proc.wait()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        if name != self.name:
            return  # an earlier container of this sandbox object, already replaced
        if self._bridge is not None:
            await self._bridge.close()
        control = self._control
        if control is not None and control.returncode is None:
            control.kill()

    async def browser(self, playwright: Playwright, *, wait_s: float = 20.0) -> Browser:
        """The sandbox's Chromium over CDP, connected on first use and again after a crash."""
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        deadline = time.monotonic() + wait_s
        last = ""
        while time.monotonic() < deadline:
            try:
                self._browser = await playwright.chromium.connect_over_cdp(self._endpoint, timeout=5000)
                return self._browser
            except PlaywrightError as exc:
                last = str(exc).splitlines()[0]
                await asyncio.sleep(0.1)
        raise BrowserUnavailableError(f"Chromium in sandbox {self.name} did not answer within {wait_s:.0f} s: {last}")

    @property
    def audio(self) -> AudioSource:
        """The sandbox's sound: its PulseAudio sink, recorded through ``docker exec``."""
        return _ContainerAudio(self.name)

    def serve(self, root: Path, log: list[str]) -> AbstractAsyncContextManager[str]:
        """Replace the container's app with ``root`` (stray processes of the last app are killed first)."""
        return self._serve(root, log)

    @asynccontextmanager
    async def _serve(self, root: Path, log: list[str]) -> AsyncIterator[str]:
        await self._request({"op": "load", "files": _files(root)})
        try:
            yield APP_ORIGIN
        finally:
            reply = await self._request({"op": "log"})
            log.extend(line for line in str(reply.get("log", "")).splitlines() if line)

    async def start_app_process(self, argv: list[str]) -> int:
        """Start a process of the app (a dev server) in the app directory; the next :meth:`serve` kills it."""
        reply = await self._request({"op": "start", "argv": argv})
        return int(str(reply["pid"]))

    async def _request(self, request: dict[str, object], timeout: float = 30.0) -> dict[str, object]:
        """One request on the control channel; an error or silence means the sandbox is unusable."""
        control = self._control
        if control is None or control.stdin is None or control.stdout is None:
            raise SandboxError(f"sandbox {self.name or '(not started)'} has no control channel; start it")
        async with self._control_lock:
            try:
                control.stdin.write(json.dumps(request).encode() + b"\n")
                await control.stdin.drain()
                line = await asyncio.wait_for(control.stdout.readline(), timeout)
                if not line:
                    raise ConnectionError("closed (container gone?)")
                reply: dict[str, object] = json.loads(line)
            except (ConnectionError, TimeoutError, ValueError) as exc:
                # A reply that comes late would be read as the answer to the next request.
                self._control = None
                if control.returncode is None:
                    control.kill()
                # Reaped here: an unreaped process outlives its event loop and fails in a finalizer.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(control.wait(), 5)
                raise SandboxError(f"sandbox {self.name}: control channel failed ({exc!r})") from exc
        if not reply.get("ok"):
            raise SandboxError(f"sandbox {self.name}: {request['op']} failed: {reply.get('error')}")
        return reply

    async def close(self) -> None:
        """Remove the container; safe to call twice."""
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
        browser, self._browser = self._browser, None
        if browser is not None:
            try:
                await asyncio.wait_for(browser.close(), 5)
            except (PlaywrightError, TimeoutError):
                pass  # the container is removed below either way
        if self._bridge is not None:
            await self._bridge.close()
            self._bridge = None
        control, self._control = self._control, None
        if control is not None:
            if control.returncode is None:
                control.kill()
            await control.wait()
        if self.name:
            code, _, err = await docker("rm", "--force", "--volumes", self.name, timeout=60)
            if code != 0 and "No such container" not in err:
                raise SandboxError(f"could not remove sandbox {self.name}: {err.strip()}; "
                                   "`evalgrid sandbox gc` will retry")


@dataclass(frozen=True)
class _ContainerAudio:
    container: str

    def capture_command(self, latency_ms: int) -> list[str]:
        return ["docker", "exec", self.container, "env", f"PULSE_SERVER={_PULSE_SERVER}", "parec",
                *parec_arguments("evalgrid.monitor", latency_ms)]


def _files(root: Path) -> dict[str, str]:
    """The app's regular files (symlinks are not followed: they could point anywhere on the host), base64."""
    return {path.relative_to(root).as_posix(): base64.b64encode(path.read_bytes()).decode()
            for path in sorted(root.rglob("*")) if path.is_file() and not path.is_symlink()}


async def collect_garbage(*, everything: bool = False) -> list[str]:
    """Remove sandbox containers whose owner process is gone (or all of them); returns their names.

    Owners on other hosts are left alone unless ``everything`` is set.
    """
    code, out, err = await docker("ps", "--all", "--filter", f"label={LABEL}", "--format",
                                  f'{{{{.Names}}}}\t{{{{.Label "{OWNER_LABEL}"}}}}', timeout=30)
    if code != 0:
        raise SandboxError(f"could not list sandbox containers: {err.strip()}")
    here = f"{socket.gethostname()}:{_pid_namespace()}:"
    doomed = []
    for line in out.splitlines():
        name, _, owner = line.partition("\t")
        if everything or (owner.startswith(here) and not _alive(owner)):
            doomed.append(name)
    if not doomed:
        return []
    code, removed, err = await docker("rm", "--force", "--volumes", *doomed, timeout=120)
    if code != 0 and not removed.strip():
        raise SandboxError(f"could not remove sandbox containers: {err.strip()}")
    return removed.split()  # docker names the ones it removed; the others stay for the next gc


def _alive(owner: str) -> bool:
    """Whether the process named by an :func:`_owner_id` (on this host and pid namespace) still runs."""
    parts = owner.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return False
    return _start_time(int(parts[1])) == parts[2]
