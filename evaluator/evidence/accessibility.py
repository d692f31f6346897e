"""Accessibility defects of a rendered page, measured with the vendored axe-core.

The page is untrusted, so axe never runs in the page's own JavaScript world: it is injected into a
fresh isolated world (Chromium DevTools ``Page.createIsolatedWorld``), which shares the DOM with the
page but none of its globals or prototypes. A page that defines ``window.axe``, makes it read-only or
patches ``Array.prototype`` cannot see, replace or steer the copy that measures it. Within that world
the run goes through the object the injection itself produced, not through a global looked up later.

Counts follow WebAccessBench: every violating DOM element of every rule is one defect instance.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
from typing import Any, Literal

from playwright.async_api import CDPSession, Page
from pydantic import BaseModel, ConfigDict, Field, model_validator

from evaluator.browser.crash import CrashWatch, PageCrashed
from evaluator.browser.isolated import create_world, evaluate
from evaluator.errors import InfrastructureError
from evaluator.package_data import package_text

__all__ = ["AXE_VERSION", "AccessibilityAudit", "AxeViolation", "audit_accessibility"]

AXE_VERSION = "4.14.1"

_AXE_RESOURCE = "scripts/vendor/axe.min.js"
_WORLD_NAME = "evalgrid-axe"
_MAX_TARGETS = 10
_SC_TAG = re.compile(r"^wcag([1-4])([1-9])(\d{1,2})$")
_LEVEL_TAG = re.compile(r"^wcag2[0-9]?(a{1,3})$")

# Runs with ``this`` bound to the axe object the injection returned. ``iframes: false``: frames are
# not given axe, so axe could only ping them (half a second each) over a postMessage channel that the
# page controls; the elements of the top document, including <iframe> elements themselves, are all
# still checked by every default rule.
_RUN_AXE = """async function (maxTargets) {
  const results = await this.run(document, {resultTypes: ['violations'], iframes: false});
  const selector = (target) => target.map((part) => Array.isArray(part) ? part.join(' >>> ') : String(part))
    .join(' >> ');
  return {
    version: String(this.version),
    violations: results.violations.map((v) => ({
      id: v.id, impact: v.impact ?? null, description: v.description, help_url: v.helpUrl, tags: v.tags,
      nodes: v.nodes.length, targets: v.nodes.slice(0, maxTargets).map((n) => selector(n.target)),
    })),
  };
}"""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


_Impact = Literal["minor", "moderate", "serious", "critical"]
_WcagLevel = Literal["A", "AA", "AAA"]
_LEVELS: tuple[_WcagLevel, ...] = ("A", "AA", "AAA")


class AxeViolation(_Record):
    """One axe-core rule the page fails, with the elements that fail it."""

    rule_id: str
    """The axe rule (``image-alt``, ``color-contrast`` ...)."""
    impact: _Impact | None
    """axe's impact of the worst failing element; ``None`` when axe gives none."""
    description: str
    """What the rule checks, in axe's words."""
    help_url: str
    """Deque University page explaining the rule and its fix."""
    wcag: list[str] = Field(default_factory=list)
    """WCAG success criteria the rule maps to (``1.4.3``); empty for best-practice rules."""
    wcag_level: _WcagLevel | None = None
    """Conformance level of the rule's WCAG tags (``wcag2a``, ``wcag21aa`` ...): ``A``, ``AA`` or ``AAA``."""
    nodes: int = Field(ge=1)
    """Number of DOM elements that fail the rule: its defect instances."""
    targets: list[str] = Field(default_factory=list, max_length=_MAX_TARGETS)
    """CSS selectors of the first ten failing elements (shadow DOM steps joined by ``>>>``)."""


class AccessibilityAudit(_Record):
    """axe-core's verdict on a page as it is now; ``error`` says why there is none."""

    axe_version: str = AXE_VERSION
    """The axe-core version that ran (the vendored one)."""
    dom_elements: int | None = Field(default=None, ge=0)
    """Elements in the page's document (``getElementsByTagName('*')``), counted before axe was injected."""
    violations: list[AxeViolation] = Field(default_factory=list)
    """Failed rules, in axe's order; only violations (not incomplete or passed checks)."""
    defect_count: int = Field(default=0, ge=0)
    """Defect instances: the number of violating elements summed over all rules (WebAccessBench's count)."""
    error: str | None = None
    """Why axe could not measure the page (crashed, navigated away, timed out); ``None`` when it did."""

    @model_validator(mode="before")
    @classmethod
    def _count_defects(cls, data: Any) -> Any:
        """Fill in ``defect_count`` when only the violations are given."""
        if isinstance(data, dict) and "defect_count" not in data:
            nodes = [v.nodes if isinstance(v, AxeViolation) else v.get("nodes") if isinstance(v, dict) else None
                     for v in data.get("violations") or []]
            if all(isinstance(n, int) for n in nodes):
                data = {**data, "defect_count": sum(nodes)}
        return data

    @model_validator(mode="after")
    def _defects_add_up(self) -> AccessibilityAudit:
        if self.defect_count != sum(v.nodes for v in self.violations):
            raise ValueError("defect_count must be the number of violating elements over all violations")
        return self


