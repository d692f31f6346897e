"""One client for every OpenAI-compatible chat endpoint: vLLM, hosted APIs, gateways.

What every model call in evalgrid gets from here, whoever makes it (generation, the LLM agent, the
LLM judge):

- per-endpoint concurrency and request-rate limits (per process: the sweep divides an endpoint's
  limits among its workers);
- retries with exponential backoff and full jitter on what a retry can fix (connection errors,
  timeouts, 429 with its ``Retry-After``, 5xx, a stream cut short, a garbled body); a request the
  server refuses (400, 401, 403, 404, 422) fails at once with the server's reason;
- streaming (server-sent events), so a long answer is never cut by a read timeout;
- token and cost accounting from the server's usage report (estimated and marked when absent);
- a response cache keyed by the request's hash: a run redone after an infrastructure failure
  never pays for the same call twice;
- OpenAI-style function calling: ``tools`` go out with the request, the model's ``tool_calls`` come back
  on the result (streamed fragments assembled), their arguments kept as the server sent them so that
  invalid JSON is the caller's to tell the model about, not a retry;
- the sweep's spending cap (:mod:`evaluator.llm.budget`): a call that could pass it is not made.

API keys come from the environment variable the endpoint names, never from sweep files, and never
reach a log, an error message, an evidence bundle or the cache.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import re
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeAlias, TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from evaluator.atomic import write_json_atomic
from evaluator.errors import (
    BudgetExhaustedError,
    ConfigError,
    ModelRequestError,
    ModelUnavailableError,
    RequestTooLargeError,
)
from evaluator.llm.budget import Budget
from evaluator.llm.sizing import IMAGE_TOKENS, ServerLimits, image_room
from evaluator.models import ModelUsage

_Answer = TypeVar("_Answer", bound=BaseModel)

# How vLLM (and OpenAI) say a request is too large for the server: more images than one prompt may carry, a prompt
# over the context (two wordings: text alone, or with images), max_tokens over it. Other 400s (an unknown model, a
# bad schema) are not about size.
_TOO_LARGE = re.compile(r"at most \d+ \w+\(s\) may be provided in one prompt|maximum context length|"
                        r"cannot be greater than max_model_len|context_length_exceeded", re.IGNORECASE)
_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
_DEFAULT_MAX_TOKENS = 4096


TOOL_NAME = r"^[a-zA-Z0-9_-]{1,64}$"
"""What a function offered to a model may be called (OpenAI's rule)."""

POOL_NAME = r"^[a-z0-9][a-z0-9-]{0,40}$"
"""What a judge pool may be called (``evalgrid judge serve --name``, an endpoint's ``pool``)."""

WireObject: TypeAlias = dict[str, Any]
"""A JSON object of the OpenAI-compatible chat API as it goes over the wire: a message, a content part, a tool
call, a response format, the usage block. The protocol keeps these open (servers add fields, content parts differ
by modality), so they stay mappings; what evalgrid reads back from them is validated where it is read."""
JsonSchema: TypeAlias = dict[str, Any]
"""A JSON Schema document (an answer's schema, a tool's parameters): free-form by definition."""


class Endpoint(BaseModel):
    """An OpenAI-compatible endpoint, as a sweep file names it (``endpoints: {name: {...}}``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    base_url: str | None = Field(default=None, pattern=r"^https?://")
    """Base URL up to and including ``/v1`` (e.g. ``http://judge-0:8000/v1``)."""
    base_urls: list[str] = Field(default_factory=list)
    """Several servers of the same model (a pool): calls go round-robin, and a retry goes to the next one."""
    pool: str | None = Field(default=None, pattern=POOL_NAME)
    """The name of a judge pool started with ``evalgrid judge serve``; its servers are looked up when the
    sweep starts."""
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """Name of the environment variable holding the API key (never the key itself); ``None``: no key."""
    max_concurrency: int = Field(default=8, ge=1, le=1024)
    """Calls in flight at once, per worker process."""
    requests_per_minute: float | None = Field(default=None, gt=0)
    """Request rate limit per worker process; ``None``: none."""
    timeout_s: float = Field(default=180.0, gt=0, le=3600)
    """Time limit of one attempt (connect, send, and every wait for the next streamed chunk)."""
    max_attempts: int = Field(default=5, ge=1, le=20)
    """Attempts of one call when a retry can help."""
    backoff_s: float = Field(default=1.0, ge=0, le=60)
    """First backoff; doubled per attempt with full jitter, at most 60 s, unless the server says when."""
    input_usd_per_mtok: float = Field(default=0.0, ge=0)
    """Price of a million prompt tokens (0 for your own GPUs)."""
    output_usd_per_mtok: float = Field(default=0.0, ge=0)
    """Price of a million completion tokens."""
    stream: bool = True
    """Ask for server-sent events (turn off for servers that do not stream)."""
    max_images: int | None = Field(default=None, ge=0)
    """Images the server takes in one prompt (vLLM's ``--limit-mm-per-prompt``): requests show fewer rather than
    be refused. A pool's comes from ``evalgrid judge serve``; ``None``: no limit known."""
    context_tokens: int | None = Field(default=None, gt=0)
    """The server's context length (vLLM's ``--max-model-len``), for fitting images in; a pool's comes from
    ``evalgrid judge serve``; ``None``: asked from the server's ``/v1/models`` (vLLM reports it)."""
    image_tokens: int = Field(default=IMAGE_TOKENS, gt=0)
    """What one image is taken to cost in prompt tokens when fitting a request. The model's processor decides:
    Qwen2-VL makes a token of every 28x28 pixels, 1,334 for a 1280x800 screenshot (the default covers it); a tiled
    Idefics3 a fixed count per tile. Set your model's figure to fit more images in."""

    @model_validator(mode="after")
    def _one_address(self) -> Endpoint:
        given = sum(bool(x) for x in (self.base_url, self.base_urls, self.pool))
        if given != 1:
            raise ValueError("give exactly one of base_url, base_urls or pool")
        for url in self.base_urls:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"base_urls entry {url!r} is not an http(s) URL")
        return self

    @property
    def urls(self) -> list[str]:
        """The servers to call (a pool must have been resolved into ``base_urls`` first)."""
        if self.pool:
            raise ConfigError(f"judge pool {self.pool!r} was not resolved to its servers; run the sweep with Ray "
                              "(--scheduler ray) in the cluster where `evalgrid judge serve` started it")
        return [self.base_url] if self.base_url else list(self.base_urls)

    def api_key(self, name: str) -> str | None:
        """The key from the environment; a clear error when the named variable is not set."""
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise ConfigError(f"endpoint {name!r} needs an API key in ${self.api_key_env}; set that variable "
                              "(keys never go in sweep files)")
        return key

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """US dollars for a call of that size."""
        return (prompt_tokens * self.input_usd_per_mtok + completion_tokens * self.output_usd_per_mtok) / 1e6


class ModelOptions(BaseModel):
    """The options every model-driven plugin (the ``llm`` judge, the ``llm`` agent policy) shares."""

    # A model or endpoint may be named "7" (YAML and --option read it as a number).
    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)
    endpoint: str
    """A name under the sweep's ``endpoints:``."""
    model: str
    temperature: float = Field(0.0, ge=0.0)
    structured: bool = True
    """Ask the endpoint for JSON-schema-constrained output."""
    images: bool = True
    """Show the model images (screenshots, keyframes), not only text."""


