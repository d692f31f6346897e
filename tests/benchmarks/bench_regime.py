"""Benchmark: the full evaluation regime per run against an ArtifactsBench-style capture, and pacing agreement.

Per app, in an order rotated from one app to the next so machine noise hits everything alike:

- baseline, ArtifactsBench-style (as in bench_static_perception): a new Chromium on this machine, the app served on
  loopback, navigate and wait for network idle, three screenshots one second apart (checked: three were made). The
  launch arguments are evalgrid's, which resolve no name but loopback: a CDN app's requests fail at once, so the
  baseline pays no network wait (in its favour; the regime's sandbox serves them from its CDN mirror). A component
  or project answer is built first, untimed, by the sandbox's own build, and the baseline serves the built files;
- the full regime (extract, build, Static Perception, the filmed Agent-Driven Interaction, encode, the heuristic
  judge) in a Docker sandbox whose context pool is warm (a run's contexts made ahead, not counted), with
  ``AgentConfig(settle="signals")``: an action's wait ends once the page has settled;
- the same with ``settle="fixed"``, the real-time pacing (the whole pause after each action), twice: rt1 and rt2.

Per-run time: the wall time of ``execute_run`` less the build (``timings["build"]`` of the manifest), each run on a
fresh stage directory (stages are cached by content key). Targets: median signals / median baseline <= 1.0, done at
<= 1.25 (exit 1 above 1.25); signals must agree with real time (same functional score, aesthetic score and set of
attributions, identified by dimension and category) at least as often as real time agrees with itself (exit 1
below). Also reported: phase medians from the manifests, interaction steps, runs per worker-minute, and CPU seconds
per run in four places:

- the driver: this process (RUSAGE_SELF: Python and the Playwright client);
- the Playwright driver, a node process that is this process's child (checked and printed) but lives throughout, so
  RUSAGE_CHILDREN never sees it: its CPU and its reaped children's (the baseline's Chromium) from /proc;
- the other children: the ``docker exec`` relays of the sandbox's channels (live, from /proc), and what ended during
  the run and was reaped, ffmpeg's encodes and docker CLI calls (RUSAGE_CHILDREN);
- the sandbox container, where Chromium and the app's server run: its cgroup's CPU usage, read on this host (or
  inside the container when the host's cgroup is not found). Builds run in containers of their own, not counted.

    .venv/bin/python tests/benchmarks/bench_regime.py [--apps N] [--source demo|calibration|both] [--json PATH]
                                                      [--account]

``--account``: where the time goes. Each regime run's interaction is timed stage by stage (``step_account.py``),
and a fifth run per app, ``novideo`` (signals with the screencast never started), gives the screen video's share.

``--smoke``: one quick demo app; checks only that every run was judged with a verdict and that the agreement was
computed, without the targets. ``make test`` runs it without rt2, so with sig/rt (signals vs rt1) only; rt/rt, which
needs rt2, is computed there by a unit test on made-up runs (tests/benchmarks/test_agreement.py), and on real runs
by the smoke under ``make test-full`` (``EVALGRID_FULL_TESTS=1``).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from playwright.async_api import Browser, Playwright, async_playwright

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from cluster.calibration.calibrate import load_suite  # noqa: E402
from cluster.sandbox.container import BuildRequest, _build_output  # noqa: E402
from cluster.sandbox.docker_backend import DockerSandbox, docker  # noqa: E402
from evaluator.answer.extract import ExtractedApp, extract_app  # noqa: E402
from evaluator.answer.generate import find_answer  # noqa: E402
from evaluator.browser.app_host import BUILD_OUTPUT, BUILD_TIMEOUT_S  # noqa: E402
from evaluator.browser.context_pool import ContextPool  # noqa: E402
from evaluator.browser.serve import serve_directory  # noqa: E402
from evaluator.judges import create_judge  # noqa: E402
from evaluator.models import AgentConfig, Candidate, JudgeConfig, Query, QuerySet, Stack, Verdict  # noqa: E402
from evaluator.run import execute_run, make_run_spec  # noqa: E402
from evaluator.stages import StagePaths  # noqa: E402
from tests.benchmarks.bench_static_perception import artifactsbench_capture  # noqa: E402
from tests.benchmarks.step_account import accounted, print_account, run_account, without_screencast  # noqa: E402
from tests.budget import full_suite  # noqa: E402

RATIO_TARGET = 1.0
RATIO_DONE = 1.25
DEMO_ANSWERS = ROOT / "fixtures" / "answers" / "careful"
DEMO_QUERIES = ROOT / "fixtures" / "queries" / "cookie-mini.yaml"
SMOKE_APPS = ("game-reaction",)
DEFAULT_APPS = 24
"""About 45 s an app on a 2-core machine (four runs of about 12 s, a long app's 20-25 s, and the 3.5 s baseline):
about 20 minutes. All 54 apps (33 demo, 21 calibration) take about 40."""
ITEMS = ("baseline", "signals", "rt1", "rt2")
SMOKE_ITEMS = ("baseline", "signals", "rt1")
"""``make test``'s smoke: one real-time run, the one sig/rt needs (rt2 only gives rt/rt, a run's time more)."""
ACCOUNT_ITEMS = (*ITEMS, "novideo")
"""With ``--account``; ``novideo``'s verdict is not compared with the others (the judge marks its missing video)."""
PHASES = ("static_mobile", "static_desktop", "accessibility", "interaction", "encode", "total")
CPU_PLACES = ("driver", "node", "children", "container", "total")
_TICK = os.sysconf("SC_CLK_TCK")
Settle = Literal["signals", "fixed"]


