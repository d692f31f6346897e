"""The ``evalgrid`` command line."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.resources
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from cluster.calibration.calibrate import (
    BUILT_IN,
    SUITE,
    calibration_table,
    load_labels,
    load_suite,
    measure,
    write_sweep,
)
from cluster.calibration.twins import Operator
from cluster.k8s.api import current_namespace
from cluster.k8s.submit import (
    JobStatus,
    create_job,
    find_cluster,
    follow_job,
    job_name,
    job_status,
    list_jobs,
    rayjob_manifest,
    read_cluster,
    submitter_template,
)
from cluster.pairwise.stage import CompareOptions, compare
from cluster.pairwise.summary import summary_tables
from cluster.reduce.leaderboard import build_leaderboard, leaderboard_table
from cluster.reduce.records import Reduction, RunRow
from cluster.reduce.reducer import RunDirectory, open_run_directory, reduce_run_dir, write_tables
from cluster.repair.lift import LiftOptions, repair_lift
from cluster.repair.summary import lift_table
from cluster.report.html import write_report
from cluster.report.show import run_panel
from cluster.sandbox.docker_backend import collect_garbage
from cluster.sandbox.k8s_backend import collect_garbage as collect_pod_garbage
from cluster.scheduling.judge_pool import JudgeServerSpec, connected, endpoint_yaml, pool_health, start_pool, stop_pool
from cluster.scheduling.ray_grid import RayOptions
from cluster.scheduling.rejudge import parse_judge, rejudge
from cluster.scheduling.runner import GridOptions, Scheduler, SweepResult, run_sweep
from cluster.store.ledger import Ledger
from cluster.store.object_store import StoreLocation, StoreSettings, is_store_url
from cluster.sweep.inputs import InputsRef, fetch_inputs, resolve_inputs, upload_inputs
from cluster.sweep.spec import SandboxSpec, Sweep, SweepSpec, load_sweep
from evaluator.agents.observation import Action, AgentSummary, Observation, StepRecord
from evaluator.agents.policies import policies
from evaluator.answer.repair import RepairOptions
from evaluator.atomic import write_json_atomic
from evaluator.errors import ConfigError, EvalgridError
from evaluator.judges import judges
from evaluator.judges.ux_report import UxJudgeOptions
from evaluator.llm.budget import SpendingCap
from evaluator.llm.client import POOL_NAME, Endpoint
from evaluator.models import (
    AgentConfig,
    Artifact,
    EvidenceManifest,
    Outcome,
    OutcomeStatus,
    Query,
    QuerySet,
    Verdict,
)
from evaluator.preview.report import DEFAULT_CHECKS, PreviewCheck

if TYPE_CHECKING:
    # argparse gives the type add_subparsers() returns no public name.
    _Commands = argparse._SubParsersAction[argparse.ArgumentParser]

SCHEMAS: dict[str, type[BaseModel]] = {
    "SweepSpec": SweepSpec, "QuerySet": QuerySet, "Query": Query, "Artifact": Artifact,
    "EvidenceManifest": EvidenceManifest, "Verdict": Verdict, "Outcome": Outcome,
    "Observation": Observation, "Action": Action, "StepRecord": StepRecord, "AgentSummary": AgentSummary,
}

PLUGIN_OPTIONS = "PluginOptions"

_EPILOG = """examples:
  evalgrid run fixtures/sweeps/demo.yaml            run (or resume) the demo sweep into runs/demo
  evalgrid run sweep.yaml --workers 8 --ray-address auto   on a Ray cluster, 8 sandboxes
  evalgrid run sweep.yaml --run-dir s3://lab-evals/sweeps/may   evidence in object storage; resumable from it
  evalgrid cluster submit sweep.yaml --run-dir s3://lab-evals/sweeps/may   as a RayJob on the chart's RayCluster
  evalgrid cluster status NAME --follow              follow a submitted sweep
  evalgrid sandbox gc                                remove sandbox containers left by killed drivers
  evalgrid status runs/demo                          outcome counts of a run directory
  evalgrid leaderboard runs/demo                     print the leaderboard again
  evalgrid report runs/demo                          static HTML report in runs/demo/report
  evalgrid show 3f2a9c                               one run (by run-key prefix) in the terminal
  evalgrid rejudge runs/demo --judge llm --option endpoint=judge --option model=qwen-72b   a new judge, no browser
  evalgrid compare runs/demo --judge heuristic --better careful,sloppy,broken   pairwise, both orders, no browser
  evalgrid repair-lift runs/ux --judge judge:qwen-vl --repairer coder:qwen-coder --evaluator judge:qwen-72b
                                                    is a judge's UX report actionable? (UXBench repair lift)
  evalgrid schema Verdict                            JSON schema of one record type
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalgrid`` console script."""
    parser = _parser()
    args = parser.parse_args(argv)
    console = Console(stderr=True)
    try:
        code: int = args.handler(args, console)
        return code
    except EvalgridError as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        return 2
    except KeyboardInterrupt:
        console.print("interrupted; every finished run is recorded — re-run the same command to resume")
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalgrid", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_EPILOG,
        description="Evaluate LLM-generated web apps the Cookie-Frame way: static perception, agent-driven "
                    "interaction in a real browser with the page frozen while the agent thinks, then "
                    "functional and aesthetic verdicts with failure attribution.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_run(sub)
    _add_sandbox(sub)
    _add_cluster(sub)
    _add_judge(sub)
    _add_rejudge(sub)
    _add_compare(sub)
    _add_repair_lift(sub)
    _add_readers(sub)
    _add_calibrate(sub)
    _add_mcp(sub)
    _add_doctor_and_schema(sub)
    return parser


def _add_run(sub: _Commands) -> None:
    run = sub.add_parser("run", help="run or resume a sweep", formatter_class=argparse.RawDescriptionHelpFormatter,
                         description="Run every candidate × query of SWEEP. Re-running the same command resumes: "
                                     "runs with a recorded outcome are skipped, and stage outputs that exist "
                                     "(artifacts, evidence, verdicts) are reused.")
    run.add_argument("sweep", type=Path, nargs="?", help="sweep file (YAML); see `evalgrid schema SweepSpec`")
    run.add_argument("--inputs", metavar="URL",
                     help="instead of SWEEP: a packed sweep (s3://…/inputs/<sha256>.tar.gz, as `evalgrid cluster "
                          "submit` writes); every worker fetches it too")
    run.add_argument("--run-dir",
                     help="where outputs go: a directory or s3://bucket/prefix (default: runs/<sweep name>)")
    run.add_argument("--staging-dir", type=Path,
                     help="with an s3:// run dir: this machine's working copy (default: "
                          "~/.cache/evalgrid/s3/<bucket>/<prefix>); it can be deleted, the store is enough to resume")
    run.add_argument("--s3-endpoint", help="S3-compatible endpoint URL (MinIO, Ceph …; default: AWS, or "
                                           "$AWS_ENDPOINT_URL_S3 / $AWS_ENDPOINT_URL); credentials come from "
                                           "the environment as for any boto3 program")
    run.add_argument("--sse", choices=["none", "AES256", "aws:kms"], default="none",
                     help="server-side encryption of every object written (default none)")
    run.add_argument("--sse-kms-key", help="KMS key id for --sse aws:kms (default: the bucket's key)")
    run.add_argument("--workers", "--concurrency", dest="workers", type=int,
                     help="sandboxes (runs in flight) at once (overrides the sweep's concurrency)")
    run.add_argument("--sandbox", choices=["docker", "kubernetes", "local"],
                     help="docker: hardened containers with no network (default from the sweep file, docker); "
                          "kubernetes: hardened pods created by the workers (in a cluster installed with the "
                          "Helm chart); local: this machine's Chromium on loopback, NOT a sandbox")
    run.add_argument("--scheduler", choices=["ray", "local"], default="ray",
                     help="ray: SandboxWorker actors (default); local: workers in this process (no Ray)")
    run.add_argument("--ray-address", help="Ray cluster to join, e.g. 'auto' inside a RayCluster "
                                           "(default: start a local Ray instance)")
    run.add_argument("--shard-size", type=int, default=1,
                     help="runs per actor call (default 1; raise it for very short runs)")
    run.add_argument("--no-progress", action="store_true", help="no live progress bar (for logs and CI)")
    run.set_defaults(handler=_cmd_run)


def _add_sandbox(sub: _Commands) -> None:
    sandbox = sub.add_parser("sandbox", help="manage sandbox containers")
    sandbox_sub = sandbox.add_subparsers(dest="action", required=True, metavar="ACTION")
    gc = sandbox_sub.add_parser("gc", help="remove sandbox containers whose owner process is gone",
                                description="Remove evalgrid sandbox containers left behind by a driver or "
                                            "worker that died (even by SIGKILL). Containers of live processes "
                                            "are kept unless --all is given.")
    gc.add_argument("--all", action="store_true", help="remove every evalgrid sandbox (of this engine, or of "
                                                       "this worker pod with --backend kubernetes)")
    gc.add_argument("--backend", choices=["docker", "kubernetes"], default="docker",
                    help="docker: containers on this machine's engine (default); kubernetes: sandbox pods in the "
                         "sandbox namespace ($EVALGRID_K8S_SANDBOX's, else the current one)")
    gc.set_defaults(handler=_cmd_sandbox_gc)


def _add_cluster(sub: _Commands) -> None:
    kube = sub.add_parser("cluster", help="run sweeps on Kubernetes (a RayCluster from the evalgrid Helm chart)")
    kube_sub = kube.add_subparsers(dest="action", required=True, metavar="ACTION")
    submit = kube_sub.add_parser(
        "submit", help="submit a sweep as a RayJob", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Pack SWEEP (its sweep file, query file and replayed answers) into the run directory's object "
                    "store and create a KubeRay RayJob, in the current kube context, that runs it on the chart's "
                    "RayCluster with Kubernetes sandboxes. Object-store credentials come from the environment "
                    "here, and from the chart's Secret in the cluster.")
    submit.add_argument("sweep", type=Path, help="sweep file (YAML)")
    submit.add_argument("--run-dir", required=True, help="s3://bucket/prefix for the run directory (required: "
                                                          "every pod must reach it)")
    submit.add_argument("--cluster",
                        help="RayCluster to run on (default: the one evalgrid RayCluster in the namespace)")
    submit.add_argument("--namespace", help="namespace (default: the kube context's)")
    submit.add_argument("--workers", type=int, help="sandboxes at once (default: the sweep's concurrency)")
    submit.add_argument("--s3-endpoint", help="S3-compatible endpoint to upload the inputs through (from here)")
    submit.add_argument("--follow", action="store_true", help="follow the job until it ends")
    submit.set_defaults(handler=_cmd_cluster_submit)
    job = kube_sub.add_parser("status", help="status of submitted sweeps",
                              description="Show one RayJob (or all evalgrid RayJobs of the namespace).")
    job.add_argument("name", nargs="?", help="RayJob name, as `cluster submit` printed it (default: list them all)")
    job.add_argument("--namespace", help="namespace (default: the kube context's)")
    job.add_argument("--follow", action="store_true", help="poll until the job ends")
    job.set_defaults(handler=_cmd_cluster_status)


def _add_judge(sub: _Commands) -> None:
    judge = sub.add_parser("judge", help="judge models on your own GPUs: vLLM servers as Ray actors")
    judge_sub = judge.add_subparsers(dest="action", required=True, metavar="ACTION")
    serve = judge_sub.add_parser(
        "serve", help="start a pool of vLLM judge servers in a Ray cluster",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Start REPLICAS vLLM OpenAI-compatible servers for MODEL as Ray actors (each reserving "
                    "--num-gpus GPUs), register them as pool NAME, and print the sweep-file lines that route an LLM "
                    "judge to them. The pool outlives this command with --detach; otherwise Ctrl-C stops it.",
        epilog="example (in the Helm chart's cluster, on its judge group):\n"
               "  evalgrid judge serve --model s3://lab-models/qwen2.5-72b-instruct --served-model-name qwen-72b \\\n"
               "      --replicas 2 --num-gpus 4 --tensor-parallel 4 --ray-resource evalgrid-judge=1 \\\n"
               "      --ray-address auto --detach")
    serve.add_argument("--model", default="", help="model directory on the judge nodes, or s3://bucket/prefix "
                                                   "(default: the nodes' $EVALGRID_JUDGE_MODEL, set by the Helm chart)")
    serve.add_argument("--served-model-name", required=True, help="the model id judges ask for")
    serve.add_argument("--name", default="judges", help="pool name sweeps refer to (default: judges)")
    serve.add_argument("--replicas", type=int, default=1, help="servers (default 1)")
    serve.add_argument("--num-gpus", type=float, default=0.0, help="GPUs per server (default 0: CPU)")
    serve.add_argument("--tensor-parallel", type=int, help="vLLM tensor-parallel size (default: the nodes' "
                                                           "$EVALGRID_JUDGE_TENSOR_PARALLEL, else 1)")
    serve.add_argument("--ray-resource", action="append", default=[], metavar="NAME=AMOUNT",
                       help="another Ray resource per server, e.g. evalgrid-judge=1 (the chart's judge group)")
    serve.add_argument("--port", type=int, default=8000, help="first port (default 8000)")
    serve.add_argument("--max-model-len", type=int, help="vLLM's context limit")
    serve.add_argument("--vllm-arg", action="append", default=[], help="extra vLLM server argument (repeatable)")
    serve.add_argument("--vllm-python", help="interpreter with vLLM (default $EVALGRID_VLLM_PYTHON, else this one)")
    serve.add_argument("--s3-endpoint", help="S3-compatible endpoint for an s3:// model")
    serve.add_argument("--start-timeout", type=float, default=900.0, help="seconds a server may take (default 900)")
    serve.add_argument("--ray-address", help="Ray cluster to join (default: start a local one)")
    serve.add_argument("--detach", action="store_true", help="leave the pool running and return")
    serve.set_defaults(handler=_cmd_judge_serve)
    for action, text in (("status", "health of a judge pool's servers"), ("stop", "stop a judge pool")):
        cmd = judge_sub.add_parser(action, help=text)
        cmd.add_argument("--name", default="judges", help="pool name (default: judges)")
        cmd.add_argument("--ray-address", default="auto", help="Ray cluster (default: auto)")
        cmd.set_defaults(handler=_cmd_judge_status if action == "status" else _cmd_judge_stop)


def _add_rejudge(sub: _Commands) -> None:
    rejudge_cmd = sub.add_parser(
        "rejudge", help="score a run directory's stored evidence with another judge (no browser)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Score every stored evidence bundle of RUN_DIR with another judge. No browser is started: the "
                    "evidence is frozen. Verdicts are stored beside the sweep's (the report then compares the "
                    "judges); the new leaderboard goes to RUN_DIR/rejudged/<judge>/.",
        epilog="examples:\n  evalgrid rejudge runs/demo --judge llm --option endpoint=judge --option model=qwen-72b\n"
               "  evalgrid rejudge runs/demo --judge heuristic --option rubric=heuristic-v1")
    rejudge_cmd.add_argument("run_dir", type=Path)
    rejudge_cmd.add_argument("--judge", required=True, help="registered judge name (heuristic, llm)")
    rejudge_cmd.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                             help="a judge option (repeatable), e.g. endpoint=judge, model=..., keyframes=8")
    rejudge_cmd.add_argument("--endpoints", type=Path,
                             help="YAML file of endpoints (name: {base_url: ..., api_key_env: ...}); default: the "
                                  "sweep's")
    rejudge_cmd.add_argument("--concurrency", type=int, default=4, help="bundles judged at once (default 4)")
    rejudge_cmd.add_argument("--budget-usd", type=float, help="stop making paid calls past this spending")
    rejudge_cmd.set_defaults(handler=_cmd_rejudge)


def _add_compare(sub: _Commands) -> None:
    cmd = sub.add_parser(
        "compare", help="judge pairs of apps of each query in both orders (pairwise, on stored evidence)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compare candidates' apps pairwise: each pair of one query's bundles is shown to a pairwise "
                    "judge in both orders (no browser). Prints position consistency (FA/SA/AA/CA on pairs whose "
                    "better app is known, --better), order effects, and Bradley-Terry ratings from the pairs; "
                    "writes RUN_DIR/pairwise/<judge>/summary.json, which `evalgrid report` shows.",
        epilog="examples:\n  evalgrid compare runs/demo --judge heuristic --better careful,sloppy,broken\n"
               "  evalgrid compare runs/demo --judge llm --option endpoint=judge --option model=qwen-vl \\\n"
               "      --pairs adjacent\n"
               "  evalgrid compare runs/demo --judge heuristic --human votes.csv   (columns: query,a,b,winner)")
    cmd.add_argument("run_dir", type=Path)
    cmd.add_argument("--judge", default="heuristic", help="pairwise judge: heuristic (no model) or llm")
    cmd.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                     help="a judge option (repeatable): endpoint, model, images_per_side, tie_margin ...")
    cmd.add_argument("--candidates", help="comma-separated candidates to compare (default: all)")
    cmd.add_argument("--pairs", default="all",
                     help="all, adjacent (neighbours in the absolute ranking), sample:N, or twins (a run directory of "
                          "`evalgrid calibrate`: each mutation twin against its original, the original known better)")
    cmd.add_argument("--better", default="", metavar="BEST,NEXT,...",
                     help="candidates in known order of quality, best first: enables FA/SA/AA/CA")
    cmd.add_argument("--human", type=Path, metavar="VOTES.csv", help="human pairwise votes to compare the judge with")
    cmd.add_argument("--endpoints", type=Path, help="YAML mapping of endpoint name to settings (default: the sweep's)")
    cmd.add_argument("--concurrency", type=int, default=4, help="comparisons at once (default 4)")
    cmd.add_argument("--budget-usd", type=float, help="stop making paid calls past this spending")
    cmd.add_argument("--seed", type=int, default=0, help="seed of --pairs sample:N")
    cmd.set_defaults(handler=_cmd_compare)


def _add_repair_lift(sub: _Commands) -> None:
    cmd = sub.add_parser(
        "repair-lift", help="measure how actionable a judge's UX reports are (UXBench repair lift)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="For each judged run: the judge writes a UX report (seven dimensions, findings with evidence "
                    "and a suggested change); a fixed repairer edits the app from it; the repaired app runs the full "
                    "regime again; a fixed evaluator scores both. Prints the lift (repaired minus original) per "
                    "dimension with bootstrap intervals over fixtures; writes RUN_DIR/repair-lift/<judge>/lift.json. "
                    "Models are ENDPOINT:MODEL, the endpoint a name under the sweep's endpoints (or --endpoints).",
        epilog="example:\n  evalgrid run fixtures/ux/sweep.yaml\n"
               "  evalgrid repair-lift runs/ux --candidates flawed --judge judge:qwen-vl \\\n"
               "      --repairer coder:qwen-coder --evaluator judge:qwen-72b --judge-option keyframes=4")
    cmd.add_argument("run_dir", type=Path)
    for role, text in (("judge", "the judge being measured (writes the reports)"),
                       ("repairer", "the fixed repair model"), ("evaluator", "the fixed UX evaluator")):
        cmd.add_argument(f"--{role}", required=True, metavar="ENDPOINT:MODEL", help=text)
        cmd.add_argument(f"--{role}-option", action="append", default=[], metavar="KEY=VALUE",
                         help=f"an option of the {role} (repeatable), e.g. images=false, max_tokens=4000")
    cmd.add_argument("--candidates", help="comma-separated candidates whose apps are repaired (default: all)")
    cmd.add_argument("--endpoints", type=Path, help="YAML mapping of endpoint name to settings (default: the sweep's)")
    cmd.add_argument("--concurrency", type=int, default=2, help="model calls at once (default 2)")
    cmd.add_argument("--budget-usd", type=float, help="stop making paid calls past this spending")
    cmd.set_defaults(handler=_cmd_repair_lift)


def _add_readers(sub: _Commands) -> None:
    status = sub.add_parser("status", help="outcome counts of a run directory")
    status.add_argument("run_dir", type=Path)
    status.set_defaults(handler=_cmd_status)

    board = sub.add_parser("leaderboard", help="print the leaderboard of a run directory")
    board.add_argument("run_dir", type=Path)
    board.set_defaults(handler=_cmd_leaderboard)

    for name, text in (("report", "write the static HTML report (leaderboard, plots, a page per run with its video)"),
                       ("export", "write runs.parquet, runs.csv, runs.json and reduction.json")):
        reducer = sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        reducer.add_argument("run_dir", type=Path)
        reducer.add_argument("--out", type=Path, help=f"output directory (default: RUN_DIR/{name}"
                             f"{'' if name == 'report' else 's'})")
        reducer.add_argument("--pass-threshold", type=float, default=6.0,
                             help="overall score (0-8) a run needs to pass (default: 6.0)")
        reducer.add_argument("--samples", type=int, default=1000, help="bootstrap resamples (default: 1000)")
        reducer.add_argument("--human-ratings", type=Path,
                             help="CSV of human scores: candidate_id, query_id, functional, aesthetic")
        reducer.set_defaults(handler=_cmd_report if name == "report" else _cmd_export)

    show = sub.add_parser("show", help="print one run in the terminal")
    show.add_argument("run_key", help="run key, or a unique prefix of it (with or without 'run-')")
    show.add_argument("--run-dir", type=Path, help="run directory (default: search runs/*)")
    show.set_defaults(handler=_cmd_show)


def _add_calibrate(sub: _Commands) -> None:
    calibrate = sub.add_parser(
        "calibrate", help="measure a judge and agent on working apps and their broken twins",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run the calibration suite (working apps and their mutation twins, fixtures/calibration) through "
                    "the grid with a judge and an agent, and measure how well they tell them apart: functional "
                    "pairwise accuracy (overall and per operator), AUC, aesthetic-twin accuracy and functional drift "
                    "on aesthetic twins. Writes RUN_DIR/calibration.json and RUN_DIR/calibrations/<key>.json (the "
                    "key names the judge version and agent config). Re-running resumes and reuses verdicts.",
        epilog="examples:\n  evalgrid calibrate --judge heuristic --min-pairwise 0.95 --min-auc 0.95\n"
               "  evalgrid calibrate --apps cal-pantry-vanilla,cal-snake-vanilla \\\n"
               "      --operators enter_swallowed,css_removed")
    calibrate.add_argument("--judge", default="heuristic", help="registered judge name (default heuristic)")
    calibrate.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="a judge option")
    calibrate.add_argument("--agent", default="explorer", help="agent policy (default explorer)")
    calibrate.add_argument("--agent-option", action="append", default=[], metavar="KEY=VALUE",
                           help="an agent setting (max_steps=20, seed=1 ...) or policy option (repeatable)")
    calibrate.add_argument("--min-pairwise", type=float, help="exit 1 if functional pairwise accuracy is below this")
    calibrate.add_argument("--min-auc", type=float, help="exit 1 if the functional AUC is below this")
    calibrate.add_argument("--apps", help="comma-separated app ids (default: the whole suite)")
    calibrate.add_argument("--operators", help=f"comma-separated operators (default all: "
                                               f"{', '.join(op.value for op in Operator)})")
    calibrate.add_argument("--suite", type=Path, default=SUITE,
                           help="suite directory (default: the built-in one; fixtures/realapps: third-party apps)")
    calibrate.add_argument("--split", choices=["all", "dev", "test"], default="all",
                           help="a real-app suite's half: dev (tune on it) or test (never tune on it); default all")
    calibrate.add_argument("--run-dir", type=Path, default=Path("runs") / "calibration",
                           help="where the suite's runs and calibration.json go (default runs/calibration)")
    calibrate.add_argument("--workers", type=int, default=2, help="runs in flight at once (default 2)")
    calibrate.add_argument("--sandbox", choices=["docker", "local"], default="docker",
                           help="docker (default): the hardened sandbox; local: this machine's Chromium, NOT a "
                                "sandbox, and no CDN mirror or builds")
    calibrate.add_argument("--scheduler", choices=["ray", "local"], default="ray", help="as for `evalgrid run`")
    calibrate.add_argument("--no-progress", action="store_true", help="a line per run instead of a progress bar")
    calibrate.set_defaults(handler=_cmd_calibrate)


def _add_mcp(sub: _Commands) -> None:
    mcp = sub.add_parser(
        "mcp", help="serve the app preview tool (create_app_preview) to coding agents over MCP",
        description="Serve create_app_preview over MCP: a coding agent sends its app's files and gets a report "
                    "(status, problems with file and line, a diagnosis, the next action, and the desktop "
                    "screenshot) from the same sandbox and Static Perception evalgrid runs. It reveals only the "
                    "checks listed by --checks, never a judge, rubric or checklist. Over HTTP it binds to loopback "
                    "unless --host says otherwise, needs a bearer token in $EVALGRID_MCP_TOKEN (or --token-env), and "
                    "refuses other Hosts and Origins.")
    mcp.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                     help="stdio (default): the client starts this command; http: streamable HTTP at /mcp")
    mcp.add_argument("--sandbox", choices=["docker", "local"], default="docker",
                     help="docker (default): the hardened sandbox; local: this machine's Chromium on loopback, NOT a "
                          "sandbox (for apps you trust)")
    mcp.add_argument("--host", default="127.0.0.1", help="HTTP: the address to bind (default 127.0.0.1)")
    mcp.add_argument("--port", type=int, default=8765, help="HTTP: the port (default 8765)")
    mcp.add_argument("--token-env", default="EVALGRID_MCP_TOKEN",
                     help="HTTP: the environment variable holding the bearer token (default EVALGRID_MCP_TOKEN)")
    mcp.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                     help="HTTP: an Origin to accept besides loopback's (repeatable)")
    mcp.add_argument("--allow-host", action="append", default=[], metavar="NAME:PORT",
                     help="HTTP: a Host header to accept besides loopback's (repeatable; needed with --host 0.0.0.0)")
    mcp.add_argument("--checks", default=",".join(DEFAULT_CHECKS),
                     help=f"what the report may reveal, comma-separated (default: {','.join(DEFAULT_CHECKS)})")
    mcp.add_argument("--no-screenshot", action="store_true", help="send the report without the screenshot")
    mcp.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                     help="a preview's limit: a page not seen by then is reported as too slow to load (default 60)")
    mcp.set_defaults(handler=_cmd_mcp)


def _add_doctor_and_schema(sub: _Commands) -> None:
    doctor = sub.add_parser(
        "doctor", help="check this host's tools for set-up (as `make doctor` does)",
        description="Report, for every host tool evalgrid's set-up relies on (Chromium, ffmpeg, the Docker engine, "
                    "node and npm, debootstrap, pulseaudio, fonts, Python, disk), the version found, whether it is "
                    "supported and what to do when it is not; and whether the sandbox and worker images are "
                    "current for the checkout. Exits 1 when set-up cannot succeed as things are.")
    doctor.add_argument("--for", dest="purpose", choices=["demo", "test"], default="test",
                        help="what the host is checked for: `make demo` needs less than `make test` (default: test)")
    doctor.add_argument("--root", type=Path,
                        help="the evalgrid checkout whose images to compare (default: this directory, else the "
                             "checkout evalgrid is installed from)")
    doctor.set_defaults(handler=_cmd_doctor)

    schema = sub.add_parser("schema", help="print JSON schemas of evalgrid's records")
    schema.add_argument("name", nargs="?", choices=sorted([*SCHEMAS, PLUGIN_OPTIONS]),
                        help=f"one record type, or {PLUGIN_OPTIONS} for each judge's and agent policy's options "
                             "(default: all)")
    schema.set_defaults(handler=_cmd_schema)


def _cmd_run(args: argparse.Namespace, console: Console) -> int:
    sweep, inputs = _sweep_to_run(args, console)
    run_dir, store = _run_location(args, sweep, inputs)
    where = f"{store.url} (staging: {run_dir})" if store else str(run_dir)
    console.print(f"sweep [bold]{sweep.spec.name}[/]: {len(sweep.spec.candidates)} candidates × "
                  f"{len(sweep.queries)} queries = {sweep.size} runs → {where}", highlight=False)
    _describe_sandbox(sweep.spec.sandbox, console)
    grid = GridOptions(scheduler=args.scheduler, workers=sweep.spec.concurrency,
                       ray=RayOptions(shard_size=args.shard_size, address=args.ray_address))
    result = _run_with_progress(sweep, run_dir, grid, console, no_progress=args.no_progress, store=store,
                                inputs=inputs)
    return _report_run(result, sweep, run_dir, where, console)


def _sweep_to_run(args: argparse.Namespace, console: Console) -> tuple[Sweep, InputsRef | None]:
    """The sweep file (or the packed inputs) with the command line's overrides."""
    inputs: InputsRef | None = None
    if (args.sweep is None) == (args.inputs is None):
        raise ConfigError("give a sweep file or --inputs URL (one of them)")
    if args.inputs is not None:
        inputs = resolve_inputs(args.inputs, StoreSettings(url=args.inputs, endpoint_url=args.s3_endpoint))
        with console.status(f"fetching the sweep's inputs from {args.inputs} ..."):
            sweep = load_sweep(fetch_inputs(inputs))
    else:
        sweep = load_sweep(args.sweep)
    update: dict[str, object] = {}
    if args.workers is not None:
        if not 1 <= args.workers <= 32:
            raise ConfigError("--workers must be between 1 and 32")
        update["concurrency"] = args.workers
    if args.sandbox is not None:
        update["sandbox"] = sweep.spec.sandbox.model_copy(update={"backend": args.sandbox})
    if args.shard_size < 1:
        raise ConfigError("--shard-size must be at least 1")
    if update:
        sweep = type(sweep)(spec=sweep.spec.model_copy(update=update), path=sweep.path, queries=sweep.queries)
    return sweep, inputs