class ToolSpec(BaseModel):
    """A function the model may call. Sent in OpenAI's shape (:meth:`wire`); that shape is also accepted here."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    name: str = Field(pattern=TOOL_NAME)
    """What the model calls it."""
    description: str = ""
    """What it does and when to call it, for the model."""
    parameters: JsonSchema = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """A JSON schema of its arguments (an object)."""

    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, data: Any) -> Any:
        # Specs copied from OpenAI's documentation come as {"type": "function", "function": {...}}.
        if isinstance(data, dict) and data.get("type") == "function" and isinstance(data.get("function"), dict):
            return data["function"]
        return data

    def wire(self) -> WireObject:
        """The spec as an entry of the request's ``tools``."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}


class ToolArguments(NamedTuple):
    """A tool call's arguments read as JSON: the object, or ``None`` and why not."""

    value: WireObject | None
    """The arguments, when they are a JSON object."""
    error: str
    """Empty when ``value`` is set; else what is wrong, in words the model can be told."""


class ToolCall(BaseModel):
    """One function call the model asked for."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    id: str
    """The call's id; the tool's result goes back with it (:meth:`result_message`)."""
    name: str
    """The function's name, as the model wrote it (it may name no offered tool)."""
    arguments: str
    """The arguments exactly as the server sent them: a JSON string that may not be valid."""

    def arguments_or_error(self) -> ToolArguments:
        """The arguments as a JSON object, or ``None`` and an error to show the model so it can call again.

        An empty string counts as no arguments (servers send it for functions without parameters).
        """
        if not self.arguments.strip():
            return ToolArguments({}, "")
        try:
            value = json.loads(self.arguments)
        except ValueError as exc:
            return ToolArguments(None, f"the arguments of your call to {self.name!r} are not valid JSON ({exc}); "
                                       "call it again with one JSON object as its arguments")
        if not isinstance(value, dict):
            return ToolArguments(None, f"the arguments of your call to {self.name!r} are JSON but not an object; "
                                       "call it again with one JSON object as its arguments")
        return ToolArguments(value, "")

    def wire(self) -> WireObject:
        """The call as an entry of an assistant message's ``tool_calls``."""
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}

    def result_message(self, content: str | list[WireObject]) -> WireObject:
        """The ``tool`` message that answers this call (append it after the assistant's message)."""
        return {"role": "tool", "tool_call_id": self.id, "content": content}


