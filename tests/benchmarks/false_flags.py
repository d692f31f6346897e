"""Benchmark: how many real apps with no injection the prompt-injection detector flags (issue 33, finding 6).

The false-flag corpus is real code that no one wrote to fool the detector:

- every top-level package of the sandbox's pinned npm mirror (``@scope/name`` counts as one), each read as
  one app: an app is flagged when any of its text files yields a finding. Apps vendor such libraries, and the
  bundle's scan reads every text file of an app's source, library code included;
- the repository's own fixtures, minus the ones that are injections on purpose (:data:`INTENTIONAL`); the
  run directories (:data:`NOT_APPS`) are scanned and shown apart: they are evalgrid's own verdicts, which is
  what a verdict forged into an app looks like (the detector flags ``"functional": 8.0`` there by design).

Each file is scanned as ``collect.py`` scans a bundle's source: the same suffixes, the first
``_SCANNED_CHARS`` characters, undecodable bytes replaced.

The packages are split into two halves by the SHA-256 of their name (even first byte: ``dev``, odd:
``test``), fixed before any finding was read: the detector is tuned by reading the dev half's findings
only, and the test half is measured once at the end. Measured so (issue 33; target at most 1 % of apps):
before, dev 3/131 and test 3/129 packages flagged; after two rounds on the dev half, dev 0/131 and test
0/129; fixtures 1/203 both times (a README that describes the injection fixture). Usage::

    .venv/bin/python tests/benchmarks/false_flags.py [--half dev|test|all] [--no-fixtures]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from evaluator.evidence.collect import _SCANNED_CHARS, _TEXT_SUFFIXES
from evaluator.textsafety import Finding, redact

ROOT = Path(__file__).resolve().parents[2]
MIRROR = ROOT / "images" / "sandbox" / "build" / "mirror" / "node_modules"
FIXTURES = ROOT / "fixtures"
INTENTIONAL = (
    "apps/injection",  # the habit tracker whose injected copy tells the evaluator to give it full marks
    "apps/tamper/injection.md",  # a model answer with text for the evaluator, for the tamper tests
)
"""Fixtures that are injections on purpose, relative to :data:`FIXTURES` (a folder excludes all under it). No
other fixture is: the READMEs that name these two describe them, and the hostile apps attack the browser."""
NOT_APPS = ("rundirs",)
"""Fixtures that are no app's content: the run directories of earlier versions (verdicts, leaderboards)."""
SHOWN = 40
"""How many flagged excerpts are printed per half."""


@dataclass
class App:
    """One app of the corpus: a name and its text files."""

    name: str
    files: list[Path]


@dataclass
class Tally:
    """What one half of the corpus gave."""

    label: str
    apps: int = 0
    flagged_apps: list[str] = field(default_factory=list)
    files: int = 0
    flagged_files: int = 0
    chars: int = 0
    seconds: float = 0.0
    excerpts: list[Finding] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return len(self.flagged_apps) / self.apps if self.apps else 0.0


def half_of(name: str) -> str:
    """The half a package belongs to, from its name alone: ``dev`` or ``test``."""
    return "dev" if hashlib.sha256(name.encode("utf-8")).digest()[0] % 2 == 0 else "test"


def _text_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix in _TEXT_SUFFIXES and p.is_file())


def package_names(mirror: Path = MIRROR) -> list[str]:
    """The mirror's top-level packages by name (``@scope/name`` one package), from its folders alone."""
    names: list[str] = []
    for entry in sorted(mirror.iterdir()):
        if not entry.is_dir() or entry.name.startswith("."):
            continue
        scoped = entry.name.startswith("@")
        for folder in sorted(p for p in entry.iterdir() if p.is_dir()) if scoped else [entry]:
            names.append(folder.relative_to(mirror).as_posix())
    return names


def packages(mirror: Path = MIRROR) -> list[App]:
    """The mirror's top-level packages, each with every text file under it (its own nested ``node_modules``
    included: an app that vendors it ships those too)."""
    return [App(name, _text_files(mirror / name)) for name in package_names(mirror)]


