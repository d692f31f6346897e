"""The Kubernetes sandbox backend in a sandbox namespace of its own (the chart's ``sandbox.namespace``).

No cluster and no Docker here: what is checked is where the backend sends each request and what the
pod it asks for says, with a recording stand-in for the core API (the real client and pods run in
``test_k8s_sandbox.py``, against the fake API server). The pod manifests are validated against
Kubernetes' own schema.
"""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

import kubernetes_validate
import pytest

from cluster.sandbox.container import SandboxLimits
from cluster.sandbox.k8s_backend import CONFIG_ENV, PodOwner, PodSandboxConfig, collect_garbage, pod_manifest
from tests.k8s.fake_apiserver import K8S_VERSION

OWNER = PodOwner(namespace="evals", pod_name="lab-evalgrid-browser-worker-x7k2p", pod_uid="7c1d5a0e-3b1f")
IN_OWN_NAMESPACE = PodSandboxConfig(namespace="evals-sandbox", service_account_name="lab-evalgrid-sandbox",
                                    labels={"app.kubernetes.io/instance": "lab"})


def _pod(config: PodSandboxConfig) -> dict[str, Any]:
    return pod_manifest(name="evalgrid-sbx-0123456789", image="registry.lab/evalgrid/sandbox:0.1.0", token="t" * 64,
                        limits=SandboxLimits(), config=config, owner=OWNER, owner_process="host:1:4242:1")


def test_a_pod_in_the_sandbox_namespace_runs_as_its_account_and_has_no_cross_namespace_owner() -> None:
    pod = _pod(IN_OWN_NAMESPACE)
    kubernetes_validate.validate(pod, K8S_VERSION, strict=True)
    assert pod["metadata"]["namespace"] == "evals-sandbox"
    assert pod["spec"]["serviceAccountName"] == "lab-evalgrid-sandbox"
    assert pod["spec"]["automountServiceAccountToken"] is False
    # An owner in another namespace is refused by Kubernetes (treated as absent: the pod would be
    # collected at once), so the owner is recorded by label for collect_garbage instead.
    assert "ownerReferences" not in pod["metadata"]
    assert pod["metadata"]["labels"]["evalgrid.io/owner-uid"] == OWNER.pod_uid
    assert pod["metadata"]["labels"]["evalgrid.io/role"] == "sandbox"


def test_without_a_sandbox_namespace_the_pod_stays_beside_its_worker_and_is_owned_by_it() -> None:
    pod = _pod(PodSandboxConfig())
    assert pod["metadata"]["namespace"] == "evals"
    assert [ref["uid"] for ref in pod["metadata"]["ownerReferences"]] == [OWNER.pod_uid]
    assert "serviceAccountName" not in pod["spec"]


def test_the_chart_keys_for_namespace_and_account_are_read_and_unknown_ones_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CONFIG_ENV, json.dumps({"namespace": "evals-sandbox", "serviceAccountName": "sbx"}))
    config = PodSandboxConfig.from_env()
    assert (config.namespace, config.service_account_name) == ("evals-sandbox", "sbx")
    assert config.namespace_for(OWNER) == "evals-sandbox"
    assert PodSandboxConfig().namespace_for(OWNER) == "evals"


class _RecordingApi:
    """The two core-API calls collect_garbage makes, recording the namespace of each."""

    def __init__(self, pods: list[tuple[str, str]]) -> None:
        self.pods = pods  # (name, owner annotation)
        self.calls: list[tuple[str, str]] = []

    def list_namespaced_pod(self, namespace: str, label_selector: str) -> Any:
        self.calls.append(("list", namespace))
        assert label_selector == f"evalgrid.io/role=sandbox,evalgrid.io/owner-uid={OWNER.pod_uid}"
        items = [SimpleNamespace(metadata=SimpleNamespace(name=name, annotations={"evalgrid.io/owner": owner}))
                 for name, owner in self.pods]
        return SimpleNamespace(items=items)

    def delete_namespaced_pod(self, name: str, namespace: str, grace_period_seconds: int) -> None:
        self.calls.append((f"delete {name}", namespace))


def test_garbage_is_collected_in_the_sandbox_namespace() -> None:
    """With no owner reference across namespaces, this is what deletes a dead worker's sandbox."""
    api = _RecordingApi([("evalgrid-sbx-dead", "host:1:999999999:1")])
    removed = asyncio.run(collect_garbage(api=api, owner=OWNER, config=IN_OWN_NAMESPACE))  # type: ignore[arg-type]
    assert removed == ["evalgrid-sbx-dead"]
    assert api.calls == [("list", "evals-sandbox"), ("delete evalgrid-sbx-dead", "evals-sandbox")]

    api = _RecordingApi([])
    asyncio.run(collect_garbage(api=api, owner=OWNER, config=PodSandboxConfig()))  # type: ignore[arg-type]
    assert api.calls == [("list", "evals")]
