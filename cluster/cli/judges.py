"""``evalgrid judge serve|status|stop``: pools of vLLM judge servers as Ray actors."""

from __future__ import annotations

import argparse
import json
import re
import time

from rich.console import Console

from cluster.scheduling.judge_pool import JudgeServerSpec, connected, endpoint_yaml, pool_health, start_pool, stop_pool
from evaluator import ConfigError
from evaluator.llm import POOL_NAME


def serve(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid judge serve``: start a pool of vLLM servers and print the sweep-file lines for it."""
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
    if args.max_images < 0:
        raise ConfigError("--limit-mm-per-prompt must be 0 (text only) or more images")
    if args.replicas < 1 or (args.tensor_parallel is not None and args.tensor_parallel < 1):
        raise ConfigError("--replicas and --tensor-parallel must be at least 1")
    if args.num_gpus and args.tensor_parallel and args.num_gpus < args.tensor_parallel:
        raise ConfigError(f"--tensor-parallel {args.tensor_parallel} needs at least that many --num-gpus per server")
    spec = JudgeServerSpec(model=args.model, served_name=args.served_model_name, tensor_parallel=args.tensor_parallel,
                           num_gpus=args.num_gpus, resources=resources, port=args.port,
                           max_model_len=args.max_model_len, max_images=args.max_images,
                           extra_args=tuple(args.vllm_arg),
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
                down = [str(h.url) for h in pool_health(args.name) if not h.healthy]
                if down:
                    console.print(f"unhealthy (restarting): {', '.join(down)}")
        except KeyboardInterrupt:
            stop_pool(args.name)
            console.print(f"judge pool {args.name!r} stopped")
            return 0


def status(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid judge status``: the health of a pool's servers, as JSON."""
    with connected(args.ray_address):
        print(json.dumps([h.model_dump(mode="json", exclude_none=True) for h in pool_health(args.name)], indent=2))
    return 0


def stop(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid judge stop``: stop a pool."""
    with connected(args.ray_address):
        stop_pool(args.name)
    console.print(f"judge pool {args.name!r} stopped")
    return 0
