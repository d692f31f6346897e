"""One worker: executes runs one after another on its own browser, in a sandbox or on loopback.

The same :class:`RunWorker` serves the in-process scheduler and the Ray ``SandboxWorker`` actors.
It owns the policy for a single run's failures, and one rule tells the app's from the machinery's: a
failure while the app is in play is the machinery's only when a control page (:mod:`evaluator.browser.control_page`)
on a fresh sandbox fails too. Otherwise no app could be kept from choosing to go unscored (excluded as an
infrastructure error) by breaking its sandbox on purpose.

- a run that exceeds its time limit is probed (:mod:`evaluator.browser.hang`) before it is cancelled. If the app's
  page does not answer while the browser does, it is the app's **hang**: the evidence up to it is committed
  (marked incomplete) and scored by the failure policy (``judged``, ``app_hang``, functional 0). Otherwise the
  sandbox is replaced and the control page run on the new one: a failing control makes it the machinery's
  ``timeout`` (excluded from the means); a passing one retries the run, and a run that times out again is the
  app's hang;
- an infrastructure failure while the app is in play (container gone, browser crashed, control channel
  broken) is retried on a fresh sandbox after the control page passed on it; if the app then fails its
  sandbox again it is the app's **crash** (``judged``, ``app_crash``, functional 0, from the last attempt's
  evidence). A failing control page makes it ``infra_error``. Failures before the app is in play (a sandbox
  that cannot start) are the machinery's and are retried;
- a control reply that did not come from the sandbox's supervisor (:class:`~evaluator.errors.TamperError`)
  is the app's **tamper** at once (``judged``, ``app_tamper``, functional 0, flagged ``tamper_attempted``),
  and its sandbox is replaced;
- the app's other failures never get here, they are outcomes of :func:`execute_run`.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from playwright.async_api import Browser, Playwright, async_playwright

from cluster.sandbox.backends import SandboxSession, sandbox_backends
from cluster.sandbox.container import ContainerSandbox, SandboxLimits
from cluster.sandbox.docker_backend import DEFAULT_IMAGE
from cluster.store.object_store import S3Store, StoreSettings
from cluster.store.remote import RunStore
from cluster.sweep.inputs import InputsRef, fetch_inputs
from evaluator import (
    SANDBOX_DEATHS,
    TIMED_OUT,
    AppFailure,
    Blame,
    EvidenceError,
    Failure,
    HangProbe,
    InfrastructureError,
    Outcome,
    OutcomeStatus,
    ReasonCode,
    RunProgress,
    RunSpec,
    StagePaths,
    StoreError,
    WorkerStartError,
    abandon,
    as_failed,
    classify,
    execute_run,
    failed_outcome,
)
from evaluator.browser import ContextPool, ControlCheck, probe_hang, run_control_page
from evaluator.llm import Budget, Endpoint, ModelAccess, ResponseCache

_CLEANUP_S = 15.0
"""How long a timed-out run may take to unwind before its sandbox is removed under it."""
_DEADLINE_CHECK_S = 2.0
"""How often a run's deadline is read again while it runs (it moves when the answer is ready)."""

@dataclass(frozen=True)
class WorkerSettings:
    """Everything a worker needs; plain and picklable, so it can be shipped to a Ray actor."""

    run_dir: str
    backend: str = "docker"
    """A name in :data:`~cluster.sandbox.backends.sandbox_backends`: ``docker``, ``kubernetes``; ``local``
    (loopback, NOT a sandbox); ``noop`` (nothing evaluated: measures the scheduler only)."""
    run_timeout_s: float = 180.0
    """A run's limit, from the moment its answer is ready (evidence and judging)."""
    generation_timeout_s: float = 1800.0
    """A generated answer's limit (every call and, for an agentic candidate, every preview), before the run's."""
    max_attempts: int = 2
    image: str = DEFAULT_IMAGE
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    store: StoreSettings | None = None
    """When set, ``run_dir`` is a local staging area and each run's stages are published here."""
    inputs: InputsRef | None = None
    """When set, the sweep's answers come from this archive, fetched on start if this node lacks them."""
    endpoints: dict[str, Endpoint] = field(default_factory=dict)
    """Model endpoints (limits already divided among the sweep's workers)."""
    budget: Budget | None = None
    """The sweep's spending cap (an in-process one, or a handle shared by the Ray workers)."""


@dataclass
class WorkerHealth:
    """What the progress display shows per worker."""

    worker_id: str
    runs: int = 0
    failures: int = 0
    sandbox_restarts: int = 0
    current: str | None = None
    last_error: str = ""


