"""Submitting a sweep to Kubernetes: packed inputs in a real S3-compatible server, a RayJob checked
against KubeRay's schema by the fake API server, and the job's own command run here end to end.

What runs here in place of a cluster (see ``tests/k8s/fake_apiserver.py``): the API server is the
fake; the RayCluster it serves is the one the Helm chart renders (real Helm); the RayJob is not
executed by KubeRay but its entrypoint is run as a command on this machine, with the local scheduler
and sandbox instead of Ray and pods. No KubeRay or Ray head runs here, so the token plumbing is
checked as the manifest that KubeRay would act on; Ray refusing a client without the token is shown
for real in ``tests/cluster/test_ray_auth.py``.
"""

from __future__ import annotations

import asyncio
import gzip
import io
import json
import shlex
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import helm_python
import pytest
import yaml

from cluster.cli import main
from cluster.k8s.submit import job_name, ray_auth_env, rayjob_manifest, read_cluster, submitter_template
from cluster.scheduling.worker import RunWorker, WorkerSettings
from cluster.store.object_store import StoreSettings
from cluster.store.remote import RunStore
from cluster.sweep.inputs import InputsRef, fetch_inputs, pack_inputs, unpack_inputs
from cluster.sweep.spec import load_sweep
from evaluator.errors import ConfigError
from evaluator.models import Outcome, OutcomeStatus
from tests.cluster.test_local_sweep import _write_sweep
from tests.helm.test_chart import CHART_DIR, manifest_errors, named, only, render, selects
from tests.k8s.fake_apiserver import FakeApiServer, fake_cluster
from tests.s3.faulty_s3 import FaultyS3, make_store

NAMESPACE = "evals"


def _reject_invalid(manifest: dict[str, Any]) -> None:
    errors = manifest_errors(manifest)
    if errors:
        raise ValueError("; ".join(errors))


@pytest.fixture
def api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApiServer]:
    with fake_cluster(custom_validator=_reject_invalid) as server:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(server.kubeconfig(NAMESPACE)))
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        yield server


@pytest.fixture(scope="module")
def chart() -> Iterator[helm_python.Chart]:
    with helm_python.Chart.load(CHART_DIR) as loaded:
        yield loaded


def _chart_cluster(chart: helm_python.Chart, values: dict[str, Any] | None = None) -> dict[str, Any]:
    """The RayCluster the chart renders for release "lab" (named lab-evalgrid), as the API would serve it."""
    cluster = only(render(chart, values, release="lab"), "RayCluster")
    cluster["metadata"]["namespace"] = NAMESPACE
    return cluster


