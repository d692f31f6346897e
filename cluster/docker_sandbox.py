"""The Docker sandbox backend: one hardened container with Chromium and the app server, reused across runs.

Hardening is not optional: no network at all (``--network none``; the driver reaches DevTools
through :class:`~cluster.cdp_bridge.ExecBridge`), a non-root user, every capability dropped,
``no-new-privileges``, a read-only root with size-capped tmpfs mounts, and limits on memory, CPU,
pids and ``/dev/shm``; tini is the init. Containers are labelled with their owner process so
:func:`collect_garbage` can remove the ones a killed driver left behind.
"""

from __future__ import annotations

import asyncio
import io
import os
import socket
import tarfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import Browser, Playwright
from playwright.async_api import Error as PlaywrightError

from cluster.cdp_bridge import ExecBridge
from evaluator.errors import BrowserUnavailableError, ConfigError, InfrastructureError
from evaluator.soundtrack import AudioSource, parec_arguments

DEFAULT_IMAGE = "evalgrid/sandbox:dev"
LABEL = "evalgrid.sandbox"
OWNER_LABEL = "evalgrid.owner"
APP_ORIGIN = "http://127.0.0.1:8080"
_PULSE_SERVER = "unix:/tmp/evalgrid/pulse/pulse.sock"
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


def owner_id() -> str:
    """``host:pid`` of this process: the label that tells garbage collection who owns a container."""
    return f"{socket.gethostname()}:{os.getpid()}"


async def docker(*args: str, stdin: bytes | None = None, timeout: float = 60.0) -> tuple[int, str, str]:
    """Run the docker CLI; returns (exit code, stdout, stderr). Raises when the CLI is missing or hangs."""
    try:
        proc = await asyncio.create_subprocess_exec(
            "docker", *args, stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
    except FileNotFoundError as exc:
        raise InfrastructureError("the docker CLI is not installed; run `make setup` (installs docker.io)") from exc
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin), timeout)
    except TimeoutError as exc:
        proc.kill()
        await proc.wait()
        raise InfrastructureError(f"`docker {' '.join(args[:2])}` did not answer within {timeout:.0f} s") from exc
    return proc.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")


async def image_id(image: str) -> str:
    """The image's id; a clear error when it has not been built."""
    code, out, err = await docker("image", "inspect", "--format", "{{.Id}}", image)
    if code != 0:
        if "Cannot connect" in err or "daemon" in err.lower() and "running" in err.lower():
            raise InfrastructureError(f"the Docker engine is not running ({err.strip()}); start dockerd "
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
        self.restarts = 0

    @property
    def label(self) -> str:
        """The evidence manifest's sandbox description (the image id makes it part of the evidence key)."""
        return (f"docker {self.image} {self._image_id[:19]} (no network, non-root, read-only root, "
                f"caps dropped, mem {self.limits.memory}, cpus {self.limits.cpus}, pids {self.limits.pids})")

    async def start(self) -> None:
        """Create and start the container, and the bridge to its DevTools port."""
        if not self._image_id:
            self._image_id = await image_id(self.image)
        self.name = f"evalgrid-sbx-{uuid.uuid4().hex[:10]}"
        limits = self.limits
        code, _, err = await docker(
            "run", "--detach", "--name", self.name,
            "--label", f"{LABEL}=1", "--label", f"{OWNER_LABEL}={owner_id()}",
            "--network", "none", "--user", _USER, "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
            "--read-only", "--tmpfs", f"/tmp:rw,nosuid,nodev,size={limits.tmp}",
            "--tmpfs", f"/srv/app:rw,nosuid,nodev,uid={_USER},size={limits.app}",
            "--memory", limits.memory, "--memory-swap", limits.memory, "--cpus", str(limits.cpus),
            "--pids-limit", str(limits.pids), "--shm-size", limits.shm, "--ulimit", "nofile=4096:4096",
            self.image,
        )
        if code != 0:
            raise InfrastructureError(f"could not start a sandbox container from {self.image}: {err.strip()}")
        self._bridge = ExecBridge(self.name)
        self._endpoint = await self._bridge.start()

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
        code, _, err = await docker("exec", "-i", self.name, "/opt/evalgrid/reset.sh", stdin=_tar(root), timeout=30)
        if code != 0:
            raise InfrastructureError(f"could not load the app into sandbox {self.name}: {err.strip()[:500]}")
        try:
            yield APP_ORIGIN
        finally:
            code, out, _ = await docker("exec", self.name, "cat", "/tmp/evalgrid/server.log", timeout=15)
            if code == 0:
                log.extend(line for line in out.splitlines() if line)

    async def healthy(self) -> bool:
        """Whether the container runs and its browser is connected."""
        code, out, _ = await docker("inspect", "--format", "{{.State.Running}}", self.name, timeout=15)
        return code == 0 and out.strip() == "true" and self._browser is not None and self._browser.is_connected()

    async def restart(self) -> None:
        """Throw the container away and start a fresh one (a hung browser, a dead container)."""
        await self.close()
        self.restarts += 1
        await self.start()

    async def close(self) -> None:
        """Remove the container; safe to call twice."""
        browser, self._browser = self._browser, None
        if browser is not None:
            try:
                await asyncio.wait_for(browser.close(), 5)
            except (PlaywrightError, TimeoutError):
                pass  # the container is removed below either way
        if self._bridge is not None:
            await self._bridge.close()
            self._bridge = None
        if self.name:
            await docker("rm", "--force", "--volumes", self.name, timeout=60)


@dataclass(frozen=True)
class _ContainerAudio:
    container: str

    def capture_command(self, latency_ms: int) -> list[str]:
        return ["docker", "exec", self.container, "env", f"PULSE_SERVER={_PULSE_SERVER}", "parec",
                *parec_arguments("evalgrid.monitor", latency_ms)]


def _tar(root: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                info = archive.gettarinfo(str(path), arcname=path.relative_to(root).as_posix())
                info.uid = info.gid = int(_USER)
                info.uname = info.gname = ""
                info.mode = 0o644
                with path.open("rb") as handle:
                    archive.addfile(info, handle)
    return buffer.getvalue()


async def collect_garbage(*, everything: bool = False) -> list[str]:
    """Remove sandbox containers whose owner process is gone (or all of them); returns their names.

    Owners on other hosts are left alone unless ``everything`` is set.
    """
    code, out, err = await docker("ps", "--all", "--filter", f"label={LABEL}", "--format",
                                  f'{{{{.Names}}}}\t{{{{.Label "{OWNER_LABEL}"}}}}', timeout=30)
    if code != 0:
        raise InfrastructureError(f"could not list sandbox containers: {err.strip()}")
    here = socket.gethostname()
    doomed = []
    for line in out.splitlines():
        name, _, owner = line.partition("\t")
        host, _, pid = owner.rpartition(":")
        if everything or (host == here and not _alive(pid)):
            doomed.append(name)
    if doomed:
        await docker("rm", "--force", "--volumes", *doomed, timeout=120)
    return doomed


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True
