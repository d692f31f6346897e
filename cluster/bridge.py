"""A loopback TCP port on the driver's side whose every connection is forwarded into a sandbox.

Playwright's ``connect_over_cdp`` needs a TCP endpoint, but neither sandbox exposes Chromium's
DevTools port directly: a Docker sandbox has no network at all (each connection becomes one
``docker exec -i <container> node pipe.js 9222``), and a Kubernetes sandbox pod accepts only
token-guarded connections on its gate. The bridge is the same either way; only how one upstream
connection is opened differs (:data:`OpenUpstream`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

_CHUNK = 1 << 16


@dataclass(eq=False)
class Upstream:
    """One forwarded connection's far end: a byte stream and how to end it."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    close: Callable[[], Awaitable[None]]
    """Ends the connection for good (kills an exec session, closes a socket); safe to call twice."""


OpenUpstream = Callable[[], Awaitable[Upstream]]


class Bridge:
    """Listens on 127.0.0.1 and forwards every connection to a fresh :class:`Upstream`."""

    def __init__(self, open_upstream: OpenUpstream) -> None:
        self._open_upstream = open_upstream
        self._server: asyncio.Server | None = None
        self._upstreams: set[Upstream] = set()

    async def start(self) -> str:
        """Start listening; returns the ``http://127.0.0.1:PORT`` endpoint to give to ``connect_over_cdp``."""
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def close(self) -> None:
        """Stop listening and end every forwarded connection."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for upstream in list(self._upstreams):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(upstream.close(), 5)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream = await self._open_upstream()
        except Exception:  # noqa: BLE001 - the client sees a closed connection and retries or fails
            writer.close()
            return
        self._upstreams.add(upstream)
        try:
            await asyncio.gather(_copy(reader, upstream.writer), _copy(upstream.reader, writer))
        finally:
            self._upstreams.discard(upstream)
            with contextlib.suppress(Exception):
                writer.close()
            await upstream.close()


async def exec_upstream(container: str, port: int, *, docker: str = "docker") -> Upstream:
    """A connection to ``port`` on a container's loopback, carried by ``docker exec ... node pipe.js``."""
    proc = await asyncio.create_subprocess_exec(
        docker, "exec", "-i", container, "node", "/opt/evalgrid/pipe.js", str(port),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )
    if proc.stdin is None or proc.stdout is None:  # pragma: no cover - both were asked for as pipes
        raise RuntimeError("docker exec without pipes")

    async def close() -> None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()

    return Upstream(proc.stdout, proc.stdin, close)


async def _copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(_CHUNK):
            sink.write(data)
            await sink.drain()
    except (ConnectionError, BrokenPipeError):
        pass
    finally:
        with contextlib.suppress(Exception):
            sink.close()
