"""The public surface: every exported name exists, is documented, and is listed once, sorted; importing a part of
evalgrid loads only what that part needs."""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(".".join(init.parent.relative_to(ROOT).parts)
                  for top in ("evaluator", "cluster") for init in (ROOT / top).rglob("__init__.py"))
"""Every package of the tree, found, not listed: a new subpackage is checked without being named here."""


def test_the_tree_has_its_subpackages() -> None:
    assert {"cluster.sweep", "cluster.scheduling", "cluster.store", "cluster.sandbox", "cluster.k8s", "cluster.reduce",
            "cluster.report", "evaluator.answer", "evaluator.browser", "evaluator.evidence", "evaluator.agents",
            "evaluator.judges", "evaluator.llm"} <= set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_exports_are_sorted_unique_and_documented(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__doc__, f"{package} has no docstring"
    names = getattr(module, "__all__", [])
    assert names == sorted(names) and len(set(names)) == len(names)
    for name in names:
        member = getattr(module, name)
        assert getattr(member, "__doc__", None), f"{package}.{name} has no docstring"


@pytest.mark.parametrize("package", PACKAGES)
def test_no_package_exports_a_name_one_of_its_modules_has(package: str) -> None:
    """Importing a submodule sets the package's attribute of that name to the module: an exported name that is also
    a submodule's would be the module or the export depending on what was imported first."""
    folder = ROOT.joinpath(*package.split("."))
    modules = {path.stem for path in folder.glob("*.py")} | {path.parent.name for path in folder.glob("*/__init__.py")}
    assert not set(getattr(importlib.import_module(package), "__all__", [])) & modules


def test_evaluator_never_imports_cluster() -> None:
    code = ("import sys, evaluator; [getattr(evaluator, n) for n in evaluator.__all__]; "
            "print(any(m == 'cluster' or m.startswith('cluster.') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_cluster_imports_from_evaluator_only_what_its_packages_export() -> None:
    """The evaluator/cluster boundary: ``cluster`` takes ``evaluator``'s names from a package's ``__all__``, never
    from a module inside one, so a module can move inside ``evaluator`` without ``cluster`` noticing."""
    crossings, deep = 0, []
    for path in sorted((ROOT / "cluster").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deep += [f"{path.name}: import {a.name}" for a in node.names if a.name.startswith("evaluator.")]
            if not (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "evaluator"):
                continue
            crossings += 1
            assert node.module is not None
            if node.module not in PACKAGES:
                deep.append(f"{path.relative_to(ROOT)}: from {node.module}")
                continue
            exported = getattr(importlib.import_module(node.module), "__all__", [])
            deep += [f"{path.relative_to(ROOT)}: {a.name} from {node.module}"
                     for a in node.names if a.name not in exported]
    assert crossings > 50 and deep == [], deep


def test_default_policy_and_judge_are_registered() -> None:
    evaluator = importlib.import_module("evaluator")
    assert "explorer" in evaluator.policies.names()
    assert "heuristic" in evaluator.judges.names()
    with pytest.raises(evaluator.RegistryError, match="Did you mean 'heuristic'"):
        evaluator.judges.create("heuristc")


HEAVY = ("ray", "playwright", "boto3", "kubernetes", "docker")
LIGHT_IMPORTS = ("evaluator", "cluster", "cluster.reduce", "cluster.reduce.reducer", "cluster.reduce.leaderboard",
                 "cluster.reduce.statistics", "cluster.sweep", "cluster.sweep.spec",
                 "cluster.store, cluster.scheduling, cluster.sandbox",
                 "evaluator.models, evaluator.keys, evaluator.judges, evaluator.agents.policies")
"""Imports of reduction and the records, each as a user would make it, that must load no module of ``HEAVY``."""


def _heavy_loaded(modules: str) -> str:
    """The modules of ``HEAVY`` that ``import {modules}`` loads in a fresh interpreter, comma-separated."""
    code = f"import sys; import {modules}; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_reduction_and_the_records_load_no_ray_browser_or_cloud_client() -> None:
    """Every import in one interpreter: a module is loaded once, so what each import loads alone is within what
    they load together. Only when that finds a heavy module is each made alone, in an interpreter of its own, to
    name the import that loads it."""
    if _heavy_loaded(", ".join(LIGHT_IMPORTS)):
        alone = {modules: loaded for modules in LIGHT_IMPORTS if (loaded := _heavy_loaded(modules))}
        assert alone == {}, "; ".join(f"import {modules} loaded {loaded}" for modules, loaded in alone.items())


_RUN_COMMANDS = """\
import json, sys
from cluster.cli import main
for argv in json.loads(sys.argv[1]):
    try:
        main(argv)
    except SystemExit:
        pass
    print("loaded:", *sorted(sys.modules), file=sys.stderr)
"""


def _loaded_by(*commands: list[str]) -> list[set[str]]:
    """The modules loaded after each ``evalgrid`` command, the commands run one after another in one fresh
    interpreter (``--help`` exits inside it): each set holds what that command and the ones before it loaded."""
    done = subprocess.run([sys.executable, "-c", _RUN_COMMANDS, json.dumps(commands)], capture_output=True,
                          text=True, check=True, cwd=ROOT)
    return [set(line.split()[1:]) for line in done.stderr.splitlines() if line.startswith("loaded: ")]


def test_evalgrid_help_loads_no_subsystem() -> None:
    """``evalgrid --help`` and a command's ``--help`` load the command line's declarations and the registry that
    names the sandbox backends only: no record model, no scheduler, no client of a browser, cluster or cloud.

    The three in one interpreter, one after another: a module is loaded once, so each set holds what its command
    loads alone, and the first set that fails names the command that loaded too much."""
    commands = (["--help"], ["run", "--help"], ["calibrate", "--help"])
    for argv, loaded in zip(commands, _loaded_by(*commands), strict=True):
        assert "cluster.cli.commands" in loaded, argv
        ours = {m for m in loaded if m.split(".")[0] in ("cluster", "evaluator")}
        assert ours <= {"cluster", "cluster.cli", "cluster.cli.commands", "cluster.cli.entry", "cluster.calibration",
                        "cluster.calibration.twins", "cluster.sandbox", "cluster.sandbox.backends", "evaluator",
                        "evaluator.errors", "evaluator.lazy", "evaluator.preview", "evaluator.preview.checks",
                        "evaluator.registry"}, (argv, sorted(ours))
        assert not {*HEAVY, "cv2", "numpy"} & {m.split(".")[0] for m in loaded}, argv


def test_the_leaderboard_command_loads_no_ray_browser_cloud_client_or_opencv(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(ROOT / "fixtures" / "rundirs" / "pre-layout", run_dir)
    (modules,) = _loaded_by(["leaderboard", str(run_dir)])
    loaded = {m.split(".")[0] for m in modules}
    assert "cluster" in loaded and "rich" in loaded
    assert not {*HEAVY, "botocore", "cv2"} & loaded, sorted({*HEAVY, "botocore", "cv2"} & loaded)


def test_every_command_names_a_handler_that_exists() -> None:
    from cluster.cli.commands import build_parser

    def leaves(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return [leaf for sub in subs for child in sub.choices.values() for leaf in leaves(child)] or [parser]

    handlers = [leaf.get_default("handler") for leaf in leaves(build_parser())]
    assert len(handlers) >= 19 and all(isinstance(h, str) for h in handlers), handlers
    for handler in handlers:
        module, _, function = handler.partition(":")
        assert callable(getattr(importlib.import_module(f"cluster.cli.{module}"), function)), handler


def test_every_public_name_resolves() -> None:
    """In a fresh interpreter (nothing imported before), each package's every name, as a user first asks."""
    for package in PACKAGES:
        module = importlib.import_module(package)
        assert sorted(getattr(module, "__all__", [])) == sorted(getattr(module, "_WHERE", {})), package
        with pytest.raises(AttributeError, match="no attribute 'nope'"):
            module.nope  # noqa: B018
    code = (f"import importlib\nfor p in {PACKAGES!r}:\n    m = importlib.import_module(p)\n"
            "    [getattr(m, n) for n in getattr(m, '__all__', [])]")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_the_built_in_plugins_register_on_first_lookup() -> None:
    code = ("import sys; from evaluator.judges import judges; from evaluator.agents.policies import policies; "
            "assert 'evaluator.judges.llm_judge' not in sys.modules; print(judges.names(), policies.names())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "'heuristic', 'llm'" in out and "'explorer'" in out and "'llm'" in out.split("] [")[1]


def test_the_wheel_holds_every_module_and_data_file(tmp_path: Path) -> None:
    """Built as pip builds it (in isolation, setuptools from PyPI): a module or rubric that the package
    configuration misses would be absent from every installed evalgrid."""
    root = ROOT
    source = tmp_path / "source"  # a copy: setuptools leaves build/ in the tree it builds
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "pyproject.toml", "README.md", "evaluator",
                            "cluster"], cwd=root, capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(source)],
                   check=True, capture_output=True, timeout=300)
    names = set(zipfile.ZipFile(next(tmp_path.glob("evalgrid-*.whl"))).namelist())
    shipped = [name for name in files if name.startswith(("evaluator/", "cluster/"))]
    assert shipped and not [name for name in shipped if name not in names]