class ChatRequest(BaseModel):
    """One chat completion request, as sent (and hashed for the cache)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    messages: list[WireObject]
    temperature: float = 0.0
    max_tokens: int | None = None
    response_format: WireObject | None = None
    seed: int | None = None
    extra: WireObject = Field(default_factory=dict)
    """Other body fields the endpoint understands (``top_p``, ``stop`` ...)."""
    cache_salt: str = ""
    """Makes otherwise identical requests distinct in the cache (e.g. sample 2 of n); not sent."""
    tools: list[ToolSpec] | None = None
    """Functions the model may call (an empty list is the same as none)."""
    tool_choice: Literal["auto", "none", "required"] | None = None
    """Whether the model may, may not or must call one; ``None``: the server's default (not sent)."""

    @field_validator("tools")
    @classmethod
    def _no_empty_tools(cls, tools: list[ToolSpec] | None) -> list[ToolSpec] | None:
        # Servers reject an empty `tools` array; and [] must hash like None, since it sends the same body.
        return tools or None

    @model_validator(mode="after")
    def _choice_needs_tools(self) -> ChatRequest:
        if self.tool_choice is not None and self.tools is None:
            raise ValueError("tool_choice needs tools")
        names = [tool.name for tool in self.tools or []]
        if len(set(names)) != len(names):
            raise ValueError(f"two tools share a name: {names}")
        return self

    def body(self, *, stream: bool) -> WireObject:
        """The JSON body of the HTTP request."""
        body: WireObject = {"model": self.model, "messages": self.messages, "temperature": self.temperature,
                                **self.extra}
        for name in ("max_tokens", "response_format", "seed", "tool_choice"):
            value = getattr(self, name)
            if value is not None:
                body[name] = value
        if self.tools is not None:
            body["tools"] = [tool.wire() for tool in self.tools]
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def key(self, endpoint_name: str) -> str:
        """The cache key: the endpoint's name and everything that shapes the answer."""
        # Fields added since the cache began are left out while unset, so older requests keep their keys.
        unset = {name for name in ("tools", "tool_choice") if getattr(self, name) is None}
        payload = json.dumps({"endpoint": endpoint_name, "request": self.model_dump(mode="json", exclude=unset)},
                             sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(payload.encode()).hexdigest()

    def estimated_prompt_tokens(self, image_tokens: int = IMAGE_TOKENS) -> int:
        """A generous estimate of the prompt's size, for the budget's reservation and for fitting images in (tool
        specs and the assistant's earlier tool calls count as text, each image as ``image_tokens``)."""
        chars = len(json.dumps([tool.wire() for tool in self.tools])) if self.tools else 0
        images = 0
        for message in self.messages:
            if message.get("tool_calls"):
                chars += len(json.dumps(message["tool_calls"]))
            content = message.get("content")
            if isinstance(content, str):
                chars += len(content)
            elif isinstance(content, list):
                for part in content:
                    if part.get("type") == "text":
                        chars += len(str(part.get("text", "")))
                    else:
                        images += 1
        return chars // 3 + 8 * len(self.messages) + images * image_tokens

    def images(self) -> int:
        """How many image parts the messages carry."""
        return sum(1 for message in self.messages if isinstance(message.get("content"), list)
                   for part in message["content"] if part.get("type") == "image_url")


class ChatResult(BaseModel):
    """A finished completion."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    content: str
    """The text the model produced."""
    finish_reason: str
    """``stop``, ``length`` (cut at max_tokens), ``content_filter`` ..."""
    refusal: str | None = None
    """The model's refusal message, when it declined."""
    model: str
    """The exact model id the server reported."""
    prompt_tokens: int
    completion_tokens: int
    usage_estimated: bool = False
    """The server sent no usage; the token counts are estimates."""
    cost_usd: float
    """What the call cost when it was made."""
    latency_s: float
    """Wall time of the successful attempt."""
    attempts: int
    """Attempts it took."""
    cached: bool = False
    """Served from the response cache (nothing was paid now)."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    """The functions the model asked to call, in its order. Read these, not ``finish_reason``: it is
    ``tool_calls`` from OpenAI, but some servers say ``stop``."""

    def assistant_message(self) -> WireObject:
        """The model's turn as a message to send back in the next request (with its tool calls)."""
        if not self.tool_calls:
            return {"role": "assistant", "content": self.content}
        return {"role": "assistant", "content": self.content or None,
                "tool_calls": [call.wire() for call in self.tool_calls]}

    def answer_as(self, schema: type[_Answer]) -> tuple[_Answer | None, str]:
        """The content as a JSON answer of ``schema`` (a fenced block is unwrapped); else ``None`` and why not, in
        words the model can be told when it is asked again."""
        if self.refusal:
            return None, "the model refused"
        if self.finish_reason == "length":
            return None, "the answer was cut off at the token limit (it is too long)"
        text = self.content.strip()
        fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.DOTALL)
        if fenced:
            text = fenced.group(1)
        try:
            return schema.model_validate(json.loads(text)), ""
        except (ValueError, ValidationError) as exc:
            return None, f"it is not valid JSON for the schema ({str(exc).splitlines()[0][:300]})"


