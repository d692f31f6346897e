"""`make doctor` / `evalgrid doctor` (cluster/doctor.sh): one line per host tool, with what to do when it is not right.

The host's tools are real. A missing tool is shown by running the doctor with a PATH that leaves that tool's
file out (every other file of the system's bin directories is linked in), and an unsupported npm by a real
old npm release fetched from the registry, first on PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.images.npm_versions import npm_bin

# The doctor reports the images' state, which make test's build beside the suite changes while it runs.
pytestmark = pytest.mark.images

ROOT = Path(__file__).resolve().parents[2]
DOCTOR = ROOT / "cluster" / "doctor.sh"
TOOLS = ("chromium", "ffmpeg", "docker", "node", "npm", "debootstrap", "pulseaudio", "font", "python",
         "venv python", "disk", "sandbox image", "worker image")


def _doctor(*args: str, path: str | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path or os.environ["PATH"]}
    return subprocess.run(["bash", str(DOCTOR), *args], capture_output=True, text=True, timeout=120, env=env, cwd=cwd)


def _lines(report: str) -> dict[str, list[str]]:
    """Each tool's line as [status, the rest with spaces collapsed] (of two font lines, the last wins)."""
    parsed = {}
    for line in report.splitlines()[1:]:
        status, _, rest = line.partition(" ")
        if status not in {"ok", "setup", "warn", "FAIL"}:
            continue
        rest = " ".join(rest.split())
        name = next((tool for tool in sorted(TOOLS, key=len, reverse=True) if rest.startswith(tool)), rest)
        parsed[name] = [status, rest[len(name):].strip()]
    return parsed


def _path_without(tmp_path: Path, *left_out: str) -> str:
    """A PATH with every program of this machine except LEFT_OUT."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for directory in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for entry in os.scandir(directory):
            target = bin_dir / entry.name
            if entry.name not in left_out and not target.exists():
                target.symlink_to(entry.path)
    return str(bin_dir)


needs_setup = pytest.mark.skipif(not all(shutil.which(tool) for tool in ("chromium", "node", "npm", "docker")),
                                 reason="the host is not set up (make setup installs its tools)")


@needs_setup
def test_a_set_up_host_reports_every_tool_and_is_ready() -> None:
    done = _doctor("--for", "demo")
    lines = _lines(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert set(TOOLS) <= set(lines), f"missing lines: {set(TOOLS) - set(lines)}\n{done.stdout}"
    for tool in ("chromium", "ffmpeg", "node", "npm", "debootstrap", "pulseaudio", "font", "python"):
        assert lines[tool][0] == "ok", done.stdout
    assert re.match(r"v\d+\.\d+\.\d+", lines["node"][1])
    assert lines["npm"][1].strip() == subprocess.run(["npm", "--version"], capture_output=True,
                                                     text=True).stdout.strip()
    assert "doctor: ready" in done.stdout
    if os.environ.get("CI"):  # `make test` built the sandbox image from this checkout (beside the suite)
        assert lines["sandbox image"][0] == "ok" and lines["sandbox image"][1].startswith("current"), done.stdout


@needs_setup
def test_evalgrid_doctor_gives_the_same_report() -> None:
    script = _doctor("--for", "demo")
    cli = subprocess.run([sys.executable, "-m", "cluster.cli", "doctor", "--for", "demo"], capture_output=True,
                         text=True, timeout=120, cwd=ROOT)
    assert cli.returncode == script.returncode
    strip_disk = re.compile(r"\d+ GiB free")  # free space may move between the two runs
    assert strip_disk.sub("", cli.stdout) == strip_disk.sub("", script.stdout)
    assert "--for {demo,test}" in subprocess.run([sys.executable, "-m", "cluster.cli", "doctor", "--help"],
                                                 capture_output=True, text=True, cwd=ROOT).stdout


@needs_setup
@pytest.mark.skipif(os.geteuid() != 0, reason="as root a missing package is `make setup`'s to install")
def test_missing_packages_are_left_to_make_setup_as_root(tmp_path: Path) -> None:
    done = _doctor("--for", "demo", path=_path_without(tmp_path, "chromium", "ffmpeg", "debootstrap"))
    lines = _lines(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert lines["chromium"] == ["setup", "not installed make setup installs Debian's chromium"]
    assert lines["ffmpeg"] == ["setup", "not installed make setup installs Debian's ffmpeg"]
    assert lines["debootstrap"] == ["setup", "not installed make setup installs Debian's debootstrap"]


@needs_setup
def test_an_npm_older_than_9_fails_with_what_to_do() -> None:
    old = npm_bin("8.19.4")
    done = _doctor("--for", "demo", path=f"{old}{os.pathsep}{os.environ['PATH']}")
    lines = _lines(done.stdout)
    assert done.returncode == 1
    assert lines["npm"][0] == "FAIL"
    assert lines["npm"][1].startswith("8.19.4") and "npm 9, 10 or 11 is needed" in lines["npm"][1]
    assert "fix the FAIL lines" in done.stderr
    assert _lines(_doctor("--for", "demo", path=f"{npm_bin('9.2.0')}{os.pathsep}{os.environ['PATH']}").stdout)[
        "npm"][0] == "ok"


@needs_setup
def test_an_image_built_from_other_sources_is_reported_stale(tmp_path: Path) -> None:
    """A copy of the checkout's image sources with one file changed no longer matches the built image."""
    if subprocess.run(["docker", "image", "inspect", "evalgrid/sandbox:dev"], capture_output=True).returncode:
        pytest.skip("the sandbox image is not built (make images)")
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "images", checkout / "images", ignore=shutil.ignore_patterns("build", "wheels"))
    here = _lines(_doctor("--for", "demo", "--root", str(checkout)).stdout)
    (checkout / "images" / "sandbox" / "sandboxd.js").write_text("// changed\n", encoding="utf-8")
    changed = _lines(_doctor("--for", "demo", "--root", str(checkout)).stdout)
    assert changed["sandbox image"][0] == "setup"
    assert changed["sandbox image"][1].startswith("stale") and "make images rebuilds it" in changed["sandbox image"][1]
    assert here["sandbox image"] != changed["sandbox image"]
