"""``evalgrid mcp``: the MCP SDK's own client lists and calls create_app_preview, over stdio and over HTTP.

Real processes (``evalgrid mcp --sandbox local``, this machine's Chromium on loopback), the real SDK client,
real HTTP; the Docker sandbox behind the same previewer is exercised by the red-team case in tests/sandbox.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.browser

_EVALGRID = [sys.executable, "-m", "cluster.cli"]
_BROKEN = {"index.html": "<!doctype html><html><body><h1>Notes</h1><p>Your notes, kept.</p>"
                         "<script src=app.js></script></body></html>",
           "app.js": "const list = document.querySelector('#list');\nlist.append('x');\n"}
_WORKING = {"index.html": "<!doctype html><html><body><h1>Notes</h1><p>Your notes, kept.</p>"
                          "<ul id=list></ul><script src=app.js></script></body></html>",
            "app.js": "const list = document.querySelector('#list');\nlist.append('x');\n"}


async def _stdio_session() -> dict[str, Any]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    server = StdioServerParameters(command=_EVALGRID[0], args=[*_EVALGRID[1:], "mcp", "--sandbox", "local"],
                                   cwd=str(Path(__file__).resolve().parents[2]))
    async with Client(server) as client:
        tools = await client.list_tools()
        broken = await client.call_tool("create_app_preview", {"files": _BROKEN})
        working = await client.call_tool("create_app_preview", {"files": _WORKING})
    return {"tools": tools.tools, "broken": broken, "working": working}


def test_a_real_mcp_client_lists_and_calls_the_preview_tool_over_stdio() -> None:
    session = asyncio.run(asyncio.wait_for(_stdio_session(), 180))
    [tool] = session["tools"]
    assert tool.name == "create_app_preview" and "files" in tool.input_schema["properties"]
    broken_text = session["broken"].content[0].text
    assert "status: errors" in broken_text and "[runtime_exceptions] at app.js:2" in broken_text, broken_text
    assert "next action:" in broken_text
    working = session["working"].content
    assert "status: ok" in working[0].text, working[0].text
    assert working[1].type == "image" and working[1].mime_type == "image/png"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    token = "t" * 8 + os.urandom(12).hex()
    port = _free_port()
    log = tmp_path_factory.mktemp("mcp") / "server.log"
    with log.open("wb") as err:
        process = subprocess.Popen([*_EVALGRID, "mcp", "--transport", "http", "--sandbox", "local", "--port",
                                    str(port)], env={**os.environ, "EVALGRID_MCP_TOKEN": token},
                                   stdout=subprocess.DEVNULL, stderr=err, cwd=Path(__file__).resolve().parents[2])
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                assert process.poll() is None, f"evalgrid mcp exited: {log.read_text()[-2000:]}"
                assert time.monotonic() < deadline, f"evalgrid mcp did not listen in 60 s: {log.read_text()[-2000:]}"
                time.sleep(0.3)
        yield url, token
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


_INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"}}}
_ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_http_refuses_a_request_without_the_token_or_from_another_origin(http_server: tuple[str, str]) -> None:
    url, token = http_server
    assert httpx.post(url, json=_INIT, headers=_ACCEPT).status_code == 401
    assert httpx.post(url, json=_INIT, headers={**_ACCEPT, "Authorization": "Bearer wrong"}).status_code == 401
    foreign = httpx.post(url, json=_INIT, headers={**_ACCEPT, "Authorization": f"Bearer {token}",
                                                   "Origin": "https://evil.example"})
    assert foreign.status_code in (400, 403), foreign.text
    rebound = httpx.post(url, json=_INIT, headers={**_ACCEPT, "Authorization": f"Bearer {token}",
                                                   "Host": "attacker.example"})
    assert rebound.status_code in (400, 421), rebound.text
    assert httpx.post(url, json=_INIT, headers={**_ACCEPT, "Authorization": f"Bearer {token}"}).status_code == 200


def test_a_real_mcp_client_calls_the_tool_over_http_with_the_token(http_server: tuple[str, str]) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    url, token = http_server

    async def session() -> Any:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            return await client.call_tool("create_app_preview", {"files": _BROKEN})

    result = asyncio.run(asyncio.wait_for(session(), 180))
    assert "status: errors" in result.content[0].text


def test_the_http_transport_will_not_start_without_a_token_or_on_every_address_unnamed() -> None:
    env = {k: v for k, v in os.environ.items() if k != "EVALGRID_MCP_TOKEN"}
    done = subprocess.run([*_EVALGRID, "mcp", "--transport", "http", "--sandbox", "local"], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0 and "EVALGRID_MCP_TOKEN" in done.stdout + done.stderr
    wildcard = subprocess.run([*_EVALGRID, "mcp", "--transport", "http", "--sandbox", "local", "--host", "0.0.0.0"],
                              env={**env, "EVALGRID_MCP_TOKEN": "x" * 32}, capture_output=True, text=True,
                              timeout=60, check=False)
    assert wildcard.returncode != 0 and "--allow-host" in wildcard.stdout + wildcard.stderr
