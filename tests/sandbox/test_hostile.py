"""Hostile apps in the Docker sandbox: every run ends within its limit with a classified outcome,
the worker survives, the next run on the same worker is clean, and nothing leaves the sandbox.

One worker (one container at a time) serves the module: its first run, on a fresh sandbox, is the well-behaved
control app; then it takes every hostile fixture in turn (in two halves, each a test), every second one (and the
last of each half) followed by the same control, whose verdict must equal that first one; then the fork bomb. (A
control after each fixture, until a slower CI machine took the test past its ceiling: a dirty worker still shows
within the next two runs, and ``make test-full`` runs a control after each.) The runs' limit is 25 s here (45 s
under ``make test-full``): the fixtures that hang end as the app's hang at either, only sooner.
"""

from __future__ import annotations

import asyncio
import socket
import socketserver
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cluster.sandbox.docker_backend import docker
from cluster.scheduling.worker import RunWorker, WorkerSettings
from evaluator.models import (
    AgentConfig,
    Candidate,
    Difficulty,
    JudgeConfig,
    Kind,
    Outcome,
    OutcomeStatus,
    Query,
    RunSpec,
    Stack,
)
from evaluator.run import make_run_spec
from tests.budget import full_suite
from tests.support import APPS, require_docker

pytestmark = [pytest.mark.browser, pytest.mark.docker, pytest.mark.slow]

HOSTILE = APPS / "hostile"
TIMEOUT_S = 45.0 if full_suite() else 25.0
CONTROL_HTML = (APPS / "dead-button.html").read_text(encoding="utf-8")
# What each fixture may end as: the app's failure is a result, never the machinery's. A page that hangs the run
# is the app's hang (app_hang), including one that wedges the whole browser (the run is retried once after a
# control page passed on a fresh sandbox, and hangs again); nothing ends as timeout or infra_error.
EXPECTED: dict[str, set[OutcomeStatus]] = {name: {OutcomeStatus.JUDGED} for name in (
    "infinite-loop", "memory-bomb", "dialog-storm", "window-open-flood", "navigate-away", "beforeunload-trap",
    "tab-crash", "huge-dom", "egress")}


# Hostile to the driver, not broken for a user: its one button navigates once the "Leave site?" dialog is answered.
# Whether the explorer's retry lands after the answer is a race (a CI rehearsal: the first click was held by the
# dialog, the retry navigated, functional 8.0 with nothing to deduct), so its score is not checked; that it ends
# classified, in time, with the worker clean, is.
WORKS_WHEN_ANSWERED = {"beforeunload-trap"}


class _Canary(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True

    def __init__(self) -> None:
        self.hits: list[bytes] = []
        super().__init__(("0.0.0.0", 0), _CanaryHandler)


class _CanaryHandler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.settimeout(2)
        try:
            data = self.request.recv(4096)
        except OSError:
            data = b""
        assert isinstance(self.server, _Canary)
        self.server.hits.append(data or b"<connect>")


@pytest.fixture(scope="module")
def canary() -> Iterator[tuple[_Canary, list[bytes], str]]:
    """A TCP and UDP listener on every host interface; the test asserts it hears nothing."""
    server = _Canary()
    port = server.server_address[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("0.0.0.0", port))
    udp.settimeout(0.2)
    datagrams: list[bytes] = []
    stop = threading.Event()

    def listen_udp() -> None:
        while not stop.is_set():
            try:
                datagrams.append(udp.recvfrom(2048)[0])
            except OSError:
                continue

    threads = [threading.Thread(target=server.serve_forever, daemon=True),
               threading.Thread(target=listen_udp, daemon=True)]
    for thread in threads:
        thread.start()
    bridge = subprocess.run(["sh", "-c", "ip -4 -o addr show docker0 | awk '{print $4}' | cut -d/ -f1"],
                            capture_output=True, text=True).stdout.strip() or "172.17.0.1"
    try:
        yield server, datagrams, f"{bridge}:{port}"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        udp.close()


@dataclass
class _Worker:
    """The module's worker, on an event loop of its own that outlives each test."""

    worker: RunWorker
    loop: asyncio.AbstractEventLoop
    answers: Path
    baseline: Outcome
    """The control app's outcome on the worker's fresh sandbox, before anything hostile ran."""

    def run(self, qid: str, html: str) -> Outcome:
        return self.loop.run_until_complete(self.worker.execute(_spec(self.answers, qid, html)))


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Worker]:
    require_docker()
    root = tmp_path_factory.mktemp("hostile")
    answers = root / "answers"
    answers.mkdir()
    loop = asyncio.new_event_loop()
    worker = RunWorker(WorkerSettings(run_dir=str(root / "run"), run_timeout_s=TIMEOUT_S), "hostile")
    try:
        loop.run_until_complete(worker.start())
        baseline = loop.run_until_complete(worker.execute(_spec(answers, "control-fresh", CONTROL_HTML)))
        assert baseline.status is OutcomeStatus.JUDGED, baseline.reason
        yield _Worker(worker, loop, answers, baseline)
    finally:
        loop.run_until_complete(worker.close())
        loop.close()


