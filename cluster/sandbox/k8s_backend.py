"""The Kubernetes sandbox backend: one hardened machinery pod per worker, and one app pod per build.

The pods run the same image as the Docker backend. They have a network interface (pods always do),
so isolation comes from the chart's NetworkPolicy (no egress at all; ingress only from evalgrid's
worker pods, on the gate port) plus everything the Docker backend does: non-root, every capability
dropped, no privilege escalation, a read-only root with size-capped memory volumes, CPU and memory
limits, RuntimeDefault seccomp, no service-account token, and optionally a RuntimeClass such as
gVisor. The driver reaches the machinery's pod only through its gate (``images/sandbox/gate.js``),
which refuses connections without the sandbox's token; the token is a file only the pod's user can
read (a downward-API volume of the pod's annotation), never an environment variable. Each new pod
probes its own egress first, and the evidence says what the probe found; a pod that reaches
anything is refused unless the configuration says otherwise.

A component or project answer is built in a pod of its own (uid 10002, its own token, the same
hardening), deleted with everything it started when the build is done: two containers of one pod
would share a network namespace, and Kubernetes cannot restart one container on demand.

What Kubernetes cannot do per pod: a pids limit (set the kubelet's ``podPidsLimit`` on the
nodes that run sandboxes), and egress denial without a CNI that enforces NetworkPolicy.

The pod runs in the chart's sandbox namespace (``PodSandboxConfig.namespace``, a namespace that
holds no Secrets: whoever may create pods in a namespace may mount its Secrets), else in the
worker's own. In the worker's namespace the pod is owned by the worker's pod (``ownerReferences``),
so Kubernetes deletes it with the worker. Kubernetes allows no owner in another namespace, so a pod
in a sandbox namespace has none, only the owner label (the worker pod's UID) and annotation (its
process): :func:`collect_garbage`, which each worker runs as it starts, removes the pods of its pod's
dead processes there as here, but the pods of a worker pod that is gone (scaled down, node lost) stay
until deleted by label (``kubectl -n NS delete pods -l evalgrid.io/owner-uid=UID``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from cluster.k8s.api import KubeObject, api_client, current_namespace
from cluster.sandbox.channel_devtools import OpenUpstream, Upstream
from cluster.sandbox.channel_gate import connect, open_gate
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

ROLE_LABEL = "evalgrid.io/role"
OWNER_UID_LABEL = "evalgrid.io/owner-uid"
KIND_LABEL = "evalgrid.io/kind"
OWNER_ANNOTATION = "evalgrid.io/owner"
TOKEN_ANNOTATION = "evalgrid.io/gate-token"
"""The pod's gate token; projected into a file only the pod's user can read (a downward-API volume)."""
TOKEN_DIR = "/var/run/evalgrid"
CONFIG_ENV = "EVALGRID_K8S_SANDBOX"
"""Environment variable holding the chart's sandbox settings (JSON, :class:`PodSandboxConfig`)."""
_POLL_S = 0.5
_GONE_POLL_S = 2.0
# Fail at once on these instead of waiting out the start timeout: they do not fix themselves.
_FATAL_WAITING = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError",
                            "CreateContainerError", "RunContainerError"})


