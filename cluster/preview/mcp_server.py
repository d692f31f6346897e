"""``evalgrid mcp``: the app preview tool (``create_app_preview``) as an MCP server, over stdio or streamable HTTP.

A coding CLI that speaks MCP attaches it and checks its own app the way evalgrid will serve it: in the hardened
Docker sandbox by default (``--sandbox local`` uses this machine's Chromium on loopback, which is no sandbox).
One sandbox serves one app at a time, so calls are taken one after another and a few may wait; more are refused.

Over HTTP the server binds to loopback unless told otherwise, requires a bearer token (read from an environment
variable, never from the command line, where other users' ``ps`` would see it), and refuses requests whose
``Host`` or ``Origin`` is not its own (the SDK's DNS-rebinding protection).
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Literal

from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import ImageContent, TextContent
from playwright.async_api import async_playwright
from starlette.types import ASGIApp, Receive, Scope, Send

from cluster.sandbox.backends import sandbox_backends
from cluster.sandbox.container import SandboxLimits
from cluster.sandbox.docker_backend import DEFAULT_IMAGE
from evaluator import ConfigError
from evaluator.answer import MAX_FILES
from evaluator.preview import DEFAULT_CHECKS, PREVIEW_TIMEOUT_S, AppPreviewer, PreviewCheck, preview_tool

_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class McpOptions:
    """How ``evalgrid mcp`` serves the tool."""

    transport: Literal["stdio", "http"] = "stdio"
    sandbox: str = "docker"
    """A name in :data:`~cluster.sandbox.backends.sandbox_backends` (one that runs apps: not ``noop``)."""
    host: str = "127.0.0.1"
    port: int = 8765
    token_env: str = "EVALGRID_MCP_TOKEN"
    """The environment variable holding the HTTP bearer token."""
    allowed_origins: tuple[str, ...] = ()
    """Origins allowed besides loopback's (for a browser-based client)."""
    allowed_hosts: tuple[str, ...] = ()
    """``Host`` headers allowed besides loopback's and the bound address (``name:port``, or ``name:*``)."""
    checks: tuple[PreviewCheck, ...] = DEFAULT_CHECKS
    max_files: int = MAX_FILES
    max_waiting: int = 4
    """Calls that may wait for the sandbox while one runs; more are refused at once."""
    screenshot: bool = True
    """Send the desktop screenshot with each report."""
    timeout_s: float = PREVIEW_TIMEOUT_S
    """A preview's limit: a page not seen by then is reported as too slow (the call still gets a report)."""

    def __post_init__(self) -> None:
        if not 1 <= self.timeout_s <= 1800:
            raise ConfigError(f"--timeout {self.timeout_s:g}: give a preview between 1 and 1800 seconds")


def serve(options: McpOptions) -> None:
    """Serve until the client disconnects (stdio) or the process is stopped (HTTP)."""
    token = os.environ.get(options.token_env, "") if options.transport == "http" else ""
    if options.transport == "http" and options.host in ("0.0.0.0", "::") and not options.allowed_hosts:
        raise ConfigError(f"--host {options.host} accepts connections on every address, but clients name this "
                          "machine in their Host header: say which names they use with --allow-host NAME:PORT. "
                          "The token then travels off loopback: put TLS in front (a reverse proxy)")
    if options.transport == "http" and len(token) < 16:
        raise ConfigError(f"the HTTP transport needs a bearer token of at least 16 characters in ${options.token_env}"
                          f" (e.g. `export {options.token_env}=$(openssl rand -hex 24)`); clients send it as "
                          "'Authorization: Bearer ...'")
    asyncio.run(_serve(options, token))


async def _serve(options: McpOptions, token: str) -> None:
    async with _previewer(options) as previewer:
        server = preview_server(previewer, options)
        if options.transport == "stdio":
            await server.run_stdio_async()
            return
        import uvicorn  # the HTTP transport's server, installed with mcp

        app = server.streamable_http_app(host=options.host, transport_security=_security(options))
        config = uvicorn.Config(_BearerToken(app, token), host=options.host, port=options.port, log_level="warning")
        await uvicorn.Server(config).serve()


def preview_server(previewer: AppPreviewer, options: McpOptions) -> MCPServer:
    """The MCP server whose one tool previews apps with ``previewer``."""
    server = MCPServer("evalgrid-preview", instructions="Check a web app the way evalgrid will serve and judge it: "
                                                         "call create_app_preview with every file of the app.")
    gate = _Gate(options.max_waiting)
    spec = preview_tool()

    async def create_app_preview(files: dict[str, str]) -> list[TextContent | ImageContent]:
        """The report on ``files`` (relative path → text), with the desktop screenshot unless turned off."""
        if len(files) > options.max_files:
            raise ValueError(f"{len(files)} files: a preview takes at most {options.max_files}")
        async with gate:
            preview = await previewer.preview(files)
        content: list[TextContent | ImageContent] = [TextContent(type="text", text=preview.report.as_text())]
        if options.screenshot and preview.screenshot_png is not None:
            image = base64.b64encode(preview.screenshot_png).decode()
            content.append(ImageContent(type="image", data=image, mime_type="image/png"))
        return content

    server.add_tool(create_app_preview, name=spec["name"], description=spec["description"], structured_output=False)
    return server


@asynccontextmanager
async def _previewer(options: McpOptions) -> AsyncIterator[AppPreviewer]:
    async with async_playwright() as playwright:
        session = sandbox_backends.create(options.sandbox).open(playwright, image=DEFAULT_IMAGE,
                                                                limits=SandboxLimits())
        if session is None:
            raise ConfigError(f"the {options.sandbox} sandbox backend runs no apps; use --sandbox docker (or local)")
        try:
            yield AppPreviewer(await session.browser(), host=session.host, checks=options.checks,
                               timeout_s=options.timeout_s)
        finally:
            await session.close()


def _security(options: McpOptions) -> TransportSecuritySettings:
    hosts = [f"{h}:*" if ":" not in h else f"[{h}]:*" for h in sorted({*_LOOPBACK_HOSTS, options.host})]
    hosts += options.allowed_hosts
    origins = [f"http://{h}" for h in hosts] + list(options.allowed_origins)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=origins)


class _Gate:
    """One call at a time; up to ``max_waiting`` wait their turn, and more are refused with a message."""

    def __init__(self, max_waiting: int) -> None:
        self._lock = asyncio.Lock()
        self._waiting = 0
        self._max_waiting = max_waiting

    async def __aenter__(self) -> None:
        if self._lock.locked() and self._waiting >= self._max_waiting:
            raise RuntimeError(f"the preview sandbox is busy ({self._waiting} calls waiting); call again shortly")
        self._waiting += 1
        try:
            await self._lock.acquire()
        finally:
            self._waiting -= 1

    async def __aexit__(self, *exc: object) -> None:
        self._lock.release()


class _BearerToken:
    """Refuses every HTTP request without ``Authorization: Bearer <token>`` (compared in constant time)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app, self._expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            sent = dict(scope.get("headers", [])).get(b"authorization", b"")
            if not hmac.compare_digest(sent, self._expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": b"a bearer token is required\n"})
                return
        await self._app(scope, receive, send)
