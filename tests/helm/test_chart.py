"""The Helm chart ``helm/evalgrid``: lint, render, validate, and refuse bad values.

Everything goes through Helm's real engine (helm-python-sdk binds Helm's Go SDK): ``render`` is what
``helm install`` renders, including the values.schema.json check. No cluster is involved, so the
rendered objects are validated offline instead: built-in kinds with kubernetes-validate's strict
OpenAPI schemas for one fixed Kubernetes version, KubeRay's kinds with the hand-written structural
schema in ``kuberay_schema.py`` whose pod templates are the real ``PodTemplateSpec`` definition.
"""

from __future__ import annotations

import functools
import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import helm_python
import kubernetes_validate
import pytest
import yaml
from jsonschema import Draft202012Validator
from kubernetes_validate.utils import schema_contents
from referencing import Registry, Resource

from tests.helm.kuberay_schema import K8S_DEFINITIONS, pod_template_paths, schema_for

CHART_DIR = Path(__file__).resolve().parents[2] / "helm" / "evalgrid"
GPU_VALUES_FILE = CHART_DIR / "ci" / "gpu-judges-values.yaml"
#: The Kubernetes version every built-in object is validated against (the chart says >= 1.25).
KUBERNETES_VERSION = "1.30.0"
RELEASE = "grid"
NAMESPACE = "evals"

Manifest = dict[str, Any]


# --- rendering ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chart() -> Iterator[helm_python.Chart]:
    with helm_python.Chart.load(CHART_DIR) as loaded:
        yield loaded


def gpu_values() -> dict[str, Any]:
    """The production-shaped configuration: autoscaling, GPU judges, gVisor, a RayJob, S3 credentials."""
    values: dict[str, Any] = yaml.safe_load(GPU_VALUES_FILE.read_text())
    return values


def render(chart: helm_python.Chart, values: dict[str, Any] | None = None, *, release: str = RELEASE) -> list[Manifest]:
    """Every object the chart renders for these values (NOTES.txt and empty templates left out)."""
    rendered = chart.render(values or {}, name=release, namespace=NAMESPACE)
    return [
        doc
        for path, text in sorted(rendered.items())
        if not path.endswith("NOTES.txt")
        for doc in yaml.safe_load_all(text)
        if doc
    ]


def notes(chart: helm_python.Chart, values: dict[str, Any] | None = None) -> str:
    return chart.render(values or {}, name=RELEASE, namespace=NAMESPACE)["evalgrid/templates/NOTES.txt"]


def of_kind(manifests: list[Manifest], kind: str) -> list[Manifest]:
    return [m for m in manifests if m["kind"] == kind]


def only(manifests: list[Manifest], kind: str) -> Manifest:
    found = of_kind(manifests, kind)
    assert len(found) == 1, f"expected exactly one {kind}, got {len(found)}"
    return found[0]


def named(manifests: list[Manifest], kind: str, name: str) -> Manifest:
    found = [m for m in of_kind(manifests, kind) if m["metadata"]["name"] == name]
    assert len(found) == 1, f"expected exactly one {kind} {name}, got {len(found)}"
    return found[0]


def namespace_of(manifest: Manifest) -> str:
    """Where Helm creates the object: its own namespace, else the release's."""
    return str(manifest["metadata"].get("namespace", NAMESPACE))


def selects(selector: Manifest, labels: dict[str, str]) -> bool:
    """Whether a Kubernetes label selector matches these labels ({} matches everything)."""
    if not selector.get("matchLabels", {}).items() <= labels.items():
        return False
    for expression in selector.get("matchExpressions", []):
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        if (operator == "In" and labels.get(key) not in values) or (operator == "NotIn" and labels.get(key) in values) \
                or (operator == "Exists" and key not in labels) or (operator == "DoesNotExist" and key in labels):
            return False
    return True


def ray_templates(cluster: Manifest) -> dict[str, Manifest]:
    """role → pod template of the head and every worker group."""
    found = [cluster["spec"]["headGroupSpec"]["template"]] + [g["template"] for g in groups(cluster).values()]
    return {t["metadata"]["labels"]["evalgrid.io/role"]: t for t in found}


def groups(cluster: Manifest) -> dict[str, Manifest]:
    return {group["groupName"]: group for group in cluster["spec"]["workerGroupSpecs"]}


def container(template: Manifest) -> Manifest:
    """The Ray container: KubeRay and the autoscaler read containers[0]."""
    containers: list[Manifest] = template["spec"]["containers"]
    return containers[0]


def env(template: Manifest) -> dict[str, Any]:
    """name → value (or valueFrom) of the Ray container's environment."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container(template).get("env", [])}


# --- validation -----------------------------------------------------------------------------------


@functools.cache
def k8s_registry() -> Registry[Any]:
    """kubernetes-validate's bundled OpenAPI definitions (strict: unknown fields are errors)."""
    definitions: dict[str, Any] = schema_contents(
        f"kubernetes-json-schema/v{KUBERNETES_VERSION}-local-strict/_definitions.json", KUBERNETES_VERSION
    )
    registry: Registry[Any] = Registry().with_resource(K8S_DEFINITIONS, Resource.from_contents(definitions))
    return registry


def schema_errors(instance: Any, schema: dict[str, Any]) -> list[str]:
    validator = Draft202012Validator(schema, registry=k8s_registry())
    return [
        f"{'.'.join(str(p) for p in error.absolute_path) or '<root>'}: {error.message}"
        for error in sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))
    ]


def pod_template_errors(template: Manifest) -> list[str]:
    return schema_errors(template, {"$ref": f"{K8S_DEFINITIONS}#/$defs/io.k8s.api.core.v1.PodTemplateSpec"})


def manifest_errors(manifest: Manifest) -> list[str]:
    """Why one rendered object would not be accepted, or [] when it is valid."""
    kuberay = schema_for(manifest["kind"])
    if kuberay is not None:
        errors = schema_errors(manifest, kuberay)
        for path, template in pod_template_paths(manifest):
            errors += [f"{path}.{error}" for error in pod_template_errors(template)]
        return errors
    try:
        kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as error:
        return [f"{'.'.join(str(p) for p in error.path) or '<root>'}: {error.message}"]
    return []