class RunWorker:
    """Executes runs one at a time: each :meth:`execute` returns one :class:`Outcome` (it never raises
    for a run's failure; only a failure to start, :class:`WorkerStartError`, comes from :meth:`start`)."""

    def __init__(self, settings: WorkerSettings, worker_id: str) -> None:
        self.settings = settings
        self.health = WorkerHealth(worker_id)
        self._paths = StagePaths(Path(settings.run_dir))
        self._playwright: Playwright | None = None
        self._backend: SandboxSession | None = None
        self._contexts: ContextPool | None = None
        self._store = RunStore(S3Store(settings.store)) if settings.store else None
        self._models = ModelAccess(endpoints=dict(settings.endpoints), budget=settings.budget,
                                   cache=ResponseCache(Path(settings.run_dir) / "cache" / "chat"))

    async def start(self) -> None:
        """Start Playwright and the backend, fail fast if no browser can be had, and make the first run's contexts.

        Raises :class:`WorkerStartError` (with what went wrong) and leaves nothing running.
        """
        kind = sandbox_backends.create(self.settings.backend)
        try:
            if self.settings.inputs is not None:
                await asyncio.to_thread(fetch_inputs, self.settings.inputs)
            self._playwright = await async_playwright().start()
            # A worker restarted after its process was killed finds its predecessor's sandbox here.
            await kind.collect_garbage()
            self._backend = kind.open(self._playwright, image=self.settings.image, limits=self.settings.limits)
            if self._backend is None:
                return  # nothing runs apps: each run is recorded as not evaluated
            contexts = await self._contexts_on(await self._backend.browser())
            # The first run starts as warm as the others, and a browser that cannot make a context fails here.
            await contexts.ready()
        except BaseException as exc:
            await self.close()
            if isinstance(exc, InfrastructureError):
                raise WorkerStartError(f"worker {self.health.worker_id} could not start: {exc}") from exc
            raise

    @property
    def sandbox(self) -> ContainerSandbox | None:
        """The worker's sandbox (container or pod backends only)."""
        return self._backend.sandbox if self._backend is not None else None

    async def close(self) -> None:
        """Remove the sandbox and stop Playwright."""
        backend, self._backend = self._backend, None
        playwright, self._playwright = self._playwright, None
        try:
            await self._drop_contexts()
            if backend is not None:
                await backend.close()
        finally:
            if playwright is not None:
                await playwright.stop()

    async def execute(self, spec: RunSpec) -> Outcome:
        """One run with its time limit and bounded, classified retries."""
        self.health.current = spec.run_key
        try:
            outcome = await self._execute(spec)
            if self._store is not None:
                outcome = await self._publish(outcome)
        finally:
            self.health.current = None
        self.health.runs += 1
        if outcome.status is OutcomeStatus.INFRA_ERROR:
            self.health.failures += 1
        return outcome

    async def _execute(self, spec: RunSpec) -> Outcome:
        if self._backend is None:
            # The noop backend: an infra_error that says no evaluation happened (scheduler benchmarks).
            return failed_outcome(spec, OutcomeStatus.INFRA_ERROR, ReasonCode.INTERNAL_ERROR,
                                  "noop backend: nothing was evaluated", attempts=1, duration_s=0.0)
        started = time.monotonic()
        failed: _Failed | None = None
        # A control page on the fresh sandbox after an attempt died under the app: when it passed and the next
        # attempt dies the same way, the app is what kills sandboxes (its crash); when it failed, the machinery.
        control: ControlCheck | None = None
        broken = ""
        for attempt in range(1, self.settings.max_attempts + 1):
            now = _Attempt(attempt)
            try:
                tried = await self._attempt(spec, now, started)
            except Exception as exc:  # noqa: BLE001 - a bug or a dead browser costs one run, not the sweep
                tried = await self._failed(spec, now, exc, started)
            if isinstance(tried, Outcome):
                return tried
            failed = tried
            if failed.failure.blame is Blame.MODEL:
                continue  # the endpoint, not the sandbox: retry without replacing it
            after = await self._after_failed_attempt(spec, now, failed, control, started)
            if isinstance(after, Outcome):
                return after
            control = after
            if control is not None and not control.passed:
                broken = f"after attempt {attempt}, {control.detail} on a fresh sandbox: the machinery's failure"
        assert failed is not None  # every attempt that returns no outcome failed
        detail = f"{broken}\nlast attempt: {failed.detail}" if broken else failed.detail
        return failed_outcome(spec, failed.failure.status, failed.failure.code, detail,
                              attempts=self.settings.max_attempts, duration_s=time.monotonic() - started)

    async def _attempt(self, spec: RunSpec, now: _Attempt, started_run: float) -> Outcome | _Failed:
        """One attempt: its outcome, or why it failed (a machine timeout)."""
        assert self._backend is not None
        limit = self.settings.run_timeout_s
        now.browser = await self._backend.browser()
        contexts = await self._contexts_on(now.browser)
        run = asyncio.ensure_future(execute_run(spec, browser=now.browser, paths=self._paths, attempt=now.number,
                                                host=self._backend.host, models=self._models,
                                                contexts=contexts, progress=now.progress))
        started, generating = time.monotonic(), self.settings.generation_timeout_s

        def deadline() -> float:
            answered = now.progress.answered_at
            return started + generating if answered is None else answered + limit

        ended = await _until_done_or_disconnected(run, now.browser, deadline)
        if ended == "done":
            return run.result()
        generated = now.progress.answered_at is not None
        # Whose timeout is it? Asked before the run is cancelled: its page must still be there. (A generation past
        # its own limit has served no app yet: there is nothing to ask.)
        asked = ended == "timeout" and generated
        now.probe = await probe_hang(now.browser, origin=now.progress.origin) if asked else None
        # Either way the run is abandoned, and its sandbox is thrown away.
        await abandon(run, unwind_s=_CLEANUP_S)
        if ended == "disconnected":
            raise InfrastructureError("the browser's connection dropped during the run (sandbox gone?)")
        if not generated:
            return _Failed(TIMED_OUT, f"generating the answer exceeded its {generating:.0f} s limit "
                                      "(generation_timeout_s)")
        assert now.probe is not None  # ended == "timeout"
        if now.probe.app_hung and now.progress.commit_incomplete is not None:
            # The app's hang is a result about the app: scored from the evidence up to it, not retried.
            return await self._app_failure(spec, now, started_run, AppFailure.HANG,
                                           f"the run exceeded its {limit:.0f} s limit: {now.probe.detail}")
        return _Failed(TIMED_OUT, f"the run exceeded its {limit:.0f} s limit, and the hang probe did not find the "
                                  f"app's page busy beside a healthy browser: {now.probe.detail}")

    async def _failed(self, spec: RunSpec, now: _Attempt, exc: Exception, started: float) -> Outcome | _Failed:
        """The outcome an attempt's exception decides (:func:`~evaluator.failures.classify`), or why it failed."""
        failure = classify(exc)
        if not failure.retry:
            # A deferral for a larger budget (the paid calls so far are cached), or a request the endpoint refuses.
            return failed_outcome(spec, failure.status, failure.code, str(exc), attempts=now.number,
                                  duration_s=time.monotonic() - started)
        if failure.blame is Blame.APP_IF_LOADED and now.progress.commit_incomplete is not None \
                and now.browser is not None:
            now.probe = None
            return await self._app_failure(spec, now, started, AppFailure.TAMPER, str(exc))
        if failure.code is ReasonCode.INTERNAL_ERROR:
            return _Failed(failure, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}")
        return _Failed(failure, str(exc))

    async def _after_failed_attempt(self, spec: RunSpec, now: _Attempt, failed: _Failed,
                                    control: ControlCheck | None, started: float) -> Outcome | ControlCheck | None:
        """After a failed attempt, a fresh sandbox; and when the app was in play, a control page on it, which
        says whose failure it is (the app's, when a control passed before this attempt failed the same way).
        Returns the app's failure scored, or the control page's result (``None``: none was run)."""
        code, detail = failed.failure.code, failed.detail
        in_play = now.progress.commit_incomplete is not None and code in SANDBOX_DEATHS
        if in_play and control is not None and control.passed and now.browser is not None:
            failure = AppFailure.HANG if code is ReasonCode.RUN_TIMEOUT else AppFailure.CRASH
            return await self._app_failure(
                spec, now, started, failure,
                f"each of {now.number} attempts failed its sandbox (the last: {code.value}: "
                f"{(detail.splitlines() or [''])[0][:300]}); before the last, {control.detail} on a fresh one")
        await self._recover(detail.splitlines()[0] if detail else code.value)
        last = now.number == self.settings.max_attempts
        return await self._control_page() if in_play and not last else None

    async def _app_failure(self, spec: RunSpec, now: _Attempt, started: float, failure: AppFailure,
                           detail: str) -> Outcome:
        """The app's hang, crash or tamper scored (:meth:`_score_app_failure`), timed from the run's start."""
        outcome = await self._score_app_failure(spec, now, failure, detail)
        return outcome.model_copy(update={"duration_s": round(time.monotonic() - started, 3)})

    async def _score_app_failure(self, spec: RunSpec, now: _Attempt, failure: AppFailure, detail: str) -> Outcome:
        """Commit the evidence up to the app's hang or crash, replace the sandbox, and score the evidence.

        The run is executed again from its stored stages: it finds the bundle committed and marked
        incomplete, so it touches no browser (the attempt's is only passed along) and only judges (the failure
        policy's verdict). The sandbox goes first: a spinning page must not hold a core while it is judged.
        """
        progress, attempt = now.progress, now.number
        assert progress.commit_incomplete is not None and self._backend is not None  # checked by the caller
        assert now.browser is not None
        started = time.monotonic()
        try:
            try:
                await asyncio.to_thread(progress.commit_incomplete, failure, detail, now.probe)
            finally:
                await self._recover(f"the app's {failure.value}")
            return await asyncio.wait_for(
                execute_run(spec, browser=now.browser, paths=self._paths, attempt=attempt, host=self._backend.host,
                            models=self._models), self.settings.run_timeout_s)
        except Exception as exc:  # noqa: BLE001 - scoring a failure must not fail the sweep; the run is recorded
            failed = classify(exc)
            why = str(exc) if failed.status is OutcomeStatus.DEFERRED else (
                f"the app's {failure.value} ({detail[:300]}) could not be scored: {type(exc).__name__}: {exc}")
            return failed_outcome(spec, failed.status, failed.code, why, attempts=attempt,
                                  duration_s=time.monotonic() - started)

    async def _control_page(self) -> ControlCheck:
        """The control page on the (fresh) sandbox; a sandbox that cannot even start fails it."""
        assert self._backend is not None  # only called from _execute, which checked it
        try:
            browser = await asyncio.wait_for(self._backend.browser(), 120)
        except (InfrastructureError, TimeoutError) as exc:
            return ControlCheck(False, f"the fresh sandbox did not start ({type(exc).__name__}: {str(exc)[:300]})")
        return await run_control_page(browser, self._backend.host)

    async def _publish(self, outcome: Outcome) -> Outcome:
        """Upload the run's stages before its outcome leaves the worker (the driver records it next)."""
        assert self._store is not None
        try:
            await asyncio.to_thread(self._store.publish_stages, self._paths, outcome)
        except (StoreError, EvidenceError) as exc:
            self.health.last_error = str(exc)[:200]
            return as_failed(outcome, classify(exc), str(exc))
        return outcome

    async def _contexts_on(self, browser: Browser) -> ContextPool:
        """The pool that makes the next run's contexts ahead on ``browser`` (a new one for a new browser)."""
        if self._contexts is None or self._contexts.browser is not browser:
            await self._drop_contexts()
            self._contexts = ContextPool(browser, ahead=True)
        return self._contexts

    async def _drop_contexts(self) -> None:
        contexts, self._contexts = self._contexts, None
        if contexts is not None:
            await contexts.close()

    async def _recover(self, why: str) -> None:
        assert self._backend is not None  # only called from _execute, which checked it
        self.health.last_error = why[:200]
        self.health.sandbox_restarts += 1
        await self._drop_contexts()
        try:
            await asyncio.wait_for(self._backend.recover(), 120)
        except (InfrastructureError, TimeoutError) as exc:
            self.health.last_error = f"recovery failed: {exc}"[:200]