@dataclass(frozen=True)
class App:
    """One app to measure: its query, where its answer lies, and the files the baseline serves."""

    name: str
    source: str
    query: Query
    candidate: str
    answers: Path
    files: dict[str, str]
    entrypoint: str
    stack: Stack


@dataclass
class Measured:
    """One measurement of one app: the baseline's or a regime run's."""

    seconds: float
    cpu: dict[str, float]
    status: str = "judged"
    reason: str = ""
    phases: dict[str, float] = field(default_factory=dict)
    steps: int | None = None
    functional: float | None = None
    aesthetic: float | None = None
    attributions: list[tuple[str, str]] = field(default_factory=list)
    verdict: bool = False
    screenshots: int = 0
    note: str = ""
    account: dict[str, float] = field(default_factory=dict)
    """With ``--account``: seconds in each stage of the interaction, and its steps (``step_account.run_account``)."""


# ------------------------------------------------------------------------------------------------ the apps


def _demo_apps() -> list[App]:
    queries = QuerySet.model_validate(yaml.safe_load(DEMO_QUERIES.read_text(encoding="utf-8"))).queries
    apps = []
    for query in queries:
        path = find_answer(DEMO_ANSWERS, query.id)
        extracted = extract_app(path.read_bytes()) if path is not None else None
        if isinstance(extracted, ExtractedApp):
            apps.append(App(query.id, "demo", query, "careful", DEMO_ANSWERS, extracted.files, extracted.entrypoint,
                            extracted.stack))
    return apps


def _calibration_apps(work: Path) -> list[App]:
    answers = work / "calibration-answers"
    answers.mkdir(parents=True, exist_ok=True)
    apps = []
    for suite_app, text in load_suite():
        (answers / f"{suite_app.id}.md").write_text(text, encoding="utf-8")
        extracted = extract_app(text.encode("utf-8"))
        if isinstance(extracted, ExtractedApp):
            apps.append(App(suite_app.id, "calibration", suite_app.query(), "calibration", answers, extracted.files,
                            extracted.entrypoint, extracted.stack))
    return apps