# --- lint -----------------------------------------------------------------------------------------


def test_chart_metadata(chart: helm_python.Chart) -> None:
    metadata = chart.metadata
    assert (metadata["apiVersion"], metadata["name"], metadata["version"], metadata["appVersion"]) == (
        "v2", "evalgrid", "0.1.0", "0.1.0",
    )
    assert metadata["description"]
    assert chart.schema is not None and chart.schema["$schema"] == "http://json-schema.org/draft-07/schema#"


@pytest.mark.parametrize("values", [None, "gpu"], ids=["defaults", "gpu-judges"])
def test_helm_lint_has_no_errors_or_warnings(values: str | None) -> None:
    report = helm_python.lint(
        CHART_DIR, gpu_values() if values else None, strict=True, namespace=NAMESPACE, kube_version="v1.30.0"
    )
    assert report["errors"] == []
    # Severity 1 is informational (e.g. "icon is recommended"); 2 = warning, 3 = error.
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


# --- default values -------------------------------------------------------------------------------


def test_defaults_render_the_cluster_and_its_guard_rails_only(chart: helm_python.Chart) -> None:
    manifests = render(chart)
    assert sorted((m["kind"], m["metadata"]["name"]) for m in manifests) == [
        ("NetworkPolicy", "grid-evalgrid-job-submitter"), ("NetworkPolicy", "grid-evalgrid-ray"),
        ("NetworkPolicy", "grid-evalgrid-ray-head"), ("NetworkPolicy", "grid-evalgrid-ray-worker"),
        ("NetworkPolicy", "grid-evalgrid-sandbox"), ("RayCluster", "grid-evalgrid"),
        ("Role", "grid-evalgrid-sandboxes"), ("RoleBinding", "grid-evalgrid-sandboxes"),
        ("ServiceAccount", "grid-evalgrid-head"), ("ServiceAccount", "grid-evalgrid-sandbox"),
        ("ServiceAccount", "grid-evalgrid-worker"),
    ]
    # sandbox.namespace empty: everything lands in the release namespace.
    assert {namespace_of(m) for m in manifests} == {NAMESPACE}


