"""The public surface: every exported name exists, is documented, and is listed once, sorted."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest


@pytest.mark.parametrize("package", ["evaluator", "cluster"])
def test_exports_are_sorted_unique_and_documented(package: str) -> None:
    module = importlib.import_module(package)
    names = module.__all__
    assert names == sorted(names) and len(set(names)) == len(names)
    for name in names:
        member = getattr(module, name)
        assert getattr(member, "__doc__", None), f"{package}.{name} has no docstring"


def test_evaluator_never_imports_cluster() -> None:
    code = "import sys, evaluator; print(any(m == 'cluster' or m.startswith('cluster.') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_default_policy_and_judge_are_registered() -> None:
    evaluator = importlib.import_module("evaluator")
    assert "explorer" in evaluator.policies.names()
    assert "heuristic" in evaluator.judges.names()
    with pytest.raises(evaluator.RegistryError, match="Did you mean 'heuristic'"):
        evaluator.judges.create("heuristc")
