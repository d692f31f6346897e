"""Objective labels for a real-app suite: each app's play-test, run on the original and on every twin.

A play-test (``<suite>/playtests/<id>.py``, ``async def play(page)``) does the app's core flow as a user would
and raises when the outcome is wrong. Run on a version of the app, it labels it ``works`` or ``broken``; the
calibration keeps an original labelled ``works`` and a functional twin labelled ``broken``, and leaves out the
rest (a "broken" twin the play-test cannot tell from its original is not a broken twin).

Each version is served from a temporary directory on 127.0.0.1 and opened in a fresh context of this machine's
Chromium, confined to that origin. The apps are third-party code in a trusted suite, not model answers: this is
not the sandbox.

``python -m cluster.calibration.playtest --suite fixtures/realapps [--apps a,b] [--write]``
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import yaml
from playwright.async_api import Browser, Page, async_playwright

from cluster.calibration.calibrate import LABELS, ORIGINAL, Label, SuiteApp, load_suite, versions
from cluster.calibration.twins import Operator
from evaluator import ConfigError, sha256_bytes
from evaluator.answer import ExtractedApp, extract_app
from evaluator.browser import confine_to_origin, launch_browser, serve_directory

PLAY_TIMEOUT_S = 30.0
_VIEWPORT = {"width": 1280, "height": 800}
Play = Callable[[Page], Awaitable[None]]


def label_operators() -> list[Operator]:
    """The operators whose twins a play-test labels: the functional ones (aesthetic twins keep the function)."""
    return [op for op in Operator if not op.aesthetic]


def load_play(suite: Path, app_id: str) -> Play:
    """The ``play`` coroutine function of ``app_id``'s play-test."""
    path = suite / "playtests" / f"{app_id}.py"
    if not path.is_file():
        raise ConfigError(f"{app_id} has no play-test at {path}: write one (see {suite / 'README.md'})")
    spec = importlib.util.spec_from_file_location(f"_playtest_{app_id.replace('-', '_')}", path)
    assert spec is not None and spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    play = getattr(module, "play", None)
    if not callable(play):
        raise ConfigError(f"{path} defines no `async def play(page)`")
    return play  # type: ignore[no-any-return]


async def label_app(browser: Browser, suite: Path, app: SuiteApp, answer: str,
                    operators: Iterable[Operator] | None = None) -> dict[str, Label]:
    """Run ``app``'s play-test on its original and on each functional twin (of ``operators``, default all);
    the label of each version."""
    play = load_play(suite, app.id)
    labels: dict[str, Label] = {}
    for name, text in versions(app, answer, label_operators() if operators is None else operators):
        reason = await _play_version(browser, play, text)
        labels[name] = Label(label="broken" if reason else "works", answer=sha256_bytes(text.encode())[:12],
                             reason=reason)
    return labels


async def _play_version(browser: Browser, play: Play, text: str) -> str:
    """Run the play-test on one version; the failure's reason, or "" when it passed."""
    app = extract_app(text.encode())
    if not isinstance(app, ExtractedApp):
        return f"not assessable: {app.detail}"
    with _served(app) as origin:
        context = await browser.new_context(viewport=_VIEWPORT)  # type: ignore[arg-type]
        try:
            await confine_to_origin(context, origin, [])
            page = await context.new_page()
            try:
                await page.goto(f"{origin}/{app.entrypoint}", wait_until="load", timeout=15_000)
                await asyncio.wait_for(play(page), PLAY_TIMEOUT_S)
            except AssertionError as exc:
                return f"assertion: {exc}"[:300] if str(exc) else "assertion failed"
            except TimeoutError:
                return f"the play-test did not finish in {PLAY_TIMEOUT_S:.0f} s"
            except Exception as exc:  # noqa: BLE001 - any failure of the flow on this version labels it broken
                return f"{type(exc).__name__}: {exc}"[:300]
            return ""
        finally:
            await context.close()


@contextmanager
def _served(app: ExtractedApp) -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="evalgrid-playtest-") as root:
        for name, content in app.files.items():
            path = Path(root) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        with serve_directory(Path(root), []) as origin:
            yield origin


async def label_suite(suite: Path, only: list[str] | None = None,
                      operators: Iterable[Operator] | None = None) -> dict[str, dict[str, Label]]:
    """Labels of every app of ``suite`` (or of ``only``), by app and version (twins of ``operators`` only)."""
    apps = load_suite(suite, only)
    chosen = None if operators is None else list(operators)
    async with async_playwright() as playwright:
        browser = await launch_browser(playwright)
        try:
            return {app.id: await label_app(browser, suite, app, answer, chosen) for app, answer in apps}
        finally:
            await browser.close()


def write_labels(suite: Path, labels: dict[str, dict[str, Label]]) -> Path:
    """Merge ``labels`` into the suite's ``labels.yaml`` (other apps' labels stay); return its path."""
    path = suite / LABELS
    stored = (yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None) or {}
    for app, by_version in labels.items():
        stored[app] = {name: label.model_dump(exclude_defaults=True) for name, label in by_version.items()}
    path.write_text(yaml.safe_dump(dict(sorted(stored.items())), sort_keys=False, allow_unicode=True, width=120),
                    encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    """Label a suite's versions with their play-tests; print them, and write ``labels.yaml`` with ``--write``."""
    parser = argparse.ArgumentParser(prog="python -m cluster.calibration.playtest", description=__doc__.split("\n")[0])
    parser.add_argument("--suite", type=Path, default=Path("fixtures/realapps"), help="suite directory")
    parser.add_argument("--apps", help="comma-separated app ids (default: every app)")
    parser.add_argument("--write", action="store_true", help="store the labels in the suite's labels.yaml")
    args = parser.parse_args(argv)
    labels = asyncio.run(label_suite(args.suite, args.apps.split(",") if args.apps else None))
    unexpected = 0
    for app, by_version in labels.items():
        for name, label in by_version.items():
            expected = "works" if name == ORIGINAL else "broken"
            unexpected += label.label != expected
            mark = "" if label.label == expected else "   <-- not as expected: left out of the calibration"
            print(f"{app:36} {name:18} {label.label:7} {label.reason[:100]}{mark}")
    if args.write:
        print(f"labels written to {write_labels(args.suite, labels)}")
    return 1 if any(by_version[ORIGINAL].label != "works" for by_version in labels.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
