"""The sandbox's offline CDN mirror (images/sandbox/mirror.js): real CDN URLs, as model answers write
them, answered through the proxy the way the CDN would, other hosts refused, hostile input survived,
and a real Chromium rendering a page built from React, the Tailwind Play CDN and a Google Font.

The mirror's packages, and its own code's (semver), come from the npm registry (npm-tree.sh, into the
same gitignored directory images/build.sh uses); the first run fetches them (≈30 s), later runs reuse them.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, Playwright, async_playwright

from evaluator.browser.launch import LAUNCH_ARGS, chromium_executable
from tests.support import CDN_DIR, SANDBOX, TOOLCHAIN_DIR


@dataclass(frozen=True)
class Proxy:
    port: int
    log: Path
    process: subprocess.Popen[str]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]


INDEXED = ["react", "react-dom", "scheduler", "vue", "lodash", "dayjs", "d3"]


@pytest.fixture(scope="session")
def proxy(mirror_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    if shutil.which("node") is None:
        pytest.skip("node is not installed (make setup installs it)")
    work = tmp_path_factory.mktemp("mirror")
    cert, key, log, index = work / "cert.pem", work / "key.pem", work / "mirror.log", work / "index.json"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "2", "-subj", "/CN=evalgrid-mirror"],
        check=True, capture_output=True,
    )
    # The CommonJS export names the image build indexes, for the packages these tests import as ES modules.
    with index.open("w") as out:
        subprocess.run(["node", str(SANDBOX / "mirror.js"), "--build-index", str(mirror_root), *INDEXED],
                       stdout=out, check=True, timeout=120)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        ["node", str(SANDBOX / "mirror.js"), "--port", str(port), "--root", str(mirror_root),
         "--cert", str(cert), "--key", str(key), "--log", str(log), "--index", str(index)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "EVALGRID_ESBUILD": str(TOOLCHAIN_DIR / "node_modules" / "esbuild")},
    )
    assert process.stdout is not None
    if process.stdout.readline().strip() != "ready":
        process.kill()
        pytest.fail(f"mirror.js did not start: {process.communicate()[1]}")
    yield Proxy(port, log, process)
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture
def client(proxy: Proxy) -> Iterator[httpx.Client]:
    with httpx.Client(proxy=proxy.url, verify=False, follow_redirects=False, timeout=10) as c:
        yield c


JS = "application/javascript"
CSS = "text/css"
IMMUTABLE = "public, max-age=31536000, immutable"


@dataclass(frozen=True)
class Case:
    url: str
    status: int = 200
    location: str | None = None
    content_type: str | None = None
    contains: str | None = None
    package: str | None = None


CASES = [
    # unpkg: ranges redirect to the exact version; bare packages to their default file
    Case("https://unpkg.com/react@18/umd/react.development.js", 302,
         location="https://unpkg.com/react@18.3.1/umd/react.development.js"),
    Case("https://unpkg.com/react@18.3.1/umd/react.development.js", content_type=JS, contains="18.3.1",
         package="react@18.3.1"),
    Case("https://unpkg.com/react-dom@18.2.0/umd/react-dom.production.min.js", content_type=JS,
         contains="18.2.0", package="react-dom@18.2.0"),
    Case("https://unpkg.com/react@17/umd/react.production.min.js", 302,
         location="https://unpkg.com/react@17.0.2/umd/react.production.min.js"),
    Case("https://unpkg.com/react@^18.2.0/umd/react.production.min.js", 302,
         location="https://unpkg.com/react@18.3.1/umd/react.production.min.js"),
    # a pinned patch release we do not hold: the newest of its major line, by redirect, on the record
    Case("https://unpkg.com/react@18.1.0/umd/react.production.min.js", 302,
         location="https://unpkg.com/react@18.3.1/umd/react.production.min.js"),
    Case("https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.2.0/css/all.min.css", content_type=CSS,
         package="@fortawesome/fontawesome-free@6.7.2"),
    Case("https://unpkg.com/react@16.14.0/umd/react.production.min.js", 404),  # no React 16 at all
    Case("https://unpkg.com/react@19.3.1/umd/react.production.min.js", 404),  # React 19 has no UMD
    Case("https://unpkg.com/vue@3", 302, location="https://unpkg.com/vue@3.5.45"),
    Case("https://unpkg.com/vue@3.5.45", 302, location="https://unpkg.com/vue@3.5.45/dist/vue.global.js"),
    Case("https://unpkg.com/vue@2.7.16/dist/vue.js", content_type=JS, contains="2.7.16"),
    Case("https://unpkg.com/@babel/standalone/babel.min.js", 302,
         location="https://unpkg.com/@babel/standalone@7.29.13/babel.min.js"),
    Case("https://unpkg.com/lucide@latest", 302, location="https://unpkg.com/lucide@0.577.0"),
    Case("https://unpkg.com/lucide@0.577.0", 302, location="https://unpkg.com/lucide@0.577.0/dist/umd/lucide.min.js"),
    Case("https://unpkg.com/three@0.160.0/build/three.module.js", content_type=JS, contains="REVISION = '160'"),
    Case("https://unpkg.com/three@0.160.0/examples/jsm/controls/OrbitControls", 302,
         location="https://unpkg.com/three@0.160.0/examples/jsm/controls/OrbitControls.js"),
    Case("https://unpkg.com/tailwindcss@^2/dist/tailwind.min.css", 302,
         location="https://unpkg.com/tailwindcss@2.2.19/dist/tailwind.min.css"),
    Case("https://unpkg.com/no-such-package-here@1.0.0/x.js", 404),
    # jsDelivr
    Case("https://cdn.jsdelivr.net/npm/chart.js", 302, location="https://cdn.jsdelivr.net/npm/chart.js@4.6.1"),
    Case("https://cdn.jsdelivr.net/npm/chart.js@4.6.1", 302,
         location="https://cdn.jsdelivr.net/npm/chart.js@4.6.1/dist/chart.umd.min.js"),
    Case("https://cdn.jsdelivr.net/npm/chart.js@2.9.4/dist/Chart.min.js", content_type=JS, contains="2.9.4",
         package="chart.js@2.9.4"),
    Case("https://cdn.jsdelivr.net/npm/tailwindcss@2.2.19/dist/tailwind.min.css", content_type=CSS,
         contains="tailwindcss v2.2.19"),
    Case("https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/css/bootstrap.min.css", content_type=CSS,
         contains="Bootstrap  v5.3.3"),
    Case("https://cdn.jsdelivr.net/npm/@tailwindcss/browser@4", 302,
         location="https://cdn.jsdelivr.net/npm/@tailwindcss/browser@4.3.4"),
    Case("https://cdn.jsdelivr.net/npm/alpinejs@3.17.5/dist/cdn.min.js", content_type=JS),
    Case("https://cdn.jsdelivr.net/npm/marked@15.0.12/marked.min.js", content_type=JS),
    Case("https://cdn.jsdelivr.net/npm/animejs@3.2.2/lib/anime.min.js", content_type=JS, contains="anime"),
    Case("https://cdn.jsdelivr.net/npm/gsap@3.12.5/dist/gsap.min.js", content_type=JS, contains="3.12.5"),
    Case("https://cdn.jsdelivr.net/npm/htmx.org@1.9.12/dist/htmx.min.js", content_type=JS, contains="1.9.12"),
    Case("https://cdn.jsdelivr.net/npm/dayjs@1.11.23/dayjs.min.js", content_type=JS),
    Case("https://cdn.jsdelivr.net/npm/lodash@4.17.21/lodash.min.js", content_type=JS, contains="4.17.21"),
    Case("https://cdn.jsdelivr.net/npm/axios@1.21.1/dist/axios.min.js", content_type=JS),
    Case("https://cdn.jsdelivr.net/npm/d3@7", 302, location="https://cdn.jsdelivr.net/npm/d3@7.9.2"),
    Case("https://cdn.jsdelivr.net/npm/@fortawesome/fontawesome-free@6.7.2/webfonts/fa-solid-900.woff2",
         content_type="font/woff2"),
    # cdnjs: its own names, version spellings and flattened layouts
    Case("https://cdnjs.cloudflare.com/ajax/libs/three.js/r128/three.min.js", content_type=JS,
         contains='"128"', package="three@0.128.0"),
    Case("https://cdnjs.cloudflare.com/ajax/libs/Chart.js/3.9.1/chart.min.js", content_type=JS, contains="3.9.1"),
    Case("https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.7.2/css/all.min.css", content_type=CSS,
         contains="Font Awesome Free 6.7.2"),
    Case("https://cdnjs.cloudflare.com/ajax/libs/font-awesome/5.15.4/css/all.min.css", content_type=CSS,
         contains="Font Awesome Free 5.15.4"),
    Case("https://cdnjs.cloudflare.com/ajax/libs/font-awesome/4.7.0/css/font-awesome.min.css", content_type=CSS,
         contains="Font Awesome 4.7.0"),
    Case("https://cdnjs.cloudflare.com/ajax/libs/gsap/3.12.2/ScrollTrigger.min.js", content_type=JS),
    Case("https://cdnjs.cloudflare.com/ajax/libs/jquery/3.7.1/jquery.min.js", content_type=JS, contains="v3.7.1"),
    Case("https://cdnjs.cloudflare.com/ajax/libs/lodash.js/4.17.21/lodash.min.js", content_type=JS),
    Case("https://cdnjs.cloudflare.com/ajax/libs/animejs/3.2.2/anime.min.js", content_type=JS),
    Case("https://cdnjs.cloudflare.com/ajax/libs/tailwindcss/2.2.19/tailwind.min.css", content_type=CSS),
    Case("https://cdnjs.cloudflare.com/ajax/libs/twitter-bootstrap/4.6.2/js/bootstrap.bundle.min.js",
         content_type=JS, contains="v4.6.2"),
    Case("https://cdnjs.cloudflare.com/ajax/libs/vue/3.5.45/vue.global.prod.min.js", content_type=JS),
    Case("https://cdnjs.cloudflare.com/ajax/libs/three.js/r99/three.min.js", 404),
    # the Tailwind Play CDN (v3 browser JIT) and other fixed-layout hosts
    Case("https://cdn.tailwindcss.com", content_type=JS, contains="tailwind", package="tailwindcss-cdn@3.4.10"),
    Case("https://cdn.tailwindcss.com/?plugins=forms,typography", content_type=JS,
         contains="prose-headings"),
    Case("https://cdn.tailwindcss.com/3.4.1", content_type=JS),
    Case("https://code.jquery.com/jquery-3.6.0.min.js", content_type=JS, contains="v3.6.0"),
    Case("https://d3js.org/d3.v7.min.js", content_type=JS, contains="7.9.2"),
    Case("https://use.fontawesome.com/releases/v5.15.4/css/all.css", content_type=CSS),
    # Google Fonts
    Case("https://fonts.googleapis.com/css2?family=Inter:wght@400;600;700"
         "&family=Playfair+Display:ital,wght@0,400;1,700&display=swap",
         content_type=CSS, contains="https://fonts.gstatic.com/s/evalgrid/playfair-display/files/"),
    Case("https://fonts.googleapis.com/css?family=Roboto:400,700|Open+Sans", content_type=CSS,
         contains="font-family: 'Open Sans'"),
    Case("https://fonts.googleapis.com/css2?family=Source+Sans+3:wght@300..600", content_type=CSS,
         contains="font-weight: 600"),
    Case("https://fonts.googleapis.com/css2?family=No+Such+Family", 404),
    Case("https://fonts.gstatic.com/s/evalgrid/inter/files/inter-latin-400-normal.woff2", content_type="font/woff2",
         package="@fontsource/inter@5.3.0"),
    # ES module CDNs: modules bundled on request, ranges redirected like unpkg
    Case("https://esm.sh/react@18.2.0", content_type=JS, contains="export", package="react@18.2.0"),
    Case("https://esm.sh/react@18", 302, location="https://esm.sh/react@18.3.1"),
    Case("https://esm.sh/react-dom@18.3.1/client", content_type=JS, contains='from "https://esm.sh/react-dom@18.3.1"'),
    Case("https://cdn.skypack.dev/d3@7.9.2", content_type=JS, contains='from "https://esm.sh/d3-'),
    Case("https://cdn.jsdelivr.net/npm/d3@7/+esm", 302, location="https://esm.sh/d3@7.9.2"),
    Case("https://cdn.skypack.dev/canvas-confetti", 404),
    # The ES-module path builds only what a package exports: never a command-line script (the purgecss CLI
    # once ran inside the supervisor and ended the sandbox), never a subpath outside an exports map.
    Case("https://esm.sh/purgecss@4.1.3/bin/purgecss.js", 404),
    Case("https://esm.sh/react-dom@18.3.1/cjs/react-dom.development.js", 404),
    Case("https://esm.sh/dayjs@1.11.23/plugin/relativeTime.js", content_type=JS, contains="export"),
    # CommonJS named exports come from the image build's index: the mirror loads no package code
    Case("https://esm.sh/lodash@4.17.21", content_type=JS, contains="  debounce,\n"),
]


def test_named_exports_come_from_the_index_and_no_module_is_loaded_at_request_time(client: httpx.Client) -> None:
    """lodash's names are in the index (a static lexer finds none of them); a CommonJS module the index lacks
    gets its default export only, which it would not if the mirror loaded modules to list their names."""
    lodash = client.get("https://esm.sh/lodash@4.17.21").text
    exported = lodash[lodash.rindex("export {"):]
    assert "debounce," in exported and "chunk," in exported
    moment = client.get("https://esm.sh/moment@2.31.0").text  # CommonJS, and not in this test's index
    exported = moment[moment.rindex("export {"):]
    assert " as default" in exported and "isMoment" not in exported


@pytest.mark.parametrize("case", CASES, ids=[c.url[8:70] for c in CASES])
def test_cdn_url(case: Case, client: httpx.Client, proxy: Proxy) -> None:
    response = client.get(case.url)
    assert response.status_code == case.status, response.text[:300]
    assert response.headers["access-control-allow-origin"] == "*"
    if case.location is not None:
        assert response.headers["location"] == case.location
    if case.content_type is not None:
        assert response.headers["content-type"].startswith(case.content_type)
    if case.contains is not None:
        assert case.contains in response.text
    if case.status == 200 and "@" in case.url.split("/", 3)[-1].split("?")[0] and "googleapis" not in case.url:
        assert response.headers["cache-control"] == IMMUTABLE
    logged = case.url if httpx.URL(case.url).raw_path != b"/" or case.url.endswith("/") else case.url + "/"
    record = [r for r in proxy.records() if r["url"] == logged][-1]
    assert record["kind"] == ("miss" if case.status == 404 else "served")
    if case.package is not None:
        assert record["package"] == case.package


# npm range forms in CDN URLs, each answered with the newest held version it allows (mirror/package.json holds
# react 17.0.2, 18.2.0, 18.3.1 and 19.3.1, three 0.128.0 and 0.160.0): (package@range, version served).
RANGES = [
    ("react@~18.2", "18.2.0"),  # tilde: the patch releases of 18.2
    ("react@~18.2.0", "18.2.0"),
    ("react@~18", "18.3.1"),  # tilde on a major: that major
    ("react@~>18.2", "18.2.0"),
    ("react@17 - 18.2", "18.2.0"),  # hyphen: a partial upper bound takes all of 18.2.x
    ("react@18.2 - 18.3", "18.3.1"),
    ("react@16 - 17", "17.0.2"),
    ("react@17 || 18", "18.3.1"),  # ||: the newest satisfying either side
    ("react@17 || 18.2", "18.2.0"),
    ("react@16 || 17", "17.0.2"),
    ("react@^18.2.0", "18.3.1"),  # caret: the major
    ("react@^17", "17.0.2"),
    ("three@^0.128.0", "0.128.0"),  # caret under 0.x: the minor
    ("react@18.x", "18.3.1"),  # x-ranges
    ("react@18.2.x", "18.2.0"),
    ("react@*", "19.3.1"),
    ("react@>=17 <18", "17.0.2"),  # comparators
    ("react@<=18.2", "18.2.0"),
    ("react@latest", "19.3.1"),  # the dist-tag: the newest held
    ("react", "19.3.1"),  # no range
]


@pytest.mark.parametrize(("spec", "version"), RANGES, ids=[r[0] for r in RANGES])
def test_a_range_redirects_to_the_newest_satisfying_version(spec: str, version: str, client: httpx.Client,
                                                            proxy: Proxy) -> None:
    name = spec.split("@")[0]
    redirect = client.get(f"https://unpkg.com/{spec}/package.json")
    assert redirect.status_code == 302, redirect.text
    location = f"https://unpkg.com/{name}@{version}/package.json"
    assert redirect.headers["location"] == location
    served = client.get(location)
    assert served.status_code == 200 and served.json()["version"] == version
    records = proxy.records()
    assert {r["package"] for r in records if r.get("redirect") == location} == {f"{name}@{version}"}
    assert [r["package"] for r in records if r["url"] == location][-1] == f"{name}@{version}"


@pytest.mark.parametrize(("url", "location"), [
    ("https://cdn.jsdelivr.net/npm/react@17 || 18/umd/react.production.min.js",
     "https://cdn.jsdelivr.net/npm/react@18.3.1/umd/react.production.min.js"),
    ("https://esm.sh/react@~18.2", "https://esm.sh/react@18.2.0"),
    ("https://esm.sh/react-dom@18.2 - 18.3/client", "https://esm.sh/react-dom@18.3.1/client"),
])
def test_other_cdns_read_ranges_alike(url: str, location: str, client: httpx.Client) -> None:
    response = client.get(url)
    assert (response.status_code, response.headers["location"]) == (302, location)


@pytest.mark.parametrize(("path", "build"), [("~3.3", "3.3.3/"), ("3.4.0 - 3.4.2", "3.4.1/"),
                                             ("3.3 || 3.4.0", "3.4.0/"), ("^3", "")])
def test_tailwind_play_cdn_serves_the_build_a_range_picks(path: str, build: str, client: httpx.Client,
                                                          proxy: Proxy) -> None:
    response = client.get(f"https://cdn.tailwindcss.com/{path}")
    assert response.status_code == 200, response.text
    served = [r for r in proxy.records() if r["kind"] == "served" and r["url"].startswith("https://cdn.tailwindcss.com/")]
    assert served[-1]["file"] == f"{build}tailwindcss.js"  # the root holds the newest build, 3.4.10


@pytest.mark.parametrize("spec", ["react@~18.1", "react@16 || 15", "react@15.0 - 16.9", "react@next"])
def test_a_range_no_held_version_satisfies_is_a_logged_miss(spec: str, client: httpx.Client, proxy: Proxy) -> None:
    response = client.get(f"https://unpkg.com/{spec}/package.json")
    assert response.status_code == 404
    assert proxy.records()[-1]["kind"] == "miss"
    assert ("not understood" if spec.endswith("next") else "satisfies") in response.text


def test_the_mirrors_own_packages_are_a_tree_apart_from_those_it_serves(mirror_root: Path) -> None:
    """semver is the mirror's dependency, pinned, never one of the packages it serves, and the mirror loads it
    from its own locked tree, not from wherever the host's Node would find one."""
    own = json.loads((SANDBOX / "cdn" / "package.json").read_text())["dependencies"]
    served = json.loads((SANDBOX / "mirror" / "package.json").read_text())["dependencies"]
    assert "semver" in own and not set(own) & set(served)
    assert all(spec.count(".") == 2 and spec[0].isdigit() for spec in own.values()), own
    loaded = subprocess.run(
        ["node", "-e", "require(process.argv[1]); console.log(Object.keys(require.cache).join('\\n'))",
         str(SANDBOX / "cdn" / "ranges.js")], capture_output=True, text=True, check=True).stdout.split()
    semver = [f for f in loaded if "/semver/" in f]
    assert semver and all(f.startswith(str(CDN_DIR / "node_modules" / "semver") + "/") for f in semver), semver


