"""The ``evalgrid`` command line's commands and their arguments.

This module imports nothing heavy: ``evalgrid --help`` and argument errors must answer at once. Each command
names its handler as ``"module:function"`` in this package; :func:`cluster.cli.main` imports that module only
when the command runs, so a command loads only the subsystems it uses.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from cluster.calibration.twins import Operator
from cluster.sandbox.backends import sandbox_backends
from evaluator.preview import DEFAULT_CHECKS

if TYPE_CHECKING:
    # argparse gives the type add_subparsers() returns no public name.
    _Commands = argparse._SubParsersAction[argparse.ArgumentParser]

RECORDS = ("Action", "AgentSummary", "Artifact", "EvidenceManifest", "Observation", "Outcome", "Query", "QuerySet",
           "StepRecord", "SweepSpec", "Verdict")
"""The records ``evalgrid schema`` prints (their models are imported by the command itself)."""

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


def build_parser() -> argparse.ArgumentParser:
    """The ``evalgrid`` parser: every command, its arguments and its handler's name."""
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
    run.add_argument("--sandbox", choices=sandbox_backends.names(),
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
    run.set_defaults(handler="sweeps:run")


def _add_sandbox(sub: _Commands) -> None:
    sandbox = sub.add_parser("sandbox", help="manage sandbox containers")
    sandbox_sub = sandbox.add_subparsers(dest="action", required=True, metavar="ACTION")
    gc = sandbox_sub.add_parser("gc", help="remove sandbox containers whose owner process is gone",
                                description="Remove evalgrid sandbox containers left behind by a driver or "
                                            "worker that died (even by SIGKILL). Containers of live processes "
                                            "are kept unless --all is given.")
    gc.add_argument("--all", action="store_true", help="remove every evalgrid sandbox (of this engine, or of "
                                                       "this worker pod with --backend kubernetes)")
    gc.add_argument("--backend", choices=sandbox_backends.names(), default="docker",
                    help="docker: containers on this machine's engine (default); kubernetes: sandbox pods in the "
                         "sandbox namespace ($EVALGRID_K8S_SANDBOX's, else the current one)")
    gc.set_defaults(handler="tools:sandbox_gc")


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
    submit.set_defaults(handler="kube:submit")
    job = kube_sub.add_parser("status", help="status of submitted sweeps",
                              description="Show one RayJob (or all evalgrid RayJobs of the namespace).")
    job.add_argument("name", nargs="?", help="RayJob name, as `cluster submit` printed it (default: list them all)")
    job.add_argument("--namespace", help="namespace (default: the kube context's)")
    job.add_argument("--follow", action="store_true", help="poll until the job ends")
    job.set_defaults(handler="kube:status")


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
    serve.add_argument("--max-model-len", type=int, help="vLLM's context limit (judges fit their images into it)")
    serve.add_argument("--limit-mm-per-prompt", dest="max_images", type=int, default=13, metavar="IMAGES",
                       help="images vLLM takes in one prompt; judges show no more (default 13: the LLM judge's "
                            "largest default request, a screenshot, 8 keyframes and 4 screens of entered values)")
    serve.add_argument("--vllm-arg", action="append", default=[], help="extra vLLM server argument (repeatable)")
    serve.add_argument("--vllm-python", help="interpreter with vLLM (default $EVALGRID_VLLM_PYTHON, else this one)")
    serve.add_argument("--s3-endpoint", help="S3-compatible endpoint for an s3:// model")
    serve.add_argument("--start-timeout", type=float, default=900.0, help="seconds a server may take (default 900)")
    serve.add_argument("--ray-address", help="Ray cluster to join (default: start a local one)")
    serve.add_argument("--detach", action="store_true", help="leave the pool running and return")
    serve.set_defaults(handler="judges:serve")
    for action, text in (("status", "health of a judge pool's servers"), ("stop", "stop a judge pool")):
        cmd = judge_sub.add_parser(action, help=text)
        cmd.add_argument("--name", default="judges", help="pool name (default: judges)")
        cmd.add_argument("--ray-address", default="auto", help="Ray cluster (default: auto)")
        cmd.set_defaults(handler=f"judges:{action}")


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
    rejudge_cmd.set_defaults(handler="model_stages:rejudge")


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
    cmd.set_defaults(handler="model_stages:compare")


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
    cmd.set_defaults(handler="model_stages:repair_lift")


def _add_readers(sub: _Commands) -> None:
    status = sub.add_parser("status", help="outcome counts of a run directory")
    status.add_argument("run_dir", type=Path)
    status.set_defaults(handler="readers:status")

    board = sub.add_parser("leaderboard", help="print the leaderboard of a run directory")
    board.add_argument("run_dir", type=Path)
    board.set_defaults(handler="readers:leaderboard")

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
        reducer.set_defaults(handler=f"readers:{name}")

    show = sub.add_parser("show", help="print one run in the terminal")
    show.add_argument("run_key", help="run key, or a unique prefix of it (with or without 'run-')")
    show.add_argument("--run-dir", type=Path, help="run directory (default: search runs/*)")
    show.set_defaults(handler="readers:show")


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
    calibrate.add_argument("--suite", type=Path,
                           help="suite directory (default: the built-in one; fixtures/realapps: third-party apps)")
    calibrate.add_argument("--split", choices=["all", "dev", "test"], default="all",
                           help="a real-app suite's half: dev (tune on it) or test (never tune on it); default all")
    calibrate.add_argument("--run-dir", type=Path, default=Path("runs") / "calibration",
                           help="where the suite's runs and calibration.json go (default runs/calibration)")
    calibrate.add_argument("--workers", type=int, default=2, help="runs in flight at once (default 2)")
    calibrate.add_argument("--sandbox", choices=sandbox_backends.names(), default="docker",
                           help="docker (default): the hardened sandbox; local: this machine's Chromium, NOT a "
                                "sandbox, and no CDN mirror or builds")
    calibrate.add_argument("--scheduler", choices=["ray", "local"], default="ray", help="as for `evalgrid run`")
    calibrate.add_argument("--no-progress", action="store_true", help="a line per run instead of a progress bar")
    calibrate.set_defaults(handler="sweeps:calibrate")


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
    mcp.add_argument("--sandbox", choices=sandbox_backends.names(), default="docker",
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
    mcp.set_defaults(handler="tools:mcp")


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
    doctor.set_defaults(handler="tools:doctor")

    schema = sub.add_parser("schema", help="print JSON schemas of evalgrid's records")
    schema.add_argument("name", nargs="?", choices=sorted([*RECORDS, PLUGIN_OPTIONS]),
                        help=f"one record type, or {PLUGIN_OPTIONS} for each judge's and agent policy's options "
                             "(default: all)")
    schema.set_defaults(handler="tools:schema")