def select_apps(source: str, count: int, smoke: bool, work: Path) -> list[App]:
    """The apps to measure: ``smoke``'s one, or the first ``count`` of the sources, interleaved."""
    demo = _demo_apps() if source in ("demo", "both") or smoke else []
    if smoke:
        return [app for app in demo if app.name in SMOKE_APPS]
    calibration = _calibration_apps(work) if source in ("calibration", "both") else []
    mixed: list[App] = []
    for i in range(max(len(demo), len(calibration))):
        mixed += [apps[i] for apps in (demo, calibration) if i < len(apps)]
    return mixed[:count]


# ------------------------------------------------------------------------------------------------ CPU accounting


def _proc_table() -> dict[int, tuple[int, str, float]]:
    """Every process: pid → (parent pid, command name, CPU seconds with its reaped children's)."""
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            text = Path(entry.path, "stat").read_text()
        except OSError:
            continue  # ended meanwhile
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text[text.rindex(")") + 2:].split()
        ticks = sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
        table[int(entry.name)] = (int(fields[1]), name, ticks / _TICK)
    return table


def _is_playwright_driver(pid: int) -> bool:
    try:
        return b"run-driver" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _host_cpu() -> dict[str, float]:
    """Cumulative CPU seconds of this process, of the Playwright driver's process tree, and of its other children
    (live ones from /proc with what they reaped, and the ones this process reaped)."""
    table = _proc_table()
    kids: dict[int, list[int]] = {}
    for pid, (parent, _, _) in table.items():
        kids.setdefault(parent, []).append(pid)
    live = {"node": 0.0, "children": 0.0}
    for child in kids.get(os.getpid(), []):
        place, todo = ("node" if _is_playwright_driver(child) else "children"), [child]
        while todo:
            pid = todo.pop()
            live[place] += table[pid][2]
            todo += kids.get(pid, [])
    self_usage = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"driver": self_usage.ru_utime + self_usage.ru_stime, "node": live["node"],
            "children": live["children"] + reaped.ru_utime + reaped.ru_stime}


def playwright_driver_is_child() -> bool:
    """Whether the Playwright driver (node ... cli.js run-driver) is a child of this process (the docstring's claim)."""
    table = _proc_table()
    return any(parent == os.getpid() and _is_playwright_driver(pid) for pid, (parent, _, _) in table.items())


class ContainerClock:
    """The sandbox container's cumulative CPU seconds, from its cgroup on this host or, failing that, inside it."""

    def __init__(self, name: str, path: Path | None) -> None:
        self.name, self.path = name, path
        self.where = str(path) if path is not None else "docker exec (cgroup inside the container)"

    @classmethod
    async def open(cls, name: str) -> ContainerClock:
        """A clock for container ``name``."""
        code, out, err = await docker("inspect", "--format", "{{.Id}}", name)
        if code != 0:
            raise SystemExit(f"cannot inspect sandbox {name}: {err.strip()}")
        cid = out.strip()
        for path in (Path(f"/sys/fs/cgroup/cpuacct/docker/{cid}/cpuacct.usage"),
                     Path(f"/sys/fs/cgroup/cpu,cpuacct/docker/{cid}/cpuacct.usage"),
                     Path(f"/sys/fs/cgroup/system.slice/docker-{cid}.scope/cpu.stat"),
                     Path(f"/sys/fs/cgroup/docker/{cid}/cpu.stat")):
            if path.is_file():
                return cls(name, path)
        return cls(name, None)

    async def seconds(self) -> float:
        """CPU seconds the container has used so far."""
        if self.path is not None:
            return _cgroup_seconds(self.path.name, self.path.read_text())
        read = "cat /sys/fs/cgroup/cpu.stat 2>/dev/null || cat /sys/fs/cgroup/cpuacct/cpuacct.usage"
        code, out, err = await docker("exec", self.name, "sh", "-c", read)
        if code != 0:
            raise SystemExit(f"cannot read the CPU usage of sandbox {self.name}: {err.strip()}")
        return _cgroup_seconds("cpu.stat" if "usage_usec" in out else "cpuacct.usage", out)


