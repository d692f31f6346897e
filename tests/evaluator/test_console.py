"""Tests of evaluator.evidence.console.classify_console: only breaking errors count as errors.

Messages are written the way Chromium and Playwright report them (``console`` message types,
``pageerror`` for uncaught exceptions, ``requestfailed`` and HTTP-status lines from PageLog).
"""

from __future__ import annotations

import json

import pytest

from evaluator.evidence.console import ConsoleClass, ConsoleEntry, LoggedEntry, classify_console

APP = "http://127.0.0.1:41873"


@pytest.mark.parametrize(
    "text",
    [
        "TypeError: Cannot read properties of null (reading 'addEventListener')",
        "ReferenceError: renderBoard is not defined",
        "Error: Minified React error #31",
    ],
)
def test_pageerror_is_uncaught(text: str) -> None:
    assert classify_console("pageerror", text) is ConsoleClass.UNCAUGHT


def test_pageerror_is_uncaught_even_when_it_mentions_noise() -> None:
    # An uncaught exception always counts, whatever it talks about.
    assert classify_console("pageerror", "Error: failed to load https://unpkg.com/react@18") is ConsoleClass.UNCAUGHT


@pytest.mark.parametrize(
    ("kind", "text", "url"),
    [
        ("error", f"HTTP 404: {APP}/favicon.ico", f"{APP}/favicon.ico"),
        ("error", "Failed to load resource: the server responded with a status of 404 (Not Found)",
         f"{APP}/favicon.ico"),
        ("requestfailed", "net::ERR_FAILED: https://fonts.googleapis.com/css2?family=Inter:wght@400;700",
         "https://fonts.googleapis.com/css2?family=Inter:wght@400;700"),
        ("requestfailed", "net::ERR_FAILED: https://fonts.gstatic.com/s/inter/v13/UcCO3Fwr.woff2",
         "https://fonts.gstatic.com/s/inter/v13/UcCO3Fwr.woff2"),
        ("error", f"HTTP 404: {APP}/fonts/Poppins-Bold.woff2", f"{APP}/fonts/Poppins-Bold.woff2"),
        ("error", "Failed to decode downloaded font: http://127.0.0.1:41873/fonts/brand.ttf", ""),
        ("error", "OTS parsing error: invalid sfntVersion: 1008821359", ""),
        # the sandbox's mirror refusing an unknown host: a refused tunnel, or its marked 403 for plain HTTP
        ("requestfailed", "net::ERR_TUNNEL_CONNECTION_FAILED: https://cdn.example-analytics.io/track.js",
         "https://cdn.example-analytics.io/track.js"),
        ("error", "HTTP 403 (blocked by the sandbox): http://beacon.example.com/p.gif",
         "http://beacon.example.com/p.gif"),
        ("error", "HTTP 404: https://d3js.org/d3.v3.min.js", "https://d3js.org/d3.v3.min.js"),
        ("requestfailed", "net::ERR_NAME_NOT_RESOLVED: https://unpkg.com/react@18/umd/react.development.js",
         "https://unpkg.com/react@18/umd/react.development.js"),
        ("requestfailed", "net::ERR_FAILED: https://cdn.jsdelivr.net/npm/chart.js",
         "https://cdn.jsdelivr.net/npm/chart.js"),
        ("requestfailed", "net::ERR_FAILED: https://cdnjs.cloudflare.com/ajax/libs/animate.css/4.1.1/animate.min.css",
         "https://cdnjs.cloudflare.com/ajax/libs/animate.css/4.1.1/animate.min.css"),
        ("requestfailed", "net::ERR_BLOCKED_BY_CLIENT: https://www.googletagmanager.com/gtag/js?id=G-XYZ",
         "https://www.googletagmanager.com/gtag/js?id=G-XYZ"),
        ("error", "Failed to load resource: net::ERR_BLOCKED_BY_CLIENT", "https://example.com/pixel.gif"),
    ],
    ids=[
        "favicon-404", "favicon-chromium-text", "google-fonts-css", "gstatic-woff2", "local-woff2",
        "downloaded-font", "ots", "mirror-refused-tunnel", "mirror-refused-http", "d3js-miss", "unpkg", "jsdelivr",
        "cdnjs", "blocked-tracker", "blocked-by-client",
    ],
)
def test_fonts_favicon_cdn_and_blocked_requests_are_noise(kind: str, text: str, url: str) -> None:
    assert classify_console(kind, text, url) is ConsoleClass.NOISE


