"""The driver's side of a sandbox: the machinery's container or pod, the app's build containers, and the
channels to the supervisor inside (``images/sandbox/``).

- ``backends``: the backends as plugins, registered by name in :data:`sandbox_backends`, each opening a worker's
  session and collecting dead owners' sandboxes;
- ``container``: what both backends share (:class:`ContainerSandbox`, limits, builds);
- ``docker_backend`` and ``k8s_backend``: the Docker and Kubernetes backends;
- ``channel_devtools``: Chromium's DevTools pipe offered to Playwright as a loopback WebSocket (pairs with
  ``relay.js`` over Docker and ``gate.js`` on Kubernetes);
- ``channel_gate``: the Kubernetes way in (``gate.js``), one TCP connection per channel (control, devtools,
  audio), and a build pod's;
- ``ownership``: who owns a sandbox, so a dead owner's can be collected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator import lazy_exports

if TYPE_CHECKING:
    from cluster.sandbox.backends import SandboxBackend, SandboxSession, sandbox_backends
    from cluster.sandbox.channel_devtools import Bridge
    from cluster.sandbox.channel_gate import open_gate
    from cluster.sandbox.container import BuildRequest, ContainerSandbox, SandboxLimits
    from cluster.sandbox.docker_backend import DockerSandbox, collect_garbage
    from cluster.sandbox.k8s_backend import KubernetesSandbox, PodSandboxConfig

_WHERE = {
    "Bridge": "cluster.sandbox.channel_devtools",
    "BuildRequest": "cluster.sandbox.container",
    "collect_garbage": "cluster.sandbox.docker_backend",
    "ContainerSandbox": "cluster.sandbox.container",
    "DockerSandbox": "cluster.sandbox.docker_backend",
    "KubernetesSandbox": "cluster.sandbox.k8s_backend",
    "open_gate": "cluster.sandbox.channel_gate",
    "PodSandboxConfig": "cluster.sandbox.k8s_backend",
    "sandbox_backends": "cluster.sandbox.backends",
    "SandboxBackend": "cluster.sandbox.backends",
    "SandboxLimits": "cluster.sandbox.container",
    "SandboxSession": "cluster.sandbox.backends",
}

__all__ = [
    "Bridge",
    "BuildRequest",
    "ContainerSandbox",
    "DockerSandbox",
    "KubernetesSandbox",
    "PodSandboxConfig",
    "SandboxBackend",
    "SandboxLimits",
    "SandboxSession",
    "collect_garbage",
    "open_gate",
    "sandbox_backends",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
