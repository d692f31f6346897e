"""A real S3-compatible server on loopback (moto in server mode) behind a proxy that injects faults.

moto is a real HTTP server speaking S3's wire protocol; boto3 talks to it exactly as to AWS. The
proxy in front forwards every request unchanged, except those a test told it to break:

``500``       the request never reaches the server; the client gets ``500 InternalError``.
``throttle``  the same with ``503 SlowDown`` (S3's throttling reply).
``drop_body`` the proxy reads half of the request body, then cuts the connection (an upload dies
              mid-flight); the server never sees the request.
``drop_reply`` the request reaches the server and takes effect, but the reply is lost (the
              connection is cut), so the client cannot know it worked and retries.
"""

from __future__ import annotations

import http.client
import logging
import re
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Literal

from moto.server import ThreadedMotoServer

from cluster.store.object_store import S3Store, StoreSettings

FaultKind = Literal["500", "throttle", "drop_body", "drop_reply"]

_ERRORS = {
    "500": (500, "InternalError", "We encountered an internal error. Please try again."),
    "throttle": (503, "SlowDown", "Please reduce your request rate."),
}


@dataclass
class Fault:
    """Break ``times`` requests whose ``METHOD path?query`` matches ``pattern``, after letting ``after`` through."""

    kind: FaultKind
    pattern: str
    times: int = 1
    after: int = 0
    injected: int = 0
    passed: int = 0


@dataclass
class Seen:
    """One request as the proxy saw it."""

    method: str
    path: str
    fault: FaultKind | None


@dataclass
class FaultyS3:
    """moto on loopback plus the proxy; ``endpoint`` is what boto3 should talk to."""

    endpoint: str
    server_endpoint: str
    faults: list[Fault] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def inject(self, kind: FaultKind, pattern: str, times: int = 1, *, after: int = 0) -> Fault:
        """Break ``times`` requests matching the regex ``pattern`` (on ``METHOD /path?query``), the first
        ``after`` matching requests excepted."""
        fault = Fault(kind, pattern, times, after)
        with self.lock:
            self.faults.append(fault)
        return fault

    def clear(self) -> None:
        """No more faults; forget the requests seen."""
        with self.lock:
            self.faults.clear()
            self.seen.clear()

    def _take(self, line: str) -> FaultKind | None:
        with self.lock:
            for fault in self.faults:
                if fault.injected < fault.times and re.search(fault.pattern, line):
                    if fault.passed < fault.after:
                        fault.passed += 1
                        continue
                    fault.injected += 1
                    return fault.kind
        return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _handler(s3: FaultyS3, upstream: tuple[str, int]) -> type[BaseHTTPRequestHandler]:
    class Proxy(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            pass

        def _any(self) -> None:
            line = f"{self.command} {self.path}"
            fault = s3._take(line)
            with s3.lock:
                s3.seen.append(Seen(self.command, self.path, fault))
            length = int(self.headers.get("Content-Length") or 0)
            if "chunked" in (self.headers.get("Transfer-Encoding") or ""):
                raise RuntimeError("the fault proxy does not speak chunked uploads")
            if fault == "drop_body":
                self.rfile.read(length // 2)
                self._cut()
                return
            body = self.rfile.read(length) if length else b""
            if fault in _ERRORS:
                status, code, message = _ERRORS[fault]
                payload = (f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code>'
                           f"<Message>{message}</Message></Error>").encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            conn = http.client.HTTPConnection(*upstream, timeout=60)
            try:
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "keep-alive")}
                conn.request(self.command, self.path, body=body, headers=headers)
                reply = conn.getresponse()
                data = reply.read()
            finally:
                conn.close()
            if fault == "drop_reply":
                self._cut()
                return
            self.send_response(reply.status, reply.reason)
            for key, value in reply.getheaders():
                if key.lower() not in ("transfer-encoding", "connection", "content-length", "date", "server"):
                    self.send_header(key, value)
            # A HEAD reply carries the object's length, not the length of its (empty) body.
            length_header = reply.getheader("Content-Length") if self.command == "HEAD" else None
            self.send_header("Content-Length", length_header or str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _cut(self) -> None:
            self.close_connection = True
            try:
                # SO_LINGER 0: the client sees a reset, as when a load balancer drops a connection.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                self.connection.close()
            except OSError:
                pass

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _any

    return Proxy


def faulty_s3() -> Iterator[FaultyS3]:
    """Start moto and the proxy on loopback; yields the handle and stops both afterwards."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request otherwise
    moto_port = _free_port()
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=moto_port, verbose=False)
    moto.start()
    s3 = FaultyS3(endpoint="", server_endpoint=f"http://127.0.0.1:{moto_port}")
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), _handler(s3, ("127.0.0.1", moto_port)))
    proxy.daemon_threads = True
    s3.endpoint = f"http://127.0.0.1:{proxy.server_address[1]}"
    thread = threading.Thread(target=proxy.serve_forever, name="s3-fault-proxy", daemon=True)
    thread.start()
    try:
        yield s3
    finally:
        proxy.shutdown()
        proxy.server_close()
        moto.stop()


def make_store(s3: FaultyS3, bucket: str, prefix: str = "runs/t", **settings: object) -> S3Store:
    """A store on the proxy, with short pauses so retried faults do not slow the suite."""
    options: dict[str, object] = {"backoff_s": 0.01, "multipart_threshold": 5 * 1024 * 1024,
                                  "part_size": 5 * 1024 * 1024, **settings}
    return S3Store(StoreSettings(url=f"s3://{bucket}/{prefix}", endpoint_url=s3.endpoint, **options))  # type: ignore[arg-type]
