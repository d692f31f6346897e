"""Sandbox backends as plugins: each kind of sandbox is registered by name in :data:`sandbox_backends`.

A backend opens the worker's session (a browser beside an app host, replaced on recovery) and collects the
sandboxes of owners that are gone. The worker, the runner and the command line ask the registry; none of them
tests a backend's name. This module imports no backend's client: each kind imports its implementation when it
is first used, so a Docker worker never loads Kubernetes' client and the command line lists the names at once.

Adding a backend: a module with its implementation, and a class registered here (or from any module imported
before the sweep runs) with ``@sandbox_backends.register("name")``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from evaluator import Registry

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

    from cluster.sandbox.container import ContainerSandbox, SandboxLimits
    from cluster.sweep.spec import SandboxSpec
    from evaluator.browser import AppHost


class SandboxSession(Protocol):
    """A worker's browser and the app host beside it."""

    host: AppHost
    """Where the app is served from, as the browser reaches it."""

    @property
    def sandbox(self) -> ContainerSandbox | None:
        """The container or pod the session runs in (None: no sandbox)."""
        ...

    async def browser(self) -> Browser:
        """The session's browser, started (again, after a recovery) when asked for."""
        ...

    async def recover(self) -> None:
        """Throw the sandbox (or browser) away; the next :meth:`browser` starts a fresh one."""
        ...

    async def close(self) -> None:
        """Remove what the session started."""
        ...


class SandboxBackend(Protocol):
    """A kind of sandbox: how to open a worker's session in one, and how to collect those of dead owners."""

    unit: str
    """What one sandbox is called in messages: ``container``, ``pod``."""
    driver_collects: bool
    """Whether the sandboxes live on the driver's machine, so that a sweep collects its dead owners' at its start
    (Docker's engine); otherwise each worker collects its own when it starts."""

    def describe(self, box: SandboxSpec) -> str:
        """One line on what the sandbox guarantees, for ``evalgrid run``."""
        ...

    def open(self, playwright: Playwright, *, image: str, limits: SandboxLimits) -> SandboxSession | None:
        """A session in a fresh sandbox of this kind (started on its first :meth:`SandboxSession.browser`); None
        for a backend that runs nothing."""
        ...

    async def collect_garbage(self, *, everything: bool = False) -> list[str]:
        """Remove sandboxes whose owner process is gone (every one of this owner's scope with ``everything``);
        their names."""
        ...


sandbox_backends: Registry[SandboxBackend] = Registry("sandbox backend")
"""The sandbox backends by name; ``sandbox_backends.create(name)`` gives one."""


class ContainerSession:
    """A worker's session in a container or pod sandbox; recovery replaces the sandbox."""

    def __init__(self, playwright: Playwright, sandbox: ContainerSandbox) -> None:
        self._playwright = playwright
        self._started = False
        self.sandbox: ContainerSandbox | None = sandbox
        self.host: AppHost = sandbox

    async def browser(self) -> Browser:
        """The sandbox's browser, the sandbox started first when it is not."""
        assert self.sandbox is not None
        if not self._started:
            await self.sandbox.start()
            self._started = True
        return await self.sandbox.browser(self._playwright)

    async def recover(self) -> None:
        """Remove the sandbox; the next :meth:`browser` starts it again."""
        assert self.sandbox is not None
        await self.sandbox.close()
        self._started = False

    async def close(self) -> None:
        """Remove the sandbox."""
        await self.recover()


class LocalSession:
    """Chromium on this machine, the app on loopback: NOT a sandbox. Recovery relaunches the browser."""

    def __init__(self, playwright: Playwright) -> None:
        from evaluator.browser import LOOPBACK

        self._playwright = playwright
        self._browser: Browser | None = None
        self.sandbox: ContainerSandbox | None = None
        self.host: AppHost = LOOPBACK

    async def browser(self) -> Browser:
        """This machine's Chromium, launched when it is not running."""
        from evaluator.browser import launch_browser

        if self._browser is None or not self._browser.is_connected():
            self._browser = await launch_browser(self._playwright)
        return self._browser

    async def recover(self) -> None:
        """Close the browser; the next :meth:`browser` launches another."""
        await self.close()

    async def close(self) -> None:
        """Close the browser."""
        browser, self._browser = self._browser, None
        if browser is not None and browser.is_connected():
            try:
                await asyncio.wait_for(browser.close(), 10)
            except TimeoutError:
                pass  # a wedged browser process dies with Playwright's driver


