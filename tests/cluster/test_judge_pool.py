"""The judge pool's own machinery on a local Ray head: the server command it runs, its health watch restarting a
killed server on the same URL, and a stop that leaves nothing listening.

The server is a stand-in: a few lines that answer vLLM's ``/health`` and ``/v1/models`` under the module name
the pool runs (``vllm.entrypoints.openai.api_server``) and record the command line they were given. A real vLLM
server does all this in ``tests/vllm/test_vllm_judge.py``, but its restart there is a second cold start of the
engine (about 90 s under CI load), so ``make test`` proves the restart here, in seconds, and the real one runs
under ``make test-full``. What the stand-in cannot show is vLLM honouring the flags; the vLLM test does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import ray

from cluster.scheduling.judge_pool import (
    NAMESPACE,
    JudgeServerSpec,
    ServerHealth,
    pool_health,
    pool_limits,
    start_pool,
    stop_pool,
)
from tests.support import port_open

pytestmark = pytest.mark.heavy  # a Ray head of its own

_SERVER = '''
import json, os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

argv = sys.argv[1:]
port = int(argv[argv.index("--port") + 1])
with open(os.path.join(os.environ["STANDIN_LOG"], f"argv-{os.getpid()}.json"), "w") as out:
    json.dump(argv, out)


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"data": [{"id": "standin", "max_model_len": 4096}]}).encode()
        self.send_response(200 if self.path in ("/health", "/v1/models") else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
'''


@pytest.fixture(scope="module")
def standin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[JudgeServerSpec, Path]]:
    """A judge spec whose interpreter runs the stand-in server, and the folder where each start leaves its argv."""
    root = tmp_path_factory.mktemp("standin")
    package = root / "site" / "vllm" / "entrypoints" / "openai"
    package.mkdir(parents=True)
    for folder in (package, package.parent, package.parent.parent):
        (folder / "__init__.py").write_text("")
    (package / "api_server.py").write_text(_SERVER)
    model = root / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    log = root / "argv"
    log.mkdir()
    python = root / "python"
    python.write_text(f"#!/bin/sh\nPYTHONPATH={root / 'site'} STANDIN_LOG={log} exec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    spec = JudgeServerSpec(model=str(model), served_name="standin", port=18631, max_model_len=4096,
                           max_images=5, start_timeout_s=60.0, python=str(python))
    ray.init(num_cpus=2, namespace=NAMESPACE, include_dashboard=False, log_to_driver=False)
    try:
        yield spec, log
    finally:
        ray.shutdown()


def _argvs(log: Path) -> list[list[str]]:
    return [json.loads(p.read_text()) for p in sorted(log.glob("argv-*.json"), key=os.path.getmtime)]


def test_a_killed_server_is_restarted_on_the_same_url_and_a_stop_leaves_nothing_listening(
        standin: tuple[JudgeServerSpec, Path]) -> None:
    spec, log = standin
    [url] = start_pool("standin-judges", spec, replicas=1)
    try:
        assert pool_health("standin-judges") == [ServerHealth(url=url, healthy=True, restarts=0)]
        assert pool_limits("standin-judges") == {"max_images": 5, "context_tokens": 4096}
        [first] = _argvs(log)
        assert first[first.index("--limit-mm-per-prompt") + 1] == json.dumps({"image": 5, "video": 0})
        assert first[first.index("--max-model-len") + 1] == "4096"
        assert first[first.index("--served-model-name") + 1] == "standin"

        subprocess.run(["pkill", "-9", "-f", "--", f"--port {urlsplit(url).port}"], check=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            [health] = pool_health("standin-judges")
            if health.restarts == 1 and health.healthy:
                break
            time.sleep(1)
        assert health == ServerHealth(url=url, healthy=True, restarts=1)
        assert len(_argvs(log)) == 2 and _argvs(log)[1] == first, "the restart runs the same command"
    finally:
        stop_pool("standin-judges")
    assert not port_open(url), "the server still listens after the pool was stopped"