class ResponseCache:
    """Finished completions on disk, one JSON file per request hash."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> ChatResult | None:
        """The stored answer, or ``None`` (an unreadable entry counts as missing)."""
        path = self._path(key)
        try:
            return ChatResult.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError, ValueError):
            return None

    def put(self, key: str, result: ChatResult) -> None:
        """Store an answer (atomically)."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, result)


@dataclass
class UsageMeter:
    """Token and cost totals of one run, per role (generation, agent, judge), endpoint and model."""

    totals: dict[tuple[str, str, str], ModelUsage] = field(default_factory=dict)

    def add(self, role: str, endpoint: str, result: ChatResult) -> None:
        """Count one call."""
        key = (role, endpoint, result.model)
        current = self.totals.get(key) or ModelUsage(role=role, endpoint=endpoint, model=result.model)
        self.totals[key] = current.model_copy(update={
            "calls": current.calls + 1, "cached_calls": current.cached_calls + int(result.cached),
            "prompt_tokens": current.prompt_tokens + result.prompt_tokens,
            "completion_tokens": current.completion_tokens + result.completion_tokens,
            "cost_usd": round(current.cost_usd + result.cost_usd, 8),
        })

    def usage(self) -> list[ModelUsage]:
        """The totals, in a stable order."""
        return [self.totals[key] for key in sorted(self.totals)]