def _cgroup_seconds(kind: str, text: str) -> float:
    if kind == "cpuacct.usage":
        return int(text.split()[0]) / 1e9
    usage = next(line for line in text.splitlines() if line.startswith("usage_usec"))
    return int(usage.split()[1]) / 1e6


@dataclass
class Bench:
    """What every measurement shares: Playwright, the sandbox and its browser, the warm pool, the clocks."""

    playwright: Playwright
    sandbox: DockerSandbox
    browser: Browser
    pool: ContextPool
    clock: ContainerClock
    judge_version: str
    work: Path
    items: tuple[str, ...]
    """What is measured per app (:data:`ACCOUNT_ITEMS` adds the run without the screen video)."""
    account: bool = False
    """Time each run's interaction stage by stage."""

    async def cpu(self) -> dict[str, float]:
        """Cumulative CPU seconds per place (see the module's docstring)."""
        host = _host_cpu()
        return {**host, "container": await self.clock.seconds()}

    async def cpu_since(self, before: dict[str, float]) -> dict[str, float]:
        """CPU seconds per place since ``before``, and their total."""
        now = await self.cpu()
        spent = {place: round(now[place] - before[place], 3) for place in before}
        return {**spent, "total": round(sum(spent.values()), 3)}


# ------------------------------------------------------------------------------------------------ measurements


async def baseline_page(sandbox: DockerSandbox, app: App) -> tuple[dict[str, bytes], str, str]:
    """The files the baseline serves, its page, and a note: the answer's own files, or for a component or project
    answer what the sandbox's build makes of them (the regime's build, called directly to keep its output; untimed,
    as builds are not counted)."""
    files = {rel: content.encode("utf-8") for rel, content in app.files.items()}
    if app.stack not in (Stack.COMPONENT, Stack.PROJECT):
        return files, app.entrypoint, ""
    request = BuildRequest(stack=app.stack, entry=app.entrypoint, timeout_s=BUILD_TIMEOUT_S,
                           files={rel: base64.b64encode(data).decode() for rel, data in files.items()})
    # The sandbox's public build() loads its output into the sandbox only; the baseline needs it on this host. The
    # reply is checked as build() checks it (file names inside the app, size) before any file is written here.
    line = await sandbox._build_in_app_container(request)
    try:
        reply = json.loads(line) if line else {}
        built = _build_output(reply.get("files")) if reply.get("exit_code") == 0 else None
    except (ValueError, TypeError, AttributeError) as exc:
        return files, app.entrypoint, f"the build's reply could not be read ({exc}): its source served"
    if built is None:
        return files, app.entrypoint, f"the build failed (exit code {reply.get('exit_code')}): its source served"
    return ({rel: base64.b64decode(data) for rel, data in built.items()}, BUILD_OUTPUT,
            f"built in the sandbox ({len(built)} files)")


async def baseline(bench: Bench, files: dict[str, bytes], page_path: str) -> Measured:
    """The ArtifactsBench-style capture: new Chromium, networkidle, three screenshots one second apart."""
    out = Path(tempfile.mkdtemp(dir=bench.work))
    for rel, content in files.items():
        (out / "app" / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / "app" / rel).write_bytes(content)
    with serve_directory(out / "app", []) as origin:
        before = await bench.cpu()
        seconds = await artifactsbench_capture(bench.playwright, f"{origin}/{page_path}", out)
        cpu = await bench.cpu_since(before)
    shots = sum(1 for p in out.glob("baseline-*.png") if p.stat().st_size > 0)
    shutil.rmtree(out, ignore_errors=True)
    return Measured(seconds=round(seconds, 3), cpu=cpu, screenshots=shots)


