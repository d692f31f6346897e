"""The driver's end of a sandbox's DevTools channel: a loopback WebSocket for Playwright, Chromium's pipe behind it.

Chromium in a sandbox speaks DevTools over ``--remote-debugging-pipe`` (NUL-terminated JSON messages on two
file descriptors) and listens on no port, so nothing inside the sandbox can reach it but the supervisor.
Playwright's ``connect_over_cdp`` needs a WebSocket: the bridge listens on 127.0.0.1 of the driver's
machine, and turns each WebSocket connection into one upstream pipe connection (a ``docker exec`` relay,
or a Kubernetes sandbox's token-guarded gate), each message a text frame one way and a NUL-terminated
message the other. Only how one upstream connection is opened differs between backends
(:data:`OpenUpstream`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

MESSAGE_LIMIT = 256 * 1024 * 1024
"""The longest DevTools message either way (a full-page screenshot is tens of megabytes at most)."""
_HANDSHAKE_LIMIT = 16 * 1024
_WEBSOCKET_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_TEXT, _BINARY, _CLOSE, _PING, _PONG = 0x1, 0x2, 0x8, 0x9, 0xA


@dataclass(eq=False)
class Upstream:
    """One connection's far end: a byte stream and how to end it."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    close: Callable[[], Awaitable[None]]
    """Ends the connection for good (kills an exec session, closes a socket); safe to call twice."""


OpenUpstream = Callable[[], Awaitable[Upstream]]


class Bridge:
    """Listens on 127.0.0.1; every WebSocket connection is served by a fresh upstream to Chromium's pipe."""

    def __init__(self, open_upstream: OpenUpstream) -> None:
        self._open_upstream = open_upstream
        self._server: asyncio.Server | None = None
        self._upstreams: set[Upstream] = set()

    async def start(self) -> str:
        """Start listening; returns the ``ws://127.0.0.1:PORT/devtools/browser`` endpoint for ``connect_over_cdp``."""
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, limit=_HANDSHAKE_LIMIT)
        port = self._server.sockets[0].getsockname()[1]
        return f"ws://127.0.0.1:{port}/devtools/browser"

    async def close(self) -> None:
        """Stop listening and end every connection."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for upstream in list(self._upstreams):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(upstream.close(), 5)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if not await _accept(reader, writer):
                return
            upstream = await self._open_upstream()
        except Exception:  # noqa: BLE001 - the client sees a closed connection and retries or fails
            writer.close()
            return
        self._upstreams.add(upstream)
        try:
            await asyncio.gather(_to_pipe(reader, writer, upstream.writer), _to_socket(upstream.reader, writer),
                                 return_exceptions=True)
        finally:
            self._upstreams.discard(upstream)
            with contextlib.suppress(Exception):
                writer.close()
            await upstream.close()


async def _accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    """Answer the WebSocket handshake (RFC 6455 section 4.2); anything else gets a 400 and the connection ends."""
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    lines = head.split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    key = headers.get("sec-websocket-key", "")
    if not lines[0].startswith("GET ") or headers.get("upgrade", "").lower() != "websocket" or not key:
        writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        writer.close()
        return False
    accept = base64.b64encode(hashlib.sha1(key.encode() + _WEBSOCKET_GUID).digest()).decode()
    writer.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Accept: {accept}\r\n\r\n").encode())
    await writer.drain()
    return True


async def _to_pipe(reader: asyncio.StreamReader, client: asyncio.StreamWriter, pipe: asyncio.StreamWriter) -> None:
    """Playwright's messages (masked frames, possibly fragmented) to the pipe, each NUL-terminated."""
    message: list[bytes] = []
    size = 0
    try:
        while True:
            head = await reader.readexactly(2)
            final, opcode = head[0] & 0x80, head[0] & 0x0F
            length = head[1] & 0x7F
            if length == 126:
                length = int.from_bytes(await reader.readexactly(2), "big")
            elif length == 127:
                length = int.from_bytes(await reader.readexactly(8), "big")
            if size + length > MESSAGE_LIMIT:
                break
            mask = await reader.readexactly(4) if head[1] & 0x80 else b""
            payload = _unmask(await reader.readexactly(length), mask) if mask else await reader.readexactly(length)
            if opcode == _CLOSE:
                client.write(_frame_header(_CLOSE, 0))
                break
            if opcode == _PING:
                client.write(_frame_header(_PONG, len(payload)) + payload)
                continue
            if opcode == _PONG:
                continue
            message.append(payload)
            size += length
            if final:
                pipe.write(b"".join(message) + b"\0")
                await pipe.drain()
                message, size = [], 0
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        with contextlib.suppress(Exception):
            pipe.close()


async def _to_socket(pipe: asyncio.StreamReader, client: asyncio.StreamWriter) -> None:
    """Chromium's NUL-terminated messages to Playwright, one unmasked text frame each."""
    try:
        while True:
            message = (await pipe.readuntil(b"\0"))[:-1]
            client.write(_frame_header(_TEXT, len(message)))
            client.write(message)
            await client.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        pass
    finally:
        with contextlib.suppress(Exception):
            client.write(_frame_header(_CLOSE, 0))
            client.close()


def _frame_header(opcode: int, length: int) -> bytes:
    if length < 126:
        return bytes([0x80 | opcode, length])
    if length < 1 << 16:
        return bytes([0x80 | opcode, 126]) + length.to_bytes(2, "big")
    return bytes([0x80 | opcode, 127]) + length.to_bytes(8, "big")


def _unmask(payload: bytes, mask: bytes) -> bytes:
    """XOR with the repeated 4-byte mask, as one big-integer operation (a loop over bytes is far slower)."""
    size = len(payload)
    key = (mask * (size // 4 + 1))[:size]
    return (int.from_bytes(payload, "little") ^ int.from_bytes(key, "little")).to_bytes(size, "little")


async def exec_upstream(container: str, channel: str, *, user: str, docker: str = "docker") -> Upstream:
    """One of a Docker sandbox's channels (``control`` or ``devtools``), carried by ``docker exec ... relay.js``."""
    proc = await asyncio.create_subprocess_exec(
        docker, "exec", "-i", "--user", user, container, "node", "/opt/evalgrid/relay.js", channel,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        limit=MESSAGE_LIMIT,
    )
    if proc.stdin is None or proc.stdout is None:  # pragma: no cover - both were asked for as pipes
        raise RuntimeError("docker exec without pipes")

    async def close() -> None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()

    return Upstream(proc.stdout, proc.stdin, close)
