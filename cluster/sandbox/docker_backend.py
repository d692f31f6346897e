"""The Docker sandbox backend: one hardened machinery container per worker, and one app container per build.

Hardening is not optional, for both: no network at all (``--network none``; the driver reaches the
machinery's control channel and DevTools pipe through ``docker exec --user 10001`` relays,
:mod:`cluster.sandbox.channel_devtools`), a non-root user (the machinery's 10001, the app's 10002), every capability
dropped, ``no-new-privileges``, a read-only root with size-capped tmpfs mounts, and limits on memory,
CPU, pids and ``/dev/shm``; tini is the init. The two never share a pid namespace, a network namespace
or a writable mount: the app's build gets its files on standard input and hands the built files back on
standard output, and its container ends (with everything it started) when the build does. Containers
are labelled with their owner process so :func:`collect_garbage` can remove the ones a killed driver
left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from dataclasses import dataclass

from cluster.sandbox.channel_devtools import OpenUpstream, Upstream, exec_upstream
from cluster.sandbox.container import (
    APP_USER,
    BUILD_REPLY_LIMIT,
    SANDBOX_USER,
    BuildRequest,
    ContainerSandbox,
    SandboxLimits,
)
from cluster.sandbox.ownership import host_prefix, owner_alive, owner_id
from evaluator import ConfigError, SandboxError
from evaluator.evidence import AudioSource, parec_arguments

DEFAULT_IMAGE = "evalgrid/sandbox:dev"
LABEL = "evalgrid.sandbox"
OWNER_LABEL = "evalgrid.owner"
_PULSE_SERVER = "unix:/tmp/evalgrid/pulse/pulse.sock"


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


class DockerSandbox(ContainerSandbox):
    """A sandbox container from ``images/sandbox``, driven through ``docker exec`` (it has no network)."""

    def __init__(self, image: str = DEFAULT_IMAGE, *, limits: SandboxLimits | None = None) -> None:
        super().__init__(image, limits=limits or SandboxLimits())
        self._image_id = ""

    @property
    def label(self) -> str:
        """The evidence manifest's sandbox description (the image id makes it part of the evidence key)."""
        return (f"docker {self.image} {self._image_id[:19]} (no network, non-root, read-only root, "
                f"caps dropped, mem {self.limits.memory}, cpus {self.limits.cpus}, pids {self.limits.pids}; "
                f"app builds in their own containers as uid {APP_USER})")

    @property
    def audio(self) -> AudioSource:
        """The sandbox's sound: its PulseAudio sink, recorded through ``docker exec``."""
        return _ContainerAudio(self.name)

    async def _create(self) -> None:
        if not self._image_id:
            self._image_id = await _resolve_image(self.image)
        self.name = f"evalgrid-sbx-{uuid.uuid4().hex[:10]}"
        code, _, err = await docker("run", "--detach", "--name", self.name,
                                    *_hardening(self.limits, SANDBOX_USER), self._image_id)
        if code != 0:
            raise SandboxError(f"could not start a sandbox container from {self.image}: {err.strip()}")

    async def _open_control(self) -> Upstream:
        return await exec_upstream(self.name, "control", user=SANDBOX_USER)

    def _devtools(self) -> OpenUpstream:
        name = self.name
        return lambda: exec_upstream(name, "devtools", user=SANDBOX_USER)

    async def _build_in_app_container(self, request: BuildRequest) -> bytes:
        name = f"evalgrid-build-{uuid.uuid4().hex[:10]}"
        try:
            proc = await asyncio.create_subprocess_exec(
                "docker", "run", "--rm", "--interactive", "--name", name, *_hardening(self.limits, APP_USER),
                "--entrypoint", "/usr/bin/tini", self._image_id, "--", "node", "/opt/evalgrid/buildd.js", "--stdio",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                limit=BUILD_REPLY_LIMIT)
        except FileNotFoundError as exc:
            raise SandboxError("the docker CLI is not installed; run `make setup` (installs docker.io)") from exc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None  # asked for as pipes
        try:
            proc.stdin.write(request.line())
            await proc.stdin.drain()
            proc.stdin.close()
            try:
                line = await asyncio.wait_for(proc.stdout.readline(), request.timeout_s + 15)
            except (ValueError, asyncio.LimitOverrunError):
                # Over the limit (buildd.js caps the output far below it): the answer's failed build.
                line = json.dumps({"exit_code": -1, "log": f"evalgrid: the build's reply exceeded "
                                                           f"{BUILD_REPLY_LIMIT // (1024 * 1024)} MiB"}).encode()
            except TimeoutError:
                line = b""
            err = b""
            if not line:
                with contextlib.suppress(TimeoutError):
                    err = await asyncio.wait_for(proc.stderr.read(4096), 5)
        except (BrokenPipeError, ConnectionError):
            line, err = b"", await proc.stderr.read(4096)
        finally:
            if proc.returncode is None:
                await docker("kill", name, timeout=30)
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
            await proc.wait()
        # 125: the Docker engine could not make the container (the machinery's failure); any other end,
        # reply or none, is the build's.
        if not line and proc.returncode == 125:
            raise SandboxError(f"could not start a build container from {self.image}: "
                               f"{err.decode(errors='replace').strip()[:500]}")
        return line

    async def _wait_gone(self, name: str) -> None:
        proc = await asyncio.create_subprocess_exec("docker", "wait", name, stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=asyncio.subprocess.DEVNULL,
                                                    stderr=asyncio.subprocess.DEVNULL)
        try:
            await proc.wait()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()

    async def _remove(self) -> None:
        code, _, err = await docker("rm", "--force", "--volumes", self.name, timeout=60)
        if code != 0 and "No such container" not in err:
            raise SandboxError(f"could not remove sandbox {self.name}: {err.strip()}; "
                               "`evalgrid sandbox gc` will retry")


