"""The bundle's layout is spelled in one place: every other module names a bundle's files through ``BundleFile``."""

from __future__ import annotations

import re

import pytest

from evaluator.evidence.bundle import BundleFile
from tests.support import ROOT

pytestmark = pytest.mark.pure

_HOME = "evaluator/evidence/bundle.py"
_EXCEPTIONS = {("evaluator/models.py", "build.log")}
"""``BuildReport.log_file``'s default: the record module cannot import the bundle module, which reads records."""


def _names() -> set[str]:
    # (``source`` alone is too common a word to look for: its files are looked for as ``source/...``.)
    names = {value for key, value in vars(BundleFile).items() if key.isupper() and isinstance(value, str)} - {
        BundleFile.SOURCE} | {f"{BundleFile.SOURCE}/"}
    return names | {BundleFile.screenshot(v, full=f) for v in ("desktop", "mobile") for f in (False, True)} | {
        BundleFile.page_facts(v) for v in ("desktop", "mobile")}


def test_no_module_but_the_bundles_spells_a_bundle_file_name() -> None:
    names = _names()
    assert {"interaction/result.json", "console.json", "static/desktop-viewport.png"} <= names
    spelled = re.compile(r"""["'](?:""" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
                         + r""")(?:/[^"']*)?["']""")
    found = []
    for top in ("evaluator", "cluster"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            if rel == _HOME:
                continue
            for match in spelled.finditer(path.read_text(encoding="utf-8")):
                if (rel, match.group(0).strip("\"'")) not in _EXCEPTIONS:
                    found.append(f"{rel}: {match.group(0)}")
    assert found == [], found


def test_the_layout_names_the_files_collectors_wrote_before() -> None:
    """Bundles written before keep reading the same: the names are the ones on disk since collector-1."""
    assert (BundleFile.TRACE, BundleFile.RESULT, BundleFile.VIDEO) == (
        "interaction/trace.json", "interaction/result.json", "interaction/video.mp4")
    assert BundleFile.screenshot("mobile", full=True) == "static/mobile-full.png"
    assert BundleFile.step_shot(7) == "interaction/steps/007.jpg" and BundleFile.in_source("source/app.js")
