"""The stored calibrations that speak for a sweep's scores: same judge version, judge and agent config.

``evalgrid calibrate`` writes ``RUN_DIR/calibrations/<key>.json``, its key the hash of (judge version, judge
config, agent config), and of the suite and half for any but the built-in suite whole. A sweep's scores are
calibrated by the records with exactly those three, one per suite (the built-in one, the real-app one and its
halves): the report shows them beside the leaderboard, or says that there is none and how to make one. Records
are matched on the fields their key is made of (read from the records), so the key's formula stays in
:mod:`cluster.calibration.calibrate`.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from pydantic import ValidationError

from cluster.calibration.calibrate import BUILT_IN, Calibration, stored_judge_version
from cluster.store.layout import RunFile
from cluster.store.results_log import ResultsLog
from cluster.sweep.spec import read_sweep_record
from evaluator import AgentConfig, ConfigError, JudgeConfig


class CalibrationMatch(NamedTuple):
    """The matching calibrations (one per suite and half), or why there is none."""

    calibrations: tuple[tuple[Calibration, str], ...]
    """Each matching record with what the report says of it (where it is, which suite); the built-in suite's
    first."""
    note: str
    """Why none matches and how to make one (empty when one does)."""


def find_calibration(run_dir: Path) -> CalibrationMatch:
    """The calibrations in ``run_dir/calibrations/`` for the sweep's judge version, judge and agent configs."""
    try:
        spec = read_sweep_record(run_dir).spec
    except ConfigError:
        return CalibrationMatch((), "No calibration: the run directory has no readable sweep.json.")
    judge, agent = spec.judge_panel[0], spec.agent
    version = stored_judge_version(run_dir, ResultsLog(run_dir / RunFile.RESULTS).load().values())
    make = _command(judge, agent)
    if version is None:
        return CalibrationMatch((), f"No calibration shown: the sweep has no verdict yet. {make}")
    others, found = 0, []
    for path in sorted((run_dir / RunFile.CALIBRATIONS).glob("*.json")):
        try:
            record = Calibration.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError):
            continue  # not a calibration record (or an older format): it cannot vouch for these scores
        if (record.judge_version, record.judge, record.agent) == (version, judge, agent):
            rel = path.relative_to(run_dir).as_posix()
            half = "" if record.split == "all" else f" ({record.split} half)"
            found.append((record, f"Calibration {rel}: judge {version}, agent {agent.policy}, on the {record.suite} "
                                  f"suite{half}: {record.apps} working apps and their broken twins."))
        else:
            others += 1
    if found:
        found.sort(key=lambda match: (match[0].suite != BUILT_IN, match[0].suite, match[0].split))
        return CalibrationMatch(tuple(found), "")
    elsewhere = f" ({others} calibration(s) here are for other judges or agents)" if others else ""
    return CalibrationMatch((), f"No calibration for this judge/agent (judge {version}, agent {agent.policy})"
                                f"{elsewhere}. {make}")


def _command(judge: JudgeConfig, agent: AgentConfig) -> str:
    """The command that makes the missing record (in its own run directory: it writes a sweep of its own)."""
    options = "".join(f" --option {k}={v}" for k, v in sorted(judge.options.items()))
    fields = {**agent.model_dump(mode="json", exclude_defaults=True, exclude={"policy", "options"}), **agent.options}
    agent_options = "".join(f" --agent-option {k}={v}" for k, v in sorted(fields.items()))
    return (f"Run `evalgrid calibrate --judge {judge.name}{options} --agent {agent.policy}{agent_options}` and copy "
            "the calibrations/<key>.json it writes into this run directory's calibrations/.")