class _Limits:
    """One endpoint's concurrency and rate limits on one event loop."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.slots = asyncio.Semaphore(endpoint.max_concurrency)
        self.interval = 60.0 / endpoint.requests_per_minute if endpoint.requests_per_minute else 0.0
        self.next_start = 0.0
        self.lock = asyncio.Lock()
        self._turn = 0
        self.context_lock = asyncio.Lock()
        self.served_context: int | None = None
        """The context length the server reported (``/v1/models``), once asked."""
        self.context_asked = False

    def next_server(self, count: int) -> int:
        """Round-robin over a pool's servers."""
        self._turn += 1
        return self._turn % count

    async def pace(self) -> None:
        """Wait for the next request slot of the rate limit."""
        if not self.interval:
            return
        async with self.lock:
            now = time.monotonic()
            wait = self.next_start - now
            self.next_start = max(now, self.next_start) + self.interval
        if wait > 0:
            await asyncio.sleep(wait)


_LIMITS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Limits]] = weakref.WeakKeyDictionary()


def _limits(name: str, endpoint: Endpoint) -> _Limits:
    per_loop = _LIMITS.setdefault(asyncio.get_running_loop(), {})
    key = f"{name}\n{endpoint.model_dump_json()}"
    if key not in per_loop:
        per_loop[key] = _Limits(endpoint)
    return per_loop[key]


class _Retry(Exception):
    """An attempt failed in a way a retry can fix."""

    def __init__(self, why: str, after_s: float | None = None) -> None:
        super().__init__(why)
        self.after_s = after_s


