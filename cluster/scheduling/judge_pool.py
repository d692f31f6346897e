"""Judges on your own GPUs: vLLM's OpenAI-compatible server as Ray actors, found by sweeps by name.

``evalgrid judge serve`` starts ``replicas`` :class:`JudgeServer` actors (each reserves
``num_gpus`` and, in the Helm chart's judge group, the ``evalgrid-judge`` resource), each running
one vLLM server process for the model (a local path, or an ``s3://`` prefix fetched first), and a
named, detached :class:`JudgePool` actor that knows them. A sweep names the pool in an endpoint
(``endpoints: {judge: {pool: judges}}``); when it starts on the same Ray cluster, the pool's
servers become the endpoint's ``base_urls`` and calls go round-robin across them, failing over on
errors. Each server is health-checked; one whose process dies, or that fails three checks in a
row, is restarted on the same port.

vLLM usually lives in its own Python environment (its torch pins differ from evalgrid's): give its
interpreter as ``EVALGRID_VLLM_PYTHON`` (``make vllm`` builds ``.venv-vllm``). The server is started
with compact JSON for structured output (no free whitespace), so a judge's JSON cannot be padded
until it runs out of tokens.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import ray
from pydantic import BaseModel
from ray.exceptions import GetTimeoutError

from cluster.scheduling.ray_auth import join_ray
from cluster.store.object_store import S3Store, StoreSettings, is_store_url
from evaluator import ConfigError, InfrastructureError
from evaluator.llm import Endpoint

NAMESPACE = "evalgrid"
_STRUCTURED = {"backend": "guidance", "disable_any_whitespace": True}
_CPU_MEMORY_SHARE = 0.25
_PR_SET_PDEATHSIG = 1
_WATCH_INTERVAL_S = 10.0
_UNHEALTHY_CHECKS = 3
"""Failed health checks in a row after which a running but hung server is restarted."""


class ServerHealth(BaseModel):
    """One judge server's health, as the pool reports it across Ray and `evalgrid judge status` prints it."""

    url: str | None
    """The server's ``/v1`` base URL; ``None`` when its actor did not answer."""
    healthy: bool
    restarts: int = 0
    error: str | None = None
    """Why the actor did not answer, when it did not."""


@dataclass(frozen=True)
class JudgeServerSpec:
    """How each judge server of a pool runs; plain and picklable."""

    served_name: str
    """The model id the sweep's judges ask for."""
    model: str = ""
    """A directory with the model (config, weights, tokenizer) on every judge node, or ``s3://bucket/prefix``;
    empty: each judge node's ``$EVALGRID_JUDGE_MODEL`` (the Helm chart's ``judges.model``)."""
    tensor_parallel: int | None = None
    """vLLM's tensor-parallel size (GPUs one server spans); ``None``: the node's
    ``$EVALGRID_JUDGE_TENSOR_PARALLEL`` (the chart's ``judges.tensorParallelSize``), else 1."""
    num_gpus: float = 0.0
    """GPUs Ray reserves per server (0 on CPU-only hosts)."""
    resources: dict[str, float] = field(default_factory=dict)
    """Other Ray resources per server (the chart's judge group offers ``evalgrid-judge``)."""
    port: int = 8000
    """First port; replicas on one node take the next ones."""
    max_model_len: int | None = None
    """vLLM's context limit (default: the model's)."""
    max_images: int = 13
    """Images vLLM takes in one prompt (``--limit-mm-per-prompt``; text-only models ignore it). 13 fits the largest
    request evalgrid's judges make by default: the LLM judge's dynamic scoring, a screenshot, 8 keyframes and 4
    screens after entered values."""
    extra_args: tuple[str, ...] = ()
    """More arguments for vLLM's server."""
    start_timeout_s: float = 900.0
    """How long a server may take to become healthy (loading a large model takes minutes)."""
    python: str | None = None
    """Interpreter with vLLM installed (default: ``$EVALGRID_VLLM_PYTHON``, else this one)."""
    s3_endpoint: str | None = None
    """S3-compatible endpoint for an ``s3://`` model."""


