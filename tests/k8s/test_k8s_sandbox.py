"""The Kubernetes sandbox backend against the API's real shapes, its pods run as real containers.

No Kubernetes cluster runs on these machines. The boundary is :mod:`tests.k8s.fake_apiserver`: the
official client speaks real HTTP to it, every pod it is sent is validated against Kubernetes'
own schema (strict), and each pod runs as a container of the real sandbox image, reached by the
driver on the pod's IP through the gate, as in a cluster. What this cannot show: the kubelet's
and a CNI's behaviour (NetworkPolicy enforcement, RuntimeClass handlers, image pulls).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from playwright.async_api import async_playwright

from cluster.container_sandbox import SandboxLimits
from cluster.gate import open_gate
from cluster.k8s_sandbox import (
    KubernetesSandbox,
    PodOwner,
    PodSandboxConfig,
    collect_garbage,
    k8s_quantity,
    kube_api,
    pod_manifest,
)
from cluster.ownership import owner_id
from cluster.worker import RunWorker, WorkerSettings
from evaluator.collect import collect_evidence
from evaluator.errors import ConfigError, SandboxError
from evaluator.evidence import verify_bundle
from evaluator.models import AgentConfig, Candidate, JudgeConfig, OutcomeStatus
from evaluator.run import make_run_spec
from tests.k8s.fake_apiserver import K8S_VERSION, FakeApiServer, fake_cluster
from tests.support import APPS, ROOT, app_artifact, app_query, require_docker

NAMESPACE = "evals"
OWNER = PodOwner(namespace=NAMESPACE, pod_name="raycluster-evalgrid-worker-x7k2p",
                 pod_uid="7c1d5a0e-3b1f-4e55-9d7e-2f6a8b9c0d11")
CONFIG = PodSandboxConfig(labels={"app.kubernetes.io/instance": "lab"}, runtime_class_name="gvisor")


def _manifest(**overrides: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"name": "evalgrid-sbx-0123456789", "image": "registry.lab/evalgrid/sandbox:0.1.0",
                            "token": "t" * 64, "limits": SandboxLimits(), "config": CONFIG, "owner": OWNER,
                            "owner_process": "host:4026531836:4242:123456"}
    return pod_manifest(**{**args, **overrides})


def test_the_pod_is_valid_for_kubernetes_and_hardened() -> None:
    pod = _manifest()
    kubernetes_validate.validate(pod, K8S_VERSION, strict=True)
    spec = pod["spec"]
    container = spec["containers"][0]
    assert spec["automountServiceAccountToken"] is False and spec["enableServiceLinks"] is False
    assert spec["securityContext"]["runAsNonRoot"] is True and spec["securityContext"]["runAsUser"] == 10001
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert spec["runtimeClassName"] == "gvisor"
    assert "hostNetwork" not in spec and "hostPID" not in spec
    security = container["securityContext"]
    assert security == {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "privileged": False,
                        "capabilities": {"drop": ["ALL"]}}
    assert container["resources"]["limits"] == {"cpu": "1.0", "memory": "1536Mi"}
    assert [p["containerPort"] for p in container["ports"]] == [9230]
    assert {v["name"]: v["emptyDir"]["sizeLimit"] for v in spec["volumes"]} == {"tmp": "512Mi", "app": "128Mi",
                                                                                 "shm": "64Mi"}
    meta = pod["metadata"]
    assert meta["labels"]["evalgrid.io/role"] == "sandbox" and meta["labels"]["app.kubernetes.io/instance"] == "lab"
    assert meta["labels"]["evalgrid.io/owner-uid"] == OWNER.pod_uid
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": OWNER.pod_name,
                                        "uid": OWNER.pod_uid, "blockOwnerDeletion": False}]


def test_a_driver_outside_the_cluster_makes_pods_without_an_owner_reference() -> None:
    pod = _manifest(owner=PodOwner(namespace=NAMESPACE), config=PodSandboxConfig())
    kubernetes_validate.validate(pod, K8S_VERSION, strict=True)
    assert "ownerReferences" not in pod["metadata"] and "runtimeClassName" not in pod["spec"]
    assert "evalgrid.io/owner-uid" not in pod["metadata"]["labels"]


def test_sizes_and_settings_from_the_chart_are_checked() -> None:
    assert k8s_quantity("2g") == "2Gi" and k8s_quantity("512k") == "512Ki"
    with pytest.raises(ConfigError, match="like 1536m"):
        k8s_quantity("1.5G")
    os.environ["EVALGRID_K8S_SANDBOX"] = json.dumps({"image": "x", "gatePort": 80})
    try:
        with pytest.raises(ConfigError, match="EVALGRID_K8S_SANDBOX"):
            PodSandboxConfig.from_env()
        os.environ["EVALGRID_K8S_SANDBOX"] = json.dumps({"image": "r/s:1", "runtimeClassName": "gvisor",
                                                         "resources": {"cpu": "500m", "memory": "1Gi"}})
        config = PodSandboxConfig.from_env()
        assert (config.image, config.runtime_class_name, config.resources.cpu) == ("r/s:1", "gvisor", "500m")
    finally:
        del os.environ["EVALGRID_K8S_SANDBOX"]


# ----------------------------------------------------------------- against the fake API server


@pytest.fixture
def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApiServer]:
    require_docker()
    with fake_cluster() as server:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(server.kubeconfig(NAMESPACE)))
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        yield server


def _containers() -> list[str]:
    out = subprocess.run(["docker", "ps", "--all", "--filter", "label=evalgrid.fake-kube=1", "--format",
                          "{{.Names}}"], capture_output=True, text=True, check=True).stdout
    return out.split()


@pytest.mark.docker
@pytest.mark.browser
def test_a_sandbox_pod_collects_evidence_with_sound_through_its_gate(cluster: FakeApiServer, tmp_path: Path) -> None:
    owner = PodOwner(namespace=NAMESPACE, pod_name=OWNER.pod_name, pod_uid=str(uuid.uuid4()))

    async def scenario() -> tuple[str, dict[str, Any], list[str]]:
        config = CONFIG.model_copy(update={"runtime_class_name": None})
        sandbox = KubernetesSandbox("evalgrid/sandbox:dev", config=config, owner=owner)
        await sandbox.start()
        try:
            running = _containers()
            async with async_playwright() as playwright:
                browser = await sandbox.browser(playwright)
                await collect_evidence(browser=browser, artifact=app_artifact("tone-on-click.html"),
                                       query=app_query("tone-on-click.html"), agent=AgentConfig(max_steps=3),
                                       bundle_dir=tmp_path / "bundle", evidence_key="evidence-k8s", host=sandbox)
            return sandbox.name, json.loads((tmp_path / "bundle" / "interaction" / "result.json").read_text()), running
        finally:
            await sandbox.close()

    name, result, running = asyncio.run(scenario())
    assert running == [f"k8s-{NAMESPACE}-{name}"]
    manifest = verify_bundle(tmp_path / "bundle")
    assert manifest.tools.sandbox.startswith("kubernetes evalgrid/sandbox:dev sha256:")
    assert result["audio"]["track"] is True, result["audio"]  # the page's sound came through the gate
    assert result["steps"] >= 1
    created = [body for method, path, body in cluster.requests if method == "POST"]
    assert len(created) == 1 and not cluster.rejected
    assert ("DELETE", f"/api/v1/namespaces/{NAMESPACE}/pods/{name}", None) in cluster.requests
    assert not cluster.pods and not _containers()  # deleted through the API, container gone


@pytest.mark.docker
def test_the_gate_refuses_a_wrong_token_and_garbage(cluster: FakeApiServer) -> None:
    async def scenario() -> tuple[bytes, bytes, dict[str, Any]]:
        sandbox = KubernetesSandbox("evalgrid/sandbox:dev", config=PodSandboxConfig(), owner=OWNER)
        await sandbox.start()
        try:
            address, port = sandbox._address, sandbox.config.gate_port
            wrong = await open_gate(address, port, "0" * 64, "control")
            wrong.writer.write(b'{"op": "ping"}\n')
            refused = await asyncio.wait_for(wrong.reader.read(), 10)
            await wrong.close()
            reader, writer = await asyncio.open_connection(address, port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # not a handshake at all
            garbage = await asyncio.wait_for(reader.read(), 10)
            writer.close()
            right = await open_gate(address, port, sandbox._token, "control")
            right.writer.write(b'{"op": "ping"}\n')
            reply = json.loads(await asyncio.wait_for(right.reader.readline(), 10))
            await right.close()
            return refused, garbage, reply
        finally:
            await sandbox.close()

    refused, garbage, reply = asyncio.run(scenario())
    assert refused == b"" and garbage == b""  # closed without a word
    assert reply == {"ok": True}


@pytest.mark.docker
def test_an_image_that_cannot_be_pulled_is_a_clear_error_and_leaves_nothing(cluster: FakeApiServer) -> None:
    async def scenario() -> None:
        sandbox = KubernetesSandbox("evalgrid/no-such-image:1", config=PodSandboxConfig(), owner=OWNER)
        try:
            await sandbox.start()
        finally:
            await sandbox.close()

    with pytest.raises(SandboxError, match="ErrImagePull"):
        asyncio.run(scenario())
    assert not cluster.pods


@pytest.mark.docker
def test_gc_deletes_the_pods_of_a_worker_process_killed_with_sigkill(cluster: FakeApiServer, tmp_path: Path) -> None:
    script = tmp_path / "worker.py"
    script.write_text(textwrap.dedent(f"""
        import asyncio, sys
        sys.path.insert(0, {str(ROOT)!r})
        from cluster.k8s_sandbox import KubernetesSandbox, PodOwner, PodSandboxConfig
        async def main():
            owner = PodOwner(namespace={NAMESPACE!r}, pod_name={OWNER.pod_name!r}, pod_uid={OWNER.pod_uid!r})
            sandbox = KubernetesSandbox("evalgrid/sandbox:dev", config=PodSandboxConfig(), owner=owner)
            await sandbox.start()
            print(sandbox.name, flush=True)
            await asyncio.sleep(600)
        asyncio.run(main())
    """))
    worker = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=os.environ)
    assert worker.stdout is not None
    name = worker.stdout.readline().strip()
    assert name.startswith("evalgrid-sbx-")
    alive = _manifest(name="evalgrid-sbx-liveowner", image="evalgrid/sandbox:dev", owner_process=owner_id())
    kube_api().create_namespaced_pod(NAMESPACE, alive)  # a pod of a live process (this one) of the same worker pod
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait()
    assert (NAMESPACE, name) in cluster.pods  # the orphan is still there ...
    assert asyncio.run(collect_garbage(owner=PodOwner(namespace=NAMESPACE, pod_uid="another-pod"))) == []
    assert asyncio.run(collect_garbage(owner=OWNER)) == [name]  # ... until gc deletes it, and only it
    assert set(cluster.pods) == {(NAMESPACE, "evalgrid-sbx-liveowner")}
    assert asyncio.run(collect_garbage(owner=OWNER, everything=True)) == ["evalgrid-sbx-liveowner"]
    assert not cluster.pods and not _containers()


@pytest.mark.docker
@pytest.mark.browser
def test_a_worker_on_the_kubernetes_backend_judges_a_run(cluster: FakeApiServer, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALGRID_K8S_NAMESPACE", NAMESPACE)
    monkeypatch.setenv("EVALGRID_K8S_SANDBOX", CONFIG.model_copy(update={"runtime_class_name": None})
                       .model_dump_json(by_alias=True))
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / "dead-button.html").write_text((APPS / "dead-button.html").read_text(encoding="utf-8"))
    spec = make_run_spec(candidate=Candidate(id="fixture", answers=str(answers)), query=app_query("dead-button.html"),
                         agent=AgentConfig(max_steps=3), judge=JudgeConfig(), judge_version="test", answers_dir=answers)

    async def scenario() -> Any:
        worker = RunWorker(WorkerSettings(run_dir=str(tmp_path / "run"), backend="kubernetes", run_timeout_s=90), "w0")
        await worker.start()
        try:
            return await worker.execute(spec)
        finally:
            await worker.close()

    outcome = asyncio.run(scenario())
    assert outcome.status is OutcomeStatus.JUDGED, outcome.reason
    bundle = verify_bundle(tmp_path / "run" / "evidence" / str(outcome.evidence_key))
    assert bundle.tools.sandbox.startswith("kubernetes ")
    assert not cluster.pods
