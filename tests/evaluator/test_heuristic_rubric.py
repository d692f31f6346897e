"""The heuristic judge's deduction table and its identity in the content keys."""

from __future__ import annotations

import hashlib
from importlib import resources

import pytest

from evaluator.errors import RegistryError
from evaluator.heuristic import HeuristicJudge, load_rubric
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
    text = resources.files("evaluator").joinpath("rubrics/heuristic-v2.yaml").read_bytes()
    assert HeuristicJudge().version == f"heuristic-v2@{hashlib.sha256(text).hexdigest()[:12]}"


def test_unknown_rubric_is_a_clear_error() -> None:
    with pytest.raises(RegistryError, match="no heuristic rubric 'heuristic-v9'"):
        HeuristicJudge(rubric="heuristic-v9")
