"""``evalgrid cluster submit`` and ``evalgrid cluster status``: sweeps as KubeRay RayJobs."""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from rich.console import Console

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
from cluster.store.object_store import StoreLocation, StoreSettings, is_store_url
from cluster.sweep.inputs import upload_inputs
from cluster.sweep.spec import load_sweep
from evaluator import ConfigError


def submit(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid cluster submit``: pack the sweep into the object store and create its RayJob."""
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


def status(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid cluster status``: one RayJob's status (followed with ``--follow``), or all of them."""
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