async def regime(bench: Bench, app: App, settle: Settle, *, video: bool = True) -> Measured:
    """One full run in the sandbox on a fresh stage directory; its time less the build's (``video`` False: with no
    screencast, for ``--account``)."""
    spec = make_run_spec(candidate=Candidate(id=app.candidate, answers=str(app.answers)), query=app.query,
                         agent=AgentConfig(settle=settle), judge=JudgeConfig(), judge_version=bench.judge_version,
                         answers_dir=app.answers)
    paths = StagePaths(Path(tempfile.mkdtemp(dir=bench.work)))
    before = await bench.cpu()
    started = time.perf_counter()
    with accounted() if bench.account else nullcontext({}) as spent, \
            nullcontext() if video else without_screencast():
        outcome = await execute_run(spec, browser=bench.browser, paths=paths, host=bench.sandbox, contexts=bench.pool)
    wall = time.perf_counter() - started
    cpu = await bench.cpu_since(before)
    run = Measured(seconds=wall, cpu=cpu, status=outcome.status.value, reason=outcome.reason.code.value)
    if outcome.evidence_key is not None:
        bundle = paths.evidence(outcome.evidence_key)
        if (bundle / "manifest.json").is_file():
            run.phases = json.loads((bundle / "manifest.json").read_text())["timings"]
            run.seconds = wall - run.phases.get("build", 0.0)
        if (bundle / "interaction" / "trace.json").is_file():
            trace = json.loads((bundle / "interaction" / "trace.json").read_text())
            run.steps = len(trace)
            if spent and trace:
                run.account = run_account(spent, len(trace), sum(step["deliberation_s"] for step in trace))
    if outcome.verdict_key is not None and paths.verdict(outcome.verdict_key).is_file():
        verdict = Verdict.model_validate_json(paths.verdict(outcome.verdict_key).read_text())
        run.verdict = True
        run.functional, run.aesthetic = verdict.functional, verdict.aesthetic
        run.attributions = sorted({(a.dimension.value, a.category) for a in verdict.attributions})
    run.seconds = round(run.seconds, 3)
    shutil.rmtree(paths.root, ignore_errors=True)
    return run


async def measure_app(bench: Bench, app: App, index: int) -> dict[str, Measured]:
    """The measurements of one app (``bench.items``), their order rotated by ``index``; the pool is warm before
    each."""
    order = bench.items[index % len(bench.items):] + bench.items[:index % len(bench.items)]
    files, page_path, built = await baseline_page(bench.sandbox, app)
    results: dict[str, Measured] = {}
    for item in order:
        await bench.pool.ready()  # made ahead while the last run was encoded and judged: not counted
        if item == "baseline":
            results[item] = await baseline(bench, files, page_path)
            results[item].note = built
        else:
            results[item] = await regime(bench, app, "fixed" if item in ("rt1", "rt2") else "signals",
                                         video=item != "novideo")
            if results[item].status == "non_assessable":
                break  # the app is skipped: nothing to compare
    return results


# ------------------------------------------------------------------------------------------------ agreement


def same(a: Measured, b: Measured) -> dict[str, bool]:
    """Whether two runs agree on each count: a run not judged agrees only with a run that ended the same way."""
    if a.status != b.status or a.status != "judged":
        equal = a.status == b.status
        return {"functional": equal, "aesthetic": equal, "attributions": equal, "all": equal}
    checks = {"functional": a.functional == b.functional, "aesthetic": a.aesthetic == b.aesthetic,
              "attributions": a.attributions == b.attributions}
    return {**checks, "all": all(checks.values())}