def test_defaults_cluster_shape(chart: helm_python.Chart) -> None:
    cluster = only(render(chart), "RayCluster")
    spec = cluster["spec"]
    assert cluster["apiVersion"] == "ray.io/v1"
    assert cluster["metadata"]["name"] == "grid-evalgrid"
    assert "enableInTreeAutoscaling" not in spec and "autoscalerOptions" not in spec

    head = spec["headGroupSpec"]
    assert head["rayStartParams"]["num-cpus"] == "0"  # no sandbox actor on the head
    assert head["template"]["metadata"]["labels"]["evalgrid.io/role"] == "head"

    assert list(groups(cluster)) == ["browser"]  # no judge group unless judges.enabled
    worker = groups(cluster)["browser"]
    assert worker["template"]["metadata"]["labels"]["evalgrid.io/role"] == "worker"
    # Autoscaling off: the group is pinned to `replicas`.
    assert (worker["replicas"], worker["minReplicas"], worker["maxReplicas"]) == (2, 2, 2)

    for template in (head["template"], worker["template"]):
        role = template["metadata"]["labels"]["evalgrid.io/role"]
        assert template["spec"]["serviceAccountName"] == f"grid-evalgrid-{role}"
        variables = env(template)
        assert variables["EVALGRID_K8S_NAMESPACE"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
        assert variables["EVALGRID_K8S_POD_NAME"] == {"fieldRef": {"fieldPath": "metadata.name"}}
        assert variables["EVALGRID_K8S_POD_UID"] == {"fieldRef": {"fieldPath": "metadata.uid"}}
        # No object store configured: nothing object-store related is injected.
        assert "envFrom" not in container(template)
        assert not {"AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION"} & set(variables)
    assert "EVALGRID_K8S_SANDBOX" in env(worker["template"])
    assert "EVALGRID_K8S_SANDBOX" not in env(head["template"])


def test_defaults_sandbox_config(chart: helm_python.Chart) -> None:
    worker = groups(only(render(chart), "RayCluster"))["browser"]
    config = json.loads(env(worker["template"])["EVALGRID_K8S_SANDBOX"])
    assert config == {
        "image": "evalgrid/sandbox:0.1.0",
        "imagePullPolicy": "IfNotPresent",
        "runtimeClassName": None,
        "resources": {"cpu": "1", "memory": "1536Mi"},
        "nodeSelector": {},
        "tolerations": [],
        "imagePullSecrets": [],
        "labels": {
            "evalgrid.io/role": "sandbox",
            "app.kubernetes.io/instance": RELEASE,
            "app.kubernetes.io/component": "sandbox",
        },
        "gatePort": 9230,
        "egressProbeTargets": ["1.1.1.1:443", "8.8.8.8:53"],
        "requireEgressDenied": True,
        # Explicit even when it is the release's own, so a worker never guesses.
        "namespace": NAMESPACE,
        "serviceAccountName": "grid-evalgrid-sandbox",
    }


# --- GPU judges + autoscaling ---------------------------------------------------------------------


def test_gpu_configuration_renders_everything(chart: helm_python.Chart) -> None:
    manifests = render(chart, gpu_values())
    kinds = sorted(m["kind"] for m in manifests)
    assert kinds == ["NetworkPolicy"] * 5 + ["RayCluster", "RayJob", "Role", "RoleBinding", "RuntimeClass"] + [
        "ServiceAccount"] * 4
    # The sandbox namespace gets exactly its policy, its account and the workers' Role: nothing to steal.
    in_sandbox_namespace = sorted(m["kind"] for m in manifests if namespace_of(m) == "evals-sandbox")
    assert in_sandbox_namespace == ["NetworkPolicy", "Role", "RoleBinding", "ServiceAccount"]


def test_autoscaling_owns_replicas(chart: helm_python.Chart) -> None:
    spec = only(render(chart, gpu_values()), "RayCluster")["spec"]
    assert spec["enableInTreeAutoscaling"] is True
    options = spec["autoscalerOptions"]
    assert (options["idleTimeoutSeconds"], options["upscalingMode"]) == (120, "Conservative")
    assert options["resources"]["requests"] and options["resources"]["limits"]
    # Rendering `replicas` would make every helm upgrade reset what the autoscaler chose.
    for group in spec["workerGroupSpecs"]:
        assert "replicas" not in group, group["groupName"]
    bounds = {g["groupName"]: (g["minReplicas"], g["maxReplicas"]) for g in spec["workerGroupSpecs"]}
    assert bounds == {"browser": (2, 20), "judge": (0, 2)}


def test_judge_group(chart: helm_python.Chart) -> None:
    judge = groups(only(render(chart, gpu_values()), "RayCluster"))["judge"]
    template = judge["template"]
    ray = container(template)
    assert ray["image"] == "evalgrid/judge:0.1.0"
    assert ray["resources"]["limits"]["nvidia.com/gpu"] == 2
    assert ray["resources"]["requests"]["nvidia.com/gpu"] == 2
    assert judge["rayStartParams"]["resources"] == '"{\\"evalgrid-judge\\": 1}"'
    assert judge["rayStartParams"]["num-cpus"] == "0"  # browser actors stay off GPU pods
    variables = env(template)
    assert variables["EVALGRID_JUDGE_MODEL"] == "s3://evalgrid-models/judges/qwen2.5-7b-instruct"
    assert variables["EVALGRID_JUDGE_TENSOR_PARALLEL"] == "2"
    assert template["metadata"]["labels"]["evalgrid.io/role"] == "judge"
    assert template["spec"]["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in template["spec"]["tolerations"]


def test_sandbox_config_follows_values(chart: helm_python.Chart) -> None:
    worker = groups(only(render(chart, gpu_values()), "RayCluster"))["browser"]
    config = json.loads(env(worker["template"])["EVALGRID_K8S_SANDBOX"])
    assert config["runtimeClassName"] == "gvisor"
    assert config["imagePullSecrets"] == ["evalgrid-registry"]
    assert config["nodeSelector"] == {"evalgrid.io/sandbox-pool": "true"}
    assert config["tolerations"] == [{"key": "evalgrid.io/sandbox", "operator": "Exists", "effect": "NoSchedule"}]
    assert config["gatePort"] == 9230


def test_sandbox_labels_cannot_escape_the_network_policy(chart: helm_python.Chart) -> None:
    values = {"sandbox": {"labels": {"evalgrid.io/role": "worker", "app.kubernetes.io/instance": "other", "team": "a"}}}
    worker = groups(only(render(chart, values), "RayCluster"))["browser"]
    labels = json.loads(env(worker["template"])["EVALGRID_K8S_SANDBOX"])["labels"]
    assert labels["evalgrid.io/role"] == "sandbox"
    assert labels["app.kubernetes.io/instance"] == RELEASE
    assert labels["team"] == "a"


def test_runtime_class(chart: helm_python.Chart) -> None:
    runtime_class = only(render(chart, gpu_values()), "RuntimeClass")
    assert runtime_class["apiVersion"] == "node.k8s.io/v1"
    assert (runtime_class["metadata"]["name"], runtime_class["handler"]) == ("gvisor", "runsc")
    # Naming a RuntimeClass the cluster already has must not create one.
    assert of_kind(render(chart, {"sandbox": {"runtimeClassName": "gvisor"}}), "RuntimeClass") == []


def test_ray_job(chart: helm_python.Chart) -> None:
    manifests = render(chart, gpu_values())
    job = only(manifests, "RayJob")
    spec = job["spec"]
    assert job["apiVersion"] == "ray.io/v1"
    assert spec["clusterSelector"] == {"ray.io/cluster": only(manifests, "RayCluster")["metadata"]["name"]}
    assert shlex.split(spec["entrypoint"]) == [
        "evalgrid", "run",
        "--inputs", "s3://evalgrid-sweeps/sweeps/webapps-v1.yaml",
        "--run-dir", "s3://evalgrid-runs/runs/webapps-v1",
        "--sandbox", "kubernetes", "--ray-address", "auto", "--no-progress",
        "--sse", "AES256",
    ]
    assert spec["submissionMode"] == "K8sJobMode"
    assert spec["activeDeadlineSeconds"] == 86400
    # KubeRay refuses these in clusterSelector mode (it must not delete or recreate the shared cluster).
    assert not {"shutdownAfterJobFinishes", "backoffLimit", "rayClusterSpec", "suspend"} & set(spec)
    assert len(job["metadata"]["name"]) <= 47
    submitter = spec["submitterPodTemplate"]["spec"]
    assert submitter["automountServiceAccountToken"] is False
    assert "envFrom" not in submitter["containers"][0]  # no credentials in the submitter


# --- isolation and least privilege ----------------------------------------------------------------
# No cluster runs here, so no policy is enforced: these tests check what the rendered policies say,
# and that their selectors match the labels the chart and the sandbox backend really put on pods.

SANDBOX_NS = "evals-sandbox"
OWN_NAMESPACE = {"sandbox": {"namespace": SANDBOX_NS}}
WORKERS = {"matchLabels": {"app.kubernetes.io/instance": RELEASE, "evalgrid.io/role": "worker"}}


def sandbox_pod(config_json: str | None = None) -> Manifest:
    """The pod the Kubernetes backend makes from the chart's sandbox config (or none: made outside the chart)."""
    from cluster.sandbox.container import SandboxLimits
    from cluster.sandbox.k8s_backend import PodOwner, PodSandboxConfig, pod_manifest

    config = PodSandboxConfig.model_validate_json(config_json) if config_json else PodSandboxConfig()
    owner = PodOwner(namespace=NAMESPACE, pod_name="grid-evalgrid-browser-worker-x7k2p", pod_uid="7c1d5a0e")
    return pod_manifest(name="evalgrid-sbx-0", image="sandbox:1", token="t", limits=SandboxLimits(), config=config,
                        owner=owner, owner_process="h:1:2:3")


def sandbox_pod_labels(config_json: str | None = None) -> dict[str, str]:
    labels: dict[str, str] = sandbox_pod(config_json)["metadata"]["labels"]
    return labels


@pytest.mark.parametrize("values", [None, "gpu"], ids=["release-namespace", "own-namespace"])
def test_the_sandbox_policy_denies_all_egress_and_admits_only_this_releases_workers(
        chart: helm_python.Chart, values: str | None) -> None:
    manifests = render(chart, gpu_values() if values else None)
    policy = named(manifests, "NetworkPolicy", "grid-evalgrid-sandbox")
    spec = policy["spec"]
    assert sorted(spec["policyTypes"]) == ["Egress", "Ingress"]
    assert spec.get("egress", []) == []  # no egress rule at all: DNS denied too
    assert spec["ingress"] == [{
        "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NAMESPACE}},
                  "podSelector": WORKERS}],
        "ports": [{"protocol": "TCP", "port": 9230}],
    }]
    # Of the release's pods, only the browser workers are admitted (not the head, not the judges).
    labels = {role: t["metadata"]["labels"] for role, t in ray_templates(only(manifests, "RayCluster")).items()}
    assert [role for role, pod in labels.items() if selects(WORKERS, pod)] == ["worker"]

    # The policy covers the pods the workers really make, in the namespace they make them in.
    worker = groups(only(manifests, "RayCluster"))["browser"]["template"]
    pod = sandbox_pod(env(worker)["EVALGRID_K8S_SANDBOX"])
    assert manifest_errors(pod) == []
    assert namespace_of(policy) == pod["metadata"]["namespace"] == (SANDBOX_NS if values else NAMESPACE)
    assert selects(spec["podSelector"], pod["metadata"]["labels"])
    assert pod["spec"]["serviceAccountName"] == "grid-evalgrid-sandbox"
    assert pod["spec"]["automountServiceAccountToken"] is False
    # Kubernetes refuses an owner in another namespace (its garbage collector would delete the pod at
    # once): only a sandbox beside its worker names the worker pod as its owner.
    assert ("ownerReferences" in pod["metadata"]) == (not values)
    # ... and those made outside the chart, with none of its labels (PodSandboxConfig's defaults).
    assert selects(spec["podSelector"], sandbox_pod_labels())


