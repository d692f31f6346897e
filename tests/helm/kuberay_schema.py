"""A structural JSON schema for KubeRay's ``ray.io/v1`` RayCluster and RayJob, for offline tests.

Where it comes from: written by hand from KubeRay's Go API types,
``ray-operator/apis/ray/v1/raycluster_types.go`` (RayClusterSpec, HeadGroupSpec, WorkerGroupSpec,
ScaleStrategy, AutoscalerOptions) and ``ray-operator/apis/ray/v1/rayjob_types.go`` (RayJobSpec,
SubmitterConfig) in github.com/ray-project/kuberay, as the v1 API stood around KubeRay 1.4 (a few
fields, e.g. ``autoscalerOptions.version`` and the ``SidecarMode`` submission mode, exist only in
recent releases; ``rayStartParams`` became optional in 1.4). Field names are the Go
``json`` tags; ``int32`` becomes a bounded integer, ``map[string]string`` an object of strings, and
every embedded Kubernetes type (PodTemplateSpec, ResourceRequirements, SecurityContext, EnvVar, …)
is a ``$ref`` into kubernetes-validate's bundled OpenAPI definitions (see :data:`K8S_DEFINITIONS`),
so pod templates are checked as real ``io.k8s.api.core.v1.PodTemplateSpec`` objects.

What it is not: the CRD. It is a structural subset — no defaults, no CEL ``x-kubernetes-validations``,
none of the operator's validation rules (the tests assert the ones the chart relies on, e.g. no
backoffLimit with a clusterSelector), and none of the newest fields (deletionStrategy, …): a chart
that starts using one must extend this file deliberately, as it did for ``authOptions`` (Ray token
authentication; KubeRay 1.5.1 added ``mode``, 1.6.0 ``secretName`` and ``enableK8sTokenAuth``,
``AuthOptions`` in ``raycluster_types.go``). ``additionalProperties: false``
on every KubeRay object makes a misspelled or misplaced field fail, which the real API server would
otherwise silently prune.

Two fields are required here although the newest CRD makes them optional, because a consumer of the
rendered object needs them: ``rayStartParams`` (required by the CRD before KubeRay 1.4) and a worker
group's ``minReplicas``/``maxReplicas`` (Ray's autoscaler reads them unconditionally,
``ray/autoscaler/_private/kuberay/autoscaling_config.py``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["K8S_DEFINITIONS", "RAY_CLUSTER", "RAY_JOB", "pod_template_paths", "schema_for"]

#: Base URI of kubernetes-validate's ``_definitions.json`` (its ``$id``); register that file under it.
K8S_DEFINITIONS = "https://kubernetes.io/api/_definitions.json"


def _k8s(name: str) -> dict[str, str]:
    """A reference to one Kubernetes OpenAPI definition, e.g. ``io.k8s.api.core.v1.PodTemplateSpec``."""
    return {"$ref": f"{K8S_DEFINITIONS}#/$defs/{name}"}


_INT32: dict[str, Any] = {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1}
_STRING_MAP: dict[str, Any] = {"type": "object", "additionalProperties": {"type": "string"}}
_POD_TEMPLATE = _k8s("io.k8s.api.core.v1.PodTemplateSpec")


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """A closed object: unknown properties are errors."""
    schema: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": properties}
    if required:
        schema["required"] = required
    return schema


_AUTOSCALER_OPTIONS = _object({
    "resources": _k8s("io.k8s.api.core.v1.ResourceRequirements"),
    "image": {"type": "string"},
    "imagePullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]},
    "env": {"type": "array", "items": _k8s("io.k8s.api.core.v1.EnvVar")},
    "envFrom": {"type": "array", "items": _k8s("io.k8s.api.core.v1.EnvFromSource")},
    "volumeMounts": {"type": "array", "items": _k8s("io.k8s.api.core.v1.VolumeMount")},
    "securityContext": _k8s("io.k8s.api.core.v1.SecurityContext"),
    "idleTimeoutSeconds": _INT32,
    "upscalingMode": {"enum": ["Default", "Aggressive", "Conservative"]},
    "version": {"enum": ["v1", "v2"]},
})

_HEAD_GROUP_SPEC = _object({
    "serviceType": {"enum": ["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"]},
    "headService": _k8s("io.k8s.api.core.v1.Service"),
    "enableIngress": {"type": "boolean"},
    "rayStartParams": _STRING_MAP,
    "template": _POD_TEMPLATE,
}, ["rayStartParams", "template"])

_WORKER_GROUP_SPEC = _object({
    "suspend": {"type": "boolean"},
    "groupName": {"type": "string", "minLength": 1},
    "replicas": _INT32,
    "minReplicas": _INT32,
    "maxReplicas": _INT32,
    "idleTimeoutSeconds": _INT32,
    "rayStartParams": _STRING_MAP,
    "template": _POD_TEMPLATE,
    "scaleStrategy": _object({
        "workersToDelete": {"type": "array", "items": {"type": "string"}},
        "multihostReplicasToDelete": {"type": "array", "items": {"type": "string"}},
    }),
    "numOfHosts": _INT32,
}, ["groupName", "minReplicas", "maxReplicas", "rayStartParams", "template"])

_AUTH_OPTIONS = _object({
    "mode": {"enum": ["disabled", "token"]},
    "secretName": {"type": "string", "minLength": 1},
    "enableK8sTokenAuth": {"type": "boolean"},
})

_RAY_CLUSTER_SPEC = _object({
    "suspend": {"type": "boolean"},
    "authOptions": _AUTH_OPTIONS,
    "managedBy": {"enum": ["ray.io/kuberay-operator", "kueue.x-k8s.io/multikueue"]},
    "autoscalerOptions": _AUTOSCALER_OPTIONS,
    "headServiceAnnotations": _STRING_MAP,
    "enableInTreeAutoscaling": {"type": "boolean"},
    "gcsFaultToleranceOptions": {"type": "object"},
    "headGroupSpec": _HEAD_GROUP_SPEC,
    "rayVersion": {"type": "string"},
    "workerGroupSpecs": {"type": "array", "items": _WORKER_GROUP_SPEC},
}, ["headGroupSpec"])

_RAY_JOB_SPEC = _object({
    "activeDeadlineSeconds": _INT32,
    "backoffLimit": _INT32,
    "rayClusterSpec": _RAY_CLUSTER_SPEC,
    "submitterPodTemplate": _POD_TEMPLATE,
    "metadata": _STRING_MAP,
    "clusterSelector": _STRING_MAP,
    "submitterConfig": _object({"backoffLimit": _INT32}),
    "managedBy": {"enum": ["ray.io/kuberay-operator", "kueue.x-k8s.io/multikueue"]},
    "deletionPolicy": {"enum": ["DeleteCluster", "DeleteWorkers", "DeleteSelf", "DeleteNone"]},
    "entrypoint": {"type": "string"},
    "runtimeEnvYAML": {"type": "string"},
    "jobId": {"type": "string"},
    "submissionMode": {"enum": ["K8sJobMode", "HTTPMode", "InteractiveMode", "SidecarMode"]},
    "entrypointResources": {"type": "string"},
    "entrypointNumCpus": {"type": "number"},
    "entrypointNumGpus": {"type": "number"},
    "ttlSecondsAfterFinished": _INT32,
    "shutdownAfterJobFinishes": {"type": "boolean"},
    "suspend": {"type": "boolean"},
})


def _top_level(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """apiVersion/kind/metadata/spec of one custom resource (no status: charts never render it)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **_object({
            "apiVersion": {"const": "ray.io/v1"},
            "kind": {"const": kind},
            "metadata": _k8s("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"),
            "spec": spec,
        }, ["apiVersion", "kind", "metadata", "spec"]),
    }