@dataclass
class _Attempt:
    """One attempt of a run: its number, and what it got as far as (the browser, the hang probe)."""

    number: int
    progress: RunProgress = field(default_factory=RunProgress)
    browser: Browser | None = None
    probe: HangProbe | None = None


@dataclass(frozen=True)
class _Failed:
    """Why an attempt ended without an outcome."""

    failure: Failure
    detail: str


async def _until_done_or_disconnected(run: asyncio.Future[Outcome], browser: Browser,
                                      deadline: Callable[[], float]) -> Literal["done", "disconnected", "timeout"]:
    """Wait for ``run``, but not past ``deadline()`` (which may move while the run goes on) and not past the
    browser's disconnection.

    Playwright does not always fail a pending call when the connection drops (a `new_page` on a
    context of a killed sandbox waited forever): the disconnection itself must end the wait.
    """
    dropped: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def on_disconnect(_: Browser) -> None:
        if not dropped.done():
            dropped.set_result(None)

    browser.on("disconnected", on_disconnect)
    try:
        if not browser.is_connected():
            on_disconnect(browser)
        waiters: set[asyncio.Future[Any]] = {run, dropped}
        while not run.done() and not dropped.done():
            left = deadline() - time.monotonic()
            if left <= 0:
                break
            # Woken at least every few seconds: the deadline moves when the answer becomes ready.
            await asyncio.wait(waiters, timeout=min(left, _DEADLINE_CHECK_S), return_when=asyncio.FIRST_COMPLETED)
    finally:
        browser.remove_listener("disconnected", on_disconnect)
        dropped.cancel()
    if run.done():
        return "done"
    return "disconnected" if dropped.done() and not dropped.cancelled() else "timeout"