def test_in_a_namespace_of_its_own_the_sandbox_policy_covers_every_pod(chart: helm_python.Chart) -> None:
    manifests = render(chart, OWN_NAMESPACE)
    policy = named(manifests, "NetworkPolicy", "grid-evalgrid-sandbox")
    assert namespace_of(policy) == SANDBOX_NS
    assert policy["spec"]["podSelector"] == {}  # any pod there, however made or labelled
    # In the release namespace it cannot select everything (the Ray pods live there), so it selects
    # the one label the backend always sets, whatever the chart's config says.
    fallback = named(render(chart), "NetworkPolicy", "grid-evalgrid-sandbox")["spec"]["podSelector"]
    assert fallback == {"matchLabels": {"evalgrid.io/role": "sandbox"}}
    for template in ray_templates(only(render(chart), "RayCluster")).values():
        assert not selects(fallback, template["metadata"]["labels"])


def test_the_sandbox_namespace_holds_a_tokenless_account_and_the_workers_role_only(chart: helm_python.Chart) -> None:
    manifests = render(chart, OWN_NAMESPACE)
    there = [m for m in manifests if namespace_of(m) == SANDBOX_NS]
    assert sorted((m["kind"], m["metadata"]["name"]) for m in there) == [
        ("NetworkPolicy", "grid-evalgrid-sandbox"), ("Role", "grid-evalgrid-sandboxes"),
        ("RoleBinding", "grid-evalgrid-sandboxes"), ("ServiceAccount", "grid-evalgrid-sandbox"),
    ]
    account = named(manifests, "ServiceAccount", "grid-evalgrid-sandbox")
    assert account["automountServiceAccountToken"] is False
    worker = groups(only(manifests, "RayCluster"))["browser"]["template"]
    config = json.loads(env(worker)["EVALGRID_K8S_SANDBOX"])
    assert (config["namespace"], config["serviceAccountName"]) == (SANDBOX_NS, "grid-evalgrid-sandbox")
    # The Role exists only there: the workers can create pods nowhere else.
    assert [namespace_of(m) for m in of_kind(manifests, "Role") + of_kind(manifests, "RoleBinding")] == [
        SANDBOX_NS, SANDBOX_NS]
    # No sandbox ServiceAccount wanted: the pods use the namespace's default one (never its token).
    without = render(chart, {"sandbox": {"namespace": SANDBOX_NS, "serviceAccount": {"create": False}}})
    worker = groups(only(without, "RayCluster"))["browser"]["template"]
    assert json.loads(env(worker)["EVALGRID_K8S_SANDBOX"])["serviceAccountName"] is None
    assert [m for m in of_kind(without, "ServiceAccount") if namespace_of(m) == SANDBOX_NS] == []