RAY_CLUSTER: dict[str, Any] = _top_level("RayCluster", _RAY_CLUSTER_SPEC)
RAY_JOB: dict[str, Any] = _top_level("RayJob", _RAY_JOB_SPEC)


def schema_for(kind: str) -> dict[str, Any] | None:
    """The schema of a KubeRay kind, or ``None`` for any other kind."""
    return {"RayCluster": RAY_CLUSTER, "RayJob": RAY_JOB}.get(kind)


def pod_template_paths(manifest: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every pod template embedded in a RayCluster or RayJob, with a readable path to it."""
    found: list[tuple[str, dict[str, Any]]] = []

    def cluster(spec: dict[str, Any], prefix: str) -> None:
        found.append((f"{prefix}.headGroupSpec.template", spec["headGroupSpec"]["template"]))
        for index, group in enumerate(spec.get("workerGroupSpecs", [])):
            found.append((f"{prefix}.workerGroupSpecs[{index}].template", group["template"]))

    spec = manifest["spec"]
    if manifest["kind"] == "RayCluster":
        cluster(spec, "spec")
    elif manifest["kind"] == "RayJob":
        if "rayClusterSpec" in spec:
            cluster(spec["rayClusterSpec"], "spec.rayClusterSpec")
        if "submitterPodTemplate" in spec:
            found.append(("spec.submitterPodTemplate", spec["submitterPodTemplate"]))
    return found
