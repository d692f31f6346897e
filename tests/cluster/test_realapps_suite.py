"""The real-app validation suite (``fixtures/realapps``) holds what its README promises: third-party apps from
npm packages with their provenance, in eight interaction styles with at least four apps each, a fixed dev/test
split by package, per-app twins whose edits apply, and play-test labels that are fresh for every version the
calibration would run. No browser: the labels' freshness is checked by hash (the play-tests themselves run in
``test_realapps_slice.py``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from cluster.calibration.calibrate import ORIGINAL, SuiteApp, confirmed, load_labels, load_suite, versions
from cluster.calibration.twins import Operator
from evaluator.errors import ConfigError
from evaluator.keys import sha256_bytes

SUITE = Path(__file__).resolve().parents[2] / "fixtures" / "realapps"
STYLES = {"forms_compute", "forms_store", "drag_drop", "sliders", "keyboard_game", "pointer_canvas", "multi_view",
          "media_timers"}


@pytest.fixture(scope="module")
def apps() -> list[tuple[SuiteApp, str]]:
    return load_suite(SUITE)


def test_third_party_apps_in_every_style_with_their_provenance(apps: list[tuple[SuiteApp, str]]) -> None:
    by_style = Counter(app.style for app, _ in apps)
    assert set(by_style) == STYLES and min(by_style.values()) >= 4, by_style
    for app, answer in apps:
        assert app.provenance is not None and app.provenance.version and app.provenance.files, app.id
        assert app.provenance.license in {"MIT", "BSD-2-Clause", "BSD-3-Clause", "ISC", "Apache-2.0"}, app.id
        assert "todomvc" not in answer.lower() and "todomvc" not in app.provenance.package.lower()  # held out
        assert (SUITE / "playtests" / f"{app.id}.py").is_file(), app.id
        assert Operator.CORE_DEAD in app.patches, f"{app.id} has no core_dead twin"


def test_the_split_is_fixed_by_package_and_both_halves_hold_most_styles(apps: list[tuple[SuiteApp, str]]) -> None:
    for app, _ in apps:
        assert app.provenance is not None
        odd = int(sha256_bytes(app.provenance.package.encode())[:2], 16) % 2 == 1
        assert app.split == ("test" if odd else "dev")
    halves = {split: {app.style for app, _ in apps if app.split == split} for split in ("dev", "test")}
    assert len(halves["dev"]) >= 6 and len(halves["test"]) >= 6, halves


def test_every_twin_edit_applies_once_and_changes_the_answer(apps: list[tuple[SuiteApp, str]]) -> None:
    for app, answer in apps:
        for operator in app.patches:
            twin = app.twin(answer, operator)
            assert twin is not None and twin != answer, (app.id, operator)


def test_a_patch_whose_text_is_not_found_once_is_a_clear_error(apps: list[tuple[SuiteApp, str]]) -> None:
    app, answer = apps[0]
    with pytest.raises(ConfigError, match="occurs 2 times"):
        app.twin(answer + answer, Operator.CORE_DEAD)
    with pytest.raises(ValueError, match="generic operators"):
        SuiteApp.model_validate({**app.model_dump(mode="json"), "patches": {"css_removed": [{"find": "a",
                                                                                             "replace": "b"}]}})


def test_labels_are_fresh_for_every_version_and_every_original_works(apps: list[tuple[SuiteApp, str]]) -> None:
    labels = load_labels(SUITE)
    assert labels is not None
    kept: Counter[str] = Counter()
    for app, answer in apps:
        for name, text in versions(app, answer, [op for op in Operator if not op.aesthetic]):
            label = labels.get(app.id, {}).get(name)
            assert label is not None and label.answer == sha256_bytes(text.encode())[:12], (
                f"{app.id}.{name}: label missing or stale; run python -m cluster.calibration.playtest --write "
                f"--apps {app.id}")
            kept[name] += confirmed(labels, app.id, name, text)
        assert labels[app.id][ORIGINAL].label == "works", app.id
    # the per-app twins are what the suite is for: nearly all of them must be confirmed broken
    assert kept[Operator.CORE_DEAD.value] >= 0.9 * len(apps), kept


def test_a_stale_label_leaves_its_version_out(apps: list[tuple[SuiteApp, str]]) -> None:
    labels = load_labels(SUITE)
    app, answer = apps[0]
    assert confirmed(labels, app.id, ORIGINAL, answer)
    assert not confirmed(labels, app.id, ORIGINAL, answer + "\n<!-- edited -->")
    assert confirmed(None, app.id, ORIGINAL, answer + "edited")  # a suite without play-tests keeps every version
    assert confirmed(labels, app.id, "css_removed", "any text")  # aesthetic twins keep the function: not labelled


def test_labels_file_is_plain_yaml_by_app_and_version() -> None:
    raw = yaml.safe_load((SUITE / "labels.yaml").read_text(encoding="utf-8"))
    assert all(isinstance(versions_, dict) and ORIGINAL in versions_ for versions_ in raw.values())