@functools.cache
def _axe_source() -> str:
    kind, _, name = _AXE_RESOURCE.partition("/")
    return package_text(kind, name)


def _wcag(tags: list[str]) -> tuple[list[str], _WcagLevel | None]:
    """Success criteria (``wcag143`` → ``1.4.3``) and the conformance level from axe's rule tags."""
    criteria: list[str] = []
    levels: set[str] = set()
    for tag in tags:
        if sc := _SC_TAG.match(tag):
            criteria.append(".".join(sc.groups()))
        elif level := _LEVEL_TAG.match(tag):
            levels.add(level.group(1).upper())
    return criteria, next((level for level in _LEVELS if level in levels), None)


def _violation(raw: dict[str, Any]) -> AxeViolation:
    tags = [str(t) for t in raw.get("tags") or []]
    criteria, level = _wcag(tags)
    return AxeViolation(rule_id=raw["id"], impact=raw["impact"], description=raw["description"],
                        help_url=raw["help_url"], wcag=criteria, wcag_level=level, nodes=raw["nodes"],
                        targets=raw["targets"][:_MAX_TARGETS])


async def _evaluate(session: CDPSession, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A ``Runtime`` call whose in-page exception becomes a Python one."""
    reply = await session.send(method, params)
    details = reply.get("exceptionDetails")
    if details:
        exception = details.get("exception") or {}
        raise RuntimeError(str(exception.get("description") or details.get("text") or "exception in page")[:300])
    result: dict[str, Any] = reply["result"]
    return result


async def _run(session: CDPSession, measured: dict[str, int]) -> AccessibilityAudit:
    context_id = await create_world(session, _WORLD_NAME)
    count = await _evaluate(session, "Runtime.evaluate", {
        "expression": "document.getElementsByTagName('*').length", "contextId": context_id, "returnByValue": True,
    })
    measured["dom_elements"] = int(count["value"])
    # The injection's own value is the reference the run goes through.
    axe = await _evaluate(session, "Runtime.evaluate", {
        "expression": _axe_source() + "\n;window.axe", "contextId": context_id, "silent": True,
    })
    if axe.get("type") != "object" or "objectId" not in axe:
        raise RuntimeError(f"injecting axe-core produced {axe.get('type')}, not the axe object")
    outcome = await _evaluate(session, "Runtime.callFunctionOn", {
        "functionDeclaration": _RUN_AXE, "objectId": axe["objectId"],
        "arguments": [{"value": _MAX_TARGETS}], "awaitPromise": True,
        "returnByValue": True, "silent": True,
    })
    value = outcome["value"]
    violations = [_violation(v) for v in value["violations"]]
    return AccessibilityAudit(axe_version=value["version"], dom_elements=measured["dom_elements"],
                              violations=violations)


async def audit_accessibility(page: Page, *, timeout_s: float = 60.0) -> AccessibilityAudit:
    """Run axe-core's default rules on ``page`` in an isolated world; never raises for a broken page.

    A page that crashed, was closed, navigated away, outlived ``timeout_s`` or otherwise kept axe from
    finishing yields an audit whose ``error`` says why: that is evidence about the app. Only a dead
    browser raises (:class:`~evaluator.errors.InfrastructureError`).
    """
    if page.is_closed():
        return AccessibilityAudit(error="the page is closed")
    measured: dict[str, int] = {}
    session: CDPSession | None = None
    watch = CrashWatch(page)
    try:
        async with watch, asyncio.timeout(timeout_s):
            await evaluate(page, "() => 0")  # fails at once on a page that already crashed
            session = await page.context.new_cdp_session(page)
            return await watch.run(_run(session, measured))
    except Exception as exc:  # noqa: BLE001 - a page axe cannot measure is evidence, not a crash
        browser = page.context.browser
        if browser is not None and not browser.is_connected():
            raise InfrastructureError(f"the browser died during the accessibility audit: {exc}") from exc
        if isinstance(exc, PageCrashed) or watch.crashed or "Target crashed" in str(exc):
            reason = "the page crashed"
        elif isinstance(exc, TimeoutError):
            if session is not None:  # stop a run still holding the page's main thread, so the page stays usable
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(session.send("Runtime.terminateExecution"), 1)
            reason = f"axe-core did not finish within {timeout_s:g} s"
        else:
            reason = f"{type(exc).__name__}: {str(exc)[:300]}"
        return AccessibilityAudit(dom_elements=measured.get("dom_elements"), error=reason)
    finally:
        if session is not None and not watch.crashed:  # a crashed page's session never answers
            with contextlib.suppress(Exception):
                await asyncio.wait_for(session.detach(), 1)
