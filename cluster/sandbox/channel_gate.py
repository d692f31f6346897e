"""The driver's side of a Kubernetes sandbox's gate (``images/sandbox/gate.js``), and of a build pod.

A connection to the gate starts with one JSON line naming the sandbox's token and a channel
(``control``, ``devtools`` or ``audio``); after it, the connection is that channel's byte stream.
A build pod (``images/sandbox/buildd.js --listen``) takes one connection whose first line is the build
request, token included, and answers with one line.
Run as ``python -m cluster.sandbox.channel_gate audio HOST PORT TOKEN_FILE PAREC_ARGS...`` it is the audio
capture process: the pod's sound as raw PCM on standard output (the token is read from a file so
it never appears in a process listing).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path

from cluster.sandbox.channel_devtools import MESSAGE_LIMIT, Upstream
from evaluator import SandboxError


async def connect(host: str, port: int, *, timeout: float = 10.0, limit: int = MESSAGE_LIMIT) -> Upstream:
    """A TCP connection to a sandbox pod; raises :class:`SandboxError` when it cannot be reached."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, limit=limit), timeout)
    except (OSError, TimeoutError) as exc:
        raise SandboxError(f"the sandbox pod at {host}:{port} cannot be reached: {exc!r}") from exc

    async def close() -> None:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()

    return Upstream(reader, writer, close)


async def open_gate(host: str, port: int, token: str, channel: str, *, timeout: float = 10.0,
                    args: list[str] | None = None) -> Upstream:
    """Open ``channel`` on the gate at ``host:port``; raises :class:`SandboxError` when it cannot be reached."""
    upstream = await connect(host, port, timeout=timeout)
    hello: dict[str, object] = {"token": token, "channel": channel}
    if args is not None:
        hello["args"] = args
    upstream.writer.write(json.dumps(hello).encode() + b"\n")
    return upstream


async def _capture(host: str, port: int, token_file: Path, args: list[str]) -> int:
    upstream = await open_gate(host, port, token_file.read_text().strip(), "audio", args=args)
    out = sys.stdout.buffer
    try:
        while data := await upstream.reader.read(1 << 16):
            out.write(data)
            out.flush()
    except (BrokenPipeError, ConnectionError):
        pass
    finally:
        await upstream.close()
    return 0


def main(argv: list[str]) -> int:
    """``audio HOST PORT TOKEN_FILE ARGS...``: copy the sandbox's sound to standard output until killed."""
    if len(argv) < 4 or argv[0] != "audio":
        print("usage: python -m cluster.sandbox.channel_gate audio HOST PORT TOKEN_FILE [PAREC_ARGS...]",
              file=sys.stderr)
        return 2
    return asyncio.run(_capture(argv[1], int(argv[2]), Path(argv[3]), argv[4:]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