@pytest.mark.parametrize(
    ("kind", "text", "url"),
    [
        ("error", f"HTTP 404: {APP}/app.js", f"{APP}/app.js"),
        ("error", f"HTTP 500: {APP}/api/data.json", f"{APP}/api/data.json"),
        ("error", "Failed to load resource: the server responded with a status of 404 (Not Found)",
         f"{APP}/styles.css"),
        ("requestfailed", f"net::ERR_CONNECTION_REFUSED: {APP}/data.json", f"{APP}/data.json"),
        ("error", "TypeError: board.map is not a function", f"{APP}/index.html"),
        ("error", "Uncaught (in promise) TypeError: Failed to fetch", f"{APP}/app.js"),
    ],
    ids=["404-js", "500-api", "404-css", "refused", "typeerror", "promise"],
)
def test_first_party_failures_are_errors(kind: str, text: str, url: str) -> None:
    assert classify_console(kind, text, url) is ConsoleClass.ERROR


@pytest.mark.parametrize(
    "text",
    [
        "TypeError: Cannot read properties of undefined (reading 'fontSize')",
        "TypeError: Cannot set properties of null (setting 'fontFamily')",
        "ReferenceError: fontScale is not defined",
        "Error: could not apply font settings to the editor",
    ],
)
def test_js_errors_that_mention_font_stay_errors(text: str) -> None:
    assert classify_console("error", text, f"{APP}/app.js") is ConsoleClass.ERROR


@pytest.mark.parametrize(
    "text",
    [
        "[Deprecation] Listener added for a synchronous 'DOMNodeInserted' DOM Mutation Event.",
        "cdn.tailwindcss.com should not be used in production.",
        "The resource http://127.0.0.1:41873/hero.png was preloaded using link preload but not used.",
    ],
)
def test_warnings_are_warnings(text: str) -> None:
    assert classify_console("warning", text, APP) is ConsoleClass.WARNING


def test_logs_and_other_kinds_are_info() -> None:
    assert classify_console("log", "Game started", APP) is ConsoleClass.INFO
    assert classify_console("info", "Loaded 12 recipes", APP) is ConsoleClass.INFO
    assert classify_console("debug", "TypeError: looks scary but is a debug line", APP) is ConsoleClass.INFO


def test_classes_serialise_to_stable_strings() -> None:
    # PageLog stores `.value`; the heuristic judge filters on these exact strings.
    assert {c.value for c in ConsoleClass} == {"uncaught", "error", "warning", "noise", "info"}


@pytest.mark.parametrize("line", [12, None])
def test_a_logged_entry_is_written_as_bundles_always_held_it(line: int | None) -> None:
    """Key for key and in order, ``line`` only where known: ``network.json`` keeps these bytes as they were, and
    ``console.json`` reads them back as :class:`ConsoleEntry`."""
    entry = LoggedEntry(wall=1.5, phase="interaction", kind="pageerror", klass=ConsoleClass.UNCAUGHT,
                        text="TypeError: x is undefined", url="http://127.0.0.1/app.js", line=line)
    before = {"wall": 1.5, "phase": "interaction", "kind": "pageerror", "class": "uncaught",
              "text": "TypeError: x is undefined", "url": "http://127.0.0.1/app.js",
              **({"line": line} if line is not None else {})}
    assert json.dumps(entry.as_json()) == json.dumps(before)
    written = {**{k: v for k, v in entry.as_json().items() if k != "wall"}, "video_time_s": 0.25}
    assert ConsoleEntry.model_validate(written).line == line