def _query(qid: str) -> Query:
    return Query(id=qid, brief="A small app.", domain="tests", leaf="hostile", difficulty=Difficulty.EASY,
                 language="en", kind=Kind.INTERACTIVE_APPLICATION)


def _spec(answers: Path, qid: str, html: str) -> RunSpec:
    (answers / f"{qid}.html").write_text(html, encoding="utf-8")
    return make_run_spec(candidate=Candidate(id="hostile", answers=str(answers)), query=_query(qid),
                         agent=AgentConfig(max_steps=4), judge=JudgeConfig(), judge_version="test",
                         answers_dir=answers)


# In two halves on the same worker, each an item of its own under the suite's ceiling (the nine in one took 305 s
# on a slow CI machine); the second half still runs on the worker the first left.
_HALVES = (list(EXPECTED)[:5], list(EXPECTED)[5:])


@pytest.mark.parametrize("names", _HALVES, ids=["first-half", "second-half"])
def test_hostile_apps_end_classified_and_leave_the_worker_clean(shared: _Worker, canary: tuple,
                                                                 names: list[str]) -> None:
    server, datagrams, address = canary
    results, controls = [], []
    every = 1 if full_suite() else 2
    for index, name in enumerate(names, start=1):
        html = (HOSTILE / name / "index.html").read_text(encoding="utf-8").replace("172.17.0.1:8999", address)
        started = time.monotonic()
        outcome = shared.run(f"hostile-{name}", html)
        results.append((name, outcome, time.monotonic() - started))
        if index % every == 0 or index == len(names):
            # The same control app, made unique so no stage output is reused.
            controls.append(shared.run(f"control-after-{name}", CONTROL_HTML + f"<!-- after {name} -->"))
    baseline, restarts = shared.baseline, shared.worker.health.sandbox_restarts
    report = [(name, o.status.value, o.reason.code.value, o.functional, round(seconds, 1))
              for name, o, seconds in results]
    print("hostile outcomes:", report, "sandbox restarts:", restarts)
    for name, outcome, seconds in results:
        assert outcome.status in EXPECTED[name], (name, outcome.reason)
        assert seconds < 2 * TIMEOUT_S + 60, (name, seconds)  # two attempts at most, and the sandboxes' replacements
        if outcome.status is OutcomeStatus.JUDGED and name not in WORKS_WHEN_ANSWERED:
            assert outcome.functional is not None and outcome.functional < 8.0, name
    for control in controls:
        assert control.status is OutcomeStatus.JUDGED
        assert (control.functional, control.aesthetic) == (baseline.functional, baseline.aesthetic)
    assert server.hits == [] and datagrams == [], "the canary heard from the sandbox"


def test_the_canary_can_hear_the_host(canary: tuple) -> None:
    """Control for the test above: the canary does register a connection that is allowed to happen."""
    server, _, address = canary
    host, port = address.split(":")
    with socket.create_connection((host, int(port)), timeout=5) as conn:
        conn.sendall(b"GET /evalgrid-canary-control HTTP/1.0\r\n\r\n")
    deadline = time.monotonic() + 5
    while not server.hits and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any(b"evalgrid-canary-control" in hit for hit in server.hits)
    server.hits.clear()