class ChatClient:
    """Calls one endpoint. Cheap to create; limits are shared by every client of the endpoint."""

    def __init__(self, name: str, endpoint: Endpoint, *, cache: ResponseCache | None = None,
                 budget: Budget | None = None, meter: UsageMeter | None = None, role: str = "model") -> None:
        self.name = name
        self.endpoint = endpoint
        self._cache = cache
        self._budget = budget
        self._meter = meter
        self._role = role

    async def complete(self, request: ChatRequest) -> ChatResult:
        """The completion of ``request``, from the cache when it was made before.

        Raises :class:`ModelRequestError` when the endpoint refuses the request,
        :class:`ModelUnavailableError` when it cannot answer after every retry, and
        :class:`BudgetExhaustedError` when the call could pass the sweep's cap (then nothing is sent).
        """
        key = request.key(self.name)
        cached = self._cache.get(key) if self._cache is not None else None
        if cached is not None:
            result = cached.model_copy(update={"cached": True})
        else:
            result = await self._paid(request)
            if self._cache is not None:
                self._cache.put(key, result)
        if self._meter is not None:
            self._meter.add(self._role, self.name, result)
        return result

    async def server_limits(self) -> ServerLimits:
        """What the endpoint's server takes in one prompt: the endpoint's settings, and, when it does not give the
        context length, what the server's ``/v1/models`` reports (vLLM's ``max_model_len``; asked once per endpoint
        and event loop, and unknown when the server does not say)."""
        endpoint = self.endpoint
        context = endpoint.context_tokens
        if context is None:
            limits = _limits(self.name, endpoint)
            async with limits.context_lock:
                if not limits.context_asked:
                    limits.served_context = await self._served_context()
                    limits.context_asked = True
            context = limits.served_context
        return ServerLimits(images=endpoint.max_images, context_tokens=context, image_tokens=endpoint.image_tokens)

    async def image_room(self, request: ChatRequest) -> int | None:
        """How many images ``request`` may carry on this endpoint's server (:func:`~evaluator.llm.sizing.image_room`)
        when that is fewer than it carries; ``None`` when it fits, or nothing is known to limit it."""
        carried = request.images()
        if not carried:
            return None
        room = image_room(await self.server_limits(), text_tokens=request.estimated_prompt_tokens(image_tokens=0),
                          max_tokens=request.max_tokens or _DEFAULT_MAX_TOKENS)
        return room if room is not None and room < carried else None

    async def _served_context(self) -> int | None:
        key = self.endpoint.api_key(self.name)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        try:
            async with httpx.AsyncClient(timeout=10.0, headers=headers) as http:
                response = await http.get(f"{self.endpoint.urls[0].rstrip('/')}/models")
            lengths = [entry.get("max_model_len") for entry in response.json().get("data", [])]
        except (httpx.HTTPError, ValueError, AttributeError):
            return None
        return next((int(n) for n in lengths if isinstance(n, int) and n > 0), None)

    async def _paid(self, request: ChatRequest) -> ChatResult:
        reserved = self.endpoint.cost(request.estimated_prompt_tokens(self.endpoint.image_tokens),
                                      request.max_tokens or _DEFAULT_MAX_TOKENS)
        if self._budget is not None and not await self._budget.reserve(reserved):
            raise BudgetExhaustedError(f"the sweep's budget cannot cover another call to {self.name!r} "
                                       f"(up to ${reserved:.4f}); raise budget_usd and re-run to continue")
        spent = 0.0
        try:
            result = await self._with_retries(request)
            spent = result.cost_usd
            return result
        finally:
            if self._budget is not None:
                await self._budget.settle(reserved, spent)

    async def _with_retries(self, request: ChatRequest) -> ChatResult:
        endpoint = self.endpoint
        key = endpoint.api_key(self.name)
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        limits = _limits(self.name, endpoint)
        timeout = httpx.Timeout(endpoint.timeout_s, connect=min(10.0, endpoint.timeout_s))
        urls = endpoint.urls
        first = limits.next_server(len(urls))
        last = ""
        for attempt in range(1, endpoint.max_attempts + 1):
            url = urls[(first + attempt - 1) % len(urls)]
            await limits.pace()
            async with limits.slots:
                started = time.monotonic()
                try:
                    async with httpx.AsyncClient(timeout=timeout, headers=headers) as http:
                        result = await asyncio.wait_for(self._attempt(http, url, request),
                                                        endpoint.timeout_s * 4 if endpoint.stream else None)
                    return result.model_copy(update={"latency_s": round(time.monotonic() - started, 3),
                                                     "attempts": attempt})
                except _Retry as exc:
                    last, after = str(exc), exc.after_s
                except (httpx.TransportError, TimeoutError) as exc:
                    last, after = f"{type(exc).__name__}: {exc}".rstrip(": "), None
            if attempt < endpoint.max_attempts:
                pause = after if after is not None else random.uniform(0, min(60.0, endpoint.backoff_s * 2**attempt))
                await asyncio.sleep(min(pause, 120.0))
        raise ModelUnavailableError(f"endpoint {self.name!r} ({', '.join(urls)}) did not answer after "
                                    f"{endpoint.max_attempts} attempts; last: {last[:300]}")

    async def _attempt(self, http: httpx.AsyncClient, base_url: str, request: ChatRequest) -> ChatResult:
        url = f"{base_url.rstrip('/')}/chat/completions"
        body = request.body(stream=self.endpoint.stream)
        async with http.stream("POST", url, json=body) as response:
            if response.status_code != 200:
                text = (await response.aread()).decode(errors="replace")
                self._refuse_or_retry(response, text)
            if self.endpoint.stream and response.headers.get("content-type", "").startswith("text/event-stream"):
                return await self._read_stream(response, request)
            raw = await response.aread()
        try:
            data = json.loads(raw)
            choice = data["choices"][0]
            message = choice.get("message") or {}
            return self._result(request, content=message.get("content") or "", refusal=message.get("refusal"),
                                finish=choice.get("finish_reason") or "stop", model=data.get("model") or request.model,
                                usage=data.get("usage"), tool_calls=_tool_calls(message.get("tool_calls")))
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise _Retry(f"the endpoint answered a body that is not a chat completion ({exc!r})") from exc

    def _refuse_or_retry(self, response: httpx.Response, text: str) -> None:
        status = response.status_code
        message = _server_message(text)
        if status in _RETRY_STATUS:
            raise _Retry(f"HTTP {status}: {message}", _retry_after(response))
        if status in (400, 413, 422) and _TOO_LARGE.search(text):
            raise RequestTooLargeError(
                f"endpoint {self.name!r} refused the request for its size: HTTP {status}: {message} (set the "
                "endpoint's max_images and context_tokens to the server's limits, or serve the model with larger "
                "ones)")
        hint = {401: f" (check the key in ${self.endpoint.api_key_env})" if self.endpoint.api_key_env else
                " (the endpoint wants an API key: set api_key_env)",
                403: " (the key may not use this model)", 404: " (check base_url and the model id)"}.get(status, "")
        raise ModelRequestError(f"endpoint {self.name!r} refused the request: HTTP {status}: {message}{hint}")

    async def _read_stream(self, response: httpx.Response, request: ChatRequest) -> ChatResult:
        parts: list[str] = []
        refusal: list[str] = []
        finish: str | None = None
        model = request.model
        usage: WireObject | None = None
        calls = _StreamedCalls()
        done = False
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            payload = line[5:].strip()
            if payload == "[DONE]":
                done = True
                break
            try:
                chunk = json.loads(payload)
            except ValueError as exc:
                raise _Retry(f"a streamed chunk is not JSON: {payload[:120]!r}") from exc
            if "error" in chunk:
                raise _Retry(f"the stream reported an error: {_server_message(json.dumps(chunk))}")
            model = chunk.get("model") or model
            usage = chunk.get("usage") or usage
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    parts.append(delta["content"])
                if delta.get("refusal"):
                    refusal.append(delta["refusal"])
                calls.add(delta.get("tool_calls"))
                finish = choice.get("finish_reason") or finish
        if not done and finish is None:
            raise _Retry("the stream ended before the completion did (connection cut?)")
        return self._result(request, content="".join(parts), refusal="".join(refusal) or None,
                            finish=finish or "stop", model=model, usage=usage, tool_calls=calls.finished())

    def _result(self, request: ChatRequest, *, content: str, refusal: str | None, finish: str, model: str,
                usage: WireObject | None, tool_calls: list[ToolCall]) -> ChatResult:
        estimated = not usage or "prompt_tokens" not in usage
        prompt = (int(usage["prompt_tokens"]) if not estimated and usage
                  else request.estimated_prompt_tokens(self.endpoint.image_tokens))
        written = len(content) + sum(len(call.name) + len(call.arguments) for call in tool_calls)
        completion = int((usage or {}).get("completion_tokens") or 0) if not estimated else written // 3 + 1
        return ChatResult(content=content, finish_reason=finish, refusal=refusal, model=model, prompt_tokens=prompt,
                          completion_tokens=completion, usage_estimated=estimated,
                          cost_usd=round(self.endpoint.cost(prompt, completion), 8), latency_s=0.0, attempts=1,
                          tool_calls=tool_calls)


