"""An OpenAI-compatible chat server on loopback that answers from a script, for deterministic tests.

Real HTTP, real server-sent events, real status codes: what evalgrid's client, agent and judge
meet in production, minus the model. Each request takes the next :class:`Turn` of the script (or
asks ``responder``, a function of the request body); every request and the number in flight are
recorded. A turn may call functions (``tool_calls``): streamed, each call's arguments are split over
several chunks, as OpenAI sends them.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Turn:
    """How the server answers one request."""

    content: str = ""
    status: int = 200
    stream: bool | None = None
    """Stream the answer (default: when the request asks for it)."""
    finish_reason: str | None = None
    """Default: ``tool_calls`` when the turn calls functions, else ``stop``."""
    refusal: str | None = None
    delay_s: float = 0.0
    """Before the status line (a slow model, or a hang when longer than the client's timeout)."""
    chunk_delay_s: float = 0.0
    """Between streamed chunks."""
    cut_after_chunks: int | None = None
    """Drop the connection after this many chunks (a stream cut short)."""
    garbage: bool = False
    """Answer 200 with a body that is not a completion."""
    retry_after: float | None = None
    error_message: str = "scripted failure"
    usage: bool = True
    """Report token usage."""
    model: str | None = None
    """The model id reported (default: the requested one)."""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """Functions the model calls: ``{"name": ..., "arguments": "<JSON text, valid or not>"}``, optionally
    with an ``id`` (else one is made up)."""


@dataclass
class ScriptedServer:
    """The server; use :func:`scripted_server` to run one."""

    script: list[Turn] = field(default_factory=list)
    responder: Callable[[dict[str, Any]], Turn] | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    request_times: list[float] = field(default_factory=list)
    max_images: int | None = None
    """Refuse a request with more image parts, as vLLM does (400, its wording); ``None``: any number."""
    max_model_len: int | None = None
    """The context length ``GET /models`` reports, as vLLM does; ``None``: not reported."""
    url: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _call_ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def wire_calls(self, turn: Turn) -> list[dict[str, Any]]:
        """The turn's tool calls as OpenAI writes them in a message, each with an id."""
        with self._lock:
            return [{"id": call.get("id") or f"call_scripted_{next(self._call_ids)}", "type": "function",
                     "function": {"name": call["name"], "arguments": call.get("arguments", "")}}
                    for call in turn.tool_calls]

    def next_turn(self, body: dict[str, Any]) -> Turn:
        with self._lock:
            if self.script:
                return self.script.pop(0)
        if self.responder is not None:
            return self.responder(body)
        return Turn(content="(the script is exhausted)")


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass

        def do_GET(self) -> None:  # noqa: N802 - the base class's naming
            model: dict[str, Any] = {"id": "scripted-model", "object": "model"}
            if server.max_model_len is not None:
                model["max_model_len"] = server.max_model_len
            self._plain(200, json.dumps({"object": "list", "data": [model]}).encode())

        def _plain(self, status: int, body: bytes, extra: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            with server._lock:
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                server.request_times.append(time.monotonic())
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            try:
                self._answer(body, server.next_turn(body))
            except (BrokenPipeError, ConnectionResetError):
                pass
            finally:
                with server._lock:
                    server.in_flight -= 1

        def _answer(self, body: dict[str, Any], turn: Turn) -> None:
            time.sleep(turn.delay_s)
            images = sum(1 for m in body.get("messages", []) if isinstance(m.get("content"), list)
                         for part in m["content"] if part.get("type") == "image_url")
            if server.max_images is not None and images > server.max_images:
                turn = Turn(status=400, error_message=f"At most {server.max_images} image(s) may be provided in "
                                                      "one prompt. (parameter=image)")
            model = turn.model or str(body.get("model", "scripted-model"))
            if turn.status != 200:
                extra = {"Retry-After": str(turn.retry_after)} if turn.retry_after is not None else {}
                error = {"error": {"message": turn.error_message, "type": "scripted", "code": turn.status}}
                self._plain(turn.status, json.dumps(error).encode(), extra)
                return
            if turn.garbage:
                self._plain(200, b"<html>502 Bad Gateway from a proxy</html>")
                return
            calls = server.wire_calls(turn)
            finish = turn.finish_reason or ("tool_calls" if calls else "stop")
            prompt_tokens = sum(len(json.dumps(m)) for m in body.get("messages", [])) // 4
            written = len(turn.content) + sum(len(c["function"]["name"] + c["function"]["arguments"]) for c in calls)
            completion_tokens = max(1, written // 4)
            usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                     "total_tokens": prompt_tokens + completion_tokens}
            stream = body.get("stream", False) if turn.stream is None else turn.stream
            if not stream:
                message: dict[str, Any] = {"role": "assistant", "content": turn.content}
                if turn.refusal is not None:
                    message = {"role": "assistant", "content": None, "refusal": turn.refusal}
                if calls:
                    message = {"role": "assistant", "content": turn.content or None, "tool_calls": calls}
                reply: dict[str, Any] = {"id": "chatcmpl-scripted", "object": "chat.completion", "model": model,
                         "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
                if turn.usage:
                    reply["usage"] = usage
                self._plain(200, json.dumps(reply).encode())
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for sent, delta in enumerate(_deltas(turn, calls)):
                if turn.cut_after_chunks is not None and sent >= turn.cut_after_chunks:
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self._event({"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": model,
                             "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
                time.sleep(turn.chunk_delay_s)
            self._event({"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": model,
                         "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
            if turn.usage:
                self._event({"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "model": model,
                             "choices": [], "usage": usage})
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

        def _event(self, data: dict[str, Any]) -> None:
            self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

    return Handler


def _deltas(turn: Turn, calls: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The streamed deltas of a turn: its text in pieces of 16 characters, then each tool call the way OpenAI
    streams one (id and name first with empty arguments, then the arguments in at least two pieces)."""
    if turn.refusal is not None:
        yield {"refusal": turn.refusal}
    elif turn.content or not calls:
        for i in range(0, len(turn.content), 16):
            yield {"content": turn.content[i:i + 16]}
        if not turn.content:
            yield {"content": ""}
    for index, call in enumerate(calls):
        function = call["function"]
        yield {"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                               "function": {"name": function["name"], "arguments": ""}}]}
        arguments = function["arguments"]
        size = max(1, min(8, -(-len(arguments) // 2)))  # at most 8 characters, and at least two pieces
        for i in range(0, len(arguments), size):
            yield {"tool_calls": [{"index": index, "function": {"arguments": arguments[i:i + size]}}]}


@contextmanager
def scripted_server(*turns: Turn, responder: Callable[[dict[str, Any]], Turn] | None = None, port: int = 0
                    ) -> Iterator[ScriptedServer]:
    """Run a scripted server on a loopback ``port`` (0: a free one); ``.url`` is its ``/v1`` base URL.

    Raises :class:`OSError` when the port is taken."""
    state = ScriptedServer(script=list(turns), responder=responder)
    httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(state))
    httpd.daemon_threads = True
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
