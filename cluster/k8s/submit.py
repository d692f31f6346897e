"""Sweeps on Kubernetes: submit one as a KubeRay ``RayJob`` on the chart's RayCluster, and follow it.

``evalgrid cluster submit`` packs the sweep's inputs into the run directory's object store
(:mod:`cluster.sweep.inputs`), then creates a RayJob whose entrypoint is ``evalgrid run --inputs …`` on
the RayCluster the Helm chart installed. The job's name is derived from the inputs and the run
directory, so submitting the same sweep twice is refused instead of running it twice.

The job's submitter pod (KubeRay runs ``ray job submit`` in it against the head's job API) is made
from the RayCluster's head: its image and user, this release's labels (the chart's NetworkPolicy
lets only pods with them reach the job API), and the Ray token by reference to the cluster's token
Secret (the job API refuses requests without it). The entrypoint itself runs on the head and joins
with ``--ray-address auto`` using the head's own token.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import shlex
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException
from pydantic import BaseModel, ConfigDict

from cluster.k8s.api import KubeObject, api_client
from cluster.sweep.inputs import InputsRef
from evaluator import ConfigError, InfrastructureError

GROUP, VERSION, PLURAL = "ray.io", "v1", "rayjobs"
SWEEP_LABEL = "evalgrid.io/sweep"
ROLE_LABEL = "evalgrid.io/role"
INSTANCE_LABEL = "app.kubernetes.io/instance"
SUBMITTER_ROLE = "job-submitter"
"""The role the chart's NetworkPolicies admit to the head's job API (8265)."""
TOKEN_SECRET_KEY = "auth_token"
"""The key of the token in a Ray token Secret (KubeRay's, and the chart's ray.auth.tokenSecret)."""
_SUBMITTER_RESOURCES = {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"cpu": "500m", "memory": "512Mi"}}
_NAME_LIMIT = 47  # KubeRay derives longer names (submitter Job, pods) from a RayJob's name
_TERMINAL_JOB = frozenset({"SUCCEEDED", "FAILED", "STOPPED"})
_TERMINAL_DEPLOYMENT = frozenset({"Complete", "Failed"})


class JobStatus(BaseModel):
    """What ``evalgrid cluster status`` reports of one RayJob."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str
    """The RayJob's name."""
    sweep: str
    """The sweep it runs."""
    job_status: str
    """Ray's job status (``PENDING``, ``RUNNING``, ``SUCCEEDED``, ``FAILED``, ``STOPPED``); ``""`` before it starts."""
    deployment_status: str
    """KubeRay's view (``Initializing``, ``Running``, ``Complete``, ``Failed`` …)."""
    message: str
    """KubeRay's or Ray's last message."""
    start_time: str | None
    """When the job started."""
    end_time: str | None
    """When it ended."""
    entrypoint: str
    """The command the job runs."""

    @property
    def finished(self) -> bool:
        """Whether the job has reached an end."""
        return self.job_status in _TERMINAL_JOB or self.deployment_status in _TERMINAL_DEPLOYMENT


def job_name(sweep_name: str, inputs: InputsRef, run_dir: str) -> str:
    """A DNS-1123 name from the sweep's name, its inputs and its run directory."""
    digest = hashlib.sha256(f"{inputs.name}\n{run_dir}".encode()).hexdigest()[:10]
    stem = re.sub(r"[^a-z0-9-]+", "-", sweep_name.lower()).strip("-")[: _NAME_LIMIT - len("evalgrid--") - 10]
    return f"evalgrid-{stem}-{digest}".replace("--", "-")


def rayjob_manifest(*, name: str, namespace: str, cluster: str, sweep_name: str, inputs: InputsRef, run_dir: str,
                    workers: int | None = None, submitter: KubeObject | None = None) -> KubeObject:
    """The RayJob that runs the sweep on ``cluster`` (the chart's RayCluster).

    ``submitter`` is the submitter pod template (:func:`submitter_template`); ``None`` leaves it to KubeRay.
    """
    argv = ["evalgrid", "run", "--inputs", inputs.url, "--run-dir", run_dir, "--sandbox", "kubernetes",
            "--ray-address", "auto", "--no-progress"]
    if workers is not None:
        argv += ["--workers", str(workers)]
    labels = {"app.kubernetes.io/name": "evalgrid", "app.kubernetes.io/component": "job",
              SWEEP_LABEL: re.sub(r"[^A-Za-z0-9_.-]", "-", sweep_name)[:63]}
    spec: KubeObject = {
        "entrypoint": shlex.join(argv),
        "clusterSelector": {"ray.io/cluster": cluster},
        "submissionMode": "K8sJobMode",
        # The driver runs on the head, which offers no CPUs to Ray (the chart's num-cpus "0").
        "entrypointNumCpus": 0,
    }
    if submitter is not None:
        spec["submitterPodTemplate"] = submitter
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "RayJob",
            "metadata": {"name": name, "namespace": namespace, "labels": labels}, "spec": spec}