def _dir(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


def _ref(digest: str = "a" * 64) -> InputsRef:
    return InputsRef(store=StoreSettings(url="s3://lab/sweeps/may/inputs"), name=f"{digest}.tar.gz",
                     directory=f"/cache/{digest}")


def test_the_rayjob_is_valid_for_kuberay_and_runs_the_inputs_on_kubernetes_sandboxes() -> None:
    manifest = rayjob_manifest(name="evalgrid-demo-0123456789", namespace=NAMESPACE, cluster="lab-evalgrid",
                               sweep_name="My_Sweep.v2", inputs=_ref(), run_dir="s3://lab/sweeps/may", workers=8)
    assert manifest_errors(manifest) == []
    argv = shlex.split(manifest["spec"]["entrypoint"])
    assert argv == ["evalgrid", "run", "--inputs", f"s3://lab/sweeps/may/inputs/{'a' * 64}.tar.gz", "--run-dir",
                    "s3://lab/sweeps/may", "--sandbox", "kubernetes", "--ray-address", "auto", "--no-progress",
                    "--workers", "8"]
    assert manifest["spec"]["clusterSelector"] == {"ray.io/cluster": "lab-evalgrid"}
    broken = {**manifest, "spec": {**manifest["spec"], "entrypointNumCPUs": 0}}
    assert manifest_errors(broken)  # the schema can fail: a misspelled field is caught


TOKEN_REF = {"secretKeyRef": {"name": "lab-evalgrid-ray-token", "key": "auth_token"}}


def _env(template: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in template["spec"]["containers"][0].get("env", [])}


def test_the_submitter_gets_the_clusters_token_by_reference_and_the_labels_its_policy_admits(
        chart: helm_python.Chart) -> None:
    cluster = _chart_cluster(chart)
    submitter = submitter_template(cluster)
    manifest = rayjob_manifest(name="evalgrid-demo-0123456789", namespace=NAMESPACE, cluster="lab-evalgrid",
                               sweep_name="demo", inputs=_ref(), run_dir="s3://lab/sweeps/may", submitter=submitter)
    assert manifest_errors(manifest) == []
    assert manifest["spec"]["submitterPodTemplate"] == submitter
    # `ray job submit` in this pod must send the token the head wants: the chart's Secret, by reference.
    assert _env(submitter) == {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN_REF}
    head = cluster["spec"]["headGroupSpec"]["template"]
    pod, ray = submitter["spec"], submitter["spec"]["containers"][0]
    assert ray["image"] == head["spec"]["containers"][0]["image"]  # the head's image has `ray`
    assert pod["automountServiceAccountToken"] is False and pod["restartPolicy"] == "Never"
    assert pod["securityContext"] == head["spec"]["securityContext"]
    assert ray["securityContext"] == head["spec"]["containers"][0]["securityContext"]
    # The chart's NetworkPolicies let exactly such a pod reach the head's job API, and nothing else.
    policies = render(chart, release="lab")
    labels = submitter["metadata"]["labels"]
    assert selects(named(policies, "NetworkPolicy", "lab-evalgrid-job-submitter")["spec"]["podSelector"], labels)
    head_ingress = named(policies, "NetworkPolicy", "lab-evalgrid-ray-head")["spec"]["ingress"][0]
    assert selects(head_ingress["from"][0]["podSelector"], labels)
    assert head_ingress["ports"] == [{"protocol": "TCP", "port": 8265}]
    assert not selects(named(policies, "NetworkPolicy", "lab-evalgrid-ray")["spec"]["podSelector"], labels)


def test_the_token_reference_follows_how_the_cluster_gets_its_token(chart: helm_python.Chart) -> None:
    named_secret = _chart_cluster(chart, {"ray": {"auth": {"enabled": True, "tokenSecret": "lab-ray"}}})
    assert ray_auth_env(named_secret)[1]["valueFrom"] == {"secretKeyRef": {"name": "lab-ray", "key": "auth_token"}}
    # No auth: nothing to send, and the submitter carries no Ray auth settings at all.
    without = _chart_cluster(chart, {"ray": {"auth": {"enabled": False}}})
    assert ray_auth_env(without) == [] and "env" not in submitter_template(without)["spec"]["containers"][0]
    # authOptions without a Secret name: KubeRay made the Secret, named after the cluster.
    generated = _chart_cluster(chart)
    del generated["spec"]["authOptions"]["secretName"]
    assert ray_auth_env(generated)[1]["valueFrom"]["secretKeyRef"]["name"] == "lab-evalgrid"
    # No authOptions, the head's own variables (token auth set up by hand): the same reference.
    by_hand = _chart_cluster(chart)
    del by_hand["spec"]["authOptions"]
    assert ray_auth_env(by_hand) == [{"name": "RAY_AUTH_MODE", "value": "token"},
                                     {"name": "RAY_AUTH_TOKEN", "valueFrom": TOKEN_REF}]
    # A token written into the head's spec is not copied into another object: say what to change.
    literal = _chart_cluster(chart)
    del literal["spec"]["authOptions"]
    for variable in literal["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["env"]:
        if variable["name"] == "RAY_AUTH_TOKEN":
            variable.pop("valueFrom")
            variable["value"] = "s3cr3t"
    with pytest.raises(ConfigError, match="does not take the token from a Secret"):
        submitter_template(literal)


def test_the_cluster_is_read_from_the_api(api: FakeApiServer, chart: helm_python.Chart) -> None:
    api.custom[("rayclusters", NAMESPACE, "lab-evalgrid")] = _chart_cluster(chart)
    cluster = asyncio.run(read_cluster("lab-evalgrid", NAMESPACE))
    assert _env(submitter_template(cluster)) == {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN_REF}
    with pytest.raises(ConfigError, match="no RayCluster other in namespace evals"):
        asyncio.run(read_cluster("other", NAMESPACE))


def test_job_names_are_dns_names_that_change_with_inputs_and_run_dir() -> None:
    first = job_name("My_Sweep.v2 — final", _ref("a" * 64), "s3://lab/x")
    assert first.startswith("evalgrid-my-sweep-v2-final-") and len(first) <= 47
    assert all(c.isalnum() or c == "-" for c in first) and first == first.lower()
    assert job_name("My_Sweep.v2 — final", _ref("b" * 64), "s3://lab/x") != first
    assert job_name("My_Sweep.v2 — final", _ref("a" * 64), "s3://lab/y") != first
    assert len(job_name("x" * 200, _ref(), "s3://lab/x")) <= 47


def test_packed_inputs_are_deterministic_and_unpack_to_the_same_sweep(tmp_path: Path) -> None:
    sweep = load_sweep(_write_sweep(_dir(tmp_path / "a")))
    digest, data = pack_inputs(sweep)
    assert pack_inputs(load_sweep(_write_sweep(_dir(tmp_path / "b"))))[0] == digest  # same inputs elsewhere, same bytes
    unpacked = load_sweep(unpack_inputs(data, tmp_path / "cache"))
    assert unpacked.spec.name == sweep.spec.name and unpacked.queries == sweep.queries
    assert [s.run_key for s in unpacked.plan()] == [s.run_key for s in sweep.plan()]  # same runs, same keys
    for candidate in sweep.spec.candidates:
        ours = sorted(p.name for p in unpacked.answers_dir(candidate).iterdir())
        assert ours == sorted(p.name for p in sweep.answers_dir(candidate).iterdir())
    answer = next(sweep.answers_dir(sweep.spec.candidates[0]).iterdir())
    answer.write_text(answer.read_text() + "\n<!-- changed -->")
    assert pack_inputs(load_sweep(sweep.path))[0] != digest  # a changed answer is a different archive


def _archive(entries: dict[str, bytes | None]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, content in entries.items():
            info = tarfile.TarInfo(name)
            if content is None:
                info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
            else:
                info.size = len(content)
            tar.addfile(info, io.BytesIO(content or b""))
    return gzip.compress(raw.getvalue())


@pytest.mark.parametrize("entries", [
    {"sweep.yaml": b"name: x", "../escape.txt": b"x"},
    {"sweep.yaml": b"name: x", "/abs.txt": b"x"},
    {"sweep.yaml": b"name: x", "answers/link": None},
    {"queries.yaml": b"queries: []"},
])
def test_a_crafted_archive_writes_nothing_outside_and_is_a_clear_error(tmp_path: Path,
                                                                      entries: dict[str, bytes | None]) -> None:
    with pytest.raises(ConfigError, match="inputs archive"):
        unpack_inputs(_archive(entries), tmp_path / "cache")
    assert not (tmp_path / "escape.txt").exists()
    assert [p.name for p in (tmp_path / "cache").iterdir()] == []  # no half-unpacked directory is left
    with pytest.raises(ConfigError, match="not a readable tar.gz"):
        unpack_inputs(b"garbage", tmp_path / "cache")


@pytest.mark.browser
def test_submit_then_run_the_jobs_command_then_follow_it(api: FakeApiServer, s3: FaultyS3, bucket: str,
                                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str],
                                                         chart: helm_python.Chart) -> None:
    api.custom[("rayclusters", NAMESPACE, "lab-evalgrid")] = _chart_cluster(chart)
    sweep = _write_sweep(_dir(tmp_path / "lab"))
    run_dir = f"s3://{bucket}/sweeps/may"
    monkeypatch.setenv("EVALGRID_INPUTS_DIR", str(tmp_path / "driver-inputs"))
    submit = ["cluster", "submit", str(sweep), "--run-dir", run_dir, "--s3-endpoint", s3.endpoint,
              "--cluster", "lab-evalgrid"]
    assert main(submit) == 0
    name = capsys.readouterr().out.strip()
    assert (("rayjobs", NAMESPACE, name)) in api.custom and not api.rejected
    job = api.custom[("rayjobs", NAMESPACE, name)]
    assert _env(job["spec"]["submitterPodTemplate"]) == {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN_REF}
    argv = shlex.split(job["spec"]["entrypoint"])
    inputs_url = argv[argv.index("--inputs") + 1]
    assert inputs_url.startswith(f"{run_dir}/inputs/") and argv[argv.index("--run-dir") + 1] == run_dir

    assert main(submit) == 2  # the same sweep to the same run directory is refused, not run twice
    assert "already exists" in capsys.readouterr().err

    # What the head would run, with this machine's scheduler and sandbox standing in for Ray and pods.
    local = argv[1:argv.index("--sandbox")] + ["--sandbox", "local", "--scheduler", "local", "--no-progress",
                                                "--s3-endpoint", s3.endpoint, "--staging-dir", str(tmp_path / "st")]
    assert main(local) == 0
    assert "6 runs executed, 0 skipped" in "".join(capsys.readouterr())
    runs = RunStore(make_store(s3, bucket, prefix="sweeps/may"))
    outcomes = [Outcome.model_validate_json(runs.store.get_bytes(f"outcomes/{key}.json") or b"")
                for key in runs.outcome_keys()]
    assert len(outcomes) == 6 and sum(o.status is OutcomeStatus.JUDGED for o in outcomes) == 2

    api.set_custom_status("rayjobs", NAMESPACE, name, {"jobStatus": "SUCCEEDED", "jobDeploymentStatus": "Complete",
                                                       "message": "Job finished successfully."})
    assert main(["cluster", "status", name, "--follow"]) == 0
    assert "job SUCCEEDED, deployment Complete" in capsys.readouterr().err
    assert main(["cluster", "status"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(j["name"], j["job_status"]) for j in listed] == [(name, "SUCCEEDED")]
    assert main(["cluster", "status", "no-such-job"]) == 2


@pytest.mark.browser
def test_a_worker_on_another_node_fetches_the_inputs_before_its_first_run(s3: FaultyS3, bucket: str,
                                                                         tmp_path: Path) -> None:
    sweep = load_sweep(_write_sweep(_dir(tmp_path / "lab")))
    digest, data = pack_inputs(sweep)
    store = make_store(s3, bucket, prefix="inputs")
    store.put_bytes(f"{digest}.tar.gz", data)
    ref = InputsRef(store=store.settings, name=f"{digest}.tar.gz", directory=str(tmp_path / "node-2" / digest))

    async def start() -> None:
        worker = RunWorker(WorkerSettings(run_dir=str(tmp_path / "run"), backend="local", inputs=ref), "w")
        await worker.start()
        await worker.close()

    asyncio.run(start())
    assert (Path(ref.directory) / "sweep.yaml").is_file() and (Path(ref.directory) / "answers").is_dir()
    store.put_bytes(f"{'0' * 64}.tar.gz", data)  # an archive whose name does not match its content
    with pytest.raises(ConfigError, match="does not match"):
        fetch_inputs(InputsRef(store=store.settings, name=f"{'0' * 64}.tar.gz",
                               directory=str(tmp_path / "node-3" / ("0" * 64))))