def _argument_text(arguments: Any) -> str:
    # OpenAI sends a JSON string; a few servers send the object itself. Either way the caller gets text.
    if arguments is None:
        return ""
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def _tool_calls(raw: Any) -> list[ToolCall]:
    """The tool calls of a whole (not streamed) message; a malformed entry raises (the body is garbled)."""
    calls = []
    for index, item in enumerate(raw or []):
        function = item["function"]
        # Some servers leave out the id; the caller still needs one to answer the call with.
        calls.append(ToolCall(id=item.get("id") or f"call_{index}", name=function["name"],
                              arguments=_argument_text(function.get("arguments"))))
    return calls


@dataclass
class _CallParts:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _StreamedCalls:
    """Tool calls arriving in fragments: each fragment names its call by ``index``; the id and the name come
    once, the arguments in pieces to be joined."""

    def __init__(self) -> None:
        self._parts: dict[int, _CallParts] = {}

    def add(self, fragments: Any) -> None:
        """Take one delta's ``tool_calls`` (``None`` when it has none)."""
        for fragment in fragments or []:
            if not isinstance(fragment, dict) or not isinstance(fragment.get("function") or {}, dict):
                raise _Retry(f"a streamed tool call fragment is not one: {str(fragment)[:120]!r}")
            index = fragment.get("index")
            if not isinstance(index, int):  # a server that leaves out the index: a new id starts a new call
                new = fragment.get("id") and all(part.id != fragment["id"] for part in self._parts.values())
                index = len(self._parts) if new or not self._parts else max(self._parts)
            parts = self._parts.setdefault(index, _CallParts())
            function = fragment.get("function") or {}
            # Only the first fragment carries the id and name; a server repeating them must not double them.
            parts.id = parts.id or fragment.get("id") or ""
            parts.name = parts.name or function.get("name") or ""
            parts.arguments.append(_argument_text(function.get("arguments")))

    def finished(self) -> list[ToolCall]:
        """The assembled calls in index order (arguments as joined, valid JSON or not)."""
        calls = []
        for index in sorted(self._parts):
            parts = self._parts[index]
            if not parts.name:
                raise _Retry(f"a streamed tool call (index {index}) never named its function")
            calls.append(ToolCall(id=parts.id or f"call_{index}", name=parts.name, arguments="".join(parts.arguments)))
        return calls


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff


