"""The heuristic judge's deduction table and its identity in the content keys."""

from __future__ import annotations

import hashlib
from importlib import resources

import pytest

from evaluator.errors import RegistryError
from evaluator.evidence.design import QUALITIES
from evaluator.judges.heuristic import DEFAULT_RUBRIC, HeuristicJudge, load_rubric
from evaluator.models import Severity


def test_every_category_has_a_severity_a_deduction_and_a_cap() -> None:
    rubric = load_rubric()
    for dimension in ("functional", "aesthetic"):
        categories = rubric[dimension]["categories"]
        assert categories
        for name, row in categories.items():
            Severity(row["severity"])
            assert 0 < row["deduction"] <= row["cap"] <= 8.0, name
            assert row["meaning"], name
    assert "HEURISTIC" in rubric["label"]


def test_judge_version_carries_a_hash_of_the_rubric_text_so_edits_rekey_verdicts() -> None:
    text = resources.files("evaluator").joinpath("rubrics/heuristic-v9.yaml").read_bytes()
    assert DEFAULT_RUBRIC == "heuristic-v9"
    assert HeuristicJudge().version == f"heuristic-v9@{hashlib.sha256(text).hexdigest()[:12]}"
    assert load_rubric()["version"] == "heuristic-v9"


@pytest.mark.parametrize("version", ["heuristic-v1", "heuristic-v2"])
def test_older_rubrics_stay_for_rejudging(version: str) -> None:
    assert HeuristicJudge(rubric=version).version.startswith(f"{version}@")
    assert "bonuses" in load_rubric(version)["aesthetic"]


def test_v3_qualities_replace_the_bonuses_and_fill_the_scale_above_the_styled_baseline() -> None:
    v3, v2 = load_rubric("heuristic-v3"), load_rubric("heuristic-v2")
    aesthetic = v3["aesthetic"]
    assert "bonuses" not in aesthetic
    assert tuple(aesthetic["qualities"]) == QUALITIES
    assert all(row["meaning"] and row["points"] > 0 for row in aesthetic["qualities"].values())
    assert aesthetic["baselines"]["styled"] + sum(row["points"] for row in aesthetic["qualities"].values()) == 8.0
    # the deductions and the whole functional table are v2's: the qualities change nothing else
    assert v3["functional"] == v2["functional"]
    assert aesthetic["categories"] == v2["aesthetic"]["categories"]
    assert aesthetic["baselines"] == v2["aesthetic"]["baselines"] and aesthetic["floor"] == v2["aesthetic"]["floor"]


def test_unknown_rubric_is_a_clear_error() -> None:
    with pytest.raises(RegistryError, match="no heuristic rubric 'heuristic-v99'"):
        HeuristicJudge(rubric="heuristic-v99")


def test_v4_changes_only_the_functional_rules_it_names() -> None:
    v4, v3 = load_rubric("heuristic-v4"), load_rubric("heuristic-v3")
    assert v4["aesthetic"] == v3["aesthetic"]
    new, old = v4["functional"]["categories"], v3["functional"]["categories"]
    assert set(old) - set(new) == {"core_interaction_failure"} and set(new) - set(old) == {"app_unresponsive"}
    assert new["keys_ignored"]["keyboard_apps_only"] is True and "keyboard_apps_only" not in old["keys_ignored"]
    assert {k: v for k, v in new.items() if k not in ("keys_ignored", "app_unresponsive")} == {
        k: v for k, v in old.items() if k not in ("keys_ignored", "core_interaction_failure")}


def test_v5_adds_only_the_core_flow_row_and_its_render_watch_and_key_rules() -> None:
    v5, v4 = load_rubric("heuristic-v5"), load_rubric("heuristic-v4")
    assert v5["aesthetic"] == v4["aesthetic"]
    new, old = v5["functional"]["categories"], v4["functional"]["categories"]
    assert set(new) - set(old) == {"core_flow_dead"} and set(old) <= set(new)
    assert new["core_flow_dead"]["severity"] == "critical"
    assert new["no_controls"]["live_display_works"] is True and "live_display_works" not in old["no_controls"]
    assert new["keys_ignored"]["unheard"] is new["keys_ignored"]["focused_keys_are_the_widgets"] is True
    changed = ("core_flow_dead", "no_controls", "keys_ignored")
    assert {k: v for k, v in new.items() if k not in changed} == {k: v for k, v in old.items() if k not in changed}
    assert "core" not in v4["functional"] and "render" not in v4["functional"]


def test_v6_adds_only_the_small_but_working_render_rule() -> None:
    v6, v5 = load_rubric("heuristic-v6"), load_rubric("heuristic-v5")
    assert v6["aesthetic"] == v5["aesthetic"]
    assert v6["functional"]["categories"] == v5["functional"]["categories"]
    assert v6["functional"]["core"] == v5["functional"]["core"]
    render = dict(v6["functional"]["render"])
    assert render.pop("small_but_working") is True and render == v5["functional"]["render"]


def _changes_only(newer: str, older: str, flags: dict[str, str]) -> None:
    """``newer``'s table is ``older``'s but for one flag turned on in each named functional category (and those
    categories' meanings)."""
    new_table, old_table = load_rubric(newer), load_rubric(older)
    assert new_table["aesthetic"] == old_table["aesthetic"]
    assert {k: v for k, v in new_table["functional"].items() if k != "categories"} == {
        k: v for k, v in old_table["functional"].items() if k != "categories"}
    new, old = new_table["functional"]["categories"], old_table["functional"]["categories"]
    assert set(new) == set(old)
    for name, flag in flags.items():
        assert new[name][flag] is True and flag not in old[name], name
        assert {k: v for k, v in new[name].items() if k not in (flag, "meaning")} == {
            k: v for k, v in old[name].items() if k != "meaning"}, name
    assert {k: v for k, v in new.items() if k not in flags} == {k: v for k, v in old.items() if k not in flags}


def test_v7_changes_only_the_two_drag_rules() -> None:
    _changes_only("heuristic-v7", "heuristic-v6", {"dead_control": "drags_beside_a_move", "core_flow_dead": "unheard"})


def test_v8_changes_only_the_core_flows_pointer_rule() -> None:
    _changes_only("heuristic-v8", "heuristic-v7", {"core_flow_dead": "sweeps"})


def test_v9_adds_only_the_silent_listener_row_the_drawn_canvas_and_raw_html_switches() -> None:
    v9, v8 = load_rubric("heuristic-v9"), load_rubric("heuristic-v8")
    categories = dict(v9["functional"]["categories"])
    row = categories.pop("silent_listener")
    assert row.pop("meaning") and row == {"severity": "minor", "deduction": 0.5, "cap": 1.0}
    assert categories == v8["functional"]["categories"]
    render = dict(v9["functional"]["render"])
    assert render.pop("drawn_canvas_works") is True and render == v8["functional"]["render"]
    assert {k: v for k, v in v9["functional"].items() if k not in ("categories", "render")} == {
        k: v for k, v in v8["functional"].items() if k not in ("categories", "render")}
    aesthetic = dict(v9["aesthetic"])
    assert aesthetic.pop("raw_html_unstyled") is True and aesthetic == v8["aesthetic"]