class PodResources(BaseModel):
    """What the scheduler reserves for one sandbox pod (its hard limits come from the sweep)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    cpu: str = "1"
    """CPU request."""
    memory: str = "1536Mi"
    """Memory request."""


class PodSandboxConfig(BaseModel):
    """The cluster's sandbox settings, rendered by the Helm chart into ``EVALGRID_K8S_SANDBOX``."""

    model_config = ConfigDict(extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True,
                              use_attribute_docstrings=True)

    image: str | None = None
    """Sandbox image in the cluster's registry; ``None`` uses the sweep's ``sandbox.image``."""
    image_pull_policy: Literal["Always", "IfNotPresent", "Never"] = "IfNotPresent"
    """Kubernetes image pull policy."""
    runtime_class_name: str | None = None
    """RuntimeClass of sandbox pods (e.g. ``gvisor``); ``None`` for the cluster's default runtime."""
    resources: PodResources = PodResources()
    """Requests of each sandbox pod."""
    node_selector: dict[str, str] = Field(default_factory=dict)
    """Node labels sandbox pods must land on."""
    tolerations: list[KubeObject] = Field(default_factory=list)
    """Tolerations of sandbox pods."""
    image_pull_secrets: list[str] = Field(default_factory=list)
    """Names of Secrets to pull the image with."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Extra labels (the chart's NetworkPolicy selects sandbox pods by them)."""
    gate_port: int = Field(default=9230, ge=1024, le=65535)
    """The gate's TCP port (the NetworkPolicy's only open ingress port)."""
    start_timeout_s: float = Field(default=300.0, gt=0)
    """How long a pod may take to become ready (the first start on a node pulls the image)."""
    egress_probe_targets: list[str] = Field(default_factory=lambda: ["1.1.1.1:443", "8.8.8.8:53"], max_length=14)
    """``host:port`` addresses each new sandbox pod tries to reach (the API server's is added when known)."""
    require_egress_denied: bool = True
    """Refuse a sandbox pod that reached any probe target (its NetworkPolicy is not enforced)."""
    namespace: str | None = None
    """Namespace sandbox pods are created in; ``None``: the worker's own."""
    service_account_name: str | None = None
    """ServiceAccount of sandbox pods (its token is never mounted); ``None``: the namespace's default."""

    def namespace_for(self, owner: PodOwner) -> str:
        """Where this worker's sandbox pods live: the configured namespace, else the owner's."""
        return self.namespace or owner.namespace

    @classmethod
    def from_env(cls) -> PodSandboxConfig:
        """The settings from ``EVALGRID_K8S_SANDBOX``, or the defaults when it is not set."""
        raw = os.environ.get(CONFIG_ENV)
        if not raw:
            return cls()
        try:
            return cls.model_validate_json(raw)
        except ValidationError as exc:
            raise ConfigError(f"${CONFIG_ENV} is not valid sandbox configuration ({exc.error_count()} "
                              f"problems: {exc.errors()[0]['msg']}); check the chart's sandbox values") from exc


@dataclass(frozen=True)
class PodOwner:
    """The worker pod a sandbox pod belongs to (from the downward API), when the worker runs in a pod."""

    namespace: str
    pod_name: str | None = None
    pod_uid: str | None = None

    @classmethod
    def from_env(cls) -> PodOwner:
        """From ``EVALGRID_K8S_NAMESPACE``/``_POD_NAME``/``_POD_UID``, else the kube context's namespace."""
        namespace = os.environ.get("EVALGRID_K8S_NAMESPACE") or current_namespace()
        return cls(namespace=namespace, pod_name=os.environ.get("EVALGRID_K8S_POD_NAME") or None,
                   pod_uid=os.environ.get("EVALGRID_K8S_POD_UID") or None)


def kube_api() -> k8s.CoreV1Api:
    """The core API of the cluster this process runs in, or of the current kube context."""
    return k8s.CoreV1Api(api_client())


def k8s_quantity(docker_size: str) -> str:
    """Docker's ``1536m`` / ``2g`` / ``512k`` (binary units) as a Kubernetes quantity (``1536Mi``)."""
    match = re.fullmatch(r"([0-9]+)([kmg])", docker_size)
    if match is None:
        raise ConfigError(f"size {docker_size!r} is not like 1536m, 2g or 512k")
    return f"{match[1]}{match[2].upper()}i"


