"""The sandbox image's npm trees (images/sandbox/npm-tree.sh) install alike under every npm a host may ship.

Fresh machines come with different npm versions: Debian bookworm's 9.2.0, a 10.x, an 11.x. Each is fetched
from the npm registry into a prefix of its own (kept under images/sandbox/build/, gitignored, so later runs
reuse it; npm's own cache makes the installs after the first offline-fast) and installs the trees with the
script the image build uses. A package.json edited without its lock, and a tree whose versions drifted from
the lock, are refused with a message that says what to do.

``make test`` installs the toolchain (102 MB) and the mirror's code's tree (cdn, 0.3 MB) under every npm: the
toolchain's lock holds what the npm versions differ on (50 platform-optional packages, 13 of them with a ``libc``
that npm 9 ignores), and every install passes the lock check. The mirror's tree (370 MB, most of the module's time)
it checks only as the session's ``mirror_root`` fixture installed it, with the host's npm; ``make test-full``
installs it under every npm too. What the slice gives up: that an npm other than the host's installs the mirror's
lock, its 19 ``npm:`` aliases (several majors of react, vue, chart.js, three.js side by side) and its two optional
entries (fsevents, prettier) included (on a Debian host, whose npm is 9.2.0: npm 10 and 11 reading them).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.budget import full_suite
from tests.images.npm_versions import NpmUnsupportedError, npm_bin

ROOT = Path(__file__).resolve().parents[2]
SANDBOX = ROOT / "images" / "sandbox"
NPM_TREE = SANDBOX / "npm-tree.sh"
LOCKCHECK = SANDBOX / "lockcheck.js"
# Debian bookworm's npm, the last 10.x line, and the 11.x fresh machines were seen with.
NPM_VERSIONS = ("9.2.0", "10.9.4", "11.19.1")
TREES = ("toolchain", "mirror", "cdn")
EVERY_NPM = TREES if full_suite() else ("toolchain", "cdn")
"""The trees installed under each npm version here; ``make test`` takes the mirror's as ``mirror_root`` made it."""

pytestmark = pytest.mark.skipif(shutil.which("npm") is None or shutil.which("node") is None,
                                reason="node and npm are not installed (make setup installs them)")