def agreement(apps: dict[str, dict[str, Measured]]) -> dict[str, Any]:
    """sig/rt agreement per count (share of apps; signals against each real-time run, the mean), rt/rt too when
    every app has rt2 (``rt_rt`` is absent otherwise), and what the apps that disagree disagree on."""
    counts = ("functional", "aesthetic", "attributions", "all")
    twice = all("rt2" in runs for runs in apps.values())
    real_time = ("rt1", "rt2") if twice else ("rt1",)
    rt_rt = {c: 0.0 for c in counts}
    sig_rt = {c: 0.0 for c in counts}
    disagreements: list[dict[str, Any]] = []
    for name, runs in apps.items():
        pairs = {"rt1/rt2": same(runs["rt1"], runs["rt2"])} if twice else {}
        pairs.update({f"signals/{rt}": same(runs["signals"], runs[rt]) for rt in real_time})
        for c in counts:
            if twice:
                rt_rt[c] += pairs["rt1/rt2"][c] / len(apps)
            sig_rt[c] += sum(pairs[f"signals/{rt}"][c] for rt in real_time) / len(real_time) / len(apps)
        for pair, checks in pairs.items():
            if not checks["all"]:
                a, b = (runs[k] for k in pair.split("/"))
                on = ["status"] if a.status != b.status else [c for c in counts[:3] if not checks[c]]
                disagreements.append({"app": name, "pair": pair, "on": on, "first": _said(a), "second": _said(b)})
    agreed: dict[str, Any] = {"apps": len(apps), "sig_rt": {c: round(v, 3) for c, v in sig_rt.items()},
                              "disagreements": disagreements}
    if twice:
        agreed["rt_rt"] = {c: round(v, 3) for c, v in rt_rt.items()}
    return agreed


def _said(run: Measured) -> dict[str, Any]:
    return {"status": run.status, "functional": run.functional, "aesthetic": run.aesthetic,
            "attributions": [f"{d}:{c}" for d, c in run.attributions]}


# ------------------------------------------------------------------------------------------------ the report


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def summarize(apps: dict[str, dict[str, Measured]]) -> dict[str, Any]:
    """Medians per pacing (fixed: rt1 and rt2 together, where measured), ratios to the baseline, runs per
    worker-minute."""
    groups = {"baseline": ("baseline",), "signals": ("signals",), "fixed": ("rt1", "rt2")}
    summary: dict[str, Any] = {}
    for group, items in groups.items():
        runs = [app[item] for app in apps.values() for item in items if item in app]
        seconds = _median([r.seconds for r in runs])
        summary[group] = {
            "runs": len(runs), "seconds": seconds,
            "runs_per_worker_minute": round(60 / seconds, 2) if seconds else None,
            "phases": {p: _median([r.phases[p] for r in runs if p in r.phases]) for p in PHASES},
            "steps": _median([float(r.steps) for r in runs if r.steps is not None]),
            "cpu": {place: _median([r.cpu[place] for r in runs if place in r.cpu]) for place in CPU_PLACES},
        }
    base = summary["baseline"]["seconds"]
    for group in ("signals", "fixed"):
        ours = summary[group]["seconds"]
        summary[group]["ratio_to_baseline"] = round(ours / base, 3) if ours is not None and base else None
    return summary