def test_google_font_css_points_at_mirrored_files(client: httpx.Client) -> None:
    css = client.get("https://fonts.googleapis.com/css2?family=Press+Start+2P&family=Orbitron:wght@900").text
    assert "font-family: 'Press Start 2P'" in css and "font-weight: 900" in css
    for url in sorted(set(part.split(")")[0] for part in css.split("url(")[1:]))[:3]:
        assert client.get(url).status_code == 200, url


def test_other_hosts_are_refused_and_logged(client: httpx.Client, proxy: Proxy) -> None:
    with pytest.raises(httpx.ProxyError):
        client.get("https://www.google-analytics.com/analytics.js")
    assert client.get("http://example.com/beacon?x=1").status_code == 403
    kinds = {(r["kind"], r["url"]) for r in proxy.records()}
    assert ("blocked", "https://www.google-analytics.com/") in kinds
    assert ("blocked", "http://example.com/beacon?x=1") in kinds


def test_chromiums_own_service_traffic_is_refused_but_not_the_pages(client: httpx.Client, proxy: Proxy) -> None:
    with pytest.raises(httpx.ProxyError):
        client.get("https://android.clients.google.com/checkin")
    assert ("browser", "https://android.clients.google.com/") in {(r["kind"], r["url"]) for r in proxy.records()}


