"""The local backend is not a sandbox, but it must not let a page talk to other hosts.

Request interception alone let WebSockets, preconnects and WebRTC past it (measured with this
canary); the launch flags close those. Loopback services other than the app stay reachable by
WebSocket here — that is what the Docker sandbox (no network at all) is for.
"""

from __future__ import annotations

import socket
import socketserver
import subprocess
import threading
import time
from pathlib import Path

import pytest

from evaluator.evidence.collect import collect_evidence
from evaluator.models import AgentConfig
from tests.support import APPS, app_query, html_artifact, with_browser

pytestmark = pytest.mark.browser


def _host_address() -> str:
    """A non-loopback address of this machine (the page must not reach it)."""
    out = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
    candidates = [a for a in out if "." in a and not a.startswith("127.")]
    if not candidates:
        pytest.skip("this machine has no non-loopback IPv4 address")
    return candidates[0]


def test_egress_fixture_reaches_no_other_host_from_the_local_backend(tmp_path: Path) -> None:
    hits: list[bytes] = []

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            self.request.settimeout(2)
            try:
                hits.append(self.request.recv(4096) or b"<connect>")
            except OSError:
                hits.append(b"<connect>")

    server = socketserver.ThreadingTCPServer(("0.0.0.0", 0), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("0.0.0.0", port))
    udp.settimeout(0.2)
    datagrams: list[bytes] = []
    stop = threading.Event()

    def listen() -> None:
        while not stop.is_set():
            try:
                datagrams.append(udp.recvfrom(2048)[0])
            except OSError:
                continue

    threads = [threading.Thread(target=server.serve_forever, daemon=True),
               threading.Thread(target=listen, daemon=True)]
    for thread in threads:
        thread.start()
    address = f"{_host_address()}:{port}"
    html = (APPS / "hostile" / "egress" / "index.html").read_text(encoding="utf-8").replace("172.17.0.1:8999", address)
    try:
        async def scenario(browser):  # type: ignore[no-untyped-def]
            await collect_evidence(browser=browser, artifact=html_artifact("egress", html),
                                   query=app_query("egress"), agent=AgentConfig(max_steps=2),
                                   bundle_dir=tmp_path / "bundle", evidence_key="evidence-egress")

        with_browser(scenario)
        time.sleep(1.0)  # stragglers
        # Control: the canary does hear a connection that is allowed to happen.
        with socket.create_connection((address.split(":")[0], port), timeout=5) as c:
            c.sendall(b"control")
        deadline = time.monotonic() + 5
        while b"control" not in hits and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        udp.close()
    assert hits == [b"control"], hits
    assert datagrams == []
    blocked = (tmp_path / "bundle" / "network.json").read_text()
    assert "evalgrid-canary" in blocked  # what interception stopped is recorded as evidence