@sandbox_backends.register("docker")
class DockerBackend:
    """Hardened containers on this machine's Docker engine, with no network (the default)."""

    unit = "container"
    driver_collects = True

    def describe(self, box: SandboxSpec) -> str:
        """The container's hardening and limits."""
        return (f"sandbox: docker {box.image} — no network, non-root, read-only root, all capabilities dropped, "
                f"memory {box.memory}, cpus {box.cpus}, pids {box.pids}")

    def open(self, playwright: Playwright, *, image: str, limits: SandboxLimits) -> SandboxSession:
        """A session in a fresh container."""
        from cluster.sandbox.docker_backend import DockerSandbox

        return ContainerSession(playwright, DockerSandbox(image, limits=limits))

    async def collect_garbage(self, *, everything: bool = False) -> list[str]:
        """Remove this engine's sandbox containers whose owner process is gone."""
        from cluster.sandbox.docker_backend import collect_garbage

        return await collect_garbage(everything=everything)


@sandbox_backends.register("kubernetes")
class KubernetesBackend:
    """Hardened pods created by the workers, in a cluster installed with the Helm chart."""

    unit = "pod"
    driver_collects = False

    def describe(self, box: SandboxSpec) -> str:
        """The pod's hardening and limits."""
        return (f"sandbox: kubernetes pods — egress denied by the chart's NetworkPolicy, non-root, read-only root, all "
                f"capabilities dropped, memory {box.memory}, cpus {box.cpus}")

    def open(self, playwright: Playwright, *, image: str, limits: SandboxLimits) -> SandboxSession:
        """A session in a fresh pod."""
        from cluster.sandbox.k8s_backend import KubernetesSandbox

        return ContainerSession(playwright, KubernetesSandbox(image, limits=limits))

    async def collect_garbage(self, *, everything: bool = False) -> list[str]:
        """Delete this worker pod's sandbox pods whose owner process is gone."""
        from cluster.sandbox.k8s_backend import collect_garbage

        return await collect_garbage(everything=everything)


@sandbox_backends.register("local")
class LocalBackend:
    """This machine's Chromium with requests confined to loopback: NOT a container sandbox."""

    unit = "browser"
    driver_collects = False

    def describe(self, box: SandboxSpec) -> str:
        """A warning: there is no sandbox."""
        return ("[yellow]sandbox: local backend — apps run in this machine's Chromium with requests confined to "
                "loopback; this is NOT a container sandbox.[/]")

    def open(self, playwright: Playwright, *, image: str, limits: SandboxLimits) -> SandboxSession:
        """A session on this machine's Chromium."""
        return LocalSession(playwright)

    async def collect_garbage(self, *, everything: bool = False) -> list[str]:
        """Nothing: a local browser ends with its worker's process."""
        return []


@sandbox_backends.register("noop")
class NoopBackend:
    """No sandbox and no browser: every run is recorded as not evaluated. It measures the scheduler alone."""

    unit = "sandbox"
    driver_collects = False

    def describe(self, box: SandboxSpec) -> str:
        """A warning: nothing is evaluated."""
        return "[yellow]sandbox: noop — no app is run or judged; every run ends as an infra_error.[/]"

    def open(self, playwright: Playwright, *, image: str, limits: SandboxLimits) -> SandboxSession | None:
        """None: there is nothing to run apps in."""
        return None

    async def collect_garbage(self, *, everything: bool = False) -> list[str]:
        """Nothing to collect."""
        return []