def test_fork_bomb_in_a_build_is_stopped_by_the_pids_limit_and_dies_with_the_build(shared: _Worker) -> None:
    """The fork-bomb fixture is a project whose build config starts it: it runs in the build container (the
    app's user, its own pids limit), never in the machinery's, and every copy ends with that container."""
    before = shared.run("control-before-fork-bomb", CONTROL_HTML + "<!-- before the fork bomb -->")

    async def scenario() -> tuple[int, int, int, str]:
        sandbox = shared.worker.sandbox
        assert sandbox is not None
        peak = machinery = 0
        _, out, _ = await docker("stats", "--no-stream", "--format", "{{.PIDs}}", sandbox.name)
        baseline = int(out.strip() or 0)  # its tasks: Chromium's and the supervisor's threads
        async with sandbox.serve(HOSTILE / "fork-bomb", []):
            build = asyncio.ensure_future(sandbox.build(Stack.PROJECT, "index.html"))
            while not build.done():
                _, out, _ = await docker("stats", "--no-stream", "--format", "{{.Name}} {{.PIDs}}")
                for line in out.splitlines():
                    name, _, pids = line.partition(" ")
                    if name.startswith("evalgrid-build-"):
                        peak = max(peak, int(pids or 0))
                    elif name == sandbox.name:
                        machinery = max(machinery, int(pids or 0))
            await build
        _, left, _ = await docker("ps", "--all", "--filter", "name=evalgrid-build-", "--format", "{{.Names}}")
        return peak, baseline, machinery, left

    peak, baseline, machinery, left = shared.loop.run_until_complete(scenario())
    after = shared.run("control-after-fork-bomb", CONTROL_HTML + "<!-- after the fork bomb -->")
    print(f"fork bomb: peak {peak} pids in the build container (limit 256); machinery container {baseline} "
          f"before, at most {machinery} during; next run {after.status.value} after {after.attempts} attempt(s)")
    assert 100 < peak <= 256  # the bomb really forked, and the limit held
    assert machinery <= baseline + 30  # none of it in the machinery's container (its own threads vary a little)
    assert left.strip() == ""  # the build container, and every copy with it, is gone
    assert after.status is OutcomeStatus.JUDGED and after.attempts == 1
    assert (after.functional, after.aesthetic) == (before.functional, before.aesthetic) == \
        (shared.baseline.functional, shared.baseline.aesthetic)


def test_hostile_files_sent_to_the_preview_tool_are_contained_and_get_a_report(canary: tuple) -> None:
    """The preview tool serves a candidate's files in the same sandbox as a run: each hostile fixture gets a
    report within its time (never an exception), nothing leaves the sandbox, and a working app previewed after
    every second one and the last (after each under ``make test-full``, as in the runs above) still previews
    clean. A page that spins as soon as it has loaded is reported as stopped answering; one too heavy to be seen
    in the preview's time (huge-dom starves the sandbox's one CPU) is reported as such."""
    require_docker()
    server, datagrams, address = canary
    control = {"index.html": CONTROL_HTML}
    spins = "<h1>Spins</h1><p>Loaded, then never yields.</p><script>setTimeout(() => { while (true) {} }, 0)</script>"
    pages = {name: (HOSTILE / name / "index.html").read_text(encoding="utf-8").replace("172.17.0.1:8999", address)
             for name in ("egress", "infinite-loop", "dialog-storm", "window-open-flood", "navigate-away", "huge-dom")}
    pages["spins-at-load"] = spins
    every = 1 if full_suite() else 2

    async def scenario() -> list[tuple[str, str, float, str | None]]:
        from playwright.async_api import async_playwright

        from cluster.sandbox.docker_backend import DockerSandbox
        from evaluator.preview import AppPreviewer

        async with async_playwright() as playwright:
            sandbox = DockerSandbox()
            await sandbox.start()
            try:
                previewer = AppPreviewer(await sandbox.browser(playwright), host=sandbox, timeout_s=20)
                seen: list[tuple[str, str, float, str | None]] = []
                for index, (name, html) in enumerate(pages.items(), start=1):
                    started = time.monotonic()
                    hostile = await asyncio.wait_for(previewer.preview({"index.html": html}), TIMEOUT_S)
                    told = " ".join(f"{p.kind}: {p.message}" for p in hostile.report.problems)
                    after = None
                    if index % every == 0 or index == len(pages):
                        after = (await asyncio.wait_for(previewer.preview(control), TIMEOUT_S)).report.status
                    seen.append((name, told, time.monotonic() - started, after))
                return seen
            finally:
                await sandbox.close()

    seen = asyncio.run(scenario())
    print("hostile previews:", [(n, s[:80], round(t, 1), a) for n, s, t, a in seen])
    controls = [after for *_, after in seen if after is not None]
    assert controls == ["ok"] * len(controls) and len(controls) >= len(seen) // every, seen
    told = {name: problems for name, problems, *_ in seen}
    assert "perception_failure: the page stopped answering" in told["spins-at-load"], told["spins-at-load"]
    assert "perception_failure: the page " in told["huge-dom"], told["huge-dom"]
    assert server.hits == [] and datagrams == [], "the canary heard from the sandbox"
