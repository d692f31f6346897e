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

from cluster.sandbox.channel_gate import open_gate
from cluster.sandbox.container import SandboxLimits
from cluster.sandbox.k8s_backend import (
    KubernetesSandbox,
    PodOwner,
    PodSandboxConfig,
    collect_garbage,
    k8s_quantity,
    kube_api,
    pod_manifest,
)
from cluster.sandbox.ownership import owner_id
from cluster.scheduling.worker import RunWorker, WorkerSettings
from evaluator.errors import ConfigError, SandboxError
from evaluator.evidence.bundle import verify_bundle
from evaluator.evidence.collect import collect_evidence
from evaluator.models import AgentConfig, Candidate, JudgeConfig, OutcomeStatus, Stack
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
    assert {v["name"]: v["emptyDir"]["sizeLimit"] for v in spec["volumes"] if "emptyDir" in v} == {
        "tmp": "512Mi", "app": "128Mi", "shm": "64Mi"}
    # The gate token: a file only the pod's user can read, projected from the pod's annotation; never an env var.
    token = next(v for v in spec["volumes"] if v["name"] == "gate-token")["projected"]
    assert token["defaultMode"] == 0o440 and spec["securityContext"]["fsGroup"] == 10001
    assert token["sources"][0]["downwardAPI"]["items"][0]["fieldRef"]["fieldPath"] == \
        "metadata.annotations['evalgrid.io/gate-token']"
    assert pod["metadata"]["annotations"]["evalgrid.io/gate-token"] == "t" * 64
    assert {e["name"]: e["value"] for e in container["env"]} == {
        "EVALGRID_GATE_PORT": "9230", "EVALGRID_GATE_TOKEN_FILE": "/var/run/evalgrid/token"}
    assert not any("t" * 64 in str(e) for e in container["env"])
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


async def _until_closed(reader: asyncio.StreamReader) -> bytes:
    """What the gate said before it closed the connection. A close with our request still unread in its buffer
    reaches us as a reset, not an end of stream: closed without a word all the same."""
    try:
        return await asyncio.wait_for(reader.read(), 10)
    except ConnectionResetError:
        return b""


