"""A stand-in for the Kubernetes API server that runs pods as real Docker containers.

No cluster can run on these machines, so this is the boundary evalgrid's Kubernetes code is tested
against. It is faithful where it matters: requests are real HTTP from the official ``kubernetes``
client; every object it is sent is validated against the real Kubernetes schema for
:data:`K8S_VERSION` (``kubernetes-validate``, strict: unknown fields are rejected, as the API server
does); answers have the API's shapes (``Pod``, ``PodList``, ``Status`` with its codes), so the
client's own deserialisation runs. A pod becomes a container with what the kubelet would apply:
user, read-only root, dropped capabilities, no privilege escalation, memory and CPU limits,
memory-backed ``emptyDir`` volumes, projected downward-API files (owned by the pod's ``fsGroup``, with
their mode), the container's ``command``, and a network on which it can reach nothing (a Docker
``--internal`` network standing in for the NetworkPolicy). Readiness is the pod's own TCP probe.

Custom resources (``ray.io/v1`` RayJobs) are stored after a caller-supplied validation.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import kubernetes_validate

K8S_VERSION = "1.33"
NETWORK = "evalgrid-k8s-test"
_POD = re.compile(r"^/api/v1/namespaces/([^/]+)/pods(?:/([^/]+))?$")
_CUSTOM = re.compile(r"^/apis/([^/]+)/([^/]+)/namespaces/([^/]+)/([^/]+)(?:/([^/]+))?(/status)?$")


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


def _docker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=120, check=False)


def _docker_size(quantity: str) -> str:
    match = re.fullmatch(r"([0-9]+)(Ki|Mi|Gi)", quantity)
    if match is None:
        raise ValueError(f"the fake API server only understands Ki/Mi/Gi quantities, not {quantity!r}")
    return f"{match[1]}{match[2][0].lower()}"


class FakeApiServer:
    """The API on ``http://127.0.0.1:<port>``; pods run as containers named ``k8s-<namespace>-<pod>``."""

    def __init__(self, *, custom_validator: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.pods: dict[tuple[str, str], dict[str, Any]] = {}
        self.custom: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.requests: list[tuple[str, str, dict[str, Any] | None]] = []
        """Every request: method, path, body."""
        self.rejected: list[str] = []
        """Why each refused object was refused."""
        self._custom_validator = custom_validator
        self._files: dict[tuple[str, str], str] = {}
        """Host directories holding a pod's projected files."""
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """Base URL of the API."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def kubeconfig(self, namespace: str = "evals") -> dict[str, Any]:
        """A kubeconfig pointing at this server (no credentials: it asks for none)."""
        return {
            "apiVersion": "v1", "kind": "Config", "current-context": "fake",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "tester", "user": {"token": "not-a-secret"}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "tester", "namespace": namespace}}],
        }

    def __enter__(self) -> FakeApiServer:
        if _docker("network", "inspect", NETWORK).returncode != 0:
            _docker("network", "create", "--internal", NETWORK)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        for namespace, name in list(self.pods):
            _docker("rm", "--force", _container(namespace, name))
        for directory in self._files.values():
            shutil.rmtree(directory, ignore_errors=True)

    # ------------------------------------------------------------------------ the handlers

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
                pass

            def _send(self, code: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> dict[str, Any] | None:
                length = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(length)) if length else None

            def _dispatch(self, method: str) -> None:
                url = urlsplit(self.path)
                body = self._body() if method in ("POST", "PUT", "PATCH") else None
                with api._lock:
                    api.requests.append((method, url.path, body))
                try:
                    code, answer = api._route(method, url.path, parse_qs(url.query), body)
                except Exception as exc:  # noqa: BLE001 - a bug here must reach the test as a 500
                    code, answer = 500, _status(500, "InternalError", f"{type(exc).__name__}: {exc}")
                self._send(code, answer)

            def do_GET(self) -> None:  # noqa: N802 - the base class's naming
                self._dispatch("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._dispatch("POST")

            def do_DELETE(self) -> None:  # noqa: N802
                self._dispatch("DELETE")

        return Handler

    def _route(self, method: str, path: str, query: dict[str, list[str]],
               body: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
        if match := _POD.match(path):
            namespace, name = match[1], match[2]
            if method == "POST" and name is None:
                return self._create_pod(namespace, body or {})
            if method == "GET" and name is None:
                return 200, self._list_pods(namespace, (query.get("labelSelector") or [""])[0])
            if method == "GET":
                return self._read_pod(namespace, name)
            if method == "DELETE":
                return self._delete_pod(namespace, name)
        if match := _CUSTOM.match(path):
            group, version, namespace, plural, name, status = match.groups()
            return self._custom_resource(method, f"{group}/{version}", namespace, plural, name, bool(status), body)
        return 404, _status(404, "NotFound", f"the fake API server does not serve {method} {path}")

    # ------------------------------------------------------------------------------- pods

    def _create_pod(self, namespace: str, pod: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        try:
            kubernetes_validate.validate(pod, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            self.rejected.append(str(exc))
            return 422, _status(422, "Invalid", f"Pod is invalid: {exc}")
        meta = pod.setdefault("metadata", {})
        name = meta.get("name", "")
        if meta.get("namespace", namespace) != namespace:
            return 400, _status(400, "BadRequest", "the namespace of the provided object does not match")
        if (namespace, name) in self.pods:
            return 409, _status(409, "AlreadyExists", f'pods "{name}" already exists')
        meta.update(namespace=namespace, uid=str(uuid.uuid4()), creationTimestamp=_now(), resourceVersion="1")
        pod["status"] = {"phase": "Pending"}
        try:
            self._run(namespace, pod)
        except (ValueError, RuntimeError) as exc:
            self.rejected.append(str(exc))
            return 422, _status(422, "Invalid", str(exc))
        with self._lock:
            self.pods[(namespace, name)] = pod
        return 201, pod

    def _run(self, namespace: str, pod: dict[str, Any]) -> None:
        spec = pod["spec"]
        if len(spec["containers"]) != 1:
            raise ValueError("the fake API server runs one-container pods only")
        container = spec["containers"][0]
        pod_security = spec.get("securityContext", {})
        security = container.get("securityContext", {})
        user = security.get("runAsUser", pod_security.get("runAsUser"))
        args = ["run", "--detach", "--name", _container(namespace, pod["metadata"]["name"]), "--network", NETWORK,
                "--label", "evalgrid.fake-kube=1"]
        if user is not None:
            args += ["--user", f"{user}:{pod_security.get('runAsGroup', user)}"]
        if security.get("readOnlyRootFilesystem"):
            args.append("--read-only")
        for cap in security.get("capabilities", {}).get("drop", []):
            args += ["--cap-drop", cap]
        if security.get("allowPrivilegeEscalation") is False:
            args += ["--security-opt", "no-new-privileges"]
        limits = container.get("resources", {}).get("limits", {})
        if "memory" in limits:
            args += ["--memory", _docker_size(limits["memory"]), "--memory-swap", _docker_size(limits["memory"])]
        if "cpu" in limits:
            args += ["--cpus", str(limits["cpu"])]
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        for mount in container.get("volumeMounts", []):
            volume = volumes[mount["name"]]
            if "projected" in volume:
                args += ["--volume", f"{self._project(pod, volume['projected'])}:{mount['mountPath']}:ro"]
                continue
            empty = volume.get("emptyDir")
            if empty is None or empty.get("medium") != "Memory":
                raise ValueError("the fake API server mounts memory-backed emptyDir and projected volumes only")
            size = _docker_size(empty["sizeLimit"])
            if mount["mountPath"] == "/dev/shm":
                args += ["--shm-size", size]
            else:
                # A memory emptyDir is writable by the pod's user; Docker here ignores tmpfs modes, so
                # the mount is given to that user instead.
                owner = f",uid={user}" if user is not None else ""
                args += ["--tmpfs", f"{mount['mountPath']}:rw,nosuid,nodev,size={size}{owner}"]
        for env in container.get("env", []):
            args += ["--env", f"{env['name']}={env.get('value', '')}"]
        command = container.get("command") or []
        if command:
            args += ["--entrypoint", command[0]]
        result = _docker(*args, container["image"], *command[1:], *container.get("args", []))
        if result.returncode != 0:
            if "Unable to find image" in result.stderr or "pull access denied" in result.stderr:
                # The API accepts such a pod; the kubelet then reports it cannot pull the image.
                pod["status"]["pullError"] = result.stderr.strip()
                return
            raise RuntimeError(f"docker run failed: {result.stderr.strip()}")

    def _project(self, pod: dict[str, Any], projected: dict[str, Any]) -> str:
        """Write a projected volume's downward-API files as the kubelet would: root-owned, group ``fsGroup``."""
        meta = pod["metadata"]
        directory = tempfile.mkdtemp(prefix="fake-kube-projected-")
        os.chmod(directory, 0o755)
        self._files[(meta["namespace"], meta["name"])] = directory
        group = pod["spec"].get("securityContext", {}).get("fsGroup")
        for source in projected.get("sources", []):
            for item in source.get("downwardAPI", {}).get("items", []):
                field = item["fieldRef"]["fieldPath"]
                match = re.fullmatch(r"metadata\.annotations\['([^']+)'\]", field)
                if match is None:
                    raise ValueError(f"the fake API server projects annotations only, not {field}")
                path = os.path.join(directory, item["path"])
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(meta.get("annotations", {}).get(match[1], ""))
                os.chmod(path, item.get("mode", projected.get("defaultMode", 0o644)))
                if group is not None:
                    os.chown(path, 0, int(group))
        return directory

    def _observe(self, namespace: str, pod: dict[str, Any]) -> dict[str, Any]:
        """The pod with its status as the kubelet would report it now."""
        if "pullError" in pod["status"]:
            container = pod["spec"]["containers"][0]
            pod["status"] = {"phase": "Pending", "pullError": pod["status"]["pullError"], "containerStatuses": [
                {"name": container["name"], "image": container["image"], "imageID": "", "ready": False,
                 "restartCount": 0, "state": {"waiting": {"reason": "ErrImagePull",
                                                          "message": pod["status"]["pullError"][:200]}}}]}
            return {**pod, "status": {k: v for k, v in pod["status"].items() if k != "pullError"}}
        inspect = _docker("inspect", _container(namespace, pod["metadata"]["name"]))
        if inspect.returncode != 0:
            pod["status"] = {"phase": "Failed", "reason": "ContainerGone", "message": "the container is gone"}
            return pod
        info = json.loads(inspect.stdout)[0]
        state = info["State"]
        ip = info["NetworkSettings"]["Networks"].get(NETWORK, {}).get("IPAddress", "")
        container = pod["spec"]["containers"][0]
        ready = bool(state["Running"] and ip and _probe(ip, container))
        if state["Running"]:
            phase, cstate = "Running", {"running": {"startedAt": _now()}}
        elif state["Status"] == "created":
            phase, cstate = "Pending", {"waiting": {"reason": "ContainerCreating"}}
        else:
            phase = "Succeeded" if state["ExitCode"] == 0 else "Failed"
            cstate = {"terminated": {"exitCode": state["ExitCode"], "reason": "Error" if state["ExitCode"] else
                                     "Completed", "startedAt": _now(), "finishedAt": _now()}}
        truth = "True" if ready else "False"
        pod["status"] = {
            "phase": phase, "podIP": ip or None, "hostIP": "127.0.0.1", "startTime": _now(),
            "conditions": [{"type": "Ready", "status": truth, "lastTransitionTime": _now()},
                           {"type": "ContainersReady", "status": truth, "lastTransitionTime": _now()}],
            "containerStatuses": [{"name": container["name"], "image": container["image"],
                                   "imageID": f"docker://{info['Image']}", "ready": ready,
                                   "restartCount": 0, "state": cstate}],
        }
        return pod

    def _read_pod(self, namespace: str, name: str) -> tuple[int, dict[str, Any]]:
        pod = self.pods.get((namespace, name))
        if pod is None:
            return 404, _status(404, "NotFound", f'pods "{name}" not found')
        return 200, self._observe(namespace, pod)

    def _list_pods(self, namespace: str, selector: str) -> dict[str, Any]:
        wanted = dict(part.split("=", 1) for part in selector.split(",") if part)
        items = [self._observe(namespace, pod) for (ns, _), pod in list(self.pods.items()) if ns == namespace
                 and all(pod["metadata"].get("labels", {}).get(k) == v for k, v in wanted.items())]
        return {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": items}

    def _delete_pod(self, namespace: str, name: str) -> tuple[int, dict[str, Any]]:
        with self._lock:
            pod = self.pods.pop((namespace, name), None)
        if pod is None:
            return 404, _status(404, "NotFound", f'pods "{name}" not found')
        _docker("rm", "--force", _container(namespace, name))
        if directory := self._files.pop((namespace, name), None):
            shutil.rmtree(directory, ignore_errors=True)
        return 200, pod

    # --------------------------------------------------------------------- custom resources

    def _custom_resource(self, method: str, api_version: str, namespace: str, plural: str, name: str | None,
                         status: bool, body: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
        key = (plural, namespace, name or "")
        if method == "POST" and name is None:
            obj = body or {}
            if obj.get("apiVersion") != api_version:
                return 400, _status(400, "BadRequest", f"apiVersion {obj.get('apiVersion')} is not {api_version}")
            if self._custom_validator is not None:
                try:
                    self._custom_validator(obj)
                except Exception as exc:  # noqa: BLE001 - any validation failure is the API's 422
                    self.rejected.append(str(exc))
                    return 422, _status(422, "Invalid", f"{obj.get('kind')} is invalid: {exc}")
            obj_name = obj.get("metadata", {}).get("name", "")
            key = (plural, namespace, obj_name)
            if key in self.custom:
                return 409, _status(409, "AlreadyExists", f'{plural} "{obj_name}" already exists')
            obj["metadata"].update(namespace=namespace, uid=str(uuid.uuid4()), creationTimestamp=_now())
            self.custom[key] = obj
            return 201, obj
        if method == "GET" and name is not None:
            found = self.custom.get(key)
            if found is None:
                return 404, _status(404, "NotFound", f'{plural} "{name}" not found')
            return 200, found
        if method == "GET":
            items = [o for (p, ns, _), o in self.custom.items() if p == plural and ns == namespace]
            return 200, {"apiVersion": api_version, "kind": "List", "metadata": {}, "items": items}
        if method == "DELETE" and name is not None:
            gone = self.custom.pop(key, None)
            if gone is None:
                return 404, _status(404, "NotFound", f'{plural} "{name}" not found')
            return 200, gone
        return 405, _status(405, "MethodNotAllowed", f"{method} is not supported on {plural}")

    def set_custom_status(self, plural: str, namespace: str, name: str, status: dict[str, Any]) -> None:
        """What the operator would write into a custom resource's status."""
        self.custom[(plural, namespace, name)]["status"] = status


def _container(namespace: str, name: str) -> str:
    return f"k8s-{namespace}-{name}"


def _probe(ip: str, container: dict[str, Any]) -> bool:
    probe = container.get("readinessProbe", {}).get("tcpSocket")
    if probe is None:
        return True
    port = probe["port"]
    if isinstance(port, str):
        port = next(p["containerPort"] for p in container.get("ports", []) if p.get("name") == port)
    with contextlib.suppress(OSError), socket.create_connection((ip, int(port)), timeout=0.5):
        return True
    return False


@contextlib.contextmanager
def fake_cluster(**kwargs: Any) -> Iterator[FakeApiServer]:
    """A running fake API server; its pods are removed on exit."""
    with FakeApiServer(**kwargs) as server:
        yield server
