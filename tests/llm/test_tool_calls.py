"""Function calling through the model client, against the scripted server: real HTTP, tool calls streamed in
fragments as OpenAI sends them, the cache, retries and accounting as for any call."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from evaluator.llm.client import ChatClient, ChatRequest, ChatResult, Endpoint, ResponseCache, ToolSpec, UsageMeter
from tests.llm.scripted_server import Turn, scripted_server

PREVIEW = ToolSpec(name="create_app_preview", description="Serve the files and report what breaks.",
                   parameters={"type": "object", "properties": {"files": {"type": "object"}}, "required": ["files"]})
LOOKUP = ToolSpec(name="lookup", description="Look a word up.",
                  parameters={"type": "object", "properties": {"word": {"type": "string"}}})
FILES_ARGUMENTS = json.dumps({"files": {"index.html": "<!doctype html><h1>Hi</h1>", "app.js": "console.log(1)"}})

# The cache key of `_request()` (no tools) on endpoint "judge", computed before function calling was added:
# requests that use no tools must keep their keys, or every existing response cache would be missed.
KEY_WITHOUT_TOOLS = "d4fd75c37957f63558c00baeb61bff466333e6ff11aa44b51fc1c63d60b93445"


def _endpoint(url: str, **overrides: object) -> Endpoint:
    settings: dict[str, object] = {"base_url": url, "backoff_s": 0.05, "timeout_s": 5.0,
                                   "input_usd_per_mtok": 2.0, "output_usd_per_mtok": 8.0}
    return Endpoint.model_validate({**settings, **overrides})


def _request(text: str = "Say hello.", **fields: object) -> ChatRequest:
    return ChatRequest.model_validate({"model": "judge-model", "messages": [{"role": "user", "content": text}],
                                       "max_tokens": 200, **fields})


def _complete(client: ChatClient, request: ChatRequest) -> ChatResult:
    return asyncio.run(client.complete(request))


def test_a_request_without_tools_keeps_its_body_and_its_cache_key() -> None:
    plain = _request()
    assert plain.key("judge") == KEY_WITHOUT_TOOLS
    assert _request(tools=[]).key("judge") == KEY_WITHOUT_TOOLS  # an empty list is no tools
    assert not {"tools", "tool_choice"} & set(plain.body(stream=True)) & set(plain.body(stream=False))
    with_tools = _request(tools=[PREVIEW])
    assert len({plain.key("judge"), with_tools.key("judge"), _request(tools=[LOOKUP]).key("judge"),
                _request(tools=[PREVIEW], tool_choice="required").key("judge")}) == 4


def test_tool_specs_are_checked_and_accepted_in_openai_shape() -> None:
    assert ToolSpec.model_validate(PREVIEW.wire()) == PREVIEW
    for bad in ("has space", "", "x" * 65, "dots.not.allowed"):
        with pytest.raises(ValidationError):
            ToolSpec(name=bad)
    with pytest.raises(ValidationError, match="tool_choice needs tools"):
        _request(tool_choice="auto")
    with pytest.raises(ValidationError, match="share a name"):
        _request(tools=[LOOKUP, LOOKUP])
    with pytest.raises(ValidationError):
        _request(tools=[PREVIEW], tool_choice="sometimes")


def test_the_budget_estimate_counts_the_tool_specs() -> None:
    plain, with_tools = _request(), _request(tools=[PREVIEW, LOOKUP])
    specs = len(json.dumps([PREVIEW.wire(), LOOKUP.wire()]))
    assert with_tools.estimated_prompt_tokens() >= plain.estimated_prompt_tokens() + specs // 3


@pytest.mark.parametrize("stream", [True, False])
def test_tools_are_sent_and_fragmented_tool_calls_come_back_assembled(stream: bool) -> None:
    calls = [{"name": "create_app_preview", "arguments": FILES_ARGUMENTS, "id": "call_abc"},
             {"name": "lookup", "arguments": '{"word": "frobnicate"}'}]
    with scripted_server(Turn(content="Let me check.", tool_calls=calls)) as server:
        result = _complete(ChatClient("m", _endpoint(server.url, stream=stream)),
                           _request(tools=[PREVIEW, LOOKUP], tool_choice="auto"))
        sent = server.requests[0]
    assert sent["tools"] == [PREVIEW.wire(), LOOKUP.wire()] and sent["tool_choice"] == "auto"
    assert sent["tools"][0] == {"type": "function", "function": {
        "name": "create_app_preview", "description": PREVIEW.description, "parameters": PREVIEW.parameters}}
    assert result.finish_reason == "tool_calls" and result.content == "Let me check."
    assert [(c.name, c.arguments) for c in result.tool_calls] == [(c["name"], c["arguments"]) for c in calls]
    assert result.tool_calls[0].id == "call_abc" and result.tool_calls[1].id  # the server's id, or its made-up one
    assert result.tool_calls[0].arguments_or_error().value == json.loads(FILES_ARGUMENTS)
    assert result.completion_tokens == (len("Let me check.") + sum(len(c["name"] + c["arguments"]) for c in calls)) // 4
    assert result.cost_usd == pytest.approx((result.prompt_tokens * 2 + result.completion_tokens * 8) / 1e6)


def test_the_scripted_server_streams_a_tool_calls_arguments_in_several_chunks() -> None:
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}]}
    with scripted_server(Turn(tool_calls=[{"name": "create_app_preview", "arguments": FILES_ARGUMENTS}])) as server:
        with httpx.stream("POST", f"{server.url}/chat/completions", json=body, timeout=5) as response:
            events = [json.loads(line[5:]) for line in response.iter_lines()
                      if line.startswith("data:") and line != "data: [DONE]"]
    fragments = [f for e in events for c in e["choices"] for f in c["delta"].get("tool_calls", [])]
    pieces = [f["function"]["arguments"] for f in fragments if f["function"].get("arguments")]
    assert len(pieces) >= 2 and "".join(pieces) == FILES_ARGUMENTS
    assert sum("id" in f for f in fragments) == 1 and sum("name" in f["function"] for f in fragments) == 1


@pytest.mark.parametrize("stream", [True, False])
def test_a_multi_turn_exchange_sends_the_calls_and_results_back_and_is_metered(stream: bool) -> None:
    first = Turn(tool_calls=[{"name": "create_app_preview", "arguments": FILES_ARGUMENTS}])
    with scripted_server(first, Turn(content="All fixed: here are the files.")) as server:
        meter = UsageMeter()
        client = ChatClient("gen", _endpoint(server.url, stream=stream), meter=meter, role="generation")
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Build a page, check it, then answer."}]
        asked = _complete(client, ChatRequest(model="m", messages=messages, tools=[PREVIEW]))
        [call] = asked.tool_calls
        messages += [asked.assistant_message(), call.result_message('{"status": "ok", "problems": []}')]
        answered = _complete(client, ChatRequest(model="m", messages=messages, tools=[PREVIEW]))
        sent_back = server.requests[1]["messages"]
    assert sent_back[1] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": call.id, "type": "function", "function": {"name": "create_app_preview", "arguments": FILES_ARGUMENTS}}]}
    assert sent_back[2] == {"role": "tool", "tool_call_id": call.id, "content": '{"status": "ok", "problems": []}'}
    assert answered.content == "All fixed: here are the files." and answered.finish_reason == "stop"
    assert answered.tool_calls == [] and answered.assistant_message() == {"role": "assistant",
                                                                          "content": answered.content}
    [usage] = meter.usage()
    assert (usage.role, usage.calls) == ("generation", 2)
    assert usage.prompt_tokens == asked.prompt_tokens + answered.prompt_tokens > 0
    assert usage.completion_tokens == asked.completion_tokens + answered.completion_tokens
    assert asked.completion_tokens == len("create_app_preview" + FILES_ARGUMENTS) // 4
    assert usage.cost_usd == pytest.approx(asked.cost_usd + answered.cost_usd)


def test_the_cache_returns_the_same_tool_calls_without_asking_again(tmp_path: Path) -> None:
    calls = [{"name": "lookup", "arguments": '{"word": "x"}', "id": "call_1"}]
    with scripted_server(Turn(tool_calls=calls), Turn(content="not tools")) as server:
        cache = ResponseCache(tmp_path / "cache")
        first = _complete(ChatClient("m", _endpoint(server.url), cache=cache), _request(tools=[LOOKUP]))
        again = _complete(ChatClient("m", _endpoint(server.url), cache=cache), _request(tools=[LOOKUP]))
        assert len(server.requests) == 1
        plain = _complete(ChatClient("m", _endpoint(server.url), cache=cache), _request())
        assert len(server.requests) == 2  # same messages without tools: another key, another call
    assert again.cached and not first.cached
    assert again.tool_calls == first.tool_calls and again.finish_reason == "tool_calls"
    assert plain.content == "not tools" and plain.tool_calls == []


@pytest.mark.parametrize("stream", [True, False])
def test_arguments_that_are_not_json_come_back_unretried_with_an_error_to_show_the_model(stream: bool) -> None:
    broken = '{"files": {"index.html": "<h1'
    calls = [{"name": "create_app_preview", "arguments": broken}, {"name": "lookup", "arguments": "[1, 2]"},
             {"name": "lookup", "arguments": ""}]
    with scripted_server(Turn(tool_calls=calls)) as server:
        result = _complete(ChatClient("m", _endpoint(server.url, stream=stream)), _request(tools=[PREVIEW, LOOKUP]))
        assert len(server.requests) == 1 and result.attempts == 1
    cut, array, empty = result.tool_calls
    assert cut.arguments == broken  # exactly as sent
    value, error = cut.arguments_or_error()
    assert value is None and "'create_app_preview'" in error and "not valid JSON" in error and "call it again" in error
    assert array.arguments_or_error() == (None, "the arguments of your call to 'lookup' are JSON but not an object; "
                                                "call it again with one JSON object as its arguments")
    assert empty.arguments_or_error() == ({}, "")


def test_a_tool_call_after_a_503_is_returned_on_the_second_attempt() -> None:
    calls = [{"name": "lookup", "arguments": '{"word": "retry"}'}]
    with scripted_server(Turn(status=503, error_message="overloaded"), Turn(tool_calls=calls)) as server:
        result = _complete(ChatClient("m", _endpoint(server.url)), _request(tools=[LOOKUP]))
        assert len(server.requests) == 2 and server.requests[1]["tools"] == [LOOKUP.wire()]
    assert result.attempts == 2 and [c.name for c in result.tool_calls] == ["lookup"]
    assert result.tool_calls[0].arguments_or_error().value == {"word": "retry"}


def test_without_a_usage_report_the_tool_calls_count_in_the_estimate() -> None:
    calls = [{"name": "create_app_preview", "arguments": FILES_ARGUMENTS}]
    with scripted_server(Turn(tool_calls=calls, usage=False)) as server:
        result = _complete(ChatClient("m", _endpoint(server.url)), _request(tools=[PREVIEW]))
    assert result.usage_estimated
    assert result.completion_tokens == len("create_app_preview" + FILES_ARGUMENTS) // 3 + 1
    assert result.prompt_tokens == _request(tools=[PREVIEW]).estimated_prompt_tokens()


def test_fragments_from_less_careful_servers_are_assembled_and_a_nameless_call_is_retried() -> None:
    from evaluator.llm.client import _Retry, _StreamedCalls

    calls = _StreamedCalls()
    # No index (one call per id), the name repeated in every fragment, arguments sent as an object.
    calls.add([{"id": "a", "function": {"name": "lookup", "arguments": '{"word": '}}])
    calls.add([{"function": {"name": "lookup", "arguments": '"x"}'}}])
    calls.add([{"id": "b", "function": {"name": "create_app_preview", "arguments": {"files": {}}}}])
    calls.add(None)
    assert [(c.id, c.name, c.arguments) for c in calls.finished()] == [
        ("a", "lookup", '{"word": "x"}'), ("b", "create_app_preview", '{"files": {}}')]
    nameless = _StreamedCalls()
    nameless.add([{"index": 0, "function": {"arguments": "{}"}}])
    with pytest.raises(_Retry, match="never named its function"):
        nameless.finished()
    with pytest.raises(_Retry, match="not one"):
        nameless.add(["garbage"])