@pytest.mark.docker
def test_the_gate_refuses_a_wrong_token_and_garbage(cluster: FakeApiServer) -> None:
    async def scenario() -> tuple[bytes, bytes, dict[str, Any]]:
        sandbox = KubernetesSandbox("evalgrid/sandbox:dev", config=PodSandboxConfig(), owner=OWNER)
        await sandbox.start()
        try:
            address, port = sandbox._address, sandbox.config.gate_port
            wrong = await open_gate(address, port, "0" * 64, "control")
            wrong.writer.write(b'{"op": "ping"}\n')
            refused = await _until_closed(wrong.reader)
            await wrong.close()
            reader, writer = await asyncio.open_connection(address, port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # not a handshake at all
            garbage = await _until_closed(reader)
            writer.close()
            right = await open_gate(address, port, sandbox._token, "control")
            right.writer.write(b'{"op": "ping", "id": 1}\n')  # the first request must be the hello with a nonce
            unhello = await _until_closed(right.reader)
            await right.close()
            right = await open_gate(address, port, sandbox._token, "control")
            right.writer.write(b'{"op": "hello", "id": 1, "nonce": "0123456789abcdef0123"}\n{"op": "ping", "id": 2}\n')
            replies = [json.loads(await asyncio.wait_for(right.reader.readline(), 10)) for _ in range(2)]
            await right.close()
            return refused, garbage + unhello, replies
        finally:
            await sandbox.close()

    refused, garbage, replies = asyncio.run(scenario())
    assert refused == b"" and garbage == b""  # closed without a word
    assert replies == [{"id": 1, "ok": True, "nonce": "0123456789abcdef0123"},
                       {"id": 2, "ok": True, "nonce": "0123456789abcdef0123"}]


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
        from cluster.sandbox.k8s_backend import KubernetesSandbox, PodOwner, PodSandboxConfig
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


@pytest.mark.docker
def test_a_build_runs_in_a_pod_of_its_own_as_the_apps_user_and_the_pod_goes_with_it(
        cluster: FakeApiServer, tmp_path: Path) -> None:
    """The built app is loaded into the machinery's pod and served there; the build pod exists during the build
    and is deleted after it. (What the answer's build code can see from its pod is the tamper suite's.)"""
    (tmp_path / "App.jsx").write_text("export default function App() { return <h1>built in its own pod</h1>; }\n")

    async def scenario() -> tuple[bool, str, str, list[str], list[str]]:
        sandbox = KubernetesSandbox("evalgrid/sandbox:dev", config=PodSandboxConfig(), owner=OWNER)
        await sandbox.start()
        pods_during: list[str] = []
        try:
            async with sandbox.serve(tmp_path, []) as origin:
                build = asyncio.ensure_future(sandbox.build(Stack.COMPONENT, "App.jsx"))
                while not build.done():
                    pods_during = sorted({name for _, name in cluster.pods} | set(pods_during))
                    await asyncio.sleep(0.2)
                report, log = build.result()
                async with async_playwright() as playwright:
                    browser = await sandbox.browser(playwright)
                    page = await (await browser.new_context()).new_page()
                    await page.goto(f"{origin}/index.html")
                    heading = await page.inner_text("h1", timeout=10000)
            return report.ok, log, heading, pods_during, sorted(name for _, name in cluster.pods)
        finally:
            await sandbox.close()

    ok, log, heading, during, after = asyncio.run(scenario())
    assert ok, log
    assert heading == "built in its own pod"
    assert any(name.startswith("evalgrid-build-") for name in during)
    assert not any(name.startswith("evalgrid-build-") for name in after)
    assert "evalgrid: built in" in log


@pytest.mark.docker
def test_the_egress_probe_is_recorded_and_an_open_egress_is_refused(cluster: FakeApiServer) -> None:
    """A pod that reaches a probe target is refused (its NetworkPolicy is not enforced); the evidence label
    says what the probe found. The fake cluster's network stands in for a CNI: a canary container on it is
    reachable, the internet is not."""
    canary = f"evalgrid-egress-canary-{uuid.uuid4().hex[:6]}"
    subprocess.run(["docker", "run", "--detach", "--name", canary, "--network", "evalgrid-k8s-test",
                    "--entrypoint", "node", "evalgrid/sandbox:dev", "-e",
                    "require('net').createServer((s) => s.end()).listen(7777)"], check=True, capture_output=True)
    try:
        address = json.loads(subprocess.run(["docker", "inspect", canary], capture_output=True, text=True,
                                            check=True).stdout)[0]["NetworkSettings"]["Networks"][
            "evalgrid-k8s-test"]["IPAddress"]

        async def scenario(config: PodSandboxConfig) -> str:
            sandbox = KubernetesSandbox("evalgrid/sandbox:dev", config=config, owner=OWNER)
            try:
                await sandbox.start()
                return sandbox.label
            finally:
                await sandbox.close()

        denied = asyncio.run(scenario(PodSandboxConfig()))
        assert "egress probe: none of 2 targets reachable" in denied
        with pytest.raises(SandboxError, match=f"can reach {address}:7777"):
            asyncio.run(scenario(PodSandboxConfig(egress_probe_targets=["1.1.1.1:443", f"{address}:7777"])))
        permissive = PodSandboxConfig(egress_probe_targets=[f"{address}:7777"], require_egress_denied=False)
        assert f"EGRESS OPEN: the probe reached {address}:7777" in asyncio.run(scenario(permissive))
    finally:
        subprocess.run(["docker", "rm", "--force", canary], capture_output=True, check=False)


@pytest.mark.docker
def test_the_gate_token_is_a_file_for_the_pods_user_and_in_no_process_environment(cluster: FakeApiServer) -> None:
    async def scenario() -> tuple[str, str, str]:
        sandbox = KubernetesSandbox("evalgrid/sandbox:dev", config=PodSandboxConfig(), owner=OWNER)
        await sandbox.start()
        try:
            container = f"k8s-{NAMESPACE}-{sandbox.name}"
            environ = subprocess.run(["docker", "exec", container, "sh", "-c",
                                      "cat /proc/[0-9]*/environ | tr '\\0' '\\n'"],
                                     capture_output=True, text=True, check=True).stdout
            mode = subprocess.run(["docker", "exec", container, "stat", "-c", "%a %g", "/var/run/evalgrid/token"],
                                  capture_output=True, text=True, check=True).stdout.strip()
            return sandbox._token, environ, mode
        finally:
            await sandbox.close()

    token, environ, mode = asyncio.run(scenario())
    assert len(token) == 64 and token not in environ
    assert "EVALGRID_GATE_TOKEN_FILE=/var/run/evalgrid/token" in environ
    assert mode == "440 10001"