def _run_location(args: argparse.Namespace, sweep: Sweep, inputs: InputsRef | None
                  ) -> tuple[Path, StoreSettings | None]:
    """The local run directory (the staging copy, for an s3:// one) and the object store, if any."""
    if args.run_dir and is_store_url(args.run_dir):
        location = StoreLocation.parse(args.run_dir)
        store = StoreSettings(url=location.url, endpoint_url=args.s3_endpoint, encryption=args.sse,
                              kms_key_id=args.sse_kms_key)
        return args.staging_dir or _cache_home() / "evalgrid" / "s3" / location.bucket / location.prefix, store
    if args.staging_dir or args.sse != "none" or args.sse_kms_key or (args.s3_endpoint and not inputs):
        raise ConfigError("--staging-dir, --s3-endpoint and --sse apply only to an s3:// --run-dir")
    return (Path(args.run_dir) if args.run_dir else Path("runs") / sweep.spec.name), None


def _describe_sandbox(box: SandboxSpec, console: Console) -> None:
    if box.backend == "kubernetes":
        console.print(f"sandbox: kubernetes pods — egress denied by the chart's NetworkPolicy, non-root, read-only "
                      f"root, all capabilities dropped, memory {box.memory}, cpus {box.cpus}", highlight=False)
    elif box.backend == "local":
        console.print("[yellow]sandbox: local backend — apps run in this machine's Chromium with requests "
                      "confined to loopback; this is NOT a container sandbox.[/]")
    else:
        console.print(f"sandbox: docker {box.image} — no network, non-root, read-only root, all capabilities "
                      f"dropped, memory {box.memory}, cpus {box.cpus}, pids {box.pids}", highlight=False)