@pytest.mark.parametrize("values", [None, "gpu"], ids=["defaults", "gpu-judges"])
def test_ray_pods_are_default_deny_with_only_what_ray_needs(chart: helm_python.Chart, values: str | None) -> None:
    manifests = render(chart, gpu_values() if values else None)
    network = (gpu_values() if values else chart.values)["networkPolicy"]
    templates = ray_templates(only(manifests, "RayCluster"))
    ray = named(manifests, "NetworkPolicy", "grid-evalgrid-ray")["spec"]
    assert sorted(ray["policyTypes"]) == ["Egress", "Ingress"]  # default deny, both ways
    # It covers every Ray pod of the release, and no sandbox or submitter pod.
    assert sorted(role for role, t in templates.items() if selects(ray["podSelector"], t["metadata"]["labels"])) == (
        ["head", "judge", "worker"] if values else ["head", "worker"])
    assert not selects(ray["podSelector"], sandbox_pod_labels(env(templates["worker"])["EVALGRID_K8S_SANDBOX"]))
    assert not selects(ray["podSelector"], {"app.kubernetes.io/instance": RELEASE, "evalgrid.io/role": "job-submitter"})
    assert not selects(ray["podSelector"], {"app.kubernetes.io/instance": "other", "evalgrid.io/role": "head"})

    # Between the release's Ray pods: every TCP port (Ray picks most of its ports at start), nothing more.
    among = [{"podSelector": ray["podSelector"]}]
    assert ray["ingress"] == [{"from": among, "ports": [{"protocol": "TCP"}]}]
    egress = ray["egress"]
    assert egress[0] == {"to": among, "ports": [{"protocol": "TCP"}]}
    assert egress[1] == {
        "to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
    }
    assert egress[2:] == network["objectStoreEgress"] + network["modelEgress"]

    head = named(manifests, "NetworkPolicy", "grid-evalgrid-ray-head")["spec"]
    assert selects(head["podSelector"], templates["head"]["metadata"]["labels"])
    assert not selects(head["podSelector"], templates["worker"]["metadata"]["labels"])
    submitters = {"podSelector": {"matchLabels": {"app.kubernetes.io/instance": RELEASE,
                                                  "evalgrid.io/role": "job-submitter"}}}
    job_api = {"from": [submitters, *network["ray"]["operatorPeers"]], "ports": [{"protocol": "TCP", "port": 8265}]}
    clients = [{"from": network["ray"]["clientPeers"],
                "ports": [{"protocol": "TCP", "port": p} for p in network["ray"]["clientPorts"]]}]
    assert head["ingress"] == [job_api] + (clients if values else [])
    api_server = {"to": [{"ipBlock": {"cidr": c}} for c in network["apiServer"]["cidrs"]],
                  "ports": [{"protocol": "TCP", "port": p} for p in network["apiServer"]["ports"]]}
    # Only the autoscaler sidecar calls the API server from the head.
    assert head.get("egress") == ([api_server] if values else None)
    assert ("Egress" in head["policyTypes"]) == bool(values)

    worker = named(manifests, "NetworkPolicy", "grid-evalgrid-ray-worker")["spec"]
    assert worker["podSelector"] == WORKERS and worker["policyTypes"] == ["Egress"]
    sandbox_ns = SANDBOX_NS if values else NAMESPACE
    gate: Manifest = {"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": sandbox_ns}},
                              "podSelector": {"matchLabels": {"app.kubernetes.io/instance": RELEASE,
                                                              "evalgrid.io/role": "sandbox"}}}],
                      "ports": [{"protocol": "TCP", "port": 9230}]}
    assert worker["egress"] == [api_server, gate]
    sandbox_config = env(templates["worker"])["EVALGRID_K8S_SANDBOX"]
    assert selects(gate["to"][0]["podSelector"], sandbox_pod_labels(sandbox_config))

    submitter = named(manifests, "NetworkPolicy", "grid-evalgrid-job-submitter")["spec"]
    assert sorted(submitter["policyTypes"]) == ["Egress", "Ingress"] and "ingress" not in submitter
    assert submitter["egress"] == [egress[1], {"to": [{"podSelector": head["podSelector"]}],
                                               "ports": [{"protocol": "TCP", "port": 8265}]}]
    if values:  # the chart's own RayJob submitter is the pod that policy and the head's admit
        labels = only(manifests, "RayJob")["spec"]["submitterPodTemplate"]["metadata"]["labels"]
        assert selects(submitter["podSelector"], labels) and selects(submitters["podSelector"], labels)


def test_network_policy_can_be_disabled(chart: helm_python.Chart) -> None:
    assert of_kind(render(chart, {"networkPolicy": {"enabled": False}}), "NetworkPolicy") == []
    assert "WARNING: networkPolicy.enabled is false" in notes(chart, {"networkPolicy": {"enabled": False}})


@pytest.mark.parametrize("values", [None, "gpu"], ids=["defaults", "gpu-judges"])
def test_only_the_workers_may_do_anything_and_only_in_the_sandbox_namespace(
        chart: helm_python.Chart, values: str | None) -> None:
    manifests = render(chart, gpu_values() if values else None)
    assert of_kind(manifests, "ClusterRole") == [] and of_kind(manifests, "ClusterRoleBinding") == []
    role = only(manifests, "Role")
    # Pods only: no Secrets, no pods/exec or pods/log, no other resource, no wildcard.
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["create", "get", "list", "watch", "delete"]},
    ]
    sandbox_ns = SANDBOX_NS if values else NAMESPACE
    binding = only(manifests, "RoleBinding")
    assert namespace_of(role) == namespace_of(binding) == sandbox_ns
    role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role["metadata"]["name"]}
    assert binding["roleRef"] == role_ref
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "grid-evalgrid-worker", "namespace": NAMESPACE}]


@pytest.mark.parametrize("values", [None, "gpu"], ids=["defaults", "gpu-judges"])
def test_a_service_account_per_pod_kind_and_a_token_only_where_the_api_is_called(
        chart: helm_python.Chart, values: str | None) -> None:
    manifests = render(chart, gpu_values() if values else None)
    templates = ray_templates(only(manifests, "RayCluster"))
    accounts = {role: t["spec"]["serviceAccountName"] for role, t in templates.items()}
    assert accounts == {role: f"grid-evalgrid-{role}" for role in templates}
    created = {m["metadata"]["name"]: m for m in of_kind(manifests, "ServiceAccount")}
    assert set(accounts.values()) <= set(created)
    tokens = {role: t["spec"]["automountServiceAccountToken"] for role, t in templates.items()}
    # Workers create sandbox pods; the head only for the autoscaler sidecar; the judges never.
    assert tokens == ({"head": True, "worker": True, "judge": False} if values else {"head": False, "worker": True})
    if values:
        assert created["grid-evalgrid-judge"]["automountServiceAccountToken"] is False
        submitter = only(manifests, "RayJob")["spec"]["submitterPodTemplate"]["spec"]
        assert submitter["automountServiceAccountToken"] is False and "serviceAccountName" not in submitter
    # The judges' account is made only with a judge group.
    assert ("grid-evalgrid-judge" in created) == bool(values)


def test_service_accounts_can_be_external(chart: helm_python.Chart) -> None:
    values = {"serviceAccount": {"create": False, "worker": {"name": "platform-evalgrid"}}, "rbac": {"create": False},
              "sandbox": {"serviceAccount": {"create": False}}}
    manifests = render(chart, values)
    assert not {"ServiceAccount", "Role", "RoleBinding"} & {m["kind"] for m in manifests}
    templates = ray_templates(only(manifests, "RayCluster"))
    assert templates["worker"]["spec"]["serviceAccountName"] == "platform-evalgrid"
    # Unnamed: left to Kubernetes (and KubeRay), still without a token where none is needed.
    assert "serviceAccountName" not in templates["head"]["spec"]
    assert templates["head"]["spec"]["automountServiceAccountToken"] is False