class VllmServer:
    """One vLLM OpenAI-compatible server process on this machine."""

    def __init__(self, spec: JudgeServerSpec, *, port: int, workdir: Path, host: str = "0.0.0.0") -> None:
        self.spec = spec
        self.port = port
        self.workdir = workdir
        self.host = host
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.restarts = -1

    @property
    def log_path(self) -> Path:
        """The server's own output."""
        return self.workdir / f"vllm-{self.port}.log"

    def start(self) -> None:
        """Start the process (fetching an ``s3://`` model first); :meth:`wait_ready` waits for it.

        Raises :class:`InfrastructureError` once :meth:`close` was called: a restart racing a stop loses.
        """
        model = self._model_dir()
        python = self.spec.python or os.environ.get("EVALGRID_VLLM_PYTHON") or sys.executable
        argv = [python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model),
                "--served-model-name", self.spec.served_name, "--host", self.host, "--port", str(self.port),
                "--tensor-parallel-size", str(self.spec.tensor_parallel
                                              or int(os.environ.get("EVALGRID_JUDGE_TENSOR_PARALLEL") or 1)),
                "--structured-outputs-config", json.dumps(_STRUCTURED)]
        if self.spec.max_model_len:
            argv += ["--max-model-len", str(self.spec.max_model_len)]
        if not any(a.startswith("--limit-mm-per-prompt") for a in self.spec.extra_args):
            argv += ["--limit-mm-per-prompt", json.dumps({"image": self.spec.max_images, "video": 0})]
        if not self.spec.num_gpus and not any(a.startswith("--gpu-memory-utilization") for a in self.spec.extra_args):
            # On CPU hosts vLLM reads this as the share of the NUMA node's memory to reserve, 0.92 by
            # default: more than a node that also runs browsers has free, and the engine refuses to start.
            argv += ["--gpu-memory-utilization", str(_CPU_MEMORY_SHARE)]
        argv += list(self.spec.extra_args)
        self.workdir.mkdir(parents=True, exist_ok=True)
        with self._lock:
            if self._closed:
                raise InfrastructureError("the judge server was stopped")
            with self.log_path.open("ab") as log:
                # Its own process group (vLLM starts engine processes, stopped with it), and SIGTERM when
                # the actor's process dies, so a killed actor does not leave a server holding GPUs and a port.
                self._proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                              start_new_session=True, preexec_fn=_die_with_parent)
            self.restarts += 1

    def _model_dir(self) -> Path:
        source = self.spec.model or os.environ.get("EVALGRID_JUDGE_MODEL", "")
        if not source:
            raise ConfigError("no judge model: give --model, or serve on the Helm chart's judge nodes "
                              "(they set EVALGRID_JUDGE_MODEL from judges.model)")
        if not is_store_url(source):
            path = Path(source)
            if not (path / "config.json").is_file():
                raise ConfigError(f"judge model {path} has no config.json; give a model directory or s3:// prefix")
            return path
        target = self.workdir / "models" / hashlib.sha256(source.encode()).hexdigest()[:16]
        if (target / "config.json").is_file():
            return target
        store = S3Store(StoreSettings(url=source, endpoint_url=self.spec.s3_endpoint))
        staging = Path(tempfile.mkdtemp(prefix="model-", dir=self.workdir))
        try:
            names = list(store.list(""))
            if "config.json" not in names:
                raise ConfigError(f"{source} has no config.json; it is not a model directory")
            for name in names:
                (staging / name).parent.mkdir(parents=True, exist_ok=True)
                store.download_file(name, staging / name)
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                staging.rename(target)
            except OSError:
                if not (target / "config.json").is_file():
                    raise
                # Another replica on this node fetched the same model first: use its copy.
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return target

    def alive(self) -> bool:
        """Whether the process runs."""
        proc = self._proc
        return proc is not None and proc.poll() is None

    def healthy(self) -> bool:
        """Whether the server answers its health check."""
        if not self.alive():
            return False
        with contextlib.suppress(httpx.HTTPError):
            return httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=5).status_code == 200
        return False

    def wait_ready(self) -> None:
        """Wait until healthy; a process that exits or a server that never answers is an error with its log."""
        deadline = time.monotonic() + self.spec.start_timeout_s
        while time.monotonic() < deadline:
            if not self.alive():
                raise InfrastructureError(f"the vLLM server exited while starting; its log ends: {self._tail()}")
            if self.healthy():
                return
            time.sleep(1.0)
        self.stop()
        raise InfrastructureError(f"the vLLM server was not healthy within {self.spec.start_timeout_s:.0f} s; "
                                  f"its log ends: {self._tail()}")

    def _tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-1500:]
        except OSError:
            return "(no log)"

    def stop(self, *, close: bool = False) -> None:
        """Stop the process (its whole process group: vLLM starts workers); ``close``: for good."""
        with self._lock:
            self._closed = self._closed or close
            proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is not None:
            # The server died; its engine processes (same group) may live on, holding memory and the port.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)
            proc.wait()