def _report_run(result: SweepResult, sweep: Sweep, run_dir: Path, where: str, console: Console) -> int:
    """Print what the invocation did and the leaderboard; the exit code (3: the budget was reached)."""
    if result.removed_containers:
        console.print(f"removed {len(result.removed_containers)} sandbox container(s) left by dead processes")
    if result.redone:
        console.print(f"{result.redone} run(s) that were in flight when an earlier invocation died were redone")
    if result.torn_lines:
        console.print(f"note: {result.torn_lines} torn line(s) in results.jsonl were ignored (a crash mid-write); "
                      "those runs were redone")
    assert result.leaderboard is not None  # run_sweep writes it
    _stdout().print(leaderboard_table(result.leaderboard))
    for table in summary_tables(result.pairwise) if result.pairwise else []:
        _stdout().print(table)
    rate = result.executed / result.seconds if result.seconds else 0.0
    console.print(f"{result.executed} runs executed, {result.skipped} skipped, in {result.seconds:.1f} s "
                  f"({rate * 60:.1f} runs/min). Results: {where}/results.jsonl", highlight=False)
    if result.spent_usd is not None:
        console.print(f"model spending: ${result.spent_usd:.4f} of the ${sweep.spec.budget_usd:.2f} budget",
                      highlight=False)
    if result.deferred:
        console.print(f"[yellow]budget reached: {len(result.deferred)} run(s) were not finished and are listed in "
                      f"{run_dir / 'deferred.json'}; raise budget_usd in the sweep file and re-run the same command "
                      "to continue.[/]", highlight=False)
        return 3
    return 0