@dataclass(frozen=True)
class _ContainerAudio:
    container: str

    def capture_command(self, latency_ms: int) -> list[str]:
        return ["docker", "exec", "--user", SANDBOX_USER, self.container, "env", f"PULSE_SERVER={_PULSE_SERVER}",
                "parec", *parec_arguments("evalgrid.monitor", latency_ms)]


def _hardening(limits: SandboxLimits, user: str) -> list[str]:
    """``docker run`` options shared by the machinery's container and the app's build containers."""
    return ["--label", f"{LABEL}=1", "--label", f"{OWNER_LABEL}={owner_id()}",
            "--network", "none", "--user", f"{user}:{user}", "--cap-drop", "ALL",
            "--security-opt", "no-new-privileges", "--read-only",
            "--tmpfs", f"/tmp:rw,nosuid,nodev,size={limits.tmp}",
            "--tmpfs", f"/srv/app:rw,nosuid,nodev,uid={user},gid={user},size={limits.app}",
            "--memory", limits.memory, "--memory-swap", limits.memory, "--cpus", str(limits.cpus),
            "--pids-limit", str(limits.pids), "--shm-size", limits.shm, "--ulimit", "nofile=4096:4096"]


async def collect_garbage(*, everything: bool = False) -> list[str]:
    """Remove sandbox containers whose owner process is gone (or all of them); returns their names.

    Owners on other hosts are left alone unless ``everything`` is set.
    """
    code, out, err = await docker("ps", "--all", "--filter", f"label={LABEL}", "--format",
                                  f'{{{{.Names}}}}\t{{{{.Label "{OWNER_LABEL}"}}}}', timeout=30)
    if code != 0:
        raise SandboxError(f"could not list sandbox containers: {err.strip()}")
    here = host_prefix()
    doomed = []
    for line in out.splitlines():
        name, _, owner = line.partition("\t")
        if everything or (owner.startswith(here) and not owner_alive(owner)):
            doomed.append(name)
    if not doomed:
        return []
    code, removed, err = await docker("rm", "--force", "--volumes", *doomed, timeout=120)
    if code != 0 and not removed.strip():
        raise SandboxError(f"could not remove sandbox containers: {err.strip()}")
    return removed.split()  # docker names the ones it removed; the others stay for the next gc