def _die_with_parent() -> None:
    """In the child before exec: ask the kernel for SIGTERM when the parent (the actor's process) dies."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class JudgeServer:
    """A Ray actor owning one :class:`VllmServer`; its health watch restarts a dead or hung server."""

    def __init__(self, spec: JudgeServerSpec, index: int) -> None:
        port = _free_port(spec.port + index)
        self._server = VllmServer(spec, port=port, workdir=Path(tempfile.gettempdir()) / "evalgrid-judge")
        try:
            self._server.start()
            self._server.wait_ready()
        except BaseException:
            self._server.stop(close=True)
            raise
        self._address = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
        self._watch: asyncio.Task[None] | None = None

    async def _keep_alive(self) -> None:
        failures = 0
        while True:
            await asyncio.sleep(_WATCH_INTERVAL_S)
            healthy = await asyncio.to_thread(self._server.healthy)
            failures = 0 if healthy else failures + 1
            if self._server.alive() and failures < _UNHEALTHY_CHECKS:
                continue
            failures = 0
            try:
                await asyncio.to_thread(self._server.stop)
                await asyncio.to_thread(self._server.start)
                await asyncio.to_thread(self._server.wait_ready)
            except Exception as exc:  # noqa: BLE001 - keep watching; the next round tries again
                print(f"judge server on port {self._server.port}: restart failed: {exc}", file=sys.stderr)

    async def url(self) -> str:
        """The server's ``/v1`` base URL, as other nodes reach it (the first call starts the health watch:
        an actor's constructor cannot start tasks on its event loop)."""
        if self._watch is None:
            self._watch = asyncio.create_task(self._keep_alive())
        return f"http://{self._address}:{self._server.port}/v1"

    async def health(self) -> ServerHealth:
        """URL, whether it answers its health check, and restarts so far."""
        healthy = await asyncio.to_thread(self._server.healthy)
        return ServerHealth(url=await self.url(), healthy=healthy, restarts=self._server.restarts)

    async def stop(self) -> None:
        """Stop the server process for good."""
        if self._watch is not None:
            self._watch.cancel()
        await asyncio.to_thread(self._server.stop, close=True)


class JudgePool:
    """A named, detached Ray actor that knows a pool's servers and what each takes in one prompt."""

    def __init__(self, servers: list[Any], spec: JudgeServerSpec) -> None:
        self._servers = servers
        self._spec = spec

    async def limits(self) -> dict[str, int | None]:
        """The servers' limits, as an endpoint's settings (``max_images``, ``context_tokens``)."""
        return {"max_images": self._spec.max_images, "context_tokens": self._spec.max_model_len}

    async def urls(self) -> list[str]:
        """The base URLs of the servers that answer now (asked live: a restarted actor may have moved)."""
        answers = await asyncio.gather(*(s.url.remote() for s in self._servers), return_exceptions=True)
        return [a for a in answers if isinstance(a, str)]

    async def health(self) -> list[ServerHealth]:
        """Each server's health; a server whose actor does not answer is reported as such."""
        answers = await asyncio.gather(*(s.health.remote() for s in self._servers), return_exceptions=True)
        return [a if isinstance(a, ServerHealth) else ServerHealth(url=None, healthy=False, error=str(a)[:300])
                for a in answers]

    async def stop(self) -> None:
        """Stop every server and end the pool."""
        await asyncio.gather(*(s.stop.remote() for s in self._servers), return_exceptions=True)
        for server in self._servers:
            ray.kill(server)


def _pool_actor_name(name: str) -> str:
    return f"judge-pool-{name}"


def start_pool(name: str, spec: JudgeServerSpec, *, replicas: int = 1) -> list[str]:
    """Start ``replicas`` judge servers and register them as pool ``name``; returns their URLs.

    Ray must be initialised (``ray.init(address=..., namespace=NAMESPACE)``). Raises
    :class:`ConfigError` when a pool of that name runs already.
    """
    if replicas < 1:
        raise ConfigError("a judge pool needs at least one replica")
    with contextlib.suppress(ValueError):
        ray.get_actor(_pool_actor_name(name), namespace=NAMESPACE)
        raise ConfigError(f"judge pool {name!r} is already running; stop it with `evalgrid judge stop --name {name}`")
    server_class: Any = ray.remote(JudgeServer).options(num_gpus=spec.num_gpus, resources=dict(spec.resources) or None,
                                                   max_restarts=3, lifetime="detached", namespace=NAMESPACE)
    servers: list[Any] = [server_class.remote(spec, index) for index in range(replicas)]
    try:
        urls: list[str] = ray.get([s.url.remote() for s in servers], timeout=spec.start_timeout_s + 60)
    except BaseException as exc:
        # Killing an actor also ends its vLLM process (it dies with its parent).
        for server in servers:
            ray.kill(server)
        if isinstance(exc, GetTimeoutError):
            wanted = {"GPU": spec.num_gpus, **spec.resources}
            raise InfrastructureError(
                f"judge servers were not ready within {spec.start_timeout_s + 60:.0f} s; either the cluster has no "
                f"node with {wanted} free, or loading the model takes longer (raise --start-timeout)") from exc
        raise
    ray.remote(JudgePool).options(name=_pool_actor_name(name), namespace=NAMESPACE, lifetime="detached",
                                  num_cpus=0).remote(servers, spec)
    return urls