def pod_manifest(*, name: str, image: str, token: str, limits: SandboxLimits, config: PodSandboxConfig,
                 owner: PodOwner, owner_process: str, kind: Literal["browser", "build"] = "browser") -> KubeObject:
    """A sandbox pod (``browser``: the machinery, as its user; ``build``: one app build, as the app's user), as
    sent to the API (a plain manifest, so it can be checked against the schema)."""
    user = int(SANDBOX_USER if kind == "browser" else APP_USER)
    spec: KubeObject = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": 1,
        "securityContext": {"runAsNonRoot": True, "runAsUser": user, "runAsGroup": user,
                            "fsGroup": user, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [_pod_container(kind, image, limits, config)],
        "volumes": [
            {"name": "tmp", "emptyDir": {"medium": "Memory", "sizeLimit": k8s_quantity(limits.tmp)}},
            {"name": "app", "emptyDir": {"medium": "Memory", "sizeLimit": k8s_quantity(limits.app)}},
            {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": k8s_quantity(limits.shm)}},
            # Group-readable through fsGroup (the pod's own user), nobody else's.
            {"name": "gate-token", "projected": {"defaultMode": 0o440, "sources": [{"downwardAPI": {"items": [
                {"path": "token", "fieldRef": {"fieldPath": f"metadata.annotations['{TOKEN_ANNOTATION}']"}}]}}]}},
        ],
    }
    optional = {"serviceAccountName": config.service_account_name, "runtimeClassName": config.runtime_class_name,
                "nodeSelector": dict(config.node_selector), "tolerations": list(config.tolerations),
                "imagePullSecrets": [{"name": secret} for secret in config.image_pull_secrets]}
    spec.update((key, value) for key, value in optional.items() if value)
    metadata = _pod_metadata(name, token, kind, config, owner, owner_process)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _pod_metadata(name: str, token: str, kind: str, config: PodSandboxConfig, owner: PodOwner,
                  owner_process: str) -> KubeObject:
    labels = {**config.labels, ROLE_LABEL: "sandbox", KIND_LABEL: kind, "app.kubernetes.io/name": "evalgrid-sandbox"}
    namespace = config.namespace_for(owner)
    metadata: KubeObject = {"name": name, "namespace": namespace, "labels": labels,
                                "annotations": {OWNER_ANNOTATION: owner_process, TOKEN_ANNOTATION: token}}
    if owner.pod_uid:
        labels[OWNER_UID_LABEL] = owner.pod_uid
    # Kubernetes allows no owner in another namespace (its garbage collector would delete the pod at
    # once): there, the owner label and annotation and collect_garbage do the owner's work.
    if owner.pod_name and owner.pod_uid and namespace == owner.namespace:
        metadata["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner.pod_name,
                                        "uid": owner.pod_uid, "blockOwnerDeletion": False}]
    return metadata


def _pod_container(kind: str, image: str, limits: SandboxLimits, config: PodSandboxConfig) -> KubeObject:
    container: KubeObject = {
        "name": "sandbox" if kind == "browser" else "build",
        "image": image,
        "imagePullPolicy": config.image_pull_policy,
        "ports": [{"name": "gate", "containerPort": config.gate_port, "protocol": "TCP"}],
        "readinessProbe": {"tcpSocket": {"port": "gate"}, "periodSeconds": 1, "failureThreshold": 3},
        "resources": {"requests": {"cpu": config.resources.cpu, "memory": config.resources.memory},
                      "limits": {"cpu": str(limits.cpus), "memory": k8s_quantity(limits.memory)}},
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "privileged": False, "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}, {"name": "app", "mountPath": "/srv/app"},
                         {"name": "shm", "mountPath": "/dev/shm"},
                         {"name": "gate-token", "mountPath": TOKEN_DIR, "readOnly": True}],
    }
    if kind == "browser":
        container["env"] = [{"name": "EVALGRID_GATE_PORT", "value": str(config.gate_port)},
                            {"name": "EVALGRID_GATE_TOKEN_FILE", "value": f"{TOKEN_DIR}/token"}]
    else:
        container["command"] = ["/usr/bin/tini", "--", "node", "/opt/evalgrid/buildd.js", "--listen",
                                str(config.gate_port), "--token-file", f"{TOKEN_DIR}/token"]
    return container