def _cell(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_table(summary: dict[str, Any], agreed: dict[str, Any], sources: dict[str, int]) -> None:
    """The side-by-side table, the ratio against both targets, and the agreement."""
    cols = ("baseline", "signals", "fixed")
    print(f"\nFull regime vs ArtifactsBench-style capture, {agreed['apps']} apps "
          f"({', '.join(f'{n} {s}' for s, n in sources.items())}), median per run:")
    print(f"  {'':34s}" + "".join(f"{c:>11s}" for c in cols))

    def row(label: str, values: list[float | None], digits: int = 2) -> None:
        print(f"  {label:34s}" + "".join(f"{_cell(v, digits):>11s}" for v in values))

    row("runs measured", [summary[c]["runs"] for c in cols], 0)
    row("per-run time (s, builds excluded)", [summary[c]["seconds"] for c in cols])
    row("ratio to baseline", [None, summary["signals"]["ratio_to_baseline"], summary["fixed"]["ratio_to_baseline"]])
    row("runs per worker-minute", [summary[c]["runs_per_worker_minute"] for c in cols], 1)
    for phase in PHASES:
        row(f"phase {phase} (s)", [None, summary["signals"]["phases"][phase], summary["fixed"]["phases"][phase]])
    row("interaction steps", [None, summary["signals"]["steps"], summary["fixed"]["steps"]], 1)
    labels = {"driver": "CPU s: driver (Python, Playwright)", "node": "CPU s: Playwright driver (node)",
              "children": "CPU s: children (ffmpeg, docker exec)", "container": "CPU s: sandbox container",
              "total": "CPU s: total"}
    for place in CPU_PLACES:
        row(labels[place], [summary[c]["cpu"][place] for c in cols])
    ratio = summary["signals"]["ratio_to_baseline"]
    print(f"  signals / baseline = {_cell(ratio)}: target <= {RATIO_TARGET:.2f} "
          f"{'MET' if ratio is not None and ratio <= RATIO_TARGET else 'not met'}, done at <= {RATIO_DONE:.2f} "
          f"{'MET' if ratio is not None and ratio <= RATIO_DONE else 'MISSED'}")
    print(f"  fixed / baseline = {_cell(summary['fixed']['ratio_to_baseline'])}")
    print(f"\nVerdict agreement (share of apps){'':14s}functional  aesthetic  attributions    all")
    rows = ({"rt_rt": "rt/rt  (rt1 vs rt2)", "sig_rt": "sig/rt (signals vs rt1, rt2; mean)"} if "rt_rt" in agreed
            else {"sig_rt": "sig/rt (signals vs rt1)"})
    for key, label in rows.items():
        print(f"  {label:46s}" + "".join(f"{agreed[key][c]:>11.2f}" for c in
                                          ("functional", "aesthetic", "attributions", "all")))
    for d in agreed["disagreements"]:
        print(f"  disagree: {d['app']} {d['pair']} on {', '.join(d['on'])}: "
              f"{d['first']} vs {d['second']}")


def missed(summary: dict[str, Any], agreed: dict[str, Any]) -> list[str]:
    """The targets this run misses (the ratio's done-at bound, and sig/rt agreement against rt/rt)."""
    misses = []
    ratio = summary["signals"]["ratio_to_baseline"]
    if ratio is None or ratio > RATIO_DONE:
        misses.append(f"signals / baseline {ratio} > {RATIO_DONE} (target {RATIO_TARGET})")
    if agreed["sig_rt"]["all"] < agreed["rt_rt"]["all"]:
        misses.append(f"sig/rt agreement {agreed['sig_rt']['all']} < rt/rt agreement {agreed['rt_rt']['all']}")
    return misses


def smoke_problems(apps: dict[str, dict[str, Measured]], agreed: dict[str, Any], expected: int) -> list[str]:
    """What ``--smoke`` checks: every app measured, every run judged with a verdict, three screenshots each, the
    agreement computed (rt/rt where rt2 was measured)."""
    problems = [] if len(apps) == expected else [f"{len(apps)} of {expected} apps were measured"]
    for name, runs in apps.items():
        for item, run in runs.items():
            if item == "baseline" and run.screenshots != 3:
                problems.append(f"{name} baseline: {run.screenshots} of 3 screenshots")
            elif item != "baseline" and (run.status != "judged" or not run.verdict):
                problems.append(f"{name} {item}: {run.status} ({run.reason}), verdict {run.verdict}")
    wanted = ("sig_rt", "rt_rt") if any("rt2" in runs for runs in apps.values()) else ("sig_rt",)
    if any("all" not in agreed.get(key, {}) for key in wanted):
        problems.append("the agreement was not computed")
    return problems


# ------------------------------------------------------------------------------------------------ main


async def measure_all(apps: list[App], work: Path, *, items: tuple[str, ...], account: bool = False
                      ) -> tuple[dict[str, dict[str, Measured]], list[str], dict[str, Any]]:
    """Every app's measurements of ``items`` (apps not assessable left out, with why), and how the bench was set
    up."""
    measured: dict[str, dict[str, Measured]] = {}
    skipped: list[str] = []
    async with async_playwright() as playwright:
        started = time.perf_counter()
        sandbox = DockerSandbox()
        await sandbox.start()
        try:
            browser = await sandbox.browser(playwright)
            setup: dict[str, Any] = {"sandbox_start_s": round(time.perf_counter() - started, 2),
                     "playwright_driver_is_child": playwright_driver_is_child()}
            clock = await ContainerClock.open(sandbox.name)
            setup["container_cpu_from"] = clock.where
            bench = Bench(playwright, sandbox, browser, ContextPool(browser, ahead=True), clock,
                          create_judge(JudgeConfig()).version, work, items, account)
            for index, app in enumerate(apps):
                runs = await measure_app(bench, app, index)
                _print_app(app, runs)
                if any(run.status == "non_assessable" for run in runs.values()):
                    skipped.append(f"{app.name}: " + ", ".join(sorted({r.reason for r in runs.values() if r.reason})))
                    continue
                measured[app.name] = runs
            await bench.pool.close()
        finally:
            await sandbox.close()
    return measured, skipped, setup


def _print_app(app: App, runs: dict[str, Measured]) -> None:
    cells = []
    for item in ACCOUNT_ITEMS:
        run = runs.get(item)
        if run is not None:
            said = (f"{run.screenshots} shots" if item == "baseline"
                    else f"{run.status[:6]} {_cell(run.functional, 1)}/{_cell(run.aesthetic, 1)}")
            cells.append(f"{item} {run.seconds:6.2f} s {said}" + (f" ({run.note})" if run.note else ""))
    print(f"  {app.name:24s} " + "   ".join(cells), flush=True)


def main() -> int:
    """Run the benchmark; the exit status."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--apps", type=int, default=DEFAULT_APPS, help="apps to measure (demo and calibration "
                                                                       "interleaved)")
    parser.add_argument("--source", choices=["demo", "calibration", "both"], default="both")
    parser.add_argument("--json", type=Path, help="write the full results here")
    parser.add_argument("--smoke", action="store_true", help="one quick demo app, correctness only")
    parser.add_argument("--account", action="store_true", help="where the time goes: stage by stage, and the video")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-regime-") as tmp:
        apps = select_apps(args.source, args.apps, args.smoke, Path(tmp))
        items = ACCOUNT_ITEMS if args.account else SMOKE_ITEMS if args.smoke and not full_suite() else ITEMS
        print(f"{len(apps)} apps; per app, in rotated order: {', '.join(items)}", flush=True)
        measured, skipped, setup = asyncio.run(measure_all(apps, Path(tmp), items=items, account=args.account))
    summary = summarize(measured) if measured else {}
    agreed = agreement(measured) if measured else {}
    wall = round(time.perf_counter() - started, 1)
    for line in skipped:
        print(f"  skipped (not assessable): {line}")
    sources = {s: sum(1 for a in apps if a.name in measured and a.source == s) for s in ("demo", "calibration")}
    if summary:
        print_table(summary, agreed, sources)
    if args.account:
        print_account({item: [runs[item].account for runs in measured.values() if item in runs and runs[item].account]
                       for item in ("signals", "novideo", "rt1")},
                      [runs["signals"].seconds for runs in measured.values() if "novideo" in runs],
                      [runs["novideo"].seconds for runs in measured.values() if "novideo" in runs])
    print(f"\nsandbox start {setup['sandbox_start_s']} s; container CPU from {setup['container_cpu_from']}; "
          f"Playwright driver a child of this process: {setup['playwright_driver_is_child']}; wall {wall} s")
    problems = smoke_problems(measured, agreed, len(SMOKE_APPS)) if args.smoke else \
        (missed(summary, agreed) if summary else ["no app was measured"])
    if args.json is not None:
        args.json.write_text(json.dumps({
            "wall_s": wall, "smoke": args.smoke, "setup": setup, "skipped": skipped, "summary": summary,
            "agreement": agreed, "problems": problems, "targets": {"ratio": RATIO_TARGET, "ratio_done": RATIO_DONE},
            "apps": {name: {item: asdict(run) for item, run in runs.items()} for name, runs in measured.items()},
        }, indent=2))
    for problem in problems:
        print(f"{'FAILED' if args.smoke else 'MISSED'}: {problem}", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