def _server_message(text: str) -> str:
    try:
        data = json.loads(text)
        error = data.get("error", data) if isinstance(data, dict) else data
        message = error.get("message") if isinstance(error, dict) else error
        return str(message or text)[:300]
    except ValueError:
        return text.strip()[:300] or "(empty body)"


@dataclass
class ModelAccess:
    """What one run may call: the sweep's endpoints, the shared cache and budget, and the run's meter."""

    endpoints: dict[str, Endpoint] = field(default_factory=dict)
    cache: ResponseCache | None = None
    budget: Budget | None = None
    meter: UsageMeter = field(default_factory=UsageMeter)

    def client(self, endpoint: str, *, role: str) -> ChatClient:
        """A client of endpoint ``endpoint`` whose calls are counted under ``role``."""
        if endpoint not in self.endpoints:
            known = ", ".join(sorted(self.endpoints)) or "none"
            raise ConfigError(f"no endpoint {endpoint!r} in the sweep's endpoints (known: {known}); add it under "
                              "`endpoints:`")
        return ChatClient(endpoint, self.endpoints[endpoint], cache=self.cache, budget=self.budget,
                          meter=self.meter, role=role)

    def for_run(self) -> ModelAccess:
        """The same access with a fresh meter, for one run's accounting."""
        return ModelAccess(endpoints=self.endpoints, cache=self.cache, budget=self.budget)