def _raw(port: int, payload: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        try:
            s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
            return s.recv(4096)
        except OSError:
            return b""


def test_hostile_input_does_not_kill_the_proxy(client: httpx.Client, proxy: Proxy) -> None:
    payloads = [
        bytes(range(256)) * 64,
        b"GET http://unpkg.com/" + b"a" * 200_000 + b" HTTP/1.1\r\nHost: unpkg.com\r\n\r\n",
        b"CONNECT \r\n\r\n",
        b"CONNECT [::1:443 HTTP/1.1\r\n\r\n",
        b"GET http://unpkg.com/%E0%A4%A HTTP/1.1\r\nHost: unpkg.com\r\n\r\n",
        b"GET http://unpkg.com/react@18.3.1/../../../../etc/passwd HTTP/1.1\r\nHost: unpkg.com\r\n\r\n",
        b"GET http://unpkg.com/react@%3E%3D%3C%3C%7C%7C/x HTTP/1.1\r\nHost: unpkg.com\r\n\r\n",
        b"GET /direct HTTP/1.1\r\nHost: x\r\n\r\n",
        b"CONNECT unpkg.com:443 HTTP/1.1\r\n\r\n" + bytes(range(256)) * 16,  # garbage where TLS should be
    ]
    for payload in payloads:
        _raw(proxy.port, payload)
    traversal = _raw(proxy.port, payloads[5])
    assert b"root:" not in traversal
    # a TLS tunnel to a mirrored host whose HTTP inside is garbage
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=5) as s:
        s.sendall(b"CONNECT unpkg.com:443 HTTP/1.1\r\nHost: unpkg.com:443\r\n\r\n")
        assert s.recv(4096).startswith(b"HTTP/1.1 200")
        with context.wrap_socket(s, server_hostname="unpkg.com") as t:
            t.sendall(b"\x00\xff garbage \r\n\r\n")
            t.recv(4096)
    assert proxy.process.poll() is None
    assert client.get("https://unpkg.com/react@18.3.1/umd/react.production.min.js").status_code == 200