# --- Ray token authentication ---------------------------------------------------------------------
# KubeRay and Ray are not running here: these check what every Ray process is given. That Ray then
# refuses clients without the token is shown for real in tests/cluster/test_ray_auth.py.

TOKEN_ENV = {"RAY_AUTH_MODE": "token",
             "RAY_AUTH_TOKEN": {"secretKeyRef": {"name": "grid-evalgrid-ray-token", "key": "auth_token"}}}


def auth_env(variables: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in variables.items() if name.startswith("RAY_AUTH")}


@pytest.mark.parametrize("values", [None, "gpu"], ids=["defaults", "gpu-judges"])
def test_every_ray_process_gets_the_token_from_the_named_secret(chart: helm_python.Chart, values: str | None) -> None:
    manifests = render(chart, gpu_values() if values else None)
    secret = "evalgrid-ray-token" if values else "grid-evalgrid-ray-token"
    expected = {**TOKEN_ENV, "RAY_AUTH_TOKEN": {"secretKeyRef": {"name": secret, "key": "auth_token"}}}
    cluster = only(manifests, "RayCluster")
    # KubeRay >= 1.6 authenticates its own dashboard calls with it, and hands it to its init containers.
    assert cluster["spec"]["authOptions"] == {"mode": "token", "secretName": secret}
    for role, template in ray_templates(cluster).items():
        assert auth_env(env(template)) == expected, role
    if values:
        options = cluster["spec"]["autoscalerOptions"]
        autoscaler = {e["name"]: e.get("value", e.get("valueFrom")) for e in options["env"]}
        assert auth_env(autoscaler) == expected
        submitter = only(manifests, "RayJob")["spec"]["submitterPodTemplate"]
        variables = {e["name"]: e.get("value", e.get("valueFrom")) for e in container(submitter).get("env", [])}
        assert auth_env(variables) == expected
    # Only a reference: the chart renders no Secret, so the token never passes through Helm.
    assert of_kind(manifests, "Secret") == []
    assert f"kubectl -n {NAMESPACE} create secret generic {secret}" in notes(chart, gpu_values() if values else None)


def test_token_authentication_can_be_turned_off_with_a_warning(chart: helm_python.Chart) -> None:
    values = {**gpu_values(), "ray": {"auth": {"enabled": False}}}
    manifests = render(chart, values)
    cluster = only(manifests, "RayCluster")
    assert "authOptions" not in cluster["spec"] and "env" not in cluster["spec"]["autoscalerOptions"]
    for template in ray_templates(cluster).values():
        assert auth_env(env(template)) == {}
    assert "env" not in container(only(manifests, "RayJob")["spec"]["submitterPodTemplate"])
    assert "WARNING: ray.auth.enabled is false" in notes(chart, values)


def test_credentials_only_by_secret_name(chart: helm_python.Chart) -> None:
    manifests = render(chart, gpu_values())
    assert of_kind(manifests, "Secret") == []
    cluster = only(manifests, "RayCluster")
    for path, template in pod_template_paths(cluster):
        ray = container(template)
        assert ray["envFrom"] == [{"secretRef": {"name": "evalgrid-s3"}}], path
        variables = env(template)
        assert variables["AWS_ENDPOINT_URL_S3"] == "https://minio.storage.svc:9000"
        assert variables["AWS_DEFAULT_REGION"] == "us-east-1"
    # The sandbox pods' settings carry nothing about the object store or its credentials.
    worker = groups(cluster)["browser"]["template"]
    sandbox = env(worker)["EVALGRID_K8S_SANDBOX"]
    assert "evalgrid-s3" not in sandbox and "AWS" not in sandbox and "envFrom" not in sandbox
    assert "ray-token" not in sandbox and "RAY_AUTH" not in sandbox
    # And values.yaml has nowhere to put a credential value.
    object_store = chart.values["objectStore"]
    assert set(object_store) == {"credentialsSecret", "endpoint", "region"}


@pytest.mark.parametrize("values", [None, "gpu"], ids=["defaults", "gpu-judges"])
def test_every_container_is_hardened_and_bounded(chart: helm_python.Chart, values: str | None) -> None:
    templates: list[tuple[str, Manifest]] = []
    manifests = render(chart, gpu_values() if values else None)
    for manifest in of_kind(manifests, "RayCluster") + of_kind(manifests, "RayJob"):
        templates += pod_template_paths(manifest)
    assert len(templates) == (4 if values else 2)
    for path, template in templates:
        assert template["spec"]["securityContext"]["runAsNonRoot"] is True, path
        for c in template["spec"]["containers"]:
            context = c["securityContext"]
            assert context["allowPrivilegeEscalation"] is False, path
            assert context["capabilities"]["drop"] == ["ALL"], path
            assert "add" not in context["capabilities"] and not context.get("privileged"), path
            for bound in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(c["resources"][bound]), f"{path}: {c['name']} {bound}"
    if values:
        autoscaler = only(manifests, "RayCluster")["spec"]["autoscalerOptions"]
        assert autoscaler["securityContext"]["capabilities"]["drop"] == ["ALL"]
        assert {"cpu", "memory"} <= set(autoscaler["resources"]["limits"])


# --- schema validation of every rendered object ---------------------------------------------------


@pytest.mark.parametrize("values", [None, "gpu"], ids=["defaults", "gpu-judges"])
def test_every_manifest_is_valid(chart: helm_python.Chart, values: str | None) -> None:
    manifests = render(chart, gpu_values() if values else None)
    problems = {f"{m['kind']}/{m['metadata']['name']}": manifest_errors(m) for m in manifests}
    assert {name: errors for name, errors in problems.items() if errors} == {}