def ray_auth_env(cluster: KubeObject) -> list[KubeObject]:
    """The environment a Ray client of ``cluster`` (a RayCluster object) needs for its token auth.

    ``[]`` when the cluster runs without token authentication. The token is only ever referenced
    (``secretKeyRef``), never copied into the RayJob: from ``spec.authOptions`` (the Secret it names,
    else the one KubeRay makes, named after the cluster), else from the head's own environment.
    Raises :class:`ConfigError` when the head gets its token in a way a reference cannot carry.
    """
    name = cluster.get("metadata", {}).get("name", "")
    options = cluster.get("spec", {}).get("authOptions") or {}
    if options.get("mode") == "token":
        secret = options.get("secretName") or name
        return [{"name": "RAY_AUTH_MODE", "value": "token"},
                {"name": "RAY_AUTH_TOKEN", "valueFrom": {"secretKeyRef": {"name": secret, "key": TOKEN_SECRET_KEY}}}]
    head_env = {e.get("name"): e for e in _head_container(cluster).get("env", [])}
    if str(head_env.get("RAY_AUTH_MODE", {}).get("value", "")).lower() != "token":
        return []
    token = head_env.get("RAY_AUTH_TOKEN", {})
    if "secretKeyRef" in (token.get("valueFrom") or {}):
        return [{"name": "RAY_AUTH_MODE", "value": "token"}, token]
    raise ConfigError(f"RayCluster {name} runs Ray with token authentication, but its head does not take the token "
                      "from a Secret (RAY_AUTH_TOKEN with valueFrom.secretKeyRef), so the job's submitter cannot be "
                      "given it without copying it into the RayJob: keep the token in a Secret (the evalgrid "
                      "chart's ray.auth.tokenSecret) and reference it")


def submitter_template(cluster: KubeObject) -> KubeObject:
    """The submitter pod of a RayJob on ``cluster`` (a RayCluster object), made from its head.

    The head's image (it has ``ray``), pod and container security contexts and pull secrets; the
    release's instance label with the job-submitter role (what the chart's NetworkPolicies admit
    to the job API); the Ray token by reference (:func:`ray_auth_env`); no Kubernetes API token.
    """
    head = cluster.get("spec", {}).get("headGroupSpec", {}).get("template", {})
    head_spec = head.get("spec", {})
    ray_container = _head_container(cluster)
    labels = {"app.kubernetes.io/name": "evalgrid", "app.kubernetes.io/component": SUBMITTER_ROLE,
              ROLE_LABEL: SUBMITTER_ROLE}
    instance = head.get("metadata", {}).get("labels", {}).get(INSTANCE_LABEL)
    if instance:
        labels[INSTANCE_LABEL] = instance
    container: KubeObject = {"name": "ray-job-submitter", "image": ray_container.get("image", ""),
                                 "resources": _SUBMITTER_RESOURCES}
    for key in ("imagePullPolicy", "securityContext"):
        if key in ray_container:
            container[key] = ray_container[key]
    env = ray_auth_env(cluster)
    if env:
        container["env"] = env
    spec: KubeObject = {"restartPolicy": "Never", "automountServiceAccountToken": False,
                            "containers": [container]}
    for key in ("securityContext", "imagePullSecrets"):
        if key in head_spec:
            spec[key] = head_spec[key]
    return {"metadata": {"labels": labels}, "spec": spec}


def _head_container(cluster: KubeObject) -> KubeObject:
    """The head's Ray container (KubeRay's containers[0]), or ``{}``."""
    containers = cluster.get("spec", {}).get("headGroupSpec", {}).get("template", {}).get("spec", {}).get(
        "containers") or [{}]
    container: KubeObject = containers[0]
    return container


def _custom() -> k8s.CustomObjectsApi:
    return k8s.CustomObjectsApi(api_client())


async def find_cluster(namespace: str, *, api: k8s.CustomObjectsApi | None = None) -> str:
    """The one RayCluster the evalgrid chart installed in ``namespace``; an error names the choices otherwise."""
    api = api or _custom()
    try:
        listing = await _call(api.list_namespaced_custom_object, GROUP, VERSION, namespace, "rayclusters",
                              label_selector="app.kubernetes.io/part-of=evalgrid")
    except ApiException as exc:
        raise InfrastructureError(f"could not list RayClusters in {namespace}: {exc.status} {exc.reason}") from exc
    names = sorted(str(item["metadata"]["name"]) for item in listing.get("items", []))
    if len(names) == 1:
        return names[0]
    if not names:
        raise ConfigError(f"no evalgrid RayCluster in namespace {namespace}: install the chart "
                          "(`helm install lab helm/evalgrid`) or pass --namespace")
    raise ConfigError(f"{len(names)} evalgrid RayClusters in {namespace} ({', '.join(names)}); pick one with --cluster")


