"""Sandbox backends are plugins: registered by name, chosen through the registry, and imported only when used."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cluster.sandbox.backends import sandbox_backends
from cluster.sweep.spec import SandboxSpec
from evaluator import RegistryError

pytestmark = pytest.mark.pure


def test_the_built_in_backends_are_registered_and_a_typo_gets_a_hint() -> None:
    assert sandbox_backends.names() == ["docker", "kubernetes", "local", "noop"]
    with pytest.raises(RegistryError, match="Did you mean 'kubernetes'"):
        sandbox_backends.create("kubernets")
    with pytest.raises(ValueError, match="unknown sandbox backend 'dockr'. Did you mean 'docker'"):
        SandboxSpec(backend="dockr")


def test_a_backend_registered_elsewhere_is_a_sweeps_choice() -> None:
    """What adding a backend takes: a class registered under a name (its module imported before the sweep)."""

    @sandbox_backends.register("test-only")
    class _Nowhere:
        unit = "nothing"
        driver_collects = False

    try:
        assert SandboxSpec(backend="test-only").backend == "test-only"
        assert sandbox_backends.create("test-only").unit == "nothing"
    finally:
        sandbox_backends._factories.pop("test-only")  # the registry is process-wide


@pytest.mark.parametrize(("name", "loaded", "absent"), [("docker", "cluster.sandbox.docker_backend", "kubernetes"),
                                                        ("local", "evaluator.browser.app_host",
                                                         "cluster.sandbox.docker_backend")])
def test_opening_one_backend_imports_its_client_only(name: str, loaded: str, absent: str) -> None:
    code = (f"import sys\nfrom cluster.sandbox.backends import "
            f"sandbox_backends\nfrom cluster.sandbox.container import SandboxLimits\n"
            f"sandbox_backends.create({name!r}).open(None, image='x', limits=SandboxLimits())\n"
            f"print({loaded!r} in sys.modules, any(m == {absent!r} or m.startswith({absent!r} + '.') "
            "for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False"], out
