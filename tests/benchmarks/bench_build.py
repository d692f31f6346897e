"""Benchmark: building framework answers offline in the Docker sandbox, and the sandbox image's size.

The subject is the single-file React answer (issue 7: "build time for a typical single-file React
answer"): evalgrid mounts it from a generated entry and bundles it with esbuild alone. The baseline,
measured side by side on the same sandbox, is what a developer would do with the same answer: wrap it
in a Vite project (package.json, index.html, main.jsx) and run `vite build`. The Vue component and the
Vite project fixtures, which evalgrid builds with Vite, are reported too. Medians over the repeats;
the sandbox has the grid's default limits (one CPU).

    .venv/bin/python tests/benchmarks/bench_build.py [--repeats 5] [--smoke]

Target: the single-file React answer builds in at most 0.25× the Vite baseline (exit 1 when missed).
``--smoke`` builds each subject once and checks that each build succeeds and that its page renders in the
sandbox's Chromium, without the target: one build says nothing about speed. ``make test`` runs it on the two
subjects the target compares; the Vue component and the Vite project fixture are left to ``make test-full``
(``EVALGRID_FULL_TESTS=1``), as ``make test`` builds both in the sandbox anyway and checks their rendered pages
more closely than the smoke does (tests/sandbox/test_frozen_web.py, ``vue-sfc`` and ``vite-project``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from playwright.async_api import Browser, async_playwright  # noqa: E402

from cluster.sandbox.docker_backend import DEFAULT_IMAGE, DockerSandbox  # noqa: E402
from evaluator.answer.extract import ExtractedApp, extract_app  # noqa: E402
from evaluator.browser.app_host import BUILD_OUTPUT  # noqa: E402
from evaluator.models import Stack  # noqa: E402
from tests.budget import full_suite  # noqa: E402

FROZEN = ROOT / "fixtures" / "frozen-web"
RATIO_TARGET = 0.25
RATIO_SUBJECTS = ("react component (esbuild)", "same answer as a Vite project (baseline)")
"""The subjects the target compares: ours, then the baseline."""
_VITE_WRAPPER = {
    "package.json": json.dumps({"private": True, "scripts": {"build": "vite build"},
                                "dependencies": {"react": "^18.3.1", "react-dom": "^18.3.1", "lucide-react": "*"},
                                "devDependencies": {"vite": "^5.4.0", "@vitejs/plugin-react": "^4.3.0"}}),
    "index.html": '<!doctype html><html><body><div id="root"></div>'
                  '<script type="module" src="/main.jsx"></script></body></html>',
    "main.jsx": "import { createRoot } from 'react-dom/client';\nimport App from './App.jsx';\n"
                "createRoot(document.getElementById('root')).render(<App />);\n",
}


def _app(name: str) -> ExtractedApp:
    app = extract_app((FROZEN / f"{name}.md").read_bytes())
    assert isinstance(app, ExtractedApp), app
    return app


def _subject(name: str) -> tuple[dict[str, str], Stack, str]:
    app = _app(name)
    return app.files, app.stack, app.entrypoint


async def _build(sandbox: DockerSandbox, files: dict[str, str], stack: Stack, entry: str,
                 browser: Browser | None = None) -> float:
    """Seconds of one build; with ``browser`` (the smoke size), the built page must also render something."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, content in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(content, encoding="utf-8")
        async with sandbox.serve(root, []) as origin:
            report, log = await sandbox.build(stack, entry)
            if not report.ok:
                raise SystemExit(f"build of {entry} failed:\n{log}")
            if browser is not None:
                page = await browser.new_page()
                await page.goto(f"{origin}/{BUILD_OUTPUT}", wait_until="load")
                await page.wait_for_timeout(500)
                elements = await page.evaluate("document.body ? document.body.querySelectorAll('*').length : 0")
                await page.close()
                if elements < 3:
                    raise SystemExit(f"the build of {entry} serves a page with {elements} elements:\n{log}")
    return report.seconds


async def main(repeats: int, *, smoke: bool = False) -> bool:
    react = _app("jsx-component")
    subjects = {
        "react component (esbuild)": (react.files, Stack.COMPONENT, react.entrypoint),
        "same answer as a Vite project (baseline)": ({**react.files, **_VITE_WRAPPER}, Stack.PROJECT, "index.html"),
        "vue component (vite)": _subject("vue-sfc"),
        "vite project fixture": _subject("vite-project"),
    }
    if smoke and not full_suite():  # the other two are built and checked by test_frozen_web (see above)
        subjects = {name: subjects[name] for name in RATIO_SUBJECTS}
    times: dict[str, list[float]] = {name: [] for name in subjects}
    sandbox = DockerSandbox()
    await sandbox.start()
    try:
        async with async_playwright() as playwright:
            browser = await sandbox.browser(playwright) if smoke else None
            for _ in range(repeats):  # interleaved, so machine noise hits every subject alike
                for name, (files, stack, entry) in subjects.items():
                    times[name].append(await _build(sandbox, files, stack, entry, browser))
    finally:
        await sandbox.close()
    medians = {name: statistics.median(t) for name, t in times.items()}
    size = subprocess.run(["docker", "image", "inspect", "--format", "{{.Size}}", DEFAULT_IMAGE],
                          capture_output=True, text=True, check=True).stdout.strip()
    print(f"offline builds in the sandbox, median of {repeats}:")
    for name, median in medians.items():
        print(f"  {name:44s} {median:6.2f} s")
    ours, baseline = (medians[name] for name in RATIO_SUBJECTS)
    print(f"sandbox image {DEFAULT_IMAGE}: {int(size) / 1e9:.2f} GB")
    if smoke:
        print(f"smoke: {len(subjects)} subjects built, each page rendered in the sandbox (no target checked)")
        return True
    ok = ours / baseline <= RATIO_TARGET
    print(f"  ratio single-file React answer / Vite baseline = {ours / baseline:.2f}; target ≤ {RATIO_TARGET}: "
          f"{'OK' if ok else 'MISSED'}")
    return ok


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5, help="builds per subject")
    parser.add_argument("--smoke", action="store_true", help="one build per subject, correctness only")
    args = parser.parse_args()
    sys.exit(0 if asyncio.run(main(1 if args.smoke else args.repeats, smoke=args.smoke)) else 1)
