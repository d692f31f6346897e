"""Serve an app's files on loopback; the request log is the run's "dev server output"."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class _QuietHandler(SimpleHTTPRequestHandler):
    log_lines: list[str]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - signature of the base class
        self.log_lines.append(format % args)

    def end_headers(self) -> None:
        # Apps are re-served after edits between runs; never let the browser reuse a stale copy.
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


@contextmanager
def serve_directory(root: Path, log: list[str]) -> Iterator[str]:
    """Serve ``root`` on 127.0.0.1 at a free port; yields the origin (``http://127.0.0.1:PORT``)."""
    handler = type("Handler", (_QuietHandler,), {"log_lines": log})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(root)))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="evalgrid-serve", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