def _run_with_progress(sweep: Sweep, run_dir: Path, grid: GridOptions, console: Console, *, no_progress: bool,
                       store: StoreSettings | None = None, inputs: InputsRef | None = None) -> SweepResult:
    """Run ``sweep`` on the grid with a progress bar, a per-worker health line and a line per outcome."""
    console.print(f"scheduler: {grid.scheduler}, {sweep.spec.concurrency} worker(s)", highlight=False)
    shown = _ProgressDisplay(console, sweep.size, no_progress=no_progress)

    async def main() -> SweepResult:
        try:
            return await run_sweep(sweep, run_dir, grid=grid, observer=shown, store=store, inputs=inputs)
        finally:
            shown.stop_watching()

    with Live(Group(shown.progress, shown.health), console=console, transient=False, refresh_per_second=4,
              redirect_stderr=False) if not no_progress else contextlib.nullcontext():
        return asyncio.run(main())


class _ProgressDisplay:
    """A sweep's progress bar with counts and rate, the workers' health line, and (without the bar) a line per
    outcome: the :class:`~cluster.scheduling.runner.SweepObserver` of ``evalgrid run``."""

    def __init__(self, console: Console, total: int, *, no_progress: bool) -> None:
        self.console, self.no_progress = console, no_progress
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[counts]}"), TimeElapsedColumn(), TextColumn("ETA"),
                                 TimeRemainingColumn(), TextColumn("{task.fields[rate]}"), console=console,
                                 disable=no_progress)
        self.task = self.progress.add_task("runs", total=total, counts="", rate="")
        # Per-worker health on its own line, without a bar: runs, failures, sandbox restarts, busy/idle.
        self.health = Progress(TextColumn("[bold]workers[/] {task.fields[line]}"), console=console,
                               disable=no_progress)
        self.workers_task = self.health.add_task("workers", line="starting ...")
        self.counts: Counter[str] = Counter()
        self.started = time.monotonic()
        self.done_here = 0
        self.watchers: list[asyncio.Task[None]] = []

    def on_start(self, total: int, skipped: int) -> None:
        if skipped:
            self.console.print(f"resuming: {skipped} of {total} runs already have an outcome and are skipped")
        self.progress.update(self.task, completed=skipped)

    def on_scheduler(self, scheduler: Scheduler) -> None:
        self.watchers.append(asyncio.create_task(_watch_workers(scheduler, self.health, self.workers_task)))

    def on_outcome(self, outcome: Outcome) -> None:
        self.done_here += 1
        self.counts[outcome.status.value] += 1
        rate = self.done_here / max(time.monotonic() - self.started, 1e-6) * 60
        self.progress.update(self.task, advance=1, rate=f"{rate:.1f} runs/min",
                             counts=" ".join(f"{k}={v}" for k, v in sorted(self.counts.items())))
        if self.no_progress:
            score = (f"F={outcome.functional:.1f} A={outcome.aesthetic:.1f}"
                     if outcome.status is OutcomeStatus.JUDGED else outcome.reason.code.value)
            self.console.print(f"  {outcome.candidate_id} × {outcome.query_id}: {outcome.status.value} {score}",
                               highlight=False)

    def stop_watching(self) -> None:
        for watcher in self.watchers:
            watcher.cancel()


