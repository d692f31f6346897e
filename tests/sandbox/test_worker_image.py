"""The worker image the Helm chart runs (images/worker, built by `make images`), used as the chart uses it.

The chart's Ray pods run it as uid 1000 with every capability dropped; KubeRay starts Ray in it with
`ray start`. No Kubernetes cluster can run here, so the container is started with the same user and
restrictions by Docker, and Ray is started inside it as KubeRay would.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.docker

IMAGE = "evalgrid/worker:dev"
VALUES = Path(__file__).resolve().parents[2] / "helm" / "evalgrid" / "values.yaml"


def _require_image() -> None:
    found = subprocess.run(["docker", "image", "inspect", IMAGE], capture_output=True, timeout=30)
    if found.returncode != 0:
        problem = f"{IMAGE} is missing; run `make images`"
        if os.environ.get("CI"):
            pytest.fail(f"the worker image is required under CI: {problem}")
        pytest.skip(problem)


def test_the_worker_image_runs_ray_and_evalgrid_as_the_charts_non_root_user() -> None:
    _require_image()
    values = yaml.safe_load(VALUES.read_text())
    uid = values["podSecurityContext"]["runAsUser"]
    script = ("set -e; id -u; "
              "python -c 'import ray, playwright, cluster.scheduling.worker, evaluator; print(ray.__version__)'; "
              "evalgrid --help >/dev/null; "
              "ray start --head --num-cpus 1 --disable-usage-stats --include-dashboard false >/dev/null 2>&1; "
              "python -c 'import ray; ray.init(address=\"auto\", log_to_driver=False); "
              "print(int(ray.cluster_resources()[\"CPU\"]))'; "
              "ray stop --force >/dev/null 2>&1")
    run = subprocess.run(["docker", "run", "--rm", "--user", f"{uid}:{uid}", "--cap-drop", "ALL",
                          "--security-opt", "no-new-privileges", "--shm-size", "512m", "--network", "none",
                          IMAGE, "bash", "-c", script], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    user, ray_version, cpus = run.stdout.split()
    assert int(user) == uid
    # KubeRay picks its behaviour by the chart's rayVersion: it must be the image's.
    assert ray_version == values["rayVersion"]
    assert cpus == "1"