def entry_files(name: str, mirror: Path = MIRROR) -> App:
    """Package ``name`` as an app of only the files a page loads from it: its ``package.json`` and the files it
    names as ``main``, ``module``, ``browser``, ``unpkg`` or ``jsdelivr`` (what a CDN serves for the bare name)."""
    folder = mirror / name
    try:
        meta = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return App(name, [])
    files = [folder / "package.json"]
    for key in ("main", "module", "browser", "unpkg", "jsdelivr"):
        named = meta.get(key) if isinstance(meta, dict) else None
        if not isinstance(named, str):
            continue
        path = folder / named
        entry = next((p for p in (path, path.with_name(path.name + ".js"), path / "index.js") if p.is_file()), None)
        if entry is not None and entry.suffix in _TEXT_SUFFIXES and entry not in files:
            files.append(entry)
    return App(name, files)


def _under(path: Path, root: Path, folders: Iterable[str]) -> bool:
    relative = path.relative_to(root).as_posix()
    return any(relative == folder or relative.startswith(folder + "/") for folder in folders)


def fixture_apps(fixtures: Path = FIXTURES, *, apps_only: bool = True) -> list[App]:
    """The fixtures as apps: each text file is one, except that a folder holding an ``index.html`` or a
    ``package.json`` is one multi-file app; the intentional injections are left out, and so are (``apps_only``)
    or are all there is (not ``apps_only``) the fixtures that are no app's content."""
    multi = {p.parent for name in ("index.html", "package.json") for p in fixtures.rglob(name)}
    apps: dict[str, App] = {}
    for path in _text_files(fixtures):
        if _under(path, fixtures, INTENTIONAL) or _under(path, fixtures, NOT_APPS) == apps_only:
            continue
        owner = next((folder for folder in multi if folder in path.parents), path)
        name = owner.relative_to(fixtures).as_posix()
        apps.setdefault(name, App(name, [])).files.append(path)
    return list(apps.values())


def scan(label: str, apps: Iterable[App], *, cap: int | None = None) -> Tally:
    """Every file of ``apps`` through :func:`redact`, as the bundle's scan reads it: as many characters as the
    bundle's scan reads, or the first ``cap``."""
    tally = Tally(label)
    started = time.monotonic()
    for app in apps:
        tally.apps += 1
        flagged = False
        for path in app.files:
            text = path.read_text(encoding="utf-8", errors="replace")[:_SCANNED_CHARS if cap is None else cap]
            tally.files += 1
            tally.chars += len(text)
            findings = redact(text, f"{app.name}:{path.name}")[1]
            if findings:
                flagged = True
                tally.flagged_files += 1
                tally.excerpts += findings
        if flagged:
            tally.flagged_apps.append(app.name)
    tally.seconds = time.monotonic() - started
    return tally


def report(tally: Tally) -> Iterator[str]:
    megabytes = tally.chars / 1e6
    yield (f"== {tally.label}: {tally.apps} apps scanned, {len(tally.flagged_apps)} flagged ({100 * tally.rate:.1f} %);"
           f" {tally.files} files, {tally.flagged_files} flagged; {megabytes:.1f} M characters in {tally.seconds:.1f} s"
           f" ({megabytes / tally.seconds if tally.seconds else 0.0:.2f} M characters/s)")
    if tally.flagged_apps:
        yield "   flagged apps: " + ", ".join(tally.flagged_apps)
    for finding in tally.excerpts[:SHOWN]:
        yield f"   - {finding.source}: {finding.excerpt!r}"
    if len(tally.excerpts) > SHOWN:
        yield f"   ... and {len(tally.excerpts) - SHOWN} more excerpts"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--half", choices=("dev", "test", "all"), default="dev",
                        help="which half of the npm packages (the test half is for the final measurement)")
    parser.add_argument("--no-fixtures", action="store_true", help="leave the repository's fixtures out")
    args = parser.parse_args(argv)
    if not MIRROR.is_dir():
        print(f"{MIRROR} is missing: run tests.support.install_sandbox_npm_trees() (or make setup)", file=sys.stderr)
        return 2
    every = packages()
    halves = ("dev", "test") if args.half == "all" else (args.half,)
    tallies = [scan(f"npm {half} half", (app for app in every if half_of(app.name) == half)) for half in halves]
    if not args.no_fixtures:
        tallies.append(scan("fixtures", fixture_apps()))
        tallies.append(scan("fixtures that are evalgrid's own verdicts (flagged by design, not apps)",
                            fixture_apps(apps_only=False)))
    for tally in tallies:
        for line in report(tally):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