def test_validation_catches_mistakes(chart: helm_python.Chart) -> None:
    """The validators are not vacuous: one wrong field anywhere fails them."""
    manifests = render(chart, gpu_values())

    cluster = only(manifests, "RayCluster")
    cluster["spec"]["workerGroupSpecs"][0]["replica"] = 1
    assert any("'replica' was unexpected" in e for e in manifest_errors(cluster))

    cluster = only(manifests, "RayCluster")
    cluster["spec"]["workerGroupSpecs"][1]["rayStartParams"]["num-gpus"] = 2
    assert any("num-gpus" in e and "is not of type 'string'" in e for e in manifest_errors(cluster))

    cluster = only(manifests, "RayCluster")
    container(cluster["spec"]["headGroupSpec"]["template"])["imagePullpolicy"] = "Always"
    assert any("imagePullpolicy" in e for e in manifest_errors(cluster))

    job = only(manifests, "RayJob")
    job["spec"]["submissionMode"] = "K8sMode"
    assert any("K8sMode" in e for e in manifest_errors(job))

    policy = named(manifests, "NetworkPolicy", "grid-evalgrid-sandbox")
    policy["spec"]["egres"] = []
    assert manifest_errors(policy) != []

    policy = named(manifests, "NetworkPolicy", "grid-evalgrid-ray")
    policy["spec"]["ingress"][0]["ports"][0]["portt"] = 6379
    assert manifest_errors(policy) != []

    cluster = only(manifests, "RayCluster")
    cluster["spec"]["authOptions"]["mode"] = "tokens"
    assert any("tokens" in e for e in manifest_errors(cluster))

    role = only(manifests, "Role")
    role["rules"][0]["verb"] = role["rules"][0].pop("verbs")
    assert manifest_errors(role) != []


# --- bad values are refused with a message that says what to change -------------------------------


BAD_VALUES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("misspelled top-level key", {"workr": {"replicas": 3}}, ["additional properties 'workr' not allowed"]),
    ("egress probe target without a port", {"sandbox": {"egressProbeTargets": ["1.1.1.1"]}},
     ["at '/sandbox/egressProbeTargets/0'"]),
    (
        "misspelled nested key",
        {"worker": {"replica": 3}},
        ["at '/worker'", "additional properties 'replica' not allowed"],
    ),
    ("negative maxReplicas", {"worker": {"maxReplicas": -1}}, ["at '/worker/maxReplicas'", "minimum: got -1, want 0"]),
    (
        "replicas above maxReplicas",
        {"worker": {"replicas": 30}},
        ["worker.replicas (30) is larger than worker.maxReplicas (10)", "raise worker.maxReplicas"],
    ),
    (
        "minReplicas above maxReplicas",
        {"worker": {"minReplicas": 5, "maxReplicas": 3, "replicas": 4}},
        ["worker.minReplicas (5) is larger than worker.maxReplicas (3)"],
    ),
    (
        "tensor parallelism above GPUs",
        {"judges": {"enabled": True, "gpusPerReplica": 2, "tensorParallelSize": 4, "model": "/models/judge"}},
        ["judges.tensorParallelSize (4) is larger than judges.gpusPerReplica (2)", "Lower judges.tensorParallelSize"],
    ),
    (
        "judge replicas out of bounds",
        {"judges": {"enabled": True, "replicas": 3, "model": "/models/judge"}},
        ["judges.replicas (3) is larger than judges.maxReplicas (1)"],
    ),
    ("judges without a model", {"judges": {"enabled": True}}, ["at '/judges'", "missing property 'model'"]),
    (
        "judge model neither a path nor s3",
        {"judges": {"enabled": True, "model": "hf://org/model"}},
        ["at '/judges/model'", "'hf://org/model' does not match pattern"],
    ),
    (
        "GPUs set through resources",
        {"judges": {"enabled": True, "model": "/m/j", "resources": {"limits": {"nvidia.com/gpu": 1}}}},
        ["judges.resources must not set nvidia.com/gpu: set judges.gpusPerReplica instead"],
    ),
    (
        "job without runDir",
        {"job": {"enabled": True, "inputs": "s3://bucket/sweep.yaml"}},
        ["at '/job'", "missing property 'runDir'"],
    ),
    (
        "job runDir not s3",
        {"job": {"enabled": True, "inputs": "s3://bucket/sweep.yaml", "runDir": "/tmp/runs"}},
        ["at '/job/runDir'", "'/tmp/runs' does not match pattern '^s3://"],
    ),
    (
        "shell characters in job inputs",
        {"job": {"enabled": True, "inputs": "s3://bucket/x;rm -rf /", "runDir": "s3://bucket/runs"}},
        ["at '/job/inputs'", "does not match pattern"],
    ),
    (
        "invalid RuntimeClass name",
        {"sandbox": {"runtimeClassName": "Bad Name!"}},
        ["at '/sandbox/runtimeClassName'", "'Bad Name!' does not match pattern"],
    ),
    (
        "RuntimeClass to create without a name",
        {"sandbox": {"createRuntimeClass": True}},
        ["sandbox.createRuntimeClass is true but sandbox.runtimeClassName is empty"],
    ),
    (
        "unquoted rayStartParams number",
        {"head": {"rayStartParams": {"num-cpus": 0}}},
        ["at '/head/rayStartParams/num-cpus'", "got number, want string"],
    ),
    (
        "container without limits",
        {"worker": {"resources": {"limits": None}}},
        ["at '/worker/resources'", "missing property 'limits'"],
    ),
    (
        "credentials in values",
        {"objectStore": {"accessKeyId": "AKIA0000"}},
        ["at '/objectStore'", "additional properties 'accessKeyId' not allowed"],
    ),
    (
        "RBAC for the namespace's default ServiceAccount",
        {"serviceAccount": {"create": False}},
        ["set serviceAccount.worker.name to an existing ServiceAccount or serviceAccount.create=true"],
    ),
    (
        "the one shared ServiceAccount of old",
        {"serviceAccount": {"name": "evalgrid"}},
        ["at '/serviceAccount'", "additional properties 'name' not allowed"],
    ),
    (
        "token authentication on a Ray without it",
        {"rayVersion": "2.51.1"},
        ["ray.auth.enabled needs Ray >= 2.52.0", "rayVersion is 2.51.1", "set ray.auth.enabled=false"],
    ),
    (
        "token Secret that is not a name",
        {"ray": {"auth": {"enabled": True, "tokenSecret": "Ray Token"}}},
        ["at '/ray/auth/tokenSecret'", "does not match pattern"],
    ),
    (
        "sandbox namespace that is not a namespace name",
        {"sandbox": {"namespace": "Evals_Sandbox"}},
        ["at '/sandbox/namespace'", "'Evals_Sandbox' does not match pattern"],
    ),
    (
        "API server address without a prefix length",
        {"networkPolicy": {"apiServer": {"cidrs": ["10.0.0.1"]}}},
        ["at '/networkPolicy/apiServer/cidrs/0'", "'10.0.0.1' does not match pattern"],
    ),
    (
        "no API server address at all",
        {"networkPolicy": {"apiServer": {"cidrs": []}}},
        ["at '/networkPolicy/apiServer/cidrs'", "minItems"],
    ),
    (
        "object-store egress to every port",
        {"networkPolicy": {"objectStoreEgress": [{"to": [{"ipBlock": {"cidr": "10.1.0.0/16"}}]}]}},
        ["at '/networkPolicy/objectStoreEgress/0'", "missing property 'ports'"],
    ),
    (
        "model egress to everyone",
        {"networkPolicy": {"modelEgress": [{"ports": [{"protocol": "TCP", "port": 443}]}]}},
        ["at '/networkPolicy/modelEgress/0'", "missing property 'to'"],
    ),
    (
        "client peer mixing an ipBlock with a podSelector",
        {"networkPolicy": {"ray": {"clientPeers": [{"ipBlock": {"cidr": "10.2.0.0/16"},
                                                    "podSelector": {}}]}}},
        ["at '/networkPolicy/ray/clientPeers/0'"],
    ),
    (
        "client port out of range",
        {"networkPolicy": {"ray": {"clientPorts": [70000]}}},
        ["at '/networkPolicy/ray/clientPorts/0'", "maximum: got 70,000, want 65,535"],
    ),
    (
        "DNS selector that selects the whole namespace",
        {"networkPolicy": {"dns": {"podLabels": None}}},
        ["at '/networkPolicy/dns'", "missing property 'podLabels'"],
    ),
    (
        "privileged gate port",
        {"sandbox": {"gatePort": 80}},
        ["at '/sandbox/gatePort'", "minimum: got 80"],
    ),
    (
        "bad upscaling mode",
        {"autoscaling": {"upscalingMode": "Fast"}},
        ["at '/autoscaling/upscalingMode'", "value must be one of 'Default', 'Aggressive', 'Conservative'"],
    ),
]