def _cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


async def _watch_workers(scheduler: Scheduler, progress: Progress, task: TaskID) -> None:
    """Refresh the per-worker health line every 2 s: runs, failures, sandbox restarts, current run."""
    while True:
        await asyncio.sleep(2)
        parts = []
        for health in await scheduler.health():
            state = "busy" if health.current else "idle"
            parts.append(f"{health.worker_id.removeprefix('worker-')}:{state} {health.runs} runs"
                         + (f" {health.failures} failed" if health.failures else "")
                         + (f" {health.sandbox_restarts} restarts" if health.sandbox_restarts else ""))
        progress.update(task, line=" | ".join(parts))


def _cmd_cluster_submit(args: argparse.Namespace, console: Console) -> int:
    if not is_store_url(args.run_dir):
        raise ConfigError("--run-dir must be an s3:// location: the driver and every worker pod write to it")
    if args.workers is not None and not 1 <= args.workers <= 1024:
        raise ConfigError("--workers must be between 1 and 1024")
    sweep = load_sweep(args.sweep)
    run_dir = StoreLocation.parse(args.run_dir).url
    namespace = args.namespace or current_namespace()
    cluster = args.cluster or asyncio.run(find_cluster(namespace))
    # The submitter pod is made from the cluster's head: its labels let it through the chart's
    # NetworkPolicy to the job API, and the Ray token (by Secret reference) gets it accepted there.
    submitter = submitter_template(asyncio.run(read_cluster(cluster, namespace)))
    with console.status("packing and uploading the sweep's inputs ..."):
        inputs = upload_inputs(sweep, StoreSettings(url=run_dir, endpoint_url=args.s3_endpoint))
    console.print(f"inputs: {inputs.url} ({sweep.size} runs)", highlight=False)
    name = job_name(sweep.spec.name, inputs, run_dir)
    asyncio.run(create_job(rayjob_manifest(name=name, namespace=namespace, cluster=cluster,
                                           sweep_name=sweep.spec.name, inputs=inputs, run_dir=run_dir,
                                           workers=args.workers, submitter=submitter)))
    print(name)
    console.print(f"submitted RayJob {name} to RayCluster {cluster} in {namespace}; follow it with "
                  f"`evalgrid cluster status {name} --follow`", highlight=False)
    if args.follow:
        return _follow(name, namespace, console)
    return 0