PAGE = """<!doctype html>
<html><head>
<link rel="stylesheet" href="https://fonts.googleapis.com/css2?family=Inter:wght@400;700&display=swap">
<script src="https://cdn.tailwindcss.com"></script>
<script crossorigin src="https://unpkg.com/react@18/umd/react.production.min.js"></script>
<script crossorigin src="https://unpkg.com/react-dom@18/umd/react-dom.production.min.js"></script>
</head><body>
<div id="root"></div>
<script>
  ReactDOM.createRoot(document.getElementById('root')).render(
    React.createElement('h1', {id: 'title', className: 'text-red-600 font-bold', style: {fontFamily: 'Inter'}},
                        'Mounted by React ' + React.version));
</script>
</body></html>"""


async def _behind_the_mirror(playwright: Playwright, proxy: Proxy) -> Browser:
    """Chromium as the sandbox runs it: evalgrid's flags, with the mirror instead of the dead proxy."""
    args = [a for a in LAUNCH_ARGS if not a.startswith("--proxy-server=")]
    return await playwright.chromium.launch(
        executable_path=chromium_executable(playwright),
        args=[*args, f"--proxy-server={proxy.url}", "--ignore-certificate-errors"],
    )


@pytest.mark.browser
def test_chromium_renders_a_page_from_the_mirror(proxy: Proxy) -> None:
    async def scenario() -> dict[str, Any]:
        async with async_playwright() as playwright:
            browser = await _behind_the_mirror(playwright, proxy)
            try:
                page = await browser.new_page()
                await page.set_content(PAGE, wait_until="load")
                await page.wait_for_function("getComputedStyle(document.getElementById('title')).color"
                                             " === 'rgb(220, 38, 38)'", timeout=15_000)
                result: dict[str, Any] = await page.evaluate("""async () => {
                    await document.fonts.load('16px Inter');
                    await document.fonts.load('bold 16px Inter');
                    await document.fonts.ready;
                    const title = document.getElementById('title');
                    return {
                        text: title.textContent,
                        weight: getComputedStyle(title).fontWeight,
                        check: document.fonts.check('16px Inter') && document.fonts.check('bold 16px Inter'),
                        loaded: [...document.fonts].filter(f => f.family.replace(/"/g, '') === 'Inter'
                                                             && f.status === 'loaded').length,
                    };
                }""")
                return result
            finally:
                await browser.close()

    started = time.monotonic()
    result = asyncio.run(scenario())
    assert result["text"] == "Mounted by React 18.3.1"
    assert result["weight"] == "700"
    assert result["check"] is True and result["loaded"] >= 1
    assert time.monotonic() - started < 30
    served = {r["url"] for r in proxy.records() if r["kind"] == "served"}
    assert "https://cdn.tailwindcss.com/" in served
    assert any(u.startswith("https://fonts.gstatic.com/s/evalgrid/inter/") for u in served)


