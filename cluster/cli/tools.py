"""``evalgrid sandbox gc``, ``mcp``, ``doctor`` and ``schema``."""

from __future__ import annotations

import argparse
import asyncio
import importlib.resources
import json
import subprocess
from pathlib import Path

from pydantic import BaseModel
from rich.console import Console

from cluster.cli.commands import PLUGIN_OPTIONS
from cluster.sandbox.backends import sandbox_backends
from cluster.sweep.spec import SweepSpec
from evaluator import Artifact, ConfigError, EvidenceManifest, Outcome, Query, QuerySet, Verdict, policies
from evaluator.agents import Action, AgentSummary, Observation, StepRecord
from evaluator.judges import judges
from evaluator.preview import DEFAULT_CHECKS, PreviewCheck

SCHEMAS: dict[str, type[BaseModel]] = {
    "SweepSpec": SweepSpec, "QuerySet": QuerySet, "Query": Query, "Artifact": Artifact,
    "EvidenceManifest": EvidenceManifest, "Verdict": Verdict, "Outcome": Outcome,
    "Observation": Observation, "Action": Action, "StepRecord": StepRecord, "AgentSummary": AgentSummary,
}
"""The records ``evalgrid schema`` prints, by name (``commands.RECORDS`` lists the same names)."""


def sandbox_gc(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid sandbox gc``: remove sandboxes whose owner process is gone."""
    backend = sandbox_backends.create(args.backend)
    removed = asyncio.run(backend.collect_garbage(everything=args.all))
    for name in removed:
        print(name)
    console.print(f"removed {len(removed)} sandbox {backend.unit}(s)")
    return 0


def mcp(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid mcp``: serve the app preview tool over MCP."""
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


def doctor(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid doctor``: the host check ``make doctor`` runs."""
    # One report for both entry points: `make doctor` runs the same script before any venv exists.
    root: Path | None = args.root
    if root is None:
        for candidate in (Path.cwd(), Path(__file__).resolve().parents[2]):
            if (candidate / "images" / "source-hash.sh").is_file():
                root = candidate
                break
    with importlib.resources.as_file(importlib.resources.files("cluster") / "doctor.sh") as script:
        command = ["bash", str(script), "--for", args.purpose] + (["--root", str(root)] if root else [])
        return subprocess.run(command, check=False).returncode


def schema(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid schema``: print JSON schemas of evalgrid's records."""
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
