"""Shared test helpers: a real Chromium per test, fixture paths, artifacts from fixture apps."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import shutil
import socket
import subprocess
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import pytest
from playwright.async_api import Browser, async_playwright

from cluster.sweep.spec import Sweep, load_sweep
from evaluator.browser.launch import launch_browser
from evaluator.models import Artifact, Difficulty, Kind, Query, Stack

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
APPS = FIXTURES / "apps"

T = TypeVar("T")


def with_browser(scenario: Callable[[Browser], Awaitable[T]]) -> T:
    """Run ``scenario`` against a freshly launched real Chromium."""

    async def main() -> T:
        async with async_playwright() as playwright:
            browser = await launch_browser(playwright)
            try:
                return await scenario(browser)
            finally:
                await browser.close()

    return asyncio.run(main())


def app_artifact(name: str) -> Artifact:
    """An artifact made of one purpose-built app from ``fixtures/apps``."""
    html = (APPS / name).read_text(encoding="utf-8")
    return Artifact(key=f"artifact-{name}", candidate_id="fixture", query_id=name.removesuffix(".html"),
                    files={"index.html": html}, entrypoint="index.html", stack=Stack.HTML, answer_sha256="0" * 64)


def app_query(name: str, kind: Kind = Kind.INTERACTIVE_APPLICATION) -> Query:
    """A query to go with a purpose-built app."""
    return Query(id=name.removesuffix(".html"), brief="A small app used by evalgrid's tests.", domain="tests",
                 leaf="fixtures", difficulty=Difficulty.EASY, language="en", kind=kind)


def html_artifact(name: str, html: str, *, extra: dict[str, str] | None = None) -> Artifact:
    """An artifact made of the given page (and extra files)."""
    return Artifact(key=f"artifact-{name}", candidate_id="fixture", query_id=name,
                    files={"index.html": html, **(extra or {})}, entrypoint="index.html", stack=Stack.HTML,
                    answer_sha256="0" * 64)


def write_sweep(root: Path, query_ids: Iterable[str], *, candidates: Iterable[str], brief: str = "A small app.",
                leaf: str = "tamper", **spec: Any) -> Sweep:
    """A sweep under ``root`` of one easy interactive query per id, each candidate answering from
    ``answers/<id>``: its ``queries.yaml`` and ``sweep.yaml`` written, loaded. ``spec`` adds to the sweep's fields
    (``name``, ``run_timeout_s``, ``agent``, ``sandbox`` ...)."""
    queries = [{"id": qid, "brief": brief, "domain": "tests", "leaf": leaf, "difficulty": "easy", "language": "en",
                "kind": "interactive_application"} for qid in query_ids]
    (root / "queries.yaml").write_text(json.dumps({"version": 1, "queries": queries}))
    (root / "sweep.yaml").write_text(json.dumps({
        "queries": "queries.yaml", "concurrency": 1,
        "candidates": [{"id": c, "answers": f"answers/{c}"} for c in candidates], **spec}))
    return load_sweep(root / "sweep.yaml")


def require_docker() -> None:
    """Skip (or, under CI, fail) when the Docker engine or the sandbox image is missing.

    CI must run the sandbox tests for real: `make test` starts the engine and builds the image.
    """
    problem = None
    try:
        info = subprocess.run(["docker", "image", "inspect", "evalgrid/sandbox:dev"], capture_output=True, timeout=30)
        if info.returncode != 0:
            problem = f"sandbox image missing ({info.stderr.decode(errors='replace').strip()[:200]}); run `make images`"
    except (OSError, subprocess.TimeoutExpired) as exc:
        problem = f"docker CLI unusable: {exc}"
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"Docker is required under CI: {problem}")
        pytest.skip(problem)


SANDBOX = ROOT / "images" / "sandbox"
MIRROR_DIR = SANDBOX / "build" / "mirror"
"""The packages the sandbox's CDN mirror serves, installed where images/build.sh puts them."""
CDN_DIR = SANDBOX / "build" / "cdn"
"""The mirror's own code's dependencies, found there by cdn/ranges.js."""
TOOLCHAIN_DIR = SANDBOX / "build" / "toolchain"
"""The framework build toolchain (esbuild builds esm.sh modules too)."""


def install_sandbox_npm_trees() -> Path:
    """The sandbox's three locked npm trees on this host (npm-tree.sh; a no-op when current); the mirror's root.

    Skips when npm is missing (``make setup`` installs it); fails with npm's output when an install fails.
    """
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed (make setup installs it); the trees come from the npm registry")
    # xdist's workers each ask for the trees: one installs while the other waits, then finds them current.
    SANDBOX.joinpath("build").mkdir(exist_ok=True)
    with open(SANDBOX / "build" / ".npm-trees.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for tree, out in (("mirror", MIRROR_DIR), ("cdn", CDN_DIR), ("toolchain", TOOLCHAIN_DIR)):
            done = subprocess.run([str(SANDBOX / "npm-tree.sh"), str(SANDBOX / tree), str(out)],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                pytest.fail(f"npm-tree.sh {tree} failed:\n{done.stdout}\n{done.stderr}")
    return MIRROR_DIR


def port_open(url: str) -> bool:
    """Whether something on this machine listens on ``url``'s port (a server that should have stopped, or started)."""
    with socket.socket() as probe:
        probe.settimeout(2)
        return probe.connect_ex(("127.0.0.1", urlsplit(url).port or 80)) == 0