ES_MODULE_PAGE = """<!doctype html><html><body><div id="root"></div><div id="vue">{{ greeting }}</div>
<script type="module">
  import React, { useState } from "https://esm.sh/react@18.2.0";
  import { createRoot } from "https://esm.sh/react-dom@18.2.0/client";
  import { createApp } from "https://esm.sh/vue@3";
  function Counter() {
    const [n, setN] = useState(0);
    return React.createElement("button", { id: "count", onClick: () => setN(n + 1) }, "clicked " + n);
  }
  createRoot(document.getElementById("root")).render(React.createElement(Counter));
  createApp({ data: () => ({ greeting: "Hello from Vue" }) }).mount("#vue");
</script></body></html>"""


@pytest.mark.browser
def test_chromium_runs_es_modules_from_esm_sh(proxy: Proxy) -> None:
    """React and ReactDOM as separate esm.sh modules must share one React (hooks work), Vue must compile
    an in-DOM template."""

    async def scenario() -> dict[str, Any]:
        async with async_playwright() as playwright:
            browser = await _behind_the_mirror(playwright, proxy)
            try:
                page = await browser.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                await page.set_content(ES_MODULE_PAGE, wait_until="load")
                await page.wait_for_selector("#count", timeout=15_000)
                await page.click("#count")
                await page.click("#count")
                await page.wait_for_function("document.getElementById('count').textContent === 'clicked 2'",
                                             timeout=5_000)
                return {"vue": await page.inner_text("#vue"), "errors": errors}
            finally:
                await browser.close()

    result = asyncio.run(scenario())
    assert result == {"vue": "Hello from Vue", "errors": []}