class KubernetesSandbox(ContainerSandbox):
    """A sandbox pod, driven through its gate; builds run in pods of their own."""

    def __init__(self, image: str, *, limits: SandboxLimits | None = None, config: PodSandboxConfig | None = None,
                 owner: PodOwner | None = None, api: k8s.CoreV1Api | None = None) -> None:
        self.config = config or PodSandboxConfig.from_env()
        super().__init__(self.config.image or image, limits=limits or SandboxLimits())
        self._owner = owner
        self._api = api
        self._address = ""
        self._image_id = ""
        self._token = ""
        self._egress = "egress not probed"
        self._secrets_dir: Path | None = None

    @property
    def label(self) -> str:
        """The evidence manifest's sandbox description (the image digest makes it part of the evidence key)."""
        runtime = self.config.runtime_class_name or "default runtime"
        return (f"kubernetes {self.image} {self._image_id[-71:]} (pod, {self._egress}, gate, "
                f"non-root, read-only root, caps dropped, {runtime}, mem {self.limits.memory}, "
                f"cpus {self.limits.cpus}; app builds in their own pods as uid {APP_USER})")

    @property
    def audio(self) -> AudioSource | None:
        """The pod's sound, through the gate's audio channel."""
        if self._secrets_dir is None:
            return None
        return _GateAudio(self._address, self.config.gate_port, self._secrets_dir / "token")

    def _core(self) -> k8s.CoreV1Api:
        if self._api is None:
            self._api = kube_api()
        return self._api

    def _pod_owner(self) -> PodOwner:
        if self._owner is None:
            self._owner = PodOwner.from_env()
        return self._owner

    async def _create(self) -> None:
        self.name = f"evalgrid-sbx-{uuid.uuid4().hex[:10]}"
        self._token = secrets.token_hex(32)
        # The audio capture process reads the token from a file, so it never appears in a process listing.
        self._secrets_dir = Path(tempfile.mkdtemp(prefix="evalgrid-gate-"))
        token_file = self._secrets_dir / "token"
        token_file.touch(mode=0o600)
        token_file.write_text(self._token)
        self._address, self._image_id = await self._start_pod(self.name, self._token, "browser")

    def _namespace(self) -> str:
        return self.config.namespace_for(self._pod_owner())

    async def _start_pod(self, name: str, token: str, kind: Literal["browser", "build"]) -> tuple[str, str]:
        """Create a pod and wait until it is ready; returns its IP and image id."""
        owner = self._pod_owner()
        manifest: Any = pod_manifest(name=name, image=self.image, token=token, limits=self.limits,
                                     config=self.config, owner=owner, owner_process=owner_id(), kind=kind)
        try:
            await asyncio.to_thread(self._core().create_namespaced_pod, self._namespace(), manifest)
        except ApiException as exc:
            raise SandboxError(f"could not create sandbox pod {name} in namespace {self._namespace()}: "
                               f"{exc.status} {exc.reason}: {_api_message(exc)}") from exc
        try:
            return await asyncio.wait_for(self._until_ready(name), self.config.start_timeout_s)
        except TimeoutError as exc:
            raise SandboxError(f"sandbox pod {name} was not ready within {self.config.start_timeout_s:.0f} s "
                               f"(`kubectl describe pod {name} -n {self._namespace()}` says why)") from exc

    async def _until_ready(self, name: str) -> tuple[str, str]:
        while True:
            pod = await self._read(name)
            if pod is None:
                raise SandboxError(f"sandbox pod {name} disappeared while starting")
            status = pod.status
            if status is not None:
                if status.phase in ("Failed", "Succeeded"):
                    raise SandboxError(f"sandbox pod {name} ended while starting: {status.phase} "
                                       f"{status.reason or ''} {status.message or ''}".strip())
                for container in status.container_statuses or []:
                    waiting = container.state.waiting if container.state else None
                    if waiting is not None and waiting.reason in _FATAL_WAITING:
                        raise SandboxError(f"sandbox pod {name} cannot start: {waiting.reason}: "
                                           f"{waiting.message or ''}".strip())
                ready = any(c.type == "Ready" and c.status == "True" for c in status.conditions or [])
                if ready and status.pod_ip:
                    statuses = status.container_statuses or []
                    return status.pod_ip, statuses[0].image_id if statuses and statuses[0].image_id else ""
            await asyncio.sleep(_POLL_S)

    async def _read(self, name: str) -> Any:
        try:
            return await asyncio.to_thread(self._core().read_namespaced_pod, name, self._namespace())
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise SandboxError(f"could not read sandbox pod {name}: {exc.status} {exc.reason}") from exc

    async def _delete(self, name: str) -> None:
        try:
            await asyncio.to_thread(self._core().delete_namespaced_pod, name, self._namespace(),
                                    grace_period_seconds=0)
        except ApiException as exc:
            if exc.status != 404:
                raise SandboxError(f"could not delete sandbox pod {name}: {exc.status} {exc.reason}; "
                                   "`evalgrid sandbox gc --backend kubernetes` will retry") from exc

    async def _open_control(self) -> Upstream:
        return await open_gate(self._address, self.config.gate_port, self._token, "control")

    def _devtools(self) -> OpenUpstream:
        address, port, token = self._address, self.config.gate_port, self._token
        return lambda: open_gate(address, port, token, "devtools")

    async def _started(self) -> None:
        """Probe the pod's egress before it takes any app: the NetworkPolicy is the pod's only wall."""
        targets = list(self.config.egress_probe_targets)
        api_host, api_port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT")
        if api_host and api_port:
            targets.append(f"{api_host}:{api_port}")
        results = await self.egress(targets)
        reached = [r["target"] for r in results if r.get("result") == "reached"]
        if reached:
            self._egress = f"EGRESS OPEN: the probe reached {', '.join(reached)}"
            if self.config.require_egress_denied:
                raise SandboxError(f"sandbox pod {self.name} can reach {', '.join(reached)}: its NetworkPolicy is not "
                                   "enforced (a CNI that enforces NetworkPolicy is needed, or the sandbox namespace "
                                   "lacks its default-deny policy); refusing to run generated code in it. Set the "
                                   "chart's sandbox.requireEgressDenied=false only to evaluate without isolation.")
        else:
            self._egress = f"egress probe: none of {len(results)} targets reachable"

    async def _build_in_app_container(self, request: BuildRequest) -> bytes:
        name = f"evalgrid-build-{uuid.uuid4().hex[:10]}"
        token = secrets.token_hex(32)
        try:
            address, _ = await self._start_pod(name, token, "build")
            upstream = await connect(address, self.config.gate_port, timeout=30, limit=BUILD_REPLY_LIMIT)
            try:
                upstream.writer.write(request.line(token=token))
                await upstream.writer.drain()
                try:
                    return await asyncio.wait_for(upstream.reader.readline(), request.timeout_s + 15)
                except (ValueError, asyncio.LimitOverrunError):
                    return b'{"exit_code": -1, "log": "evalgrid: the build\'s reply exceeded its limit"}'
                except (TimeoutError, ConnectionError):
                    return b""
            finally:
                await upstream.close()
        finally:
            await self._delete(name)

    async def _wait_gone(self, name: str) -> None:
        while name == self.name:
            try:
                pod = await self._read(name)
            except SandboxError:
                await asyncio.sleep(_GONE_POLL_S)  # the API is unreachable for a moment: not a dead pod
                continue
            if pod is None or pod.metadata.deletion_timestamp is not None or (
                    pod.status is not None and pod.status.phase in ("Failed", "Succeeded")):
                return
            await asyncio.sleep(_GONE_POLL_S)

    async def _remove(self) -> None:
        secrets_dir, self._secrets_dir = self._secrets_dir, None
        if secrets_dir is not None:
            for file in secrets_dir.iterdir():
                file.unlink()
            secrets_dir.rmdir()
        await self._delete(self.name)


