"""The prompt-injection detector flags at most 1 % of real apps that hold no injection (issue 33, finding 6).

What it samples, and why: the repository's own fixtures that are apps (every text file, the intentional
injections and the run directories left out, as ``tests/benchmarks/false_flags.py`` defines them), and, for
every top-level package of the sandbox's pinned npm mirror (both halves of the benchmark's split), the files a
page loads from it: its ``package.json`` and the entry files it names (``main``, ``module``, ``browser``,
``unpkg``, ``jsdelivr``). Those entries are what an app vendors or pulls from a CDN, so they are the third-party
code a bundle's scan meets most; together about 30 MB, about half a minute on a two-core machine. The full
corpus (every text file of every package, 370 MB) is the benchmark's, too slow for every run.

The mirror is installed on a fresh machine by ``tests.support.install_sandbox_npm_trees`` (the session's
``mirror_root`` fixture), not skipped.
"""

from __future__ import annotations

from pathlib import Path

from tests.benchmarks.false_flags import entry_files, fixture_apps, packages, scan

AT_MOST = 0.01
"""The share of apps with no injection that may be flagged."""


def test_at_most_one_percent_of_real_apps_are_flagged(mirror_root: Path) -> None:
    modules = mirror_root / "node_modules"
    vendored = scan("npm entry files", (entry_files(app, modules) for app in packages(modules)))
    own = scan("fixtures", fixture_apps())
    assert vendored.apps >= 200 and vendored.files >= 400 and own.apps >= 150  # (the sample is what it says)
    flagged = vendored.flagged_apps + own.flagged_apps
    shown = [f"{finding.source}: {finding.excerpt}" for finding in vendored.excerpts + own.excerpts]
    assert len(flagged) <= AT_MOST * (vendored.apps + own.apps), shown
