"""A loopback TCP port on the driver's side that reaches a sandbox's DevTools port through ``docker exec``.

The sandbox has no network interface but loopback (``--network none``), so nothing in it can open
a connection anywhere. The driver still needs Chromium's DevTools: each TCP connection accepted
here becomes one ``docker exec -i <container> node pipe.js 9222`` whose stdin/stdout carry the bytes.
"""

from __future__ import annotations

import asyncio
import contextlib

_CHUNK = 1 << 16


class ExecBridge:
    """Listens on 127.0.0.1 and forwards every connection into ``container`` with ``docker exec``."""

    def __init__(self, container: str, *, port: int = 9222, docker: str = "docker") -> None:
        self._container = container
        self._port = port
        self._docker = docker
        self._server: asyncio.Server | None = None
        self._procs: set[asyncio.subprocess.Process] = set()

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
        for proc in list(self._procs):
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        for proc in list(self._procs):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(proc.wait(), 5)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        proc = await asyncio.create_subprocess_exec(
            self._docker, "exec", "-i", self._container, "node", "/opt/evalgrid/pipe.js", str(self._port),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )
        self._procs.add(proc)
        assert proc.stdin is not None and proc.stdout is not None  # both were asked for as pipes
        try:
            await asyncio.gather(_copy_to_proc(reader, proc.stdin), _copy_from_proc(proc.stdout, writer))
        finally:
            self._procs.discard(proc)
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(Exception):
                writer.close()
            await proc.wait()


async def _copy_to_proc(reader: asyncio.StreamReader, stdin: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(_CHUNK):
            stdin.write(data)
            await stdin.drain()
    except (ConnectionError, BrokenPipeError):
        pass
    finally:
        with contextlib.suppress(Exception):
            stdin.close()


async def _copy_from_proc(stdout: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await stdout.read(_CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, BrokenPipeError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()