async def collect_garbage(*, api: k8s.CoreV1Api | None = None, owner: PodOwner | None = None,
                          config: PodSandboxConfig | None = None, everything: bool = False) -> list[str]:
    """Delete sandbox pods whose owner process is gone (or every sandbox pod of this worker pod).

    Only pods created from this worker pod are considered (in the worker's namespace Kubernetes
    itself deletes those of worker pods that are gone); with no worker pod (a driver outside the
    cluster), only pods whose owner annotation names a process of this host. The pods are looked
    for in the sandbox namespace (``config``, else ``$EVALGRID_K8S_SANDBOX``'s).
    """
    owner = owner or PodOwner.from_env()
    namespace = (config or PodSandboxConfig.from_env()).namespace_for(owner)
    api = api or kube_api()
    selector = f"{ROLE_LABEL}=sandbox"
    if owner.pod_uid:
        selector += f",{OWNER_UID_LABEL}={owner.pod_uid}"
    try:
        pods = await asyncio.to_thread(api.list_namespaced_pod, namespace, label_selector=selector)
    except ApiException as exc:
        raise SandboxError(f"could not list sandbox pods in {namespace}: {exc.status} {exc.reason}") from exc
    removed: list[str] = []
    for pod in pods.items:
        if pod.metadata is None or not pod.metadata.name:
            continue
        name = pod.metadata.name
        process = (pod.metadata.annotations or {}).get(OWNER_ANNOTATION, "")
        if not everything and owner_alive(process):
            continue
        if not everything and not owner.pod_uid and not process.startswith(host_prefix()):
            continue  # another machine's driver: not ours to judge
        try:
            await asyncio.to_thread(api.delete_namespaced_pod, name, namespace, grace_period_seconds=0)
        except ApiException as exc:
            if exc.status != 404:
                continue  # left for the next gc
        removed.append(name)
    return removed


def _api_message(exc: ApiException) -> str:
    with contextlib.suppress(ValueError, TypeError):
        return str(json.loads(exc.body or "{}").get("message", "")) or str(exc.body)[:300]
    return str(exc.body)[:300]


@dataclass(frozen=True)
class _GateAudio:
    address: str
    port: int
    token_file: Path

    def capture_command(self, latency_ms: int) -> list[str]:
        return [sys.executable, "-m", "cluster.sandbox.channel_gate", "audio", self.address, str(self.port),
                str(self.token_file),
                *parec_arguments("evalgrid.monitor", latency_ms)]

