"""The stored calibration that speaks for a sweep's scores: same judge version, judge and agent config.

``evalgrid calibrate`` writes ``RUN_DIR/calibrations/<key>.json``, its key the hash of (judge version, judge
config, agent config). A sweep's scores are calibrated by the record with exactly those three: the report
shows it beside the leaderboard, or says that there is none and how to make it. Records are matched on the
fields their key is made of (read from the records), so the key's formula stays in :mod:`cluster.calibration.calibrate`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

from pydantic import ValidationError

from cluster.calibration.calibrate import Calibration, stored_judge_version
from cluster.store.results_log import ResultsLog
from cluster.sweep.spec import SweepSpec
from evaluator.models import AgentConfig, JudgeConfig


class CalibrationMatch(NamedTuple):
    """The matching calibration, or why there is none."""

    calibration: Calibration | None
    """The record, when one matches."""
    note: str
    """What the report says: where the record is, or why none matches and how to make one."""


def find_calibration(run_dir: Path) -> CalibrationMatch:
    """The calibration in ``run_dir/calibrations/`` for the sweep's judge version, judge and agent configs."""
    try:
        spec = SweepSpec.model_validate(json.loads((run_dir / "sweep.json").read_text(encoding="utf-8"))["spec"])
    except (OSError, ValueError, KeyError, ValidationError):
        return CalibrationMatch(None, "No calibration: the run directory has no readable sweep.json.")
    judge, agent = spec.judge_panel[0], spec.agent
    version = stored_judge_version(run_dir, ResultsLog(run_dir / "results.jsonl").load().values())
    make = _command(judge, agent)
    if version is None:
        return CalibrationMatch(None, f"No calibration shown: the sweep has no verdict yet. {make}")
    others = 0
    for path in sorted((run_dir / "calibrations").glob("*.json")):
        try:
            record = Calibration.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError):
            continue  # not a calibration record (or an older format): it cannot vouch for these scores
        if (record.judge_version, record.judge, record.agent) == (version, judge, agent):
            rel = path.relative_to(run_dir).as_posix()
            return CalibrationMatch(record, f"Calibration {rel}: judge {version}, agent {agent.policy}, on "
                                            f"{record.apps} working apps and their broken twins.")
        others += 1
    elsewhere = f" ({others} calibration(s) here are for other judges or agents)" if others else ""
    return CalibrationMatch(None, f"No calibration for this judge/agent (judge {version}, agent {agent.policy})"
                                  f"{elsewhere}. {make}")


def _command(judge: JudgeConfig, agent: AgentConfig) -> str:
    """The command that makes the missing record (in its own run directory: it writes a sweep of its own)."""
    options = "".join(f" --option {k}={v}" for k, v in sorted(judge.options.items()))
    fields = {**agent.model_dump(mode="json", exclude_defaults=True, exclude={"policy", "options"}), **agent.options}
    agent_options = "".join(f" --agent-option {k}={v}" for k, v in sorted(fields.items()))
    return (f"Run `evalgrid calibrate --judge {judge.name}{options} --agent {agent.policy}{agent_options}` and copy "
            "the calibrations/<key>.json it writes into this run directory's calibrations/.")