def _with_npm(bin_dir: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def _installed_versions(out: Path) -> dict[str, str]:
    """Every installed package by its path under node_modules, with the version its package.json gives."""
    versions = {}
    for manifest in (out / "node_modules").glob("**/package.json"):
        where = manifest.parent.relative_to(out).as_posix()
        # only package roots: node_modules/<name> or node_modules/@scope/<name>, at any depth
        parts = where.split("/")
        if parts[-2] != "node_modules" and not (len(parts) > 2 and parts[-3] == "node_modules"
                                                 and parts[-2].startswith("@")):
            continue
        versions[where] = json.loads(manifest.read_text()).get("version", "")
    return versions


def _install(version: str, tree: str, out: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    bin_dir = npm_bin(version)
    done = subprocess.run([str(NPM_TREE), str(SANDBOX / tree), str(out)], env=_with_npm(bin_dir),
                          capture_output=True, text=True, timeout=300)
    return done, (_installed_versions(out) if done.returncode == 0 else {})


@pytest.fixture(scope="module")
def installs(tmp_path_factory: pytest.TempPathFactory,
             mirror_root: Path) -> dict[tuple[str, str], tuple[Path, dict[str, str]]]:
    """The trees of :data:`EVERY_NPM` under each npm version, installed side by side (the installs wait on the
    network and disk), and, when the mirror's tree is not among them, the one the session installed with the
    host's npm."""
    runnable = []
    for version in NPM_VERSIONS:  # one at a time: parallel `npm install --prefix` would race on npm's cache
        try:
            npm_bin(version)
            runnable.append(version)
        except NpmUnsupportedError:
            continue  # npm 11 on Debian's Node 18: the host cannot have it, so it cannot build with it either
    assert len(runnable) >= 2, f"only npm {runnable} runs on this Node"
    base = tmp_path_factory.mktemp("npm-trees")
    jobs = {(version, tree): base / f"{tree}-npm{version}" for version in runnable for tree in EVERY_NPM}
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {key: pool.submit(_install, key[0], key[1], out) for key, out in jobs.items()}
        results = {}
        for key, future in futures.items():
            done, versions = future.result()
            assert done.returncode == 0, f"npm {key[0]}, {key[1]} tree:\n{done.stdout}\n{done.stderr}"
            assert "match the lock" in done.stdout
            results[key] = (jobs[key], versions)
    if "mirror" not in EVERY_NPM:
        host = subprocess.run(["npm", "--version"], capture_output=True, text=True, check=True).stdout.strip()
        results[(host, "mirror")] = (mirror_root, _installed_versions(mirror_root))
    return results


@pytest.mark.slow
@pytest.mark.parametrize("tree", TREES)
def test_every_npm_version_installs_the_locked_versions(installs: dict[tuple[str, str], tuple[Path, dict[str, str]]],
                                                       tree: str) -> None:
    lock = json.loads((SANDBOX / tree / "package-lock.json").read_text())["packages"]
    required = {where for where, entry in lock.items()
                if where.startswith("node_modules/") and not entry.get("optional")}
    for version in sorted({v for v, t in installs if t == tree}):
        out, installed = installs[(version, tree)]
        # the lock went in and came out untouched: npm ci never rewrites it
        assert (out / "package-lock.json").read_bytes() == (SANDBOX / tree / "package-lock.json").read_bytes()
        assert required <= set(installed), f"npm {version} left out {sorted(required - set(installed))[:5]}"
        # Whatever else it installed is a locked optional entry (npm 9 ignores `libc` and adds rollup's musl
        # build), and everything is at its locked version.
        wrong = {where: v for where, v in installed.items() if lock.get(where, {}).get("version") != v}
        assert not wrong, f"npm {version} installed versions the lock does not name: {list(wrong.items())[:5]}"


@pytest.mark.slow
def test_a_tree_that_drifted_from_its_lock_is_refused(
        installs: dict[tuple[str, str], tuple[Path, dict[str, str]]], tmp_path: Path) -> None:
    newest = next(v for v in reversed(NPM_VERSIONS) if (v, "toolchain") in installs)
    out, _ = installs[(newest, "toolchain")]
    drifted = tmp_path / "drifted"
    shutil.copytree(out, drifted, symlinks=True)
    manifest = drifted / "node_modules" / "clsx" / "package.json"
    package = json.loads(manifest.read_text())
    package["version"] = "2.0.0"
    manifest.write_text(json.dumps(package))
    ok = subprocess.run(["node", str(LOCKCHECK), str(SANDBOX / "toolchain"), str(out)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    done = subprocess.run(["node", str(LOCKCHECK), str(SANDBOX / "toolchain"), str(drifted)],
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert "node_modules/clsx is 2.0.0 on disk but 2.1.1 in the lock" in done.stderr
    shutil.rmtree(drifted / "node_modules" / "react")
    done = subprocess.run(["node", str(LOCKCHECK), str(SANDBOX / "toolchain"), str(drifted)],
                          capture_output=True, text=True)
    assert "node_modules/react (18.3.1) is locked but not installed" in done.stderr


def test_a_package_json_edited_without_its_lock_is_refused_before_any_fetch(tmp_path: Path) -> None:
    pkgdir = tmp_path / "toolchain"
    pkgdir.mkdir()
    shutil.copy(SANDBOX / "toolchain" / "package-lock.json", pkgdir)
    package = json.loads((SANDBOX / "toolchain" / "package.json").read_text())
    package["dependencies"]["clsx"] = "2.1.0"
    package["dependencies"]["left-pad"] = "1.3.0"
    del package["dependencies"]["d3"]
    (pkgdir / "package.json").write_text(json.dumps(package))
    # an npm that cannot run proves nothing is fetched: the check comes first
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "npm").write_text("#!/bin/sh\necho npm must not run >&2; exit 99\n")
    (fake / "npm").chmod(0o755)
    done = subprocess.run([str(NPM_TREE), str(pkgdir), str(tmp_path / "out")], env=_with_npm(fake),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "package-lock.json does not match its package.json" in done.stderr
    assert "npm@11 install --package-lock-only" in done.stderr  # says how to regenerate it
    assert "clsx is 2.1.0 in package.json but 2.1.1 in the lock" in done.stderr
    assert "left-pad@1.3.0 is in package.json but not in the lock" in done.stderr
    assert "d3 is in the lock but no longer in package.json" in done.stderr
    assert "npm must not run" not in done.stderr