@pytest.mark.parametrize(("values", "fragments"), [(v, f) for _, v, f in BAD_VALUES], ids=[i for i, _, _ in BAD_VALUES])
def test_bad_values_are_refused(chart: helm_python.Chart, values: dict[str, Any], fragments: list[str]) -> None:
    with pytest.raises((helm_python.HelmValuesError, helm_python.HelmRenderError)) as refused:
        chart.render(values, name=RELEASE, namespace=NAMESPACE)
    for fragment in fragments:
        assert fragment in str(refused.value)


def test_release_name_must_start_with_a_letter(chart: helm_python.Chart) -> None:
    with pytest.raises(helm_python.HelmRenderError, match="must start with a letter"):
        render(chart, release="7days")
    cluster = only(render(chart, {"fullnameOverride": "evals"}, release="7days"), "RayCluster")
    assert cluster["metadata"]["name"] == "evals"


def test_long_release_names_fit_kuberay_limits(chart: helm_python.Chart) -> None:
    manifests = render(chart, gpu_values(), release="a" * 53)
    assert len(only(manifests, "RayCluster")["metadata"]["name"]) <= 53
    assert len(only(manifests, "RayJob")["metadata"]["name"]) <= 47


# --- the real consumers of the rendered objects ---------------------------------------------------
# Last in the file: they import Ray and evalgrid's cluster package, after which the suite's garbage
# collection at each teardown (tests/conftest.py) takes longer for every following test.


def test_ray_autoscaler_reads_the_rendered_cluster(chart: helm_python.Chart) -> None:
    """Ray's own KubeRay autoscaler config parser (the real consumer) accepts the groups as intended."""
    from ray.autoscaler._private.kuberay.autoscaling_config import _derive_autoscaling_config_from_ray_cr

    cluster = only(render(chart, gpu_values()), "RayCluster")
    cluster["metadata"]["namespace"] = NAMESPACE  # set by the API server on a real cluster
    config = _derive_autoscaling_config_from_ray_cr(cluster)
    nodes = config["available_node_types"]
    assert nodes["judge"]["resources"]["GPU"] == 2
    assert nodes["judge"]["resources"]["evalgrid-judge"] == 1
    assert nodes["judge"]["resources"]["CPU"] == 0
    assert (nodes["judge"]["min_workers"], nodes["judge"]["max_workers"]) == (0, 2)
    assert (nodes["browser"]["min_workers"], nodes["browser"]["max_workers"]) == (2, 20)
    assert nodes["browser"]["resources"]["CPU"] == 2  # from the worker's CPU limit
    assert nodes["headgroup"]["resources"]["CPU"] == 0
    assert config["idle_timeout_minutes"] == 2.0
    assert config["upscaling_speed"] == 1  # Conservative


@pytest.mark.parametrize("values", [None, "gpu"], ids=["defaults", "gpu-judges"])
def test_sandbox_config_is_accepted_by_the_kubernetes_backend(chart: helm_python.Chart, values: str | None) -> None:
    """The worker-side reader of EVALGRID_K8S_SANDBOX forbids unknown keys: the two must agree."""
    backend = pytest.importorskip("cluster.sandbox.k8s_backend",
                                  reason="the Kubernetes sandbox backend is not in this tree")
    worker = groups(only(render(chart, gpu_values() if values else None), "RayCluster"))["browser"]
    raw = env(worker["template"])["EVALGRID_K8S_SANDBOX"]
    config = backend.PodSandboxConfig.model_validate_json(raw)
    # Every rendered setting is taken as given (nothing silently defaulted instead).
    assert config.model_dump(mode="json", by_alias=True, exclude={"start_timeout_s"}) == json.loads(raw)