def _pool(name: str) -> Any:
    try:
        return ray.get_actor(_pool_actor_name(name), namespace=NAMESPACE)
    except ValueError as exc:
        raise ConfigError(f"no judge pool {name!r} in this Ray cluster; start it with `evalgrid judge serve --name "
                          f"{name} ...`") from exc


def pool_urls(name: str) -> list[str]:
    """The servers of pool ``name`` that answer now (Ray must be connected to the cluster that runs it)."""
    pool = _pool(name)
    urls: list[str] = ray.get(pool.urls.remote(), timeout=60)
    if not urls:
        raise InfrastructureError(f"no server of judge pool {name!r} answers; see `evalgrid judge status --name "
                                  f"{name}`")
    return urls


def pool_health(name: str) -> list[ServerHealth]:
    """Each server's health in pool ``name``."""
    health: list[ServerHealth] = ray.get(_pool(name).health.remote(), timeout=60)
    return health


def stop_pool(name: str) -> None:
    """Stop pool ``name`` and its servers."""
    pool = _pool(name)
    ray.get(pool.stop.remote(), timeout=120)
    ray.kill(pool)


def pool_limits(name: str) -> dict[str, int | None]:
    """What the servers of pool ``name`` take in one prompt, as endpoint settings; empty for a pool started by an
    evalgrid that did not record them."""
    try:
        limits: dict[str, int | None] = ray.get(_pool(name).limits.remote(), timeout=60)
    except AttributeError:
        return {}
    return limits


def resolve_pools(endpoints: dict[str, Endpoint]) -> dict[str, Endpoint]:
    """Endpoints with every ``pool`` replaced by its servers' URLs, and the servers' limits where the endpoint does
    not set its own (Ray must be connected)."""
    resolved = {}
    for name, endpoint in endpoints.items():
        if endpoint.pool:
            limits = {key: value for key, value in pool_limits(endpoint.pool).items()
                      if getattr(endpoint, key, None) is None}
            endpoint = Endpoint.model_validate({**endpoint.model_dump(), **limits, "pool": None,
                                                "base_urls": pool_urls(endpoint.pool)})
        resolved[name] = endpoint
    return resolved


@contextlib.contextmanager
def connected(address: str | None) -> Iterator[None]:
    """Ray joined at ``address`` (``None``: a new local cluster) in the pools' namespace, for the block."""
    join_ray(address, namespace=NAMESPACE, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def resolve_pools_outside_ray(endpoints: dict[str, Endpoint]) -> dict[str, Endpoint]:
    """:func:`resolve_pools` for a process that is not on Ray: joins this machine's Ray cluster (or
    ``$RAY_ADDRESS``) just long enough to look the pools up."""
    if not any(e.pool for e in endpoints.values()):
        return endpoints
    pools = ", ".join(sorted({str(e.pool) for e in endpoints.values() if e.pool}))
    try:
        with connected("auto"):
            return resolve_pools(endpoints)
    except ConnectionError as exc:
        raise ConfigError(f"judge pool(s) {pools} live in a Ray cluster, and none was found here; set RAY_ADDRESS "
                          "to the cluster that runs `evalgrid judge serve`, or give the servers as base_urls") from exc


def endpoint_yaml(name: str, served_name: str) -> str:
    """The sweep-file snippet that routes a judge to pool ``name``."""
    return (f"endpoints:\n  {name}:\n    pool: {name}\njudges:\n  - name: llm\n    options: {{endpoint: {name}, "
            f"model: {served_name}}}\n")


def _free_port(preferred: int) -> int:
    for port in range(preferred, preferred + 100):
        with socket.socket() as probe:
            try:
                probe.bind(("0.0.0.0", port))
                return port
            except OSError:
                continue
    raise InfrastructureError(f"no free port from {preferred} on this node for a judge server")

