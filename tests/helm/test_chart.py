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
    kinds = sorted(m["kind"] for m in render(chart))
    assert kinds == ["NetworkPolicy", "RayCluster", "Role", "RoleBinding", "ServiceAccount"]


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
        assert template["spec"]["serviceAccountName"] == "grid-evalgrid"
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
    }


# --- GPU judges + autoscaling ---------------------------------------------------------------------


def test_gpu_configuration_renders_everything(chart: helm_python.Chart) -> None:
    kinds = sorted(m["kind"] for m in render(chart, gpu_values()))
    assert kinds == [
        "NetworkPolicy", "RayCluster", "RayJob", "Role", "RoleBinding", "RuntimeClass", "ServiceAccount",
    ]


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


@pytest.mark.parametrize("values", [None, "gpu"], ids=["defaults", "gpu-judges"])
def test_network_policy_isolates_sandboxes(chart: helm_python.Chart, values: str | None) -> None:
    manifests = render(chart, gpu_values() if values else None)
    policy = only(manifests, "NetworkPolicy")["spec"]
    sandboxes = {"evalgrid.io/role": "sandbox", "app.kubernetes.io/instance": RELEASE}
    workers = {"evalgrid.io/role": "worker", "app.kubernetes.io/instance": RELEASE}
    assert policy["podSelector"] == {"matchLabels": sandboxes}
    assert sorted(policy["policyTypes"]) == ["Egress", "Ingress"]
    assert policy.get("egress", []) == []  # no egress rule at all: DNS denied too
    assert policy["ingress"] == [{
        "from": [{"podSelector": {"matchLabels": workers}}],
        "ports": [{"protocol": "TCP", "port": 9230}],
    }]

    # The selectors match what the chart actually labels: sandbox pods (via the workers' config) and
    # the browser workers only (not the head, not the judges).
    cluster = only(manifests, "RayCluster")
    worker = groups(cluster)["browser"]["template"]
    sandbox_labels = json.loads(env(worker)["EVALGRID_K8S_SANDBOX"])["labels"]
    assert policy["podSelector"]["matchLabels"].items() <= sandbox_labels.items()
    allowed = policy["ingress"][0]["from"][0]["podSelector"]["matchLabels"]
    templates = [cluster["spec"]["headGroupSpec"]["template"]] + [g["template"] for g in groups(cluster).values()]
    labels = [t["metadata"]["labels"] for t in templates]
    admitted = [pod["evalgrid.io/role"] for pod in labels if allowed.items() <= pod.items()]
    assert admitted == ["worker"]


def test_network_policy_can_be_disabled(chart: helm_python.Chart) -> None:
    assert of_kind(render(chart, {"networkPolicy": {"enabled": False}}), "NetworkPolicy") == []
    assert "WARNING: networkPolicy.enabled is false" in notes(chart, {"networkPolicy": {"enabled": False}})


def test_rbac_is_least_privilege(chart: helm_python.Chart) -> None:
    manifests = render(chart, gpu_values())
    assert of_kind(manifests, "ClusterRole") == [] and of_kind(manifests, "ClusterRoleBinding") == []
    role = only(manifests, "Role")
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["create", "get", "list", "watch", "delete"]},
    ]

    binding = only(manifests, "RoleBinding")
    account = only(manifests, "ServiceAccount")["metadata"]["name"]
    role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role["metadata"]["name"]}
    assert binding["roleRef"] == role_ref
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}]

    cluster = only(manifests, "RayCluster")
    for template in [cluster["spec"]["headGroupSpec"]["template"]] + [g["template"] for g in groups(cluster).values()]:
        assert template["spec"]["serviceAccountName"] == account


def test_rbac_and_service_account_can_be_external(chart: helm_python.Chart) -> None:
    values = {"serviceAccount": {"create": False, "name": "platform-evalgrid"}, "rbac": {"create": False}}
    manifests = render(chart, values)
    assert not {"ServiceAccount", "Role", "RoleBinding"} & {m["kind"] for m in manifests}
    head = only(manifests, "RayCluster")["spec"]["headGroupSpec"]["template"]
    assert head["spec"]["serviceAccountName"] == "platform-evalgrid"


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

    policy = only(manifests, "NetworkPolicy")
    policy["spec"]["egres"] = []
    assert manifest_errors(policy) != []

    role = only(manifests, "Role")
    role["rules"][0]["verb"] = role["rules"][0].pop("verbs")
    assert manifest_errors(role) != []


# --- bad values are refused with a message that says what to change -------------------------------


BAD_VALUES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("misspelled top-level key", {"workr": {"replicas": 3}}, ["additional properties 'workr' not allowed"]),
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
        ["set serviceAccount.name to an existing ServiceAccount or serviceAccount.create=true"],
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
    backend = pytest.importorskip("cluster.k8s_sandbox", reason="the Kubernetes sandbox backend is not in this tree")
    worker = groups(only(render(chart, gpu_values() if values else None), "RayCluster"))["browser"]
    raw = env(worker["template"])["EVALGRID_K8S_SANDBOX"]
    config = backend.PodSandboxConfig.model_validate_json(raw)
    # Every rendered setting is taken as given (nothing silently defaulted instead).
    assert config.model_dump(mode="json", by_alias=True, exclude={"start_timeout_s"}) == json.loads(raw)
