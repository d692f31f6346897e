"""The Docker sandbox for real: a container from `make images`, Chromium inside, driven over the exec bridge."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import async_playwright

from cluster.sandbox.docker_backend import DockerSandbox, collect_garbage, docker
from cluster.scheduling.worker import RunWorker, WorkerSettings
from evaluator.evidence.bundle import verify_bundle
from evaluator.evidence.collect import collect_evidence
from evaluator.models import AgentConfig, Candidate, JudgeConfig, Outcome, OutcomeStatus, Stack
from evaluator.run import make_run_spec
from tests.support import APPS, ROOT, app_artifact, app_query, html_artifact, require_docker

pytestmark = [pytest.mark.browser, pytest.mark.docker]


@pytest.fixture(autouse=True)
def _docker() -> None:
    require_docker()


def _inspect(name: str) -> dict[str, Any]:
    out = subprocess.run(["docker", "inspect", name], capture_output=True, check=True, text=True).stdout
    doc: dict[str, Any] = json.loads(out)[0]
    return doc


def test_container_is_hardened_and_has_no_network() -> None:
    async def scenario() -> tuple[dict[str, Any], str]:
        sandbox = DockerSandbox()
        await sandbox.start()
        try:
            probe = ("id -u; (touch /probe && echo root-writable) 2>/dev/null || echo root-readonly; "
                     "ls /sys/class/net; grep -c . /proc/net/route; cat /proc/1/comm; "
                     "grep CapEff /proc/self/status")
            code, out, err = await docker("exec", sandbox.name, "sh", "-c", probe)
            assert code == 0, err
            return _inspect(sandbox.name), out
        finally:
            await sandbox.close()

    info, out = asyncio.run(scenario())
    host = info["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert host["CapDrop"] == ["ALL"] and not host["CapAdd"]
    assert host["ReadonlyRootfs"] is True
    assert "no-new-privileges" in host["SecurityOpt"]
    assert host["Memory"] == 1536 * 1024 * 1024 and host["PidsLimit"] == 256 and host["NanoCpus"] == 10**9
    assert not host["Privileged"]
    lines = out.split()
    assert lines[0] == "10001"  # not root
    assert lines[1] == "root-readonly"
    assert lines[2:4] == ["lo", "1"]  # loopback only; the route table has just its header line
    assert lines[4] == "tini"
    assert lines[-1] == "0000000000000000"  # no effective capabilities


def test_evidence_collected_inside_the_sandbox_names_it_and_verifies(tmp_path: Path) -> None:
    async def scenario() -> None:
        sandbox = DockerSandbox()
        await sandbox.start()
        try:
            async with async_playwright() as playwright:
                browser = await sandbox.browser(playwright)
                await collect_evidence(browser=browser, artifact=app_artifact("dead-button.html"),
                                       query=app_query("dead-button.html"), agent=AgentConfig(max_steps=3),
                                       bundle_dir=tmp_path / "bundle", evidence_key="evidence-docker", host=sandbox)
        finally:
            await sandbox.close()

    asyncio.run(scenario())
    manifest = verify_bundle(tmp_path / "bundle")
    assert manifest.tools.sandbox.startswith("docker evalgrid/sandbox:dev sha256:")
    assert "no network" in manifest.tools.sandbox
    assert "GET /index.html" in (tmp_path / "bundle" / "server.log").read_text()
    assert (tmp_path / "bundle" / "interaction" / "video.mp4").stat().st_size > 1000


def test_reset_between_runs_leaves_nothing_of_the_previous_app(tmp_path: Path) -> None:
    """App A leaves a file and storage behind; app B, on the same sandbox, sees none of it."""
    first = html_artifact("first", "<h1>first</h1><script>localStorage.setItem('x','from-first')</script>",
                          extra={"secret.txt": "only in the first app"})
    probe = html_artifact("second", textwrap.dedent("""
        <h1 id=out>second</h1>
        <script>
          fetch('/secret.txt').then(r => {
            document.title = 'secret:' + r.status + ';ls:' + localStorage.getItem('x'); });
        </script>"""))

    async def scenario() -> str:
        sandbox = DockerSandbox()
        await sandbox.start()
        try:
            async with async_playwright() as playwright:
                browser = await sandbox.browser(playwright)
                root = tmp_path / "first"
                root.mkdir()
                for rel, content in first.files.items():
                    (root / rel).write_text(content)
                async with sandbox.serve(root, []) as origin:
                    context = await browser.new_context()
                    page = await context.new_page()
                    await page.goto(f"{origin}/index.html")
                    await context.close()
                root = tmp_path / "second"
                root.mkdir()
                (root / "index.html").write_text(probe.files["index.html"])
                async with sandbox.serve(root, []) as origin:
                    context = await browser.new_context()
                    page = await context.new_page()
                    await page.goto(f"{origin}/index.html")
                    await page.wait_for_function("document.title.startsWith('secret:')")
                    title = await page.title()
                    await context.close()
                return title
        finally:
            await sandbox.close()

    assert asyncio.run(scenario()) == "secret:404;ls:null"


def test_the_machinery_container_runs_only_the_machinery_as_its_own_user(tmp_path: Path) -> None:
    """After a project build whose config started a detached process, the machinery's container holds only the
    supervisor, Chromium, PulseAudio, the mirror and evalgrid's relays, all as uid 10001, and no build
    container is left: the stray died with the container it was started in."""
    (tmp_path / "package.json").write_text('{"name": "p", "dependencies": {"vite": "*"}}')
    (tmp_path / "index.html").write_text("<!DOCTYPE html><h1>project</h1>")
    (tmp_path / "vite.config.js").write_text(
        "import { spawn } from 'node:child_process';\n"
        "spawn('sleep', ['600'], { detached: true, stdio: 'ignore' }).unref();\n"
        "export default {};\n")

    async def scenario() -> tuple[bool, str, str]:
        sandbox = DockerSandbox()
        await sandbox.start()
        try:
            async with sandbox.serve(tmp_path, []):
                report, _ = await sandbox.build(Stack.PROJECT, "index.html")
            _, table, _ = await docker("exec", "--user", "10001", sandbox.name, "sh", "-c",
                                       "for d in /proc/[0-9]*; do echo $(stat -c %u $d) $(cat $d/comm); done")
            _, left, _ = await docker("ps", "--all", "--filter", "name=evalgrid-build-", "--format", "{{.Names}}")
            return report.ok, table, left
        finally:
            await sandbox.close()

    built, table, left = asyncio.run(scenario())
    assert built
    processes = [line.split(maxsplit=1) for line in table.splitlines() if line.strip()]
    assert processes and all(uid == "10001" for uid, _ in processes), processes
    names = {name for _, name in processes}
    assert "sleep" not in names
    assert {"tini", "node", "chromium", "pulseaudio"} <= names, names
    assert left.strip() == ""


def test_requests_a_page_makes_cannot_take_the_app_server_down(tmp_path: Path) -> None:
    page = html_artifact("evil", textwrap.dedent("""
        <h1>evil</h1>
        <script>
          Promise.all(['/%00', '/..%2f..%2fetc/passwd', '/../app2/x', '/%E0%A4%A', '/' + 'a'.repeat(8000)]
              .map(u => fetch(u).then(r => r.status).catch(() => 'x')))
            .then(codes => { document.title = 'codes:' + codes.join(','); });
        </script>"""))

    async def scenario() -> tuple[str, int, bool]:
        sandbox = DockerSandbox()
        await sandbox.start()
        try:
            async with async_playwright() as playwright:
                browser = await sandbox.browser(playwright)
                root = tmp_path / "app"
                root.mkdir()
                (root / "index.html").write_text(page.files["index.html"])
                async with sandbox.serve(root, []) as origin:
                    context = await browser.new_context()
                    tab = await context.new_page()
                    await tab.goto(f"{origin}/index.html")
                    await tab.wait_for_function("document.title.startsWith('codes:')")
                    codes = await tab.title()
                    again = await tab.goto(f"{origin}/index.html")
                    await context.close()
                running = _inspect(sandbox.name)["State"]["Running"]
                return codes, again.status if again else 0, running
        finally:
            await sandbox.close()

    codes, again, running = asyncio.run(scenario())
    assert codes.startswith("codes:400,")  # a NUL byte is refused, not a crash
    assert "200" not in codes  # nothing outside the app directory is served
    assert again == 200 and running


def test_gc_removes_the_containers_of_a_driver_killed_with_sigkill(tmp_path: Path) -> None:
    script = tmp_path / "driver.py"
    script.write_text(textwrap.dedent(f"""
        import asyncio, sys
        sys.path.insert(0, {str(ROOT)!r})
        from cluster.sandbox.docker_backend import DockerSandbox
        async def main():
            sandbox = DockerSandbox()
            await sandbox.start()
            print(sandbox.name, flush=True)
            await asyncio.sleep(600)
        asyncio.run(main())
    """))
    driver = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert driver.stdout is not None
    name = driver.stdout.readline().strip()
    assert name.startswith("evalgrid-sbx-")
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    assert _inspect(name)["State"]["Running"]  # the orphan is still there ...
    removed = asyncio.run(collect_garbage())
    assert name in removed  # ... until garbage collection removes it
    assert subprocess.run(["docker", "inspect", name], capture_output=True).returncode != 0


@pytest.mark.parametrize("delay_s", [0.3, 1.5])
def test_a_sandbox_killed_mid_run_costs_a_retry_not_the_run(tmp_path: Path, delay_s: float) -> None:
    """The container is killed under a run (early in Static Perception, or during the interaction)."""
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / "dead-button.html").write_text((APPS / "dead-button.html").read_text(encoding="utf-8"))
    spec = make_run_spec(candidate=Candidate(id="fixture", answers=str(answers)), query=app_query("dead-button.html"),
                         agent=AgentConfig(max_steps=3), judge=JudgeConfig(), judge_version="test",
                         answers_dir=answers)

    async def scenario() -> tuple[Outcome, float, list[str]]:
        worker = RunWorker(WorkerSettings(run_dir=str(tmp_path / "run"), run_timeout_s=60), "victim")
        await worker.start()
        try:
            assert worker.sandbox is not None
            first = worker.sandbox.name

            async def kill() -> None:
                await asyncio.sleep(delay_s)
                await docker("kill", first)

            killer = asyncio.ensure_future(kill())
            started = time.monotonic()
            outcome = await worker.execute(spec)
            await killer
            return outcome, time.monotonic() - started, [first, worker.sandbox.name]
        finally:
            await worker.close()

    outcome, seconds, names = asyncio.run(scenario())
    assert outcome.status is OutcomeStatus.JUDGED and outcome.attempts == 2
    assert names[0] != names[1]  # the dead sandbox was replaced
    assert seconds < 30  # noticed at once, not at the run's time limit