def _cmd_cluster_status(args: argparse.Namespace, console: Console) -> int:
    namespace = args.namespace or current_namespace()
    if args.name is None:
        if args.follow:
            raise ConfigError("--follow needs a RayJob name")
        jobs = asyncio.run(list_jobs(namespace))
        print(json.dumps([job.model_dump() for job in jobs], indent=2))
        if not jobs:
            console.print(f"no evalgrid RayJob in namespace {namespace}")
        return 0
    if args.follow:
        return _follow(args.name, namespace, console)
    print(asyncio.run(job_status(args.name, namespace)).model_dump_json(indent=2))
    return 0


def _follow(name: str, namespace: str, console: Console) -> int:
    def show(status: JobStatus) -> None:
        console.print(f"{time.strftime('%H:%M:%S')} {name}: job {status.job_status or '-'}, "
                      f"deployment {status.deployment_status or '-'}"
                      + (f" — {status.message}" if status.message else ""), highlight=False)

    final = asyncio.run(follow_job(name, namespace, show))
    return 0 if final.job_status == "SUCCEEDED" else 1


def _cmd_judge_serve(args: argparse.Namespace, console: Console) -> int:
    resources: dict[str, float] = {}
    for item in args.ray_resource:
        name, sep, amount = item.partition("=")
        try:
            resources[name] = float(amount) if sep else 1.0
        except ValueError as exc:
            raise ConfigError(f"--ray-resource {item!r} is not NAME=AMOUNT") from exc
    if args.detach and not args.ray_address:
        raise ConfigError("--detach needs --ray-address (a running Ray cluster, e.g. auto): a pool in this "
                          "command's own local Ray would end with the command")
    if not re.fullmatch(POOL_NAME, args.name):
        raise ConfigError(f"--name {args.name!r}: use lowercase letters, digits and '-' (a sweep's `pool:` names it)")
    if args.replicas < 1 or (args.tensor_parallel is not None and args.tensor_parallel < 1):
        raise ConfigError("--replicas and --tensor-parallel must be at least 1")
    if args.num_gpus and args.tensor_parallel and args.num_gpus < args.tensor_parallel:
        raise ConfigError(f"--tensor-parallel {args.tensor_parallel} needs at least that many --num-gpus per server")
    spec = JudgeServerSpec(model=args.model, served_name=args.served_model_name, tensor_parallel=args.tensor_parallel,
                           num_gpus=args.num_gpus, resources=resources, port=args.port,
                           max_model_len=args.max_model_len, extra_args=tuple(args.vllm_arg),
                           start_timeout_s=args.start_timeout, python=args.vllm_python, s3_endpoint=args.s3_endpoint)
    with connected(args.ray_address):
        model = args.model or "$EVALGRID_JUDGE_MODEL"
        with console.status(f"starting {args.replicas} vLLM server(s) for {model} ..."):
            urls = start_pool(args.name, spec, replicas=args.replicas)
        for url in urls:
            print(url)
        console.print(f"judge pool {args.name!r} is up. In the sweep file:\n" + endpoint_yaml(args.name,
                                                                                          args.served_model_name),
                      highlight=False)
        if args.detach:
            return 0
        console.print("serving; Ctrl-C stops the pool")
        try:
            while True:
                time.sleep(30)
                down = [h["url"] for h in pool_health(args.name) if not h["healthy"]]
                if down:
                    console.print(f"unhealthy (restarting): {', '.join(down)}")
        except KeyboardInterrupt:
            stop_pool(args.name)
            console.print(f"judge pool {args.name!r} stopped")
            return 0


def _cmd_judge_status(args: argparse.Namespace, console: Console) -> int:
    with connected(args.ray_address):
        print(json.dumps(pool_health(args.name), indent=2))
    return 0


def _cmd_judge_stop(args: argparse.Namespace, console: Console) -> int:
    with connected(args.ray_address):
        stop_pool(args.name)
    console.print(f"judge pool {args.name!r} stopped")
    return 0