async def read_cluster(name: str, namespace: str, *, api: k8s.CustomObjectsApi | None = None) -> KubeObject:
    """The RayCluster ``name`` in ``namespace``."""
    api = api or _custom()
    try:
        return await _call(api.get_namespaced_custom_object, GROUP, VERSION, namespace, "rayclusters", name)
    except ApiException as exc:
        if exc.status == 404:
            raise ConfigError(f"no RayCluster {name} in namespace {namespace}: install the chart, or name another "
                              "with --cluster") from exc
        raise InfrastructureError(f"could not read RayCluster {name}: {exc.status} {exc.reason}") from exc


async def create_job(manifest: KubeObject, *, api: k8s.CustomObjectsApi | None = None) -> None:
    """Create the RayJob; a job of the same name means the same sweep was already submitted."""
    api = api or _custom()
    namespace, name = manifest["metadata"]["namespace"], manifest["metadata"]["name"]
    try:
        await asyncio.to_thread(api.create_namespaced_custom_object, GROUP, VERSION, namespace, PLURAL, manifest)
    except ApiException as exc:
        if exc.status == 409:
            raise ConfigError(f"RayJob {name} already exists in {namespace}: this sweep was submitted to this run "
                              f"directory before. Follow it with `evalgrid cluster status {name}`; to run it again, "
                              f"delete it first (`kubectl delete rayjob {name} -n {namespace}`).") from exc
        if exc.status == 404:
            raise ConfigError(f"the cluster has no RayJob resource ({GROUP}/{VERSION}) in {namespace}: install the "
                              "KubeRay operator, then the evalgrid chart") from exc
        raise InfrastructureError(f"could not create RayJob {name}: {exc.status} {exc.reason}") from exc


async def job_status(name: str, namespace: str, *, api: k8s.CustomObjectsApi | None = None) -> JobStatus:
    """The status of RayJob ``name``."""
    api = api or _custom()
    try:
        job = await _call(api.get_namespaced_custom_object, GROUP, VERSION, namespace, PLURAL, name)
    except ApiException as exc:
        if exc.status == 404:
            raise ConfigError(f"no RayJob {name} in namespace {namespace}; `evalgrid cluster status` lists them") \
                from exc
        raise InfrastructureError(f"could not read RayJob {name}: {exc.status} {exc.reason}") from exc
    return _status(job)


async def list_jobs(namespace: str, *, api: k8s.CustomObjectsApi | None = None) -> list[JobStatus]:
    """Every evalgrid RayJob in ``namespace``, oldest first."""
    api = api or _custom()
    try:
        listing = await _call(api.list_namespaced_custom_object, GROUP, VERSION, namespace, PLURAL,
                              label_selector=SWEEP_LABEL)
    except ApiException as exc:
        raise InfrastructureError(f"could not list RayJobs in {namespace}: {exc.status} {exc.reason}") from exc
    jobs = sorted(listing.get("items", []), key=lambda j: j.get("metadata", {}).get("creationTimestamp", ""))
    return [_status(job) for job in jobs]


async def follow_job(name: str, namespace: str, on_change: Callable[[JobStatus], None], *,
                     interval_s: float = 5.0, api: k8s.CustomObjectsApi | None = None,
                     timeout_s: float | None = None) -> JobStatus:
    """Poll RayJob ``name`` until it ends, calling ``on_change`` whenever its status changes."""
    started = time.monotonic()
    last: tuple[str, str, str] | None = None
    while True:
        status = await job_status(name, namespace, api=api)
        seen = (status.job_status, status.deployment_status, status.message)
        if seen != last:
            on_change(status)
            last = seen
        if status.finished or (timeout_s is not None and time.monotonic() - started > timeout_s):
            return status
        await asyncio.sleep(interval_s)


async def _call(method: Callable[..., object], *args: Any, **kwargs: Any) -> KubeObject:
    """A custom-objects call in a thread; its answer is a JSON object."""
    answer = await asyncio.to_thread(method, *args, **kwargs)
    if not isinstance(answer, dict):
        raise InfrastructureError(f"the Kubernetes API answered a {type(answer).__name__}, not an object")
    return answer


def _status(job: KubeObject) -> JobStatus:
    meta, spec, status = job.get("metadata", {}), job.get("spec", {}), job.get("status") or {}
    return JobStatus(
        name=meta.get("name", ""), sweep=meta.get("labels", {}).get(SWEEP_LABEL, ""),
        job_status=status.get("jobStatus", ""), deployment_status=status.get("jobDeploymentStatus", ""),
        message=status.get("message", ""), start_time=status.get("startTime"), end_time=status.get("endTime"),
        entrypoint=spec.get("entrypoint", ""),
    )
