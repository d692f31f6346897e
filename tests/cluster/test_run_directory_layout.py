"""A run directory's layout is spelled in one place: every other module names its files through ``RunFile`` (and the
stage folders through ``StagePaths``), and its sweep record is read as a typed model."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from cluster.store.layout import RunFile
from cluster.sweep.spec import SweepRecord, read_sweep_record
from evaluator import ConfigError, StagePaths
from tests.support import FIXTURES, ROOT

pytestmark = pytest.mark.pure

_HOMES = {"cluster/store/layout.py", "evaluator/run.py"}


def test_no_module_but_the_layouts_spells_a_run_directory_name() -> None:
    files = {value for key, value in vars(RunFile).items() if key.isupper() and "." in value}
    folders = {RunFile.REPAIR_LIFT, RunFile.UX_REPORTS, StagePaths.ARTIFACTS, StagePaths.EVIDENCE, StagePaths.VERDICTS}
    assert {"results.jsonl", "sweep.json", "ledger.sqlite", "plan.json", "reduction.json"} <= files
    # Whole, or at the end of a path or a pattern (``glob("*/results.jsonl")``).
    spelled = re.compile(r"""["'](?:[^"'\s]*/)?(?:""" + "|".join(re.escape(n) for n in sorted(files)) + r""")["']"""
                         + r"""|/ ["'](?:""" + "|".join(folders) + r""")["']"""
                         + r"""|["'](?:""" + "|".join(folders) + r""")/""")
    found = [f"{path.relative_to(ROOT)}: {match.group(0)}"
             for top in ("evaluator", "cluster") for path in sorted((ROOT / top).rglob("*.py"))
             if str(path.relative_to(ROOT)) not in _HOMES
             for match in spelled.finditer(path.read_text(encoding="utf-8"))]
    assert found == [], found


def test_the_sweep_record_of_an_older_run_directory_reads_as_a_model(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(FIXTURES / "rundirs" / "pre-layout", run_dir)
    record = read_sweep_record(run_dir)
    assert isinstance(record, SweepRecord) and record.spec.candidates and record.path.endswith(".yaml")
    (run_dir / RunFile.SWEEP).write_text('{"spec": {}}', encoding="utf-8")
    with pytest.raises(ConfigError, match="re-run the sweep"):
        read_sweep_record(run_dir)
    (run_dir / RunFile.SWEEP).unlink()
    with pytest.raises(ConfigError, match="is it a run directory made by `evalgrid run`"):
        read_sweep_record(run_dir)