def _cmd_rejudge(args: argparse.Namespace, console: Console) -> int:
    judge = parse_judge(args.judge, args.option)
    endpoints, budget = _model_settings(args)
    progress = Progress(TextColumn("rejudging"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console)
    task = progress.add_task("rejudge", total=None)
    with progress:
        result = asyncio.run(rejudge(args.run_dir, judge, endpoints=endpoints, concurrency=args.concurrency,
                                     budget=budget, on_progress=lambda done, total: progress.update(
                                         task, completed=done, total=total)))
    assert result.leaderboard is not None  # rejudge always builds one
    _stdout().print(leaderboard_table(result.leaderboard))
    console.print(f"{result.judged} bundles judged by {result.judge_version} ({len(result.fell_back)} by the fallback "
                  f"judge after a refusal or an unusable answer); {len(result.failed)} failed, "
                  f"{result.deferred} left for a larger budget. Written to {result.out_dir}", highlight=False)
    for failure in result.failed[:5]:
        console.print(f"  failed: {escape(failure[:300])}", highlight=False)
    for fallback in result.fell_back[:5]:
        console.print(f"  fallback: {escape(fallback[:300])}", highlight=False)
    return 3 if result.deferred else 0


def _model_settings(args: argparse.Namespace) -> tuple[dict[str, Endpoint] | None, SpendingCap | None]:
    """``--endpoints`` (None: the sweep's), ``--budget-usd`` and a checked ``--concurrency``."""
    endpoints = None
    if args.endpoints is not None:
        raw = _yaml_file(args.endpoints)
        try:
            endpoints = {str(name): Endpoint.model_validate(value) for name, value in raw.items()}
        except (ValidationError, AttributeError) as exc:
            raise ConfigError(f"{args.endpoints} is not a mapping of endpoint name to settings: {exc}") from exc
    if args.concurrency < 1:
        raise ConfigError("--concurrency must be at least 1")
    return endpoints, SpendingCap(args.budget_usd) if args.budget_usd is not None else None


def _cmd_compare(args: argparse.Namespace, console: Console) -> int:
    judge = parse_judge(args.judge, args.option)
    endpoints, budget = _model_settings(args)
    options = CompareOptions(candidates=_names(args.candidates), pairs=args.pairs, known_order=_names(args.better),
                             human_votes=args.human, seed=args.seed, concurrency=args.concurrency)
    progress = Progress(TextColumn("comparing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console)
    task = progress.add_task("compare", total=None)
    with progress:
        result = asyncio.run(compare(args.run_dir, judge, options, endpoints=endpoints, budget=budget,
                                     on_progress=lambda done, total: progress.update(task, completed=done,
                                                                                     total=total)))
    summary = result.summary
    for table in summary_tables(summary):
        _stdout().print(table)
    if summary.human is not None:
        h = summary.human
        agreement = "—" if h.agreement is None else f"{100 * h.agreement:.0f}%"
        console.print(f"human votes: {h.votes} read, {h.matched} on pairs the judge compared; judge–human "
                      f"agreement {agreement}", highlight=False)
    skipped = ", ".join(f"{reason} {n}" for reason, n in sorted(summary.skipped.items())) or "none"
    console.print(f"{summary.pairs} pairs compared in both orders ({summary.selection}); skipped: {skipped}; "
                  f"{summary.dropped_choices} choices dropped for want of evidence; {len(summary.failed)} comparisons "
                  f"failed. Written to {result.out_dir}", highlight=False)
    for failure in summary.failed[:5]:
        console.print(f"  failed: {escape(failure[:300])}", highlight=False)
    return 3 if summary.skipped.get("budget") else 0


def _cmd_repair_lift(args: argparse.Namespace, console: Console) -> int:
    endpoints, budget = _model_settings(args)
    options = LiftOptions(judge=_model_options(UxJudgeOptions, "judge", args.judge, args.judge_option),
                          repairer=_model_options(RepairOptions, "repairer", args.repairer, args.repairer_option),
                          evaluator=_model_options(UxJudgeOptions, "evaluator", args.evaluator, args.evaluator_option),
                          candidates=_names(args.candidates), concurrency=args.concurrency)
    result = asyncio.run(repair_lift(args.run_dir, options, endpoints=endpoints, budget=budget,
                                     on_progress=lambda line: console.print(f"  {escape(line)}", highlight=False)))
    _stdout().print(lift_table(result.summary))
    skipped = ", ".join(f"{reason} {n}" for reason, n in sorted(result.summary.skipped.items())) or "none"
    console.print(f"{result.summary.fixtures} fixtures repaired and scored; left out: {skipped}; "
                  f"{result.summary.dropped_findings} findings dropped for want of evidence. "
                  f"Written to {result.out_dir}", highlight=False)
    return 3 if result.summary.skipped.get("deferred") else 0


_OptionsT = TypeVar("_OptionsT", UxJudgeOptions, RepairOptions)


def _model_options(kind: type[_OptionsT], role: str, target: str, options: list[str]) -> _OptionsT:
    """``ENDPOINT:MODEL`` and ``key=value`` options as a plugin's options (a ConfigError naming ``--role``)."""
    endpoint, sep, model = target.partition(":")
    if not sep or not endpoint or not model:
        raise ConfigError(f"--{role} {target!r}: give ENDPOINT:MODEL, the endpoint a name under the sweep's "
                          "endpoints (or --endpoints)")
    parsed = parse_judge(role, options).options
    try:
        return kind.model_validate({"endpoint": endpoint, "model": model, **parsed})
    except ValidationError as exc:
        wrong = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"--{role}-option: {wrong}") from None


def _names(text: str | None) -> list[str]:
    return [name.strip() for name in (text or "").split(",") if name.strip()]


def _yaml_file(path: Path) -> dict[str, object]:
    if not path.is_file():
        raise ConfigError(f"{path} does not exist")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must be a YAML mapping")
    return data


def _cmd_sandbox_gc(args: argparse.Namespace, console: Console) -> int:
    if args.backend == "kubernetes":
        removed = asyncio.run(collect_pod_garbage(everything=args.all))
    else:
        removed = asyncio.run(collect_garbage(everything=args.all))
    for name in removed:
        print(name)
    console.print(f"removed {len(removed)} sandbox {'pod' if args.backend == 'kubernetes' else 'container'}(s)")
    return 0


def _stdout() -> Console:
    """Standard output; wide enough for the leaderboard when it is a file or a pipe (CI logs)."""
    return Console() if sys.stdout.isatty() else Console(width=140)


def _cmd_status(args: argparse.Namespace, console: Console) -> int:
    directory = _open(args.run_dir, console)
    outcomes = directory.outcomes
    counts = Counter(o.status.value for o in outcomes)
    reasons = Counter(f"{o.status.value}/{o.reason.code.value}" for o in outcomes
                      if o.status is not OutcomeStatus.JUDGED)
    report: dict[str, object] = {"runs": len(outcomes), "by_outcome": dict(sorted(counts.items())),
                                 "by_reason": dict(sorted(reasons.items()))}
    ledger_path = args.run_dir / "ledger.sqlite"
    if ledger_path.exists():
        with Ledger(ledger_path) as ledger:
            flights = ledger.in_flight()
        report["in_flight"] = len(flights)
        report["in_flight_by_worker"] = dict(sorted(Counter(f.worker for f in flights).items()))
    print(json.dumps(report, indent=2))
    return 0


def _cmd_leaderboard(args: argparse.Namespace, console: Console) -> int:
    directory = _open(args.run_dir, console)
    board = build_leaderboard(directory.name, directory.candidates, directory.outcomes,
                              sample_reduce=directory.sample_reduce)
    _stdout().print(leaderboard_table(board))
    return 0


def _open(run_dir: Path, console: Console) -> RunDirectory:
    directory = open_run_directory(run_dir)
    if directory.note:
        console.print(f"note: {directory.note}")
    return directory


def _reduce(args: argparse.Namespace, console: Console) -> tuple[Reduction, list[RunRow]]:
    if not 0.0 <= args.pass_threshold <= 8.0:
        raise ConfigError("--pass-threshold must be between 0.0 and 8.0")
    if args.samples < 100:
        raise ConfigError("--samples must be at least 100")
    with console.status("reducing outcomes and verdicts ..."):
        return reduce_run_dir(args.run_dir, pass_threshold=args.pass_threshold, samples=args.samples,
                              human_ratings=args.human_ratings)


def _cmd_export(args: argparse.Namespace, console: Console) -> int:
    reduction, rows = _reduce(args, console)
    for path in write_tables(args.out or args.run_dir / "exports", rows, reduction):
        print(path)
    return 0


def _cmd_report(args: argparse.Namespace, console: Console) -> int:
    reduction, rows = _reduce(args, console)
    out = args.out or args.run_dir / "report"
    write_tables(out / "data", rows, reduction)
    index = write_report(args.run_dir, reduction, rows, out)
    console.print(f"report: {index} (open it in a browser; it works from a folder or an object-store prefix)")
    return 0


def _cmd_show(args: argparse.Namespace, console: Console) -> int:
    run_dirs = [args.run_dir] if args.run_dir else sorted(p.parent for p in Path("runs").glob("*/results.jsonl"))
    for run_dir in run_dirs:
        prefix = args.run_key if args.run_key.startswith("run-") else f"run-{args.run_key}"
        matches = [o for o in open_run_directory(run_dir).outcomes if o.run_key.startswith(prefix)]
        if len(matches) > 1:
            raise ConfigError(f"{args.run_key!r} matches {len(matches)} runs in {run_dir}; give more of the key")
        if matches:
            _stdout().print(run_panel(run_dir, matches[0]))
            return 0
    where = ", ".join(str(d) for d in run_dirs) or "no run directory under runs/"
    raise ConfigError(f"no run {args.run_key!r} in {where}; pass --run-dir")


def _cmd_calibrate(args: argparse.Namespace, console: Console) -> int:
    judge = parse_judge(args.judge, args.option)
    agent_fields = parse_judge(args.agent, args.agent_option).options  # same key=value parsing
    known = set(AgentConfig.model_fields) - {"policy", "options"}
    try:
        agent = AgentConfig.model_validate({
            "policy": args.agent, "options": {k: v for k, v in agent_fields.items() if k not in known},
            **{k: v for k, v in agent_fields.items() if k in known}})
    except ValidationError as exc:
        raise ConfigError(f"--agent-option: {exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']}") from exc
    try:
        operators = [Operator(op.strip()) for op in args.operators.split(",")] if args.operators else list(Operator)
    except ValueError as exc:
        raise ConfigError(f"--operators: {exc}; known: {', '.join(op.value for op in Operator)}") from exc
    if not 1 <= args.workers <= 32:
        raise ConfigError("--workers must be between 1 and 32")
    apps = load_suite(args.suite, args.apps.split(",") if args.apps else None)
    if args.split != "all":
        if all(app.split is None for app, _ in apps):
            raise ConfigError(f"--split {args.split}: the suite at {args.suite} has no halves (its apps have no "
                              "provenance); use it without --split")
        apps = [(app, answer) for app, answer in apps if app.split == args.split]
    run_dir: Path = args.run_dir
    path, unconfirmed = write_sweep(apps, operators, run_dir / "suite", agent=agent, judge=judge,
                                    concurrency=args.workers, labels=load_labels(args.suite))
    if unconfirmed:
        console.print(f"[yellow]{len(unconfirmed)} versions left out:[/] their play-test label is missing, stale or "
                      "does not confirm them (python -m cluster.calibration.playtest --suite SUITE --write labels "
                      "them again)", highlight=False)
    sweep = load_sweep(path)
    if args.sandbox != "docker":
        sweep = Sweep(spec=sweep.spec.model_copy(update={"sandbox": sweep.spec.sandbox.model_copy(
            update={"backend": args.sandbox})}), path=sweep.path, queries=sweep.queries)
    console.print(f"calibration: {len(apps)} apps and {len(sweep.queries) - len(apps)} twins, judge {judge.name}, "
                  f"agent {agent.policy} → {run_dir}", highlight=False)
    result = _run_with_progress(sweep, run_dir, GridOptions(scheduler=args.scheduler, workers=args.workers),
                                console, no_progress=args.no_progress)
    suite_name = BUILT_IN if args.suite.resolve() == SUITE.resolve() else args.suite.resolve().name
    calibration = measure(result.outcomes.values(), run_dir, agent=agent, judge=judge,
                          suite=[app for app, _ in apps], unconfirmed=unconfirmed, suite_name=suite_name,
                          split=args.split)
    (run_dir / "calibrations").mkdir(exist_ok=True)
    write_json_atomic(run_dir / "calibration.json", calibration)
    write_json_atomic(run_dir / "calibrations" / f"{calibration.key}.json", calibration)
    _stdout().print(calibration_table(calibration))
    failed = []
    if args.min_pairwise is not None and (calibration.functional_pairwise_accuracy or 0.0) < args.min_pairwise:
        failed.append(f"functional pairwise accuracy {calibration.functional_pairwise_accuracy} < {args.min_pairwise}")
    if args.min_auc is not None and (calibration.auc or 0.0) < args.min_auc:
        failed.append(f"AUC {calibration.auc} < {args.min_auc}")
    for line in failed:
        console.print(f"[bold red]below the minimum:[/] {line}", highlight=False)
    return 1 if failed else 0


def _cmd_mcp(args: argparse.Namespace, console: Console) -> int:
    from cluster.preview.mcp_server import McpOptions, serve

    try:
        checks = tuple(PreviewCheck(name.strip()) for name in args.checks.split(",") if name.strip())
    except ValueError as exc:
        raise ConfigError(f"--checks: {exc}; choose among {', '.join(DEFAULT_CHECKS)}") from exc
    serve(McpOptions(transport=args.transport, sandbox=args.sandbox, host=args.host, port=args.port,
                     token_env=args.token_env, allowed_origins=tuple(args.allow_origin),
                     allowed_hosts=tuple(args.allow_host), checks=checks,
                     screenshot=not args.no_screenshot, timeout_s=args.timeout))
    return 0


def _cmd_doctor(args: argparse.Namespace, console: Console) -> int:
    # One report for both entry points: `make doctor` runs the same script before any venv exists.
    root: Path | None = args.root
    if root is None:
        for candidate in (Path.cwd(), Path(__file__).resolve().parents[1]):
            if (candidate / "images" / "source-hash.sh").is_file():
                root = candidate
                break
    with importlib.resources.as_file(importlib.resources.files("cluster") / "doctor.sh") as script:
        command = ["bash", str(script), "--for", args.purpose] + (["--root", str(root)] if root else [])
        return subprocess.run(command, check=False).returncode


def _cmd_schema(args: argparse.Namespace, console: Console) -> int:
    names = [args.name] if args.name else sorted([*SCHEMAS, PLUGIN_OPTIONS])
    schemas = {name: _plugin_options() if name == PLUGIN_OPTIONS else SCHEMAS[name].model_json_schema()
               for name in names}
    print(json.dumps(schemas[args.name] if args.name else schemas, indent=2, ensure_ascii=False))
    return 0


def _plugin_options() -> dict[str, object]:
    return {"title": PLUGIN_OPTIONS,
            "description": "The options each judge (judge.options) and agent policy (agent.options) accepts; "
                           "any other option is an error when the sweep is loaded.",
            "judges": judges.options_schemas(), "agent_policies": policies.options_schemas()}


if __name__ == "__main__":
    sys.exit(main())
