"""Evalgrid's scripts in a page, where the page cannot reach them: an isolated world.

Playwright's ``page.evaluate`` runs in the page's own JavaScript world, through its global ``eval``: a page that
hooks ``eval`` sees every script the evaluator runs and rewrites what each one returns. An isolated world (CDP
``Page.createIsolatedWorld``) shares the page's DOM but none of its JavaScript: what the page's scripts defined,
replaced or deleted is not there, and nothing run there is visible to them.

Two facts live only in the page's world, and are read through CDP instead, where the page has no say:

- which elements and targets have event listeners (``DOMDebugger.getEventListeners``): a ``div`` made clickable
  by ``addEventListener('click')``, keys listened for on the window. Scripts that need them are called with
  ``marks`` (see :meth:`PageWorld.call`);
- Playwright's clock lives in the page's world: the settle wait and the freeze still read it there (the README's
  "What a page can still learn and forge" says what follows from that).
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import Awaitable, Sequence
from typing import Any

from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from evaluator.browser.crash import CrashWatch, PageCrashed

_WORLD = "evalgrid"
_GROUP = "evalgrid-marks"
_TARGETS = "evalgrid-targets"
_CLICK = frozenset({"click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart"})
_PRESS = frozenset({"mousedown", "pointerdown"})
_DRAG = frozenset({"dragstart", "dragover", "dragenter", "drop"})
_MOVE = frozenset({"mousemove", "pointermove"})
_KEYS = frozenset({"keydown", "keyup", "keypress"})
_MAX_MARKED = 600
"""Elements with listeners handed to a script, in document order: each costs one CDP round trip the first time it
is seen (about a millisecond), so a page of thousands of per-item listeners costs the same as one of 600."""
_MAX_CACHED = 4000
"""Resolved elements kept between calls; past this the cache starts again (removed elements are not held)."""
_GONE = "Cannot find context"
"""CDP's reply when the world went with a navigation: the world is made again in the new document."""


class PageWorld:
    """One page's isolated world: evalgrid's scripts run there, called with JSON arguments, returning JSON.

    Use :func:`world` to get the page's one instance. A failure of the page to be measured (a document torn down
    under the script, an exception thrown) raises Playwright's ``Error``, as ``page.evaluate`` would.
    """

    def __init__(self, page: Page) -> None:
        self._page = page
        self._watch = CrashWatch(page).start()
        self._cdp: CDPSession | None = None
        self._context: int | None = None
        self._elements: dict[int, str] = {}
        # Calls are not serialised (a hang probe must not queue behind a script the page holds up); making the
        # session and the world, and the cache of resolved elements, are.
        self._making = asyncio.Lock()
        self._marking = asyncio.Lock()

    async def in_page(self, function: str, *args: Any) -> Any:
        """``function`` called with ``args`` in the page's own world, for what only lives there (Playwright's clock):
        compiled by CDP, not through the page's ``eval``, so a hook on it neither sees nor rewrites the call; the
        page's globals it reads are the page's, and what comes back must be checked as such."""
        return await self._unless_crashed(self._in_page(function, args))

    async def _in_page(self, function: str, args: Sequence[Any]) -> Any:
        cdp, _ = await self._session()
        return _value(await cdp.send("Runtime.evaluate", {
            "expression": f"({function})(...{json.dumps(list(args))})", "returnByValue": True, "awaitPromise": True}))

    async def call(self, function: str, *args: Any, marks: bool = False) -> Any:
        """``function`` (JavaScript source of a function) called with ``args``; its JSON-able result.

        With ``marks``, one more argument follows ``args``: ``{keys, kinds}``, where ``keys`` says whether the
        window, the document or the body listens for keys and ``kinds.get(element)`` is a string naming what the
        element listens for (``click``, ``press``, ``dblclick``, ``drag``, ``move``, ``keys``; ``""`` or undefined:
        nothing).
        """
        try:
            return await self._unless_crashed(self._call(function, args, marks))
        except PlaywrightError as exc:
            if _GONE not in str(exc):
                raise
        self._context, self._elements = None, {}
        return await self._unless_crashed(self._call(function, args, marks))

    async def _unless_crashed(self, work: Awaitable[Any]) -> Any:
        """``work``, given up the moment the page crashes: a call into a crashed renderer may never return."""
        try:
            return await self._watch.run(work)
        except PageCrashed as exc:
            raise PlaywrightError(f"Target crashed: {exc}") from exc

    async def _call(self, function: str, args: Sequence[Any], marks: bool) -> Any:
        cdp, context = await self._session()
        arguments: list[dict[str, Any]] = [{"value": list(args)}]
        if marks:
            async with self._marking:
                keys, kinds, objects = await self._marks(cdp, context)
            wrapper = ("function (args, keys, kinds, ...elements) { const of = new Map(elements.map((e, i) => "
                       f"[e, kinds[i]])); return ({function})(...args, {{keys, kinds: of}}); }}")
            arguments += [{"value": keys}, {"value": kinds}, *({"objectId": o} for o in objects)]
        else:
            wrapper = f"function (args) {{ return ({function})(...args); }}"
        return _value(await cdp.send("Runtime.callFunctionOn", {
            "functionDeclaration": wrapper, "executionContextId": context, "arguments": arguments,
            "returnByValue": True, "awaitPromise": True}))

    async def _session(self) -> tuple[CDPSession, int]:
        async with self._making:
            if self._cdp is None:
                self._cdp = await self._page.context.new_cdp_session(self._page)
            if self._context is None:
                self._context = await create_world(self._cdp, _WORLD)
            return self._cdp, self._context

    async def _marks(self, cdp: CDPSession, context: int) -> tuple[bool, list[str], list[str]]:
        """Whether the window listens for keys, and the listening elements with what they listen for."""
        # Listeners are reported to the world of the wrapper asked about, so the page's own world is asked: a bare
        # identifier evaluated there runs none of the page's code (``window`` and ``document`` cannot be redefined).
        # (``pierce``, which reports every world's, crashed the renderer on a page that had just added a listener.)
        window = await cdp.send("Runtime.evaluate", {"expression": "window", "objectGroup": _TARGETS})
        on_window = await cdp.send("DOMDebugger.getEventListeners", {"objectId": window["result"]["objectId"]})
        document = await cdp.send("Runtime.evaluate", {"expression": "document", "objectGroup": _TARGETS})
        found = await cdp.send("DOMDebugger.getEventListeners", {"objectId": document["result"]["objectId"],
                                                                  "depth": -1})
        # (Not in a finally: a call cut short goes with its document, and a reply awaited while the run is being
        # cancelled may never come.)
        await cdp.send("Runtime.releaseObjectGroup", {"objectGroup": _TARGETS})
        keys = any("keys" in _kind(listener) for listener in on_window["listeners"])
        by_node: dict[int, set[str]] = {}
        for listener in found["listeners"]:
            node, kind = listener.get("backendNodeId"), _kind(listener)
            if node is not None and kind:
                by_node.setdefault(node, set()).update(kind)
        nodes = list(by_node)[:_MAX_MARKED]
        if len(self._elements) + len(nodes) > _MAX_CACHED:
            await cdp.send("Runtime.releaseObjectGroup", {"objectGroup": _GROUP})
            self._elements = {}
        missing = [node for node in nodes if node not in self._elements]
        resolved = await asyncio.gather(*(cdp.send("DOM.resolveNode", {
            "backendNodeId": node, "executionContextId": context, "objectGroup": _GROUP}) for node in missing),
            return_exceptions=True)
        for node, reply in zip(missing, resolved, strict=True):
            if isinstance(reply, dict):  # (a node of another frame, or one gone since, resolves to nothing)
                self._elements[node] = reply["object"]["objectId"]
        kept = [node for node in nodes if node in self._elements]
        return keys, [" ".join(sorted(by_node[node])) for node in kept], [self._elements[node] for node in kept]


def _value(reply: dict[str, Any]) -> Any:
    """A CDP evaluation's JSON value; its exception raised as Playwright's ``Error``, as ``page.evaluate`` would."""
    if "exceptionDetails" in reply:
        details = reply["exceptionDetails"]
        why = details.get("exception", {}).get("description") or details.get("text")
        raise PlaywrightError(f"in-page script: {why}")
    return reply.get("result", {}).get("value")


async def create_world(cdp: CDPSession, name: str) -> int:
    """An isolated world named ``name`` in the page's main frame (the same one again for the same name, until the
    document changes): its execution context id."""
    tree = await cdp.send("Page.getFrameTree")
    created = await cdp.send("Page.createIsolatedWorld", {"frameId": tree["frameTree"]["frame"]["id"],
                                                          "worldName": name})
    return int(created["executionContextId"])


def _kind(listener: dict[str, Any]) -> set[str]:
    """What a listener makes its target answer to. A key listener that captures is a filter in front of the page
    (a shortcut guard; a calibration twin's swallowing shim), not what drives it: it does not count as ``keys``."""
    event, kinds = listener["type"], set()
    if event in _CLICK:
        kinds.add("click")
    if event in _PRESS:
        kinds.add("press")
    if event == "dblclick":
        kinds.add("dblclick")
    if event in _DRAG:
        kinds.add("drag")
    if event in _MOVE:
        kinds.add("move")
    if event in _KEYS and not listener.get("useCapture"):
        kinds.add("keys")
    return kinds


_WORLDS: weakref.WeakKeyDictionary[Page, PageWorld] = weakref.WeakKeyDictionary()


def world(page: Page) -> PageWorld:
    """The page's isolated world (one per page, made on first use)."""
    found = _WORLDS.get(page)
    if found is None:
        found = _WORLDS[page] = PageWorld(page)
    return found


async def evaluate(page: Page, function: str, *args: Any) -> Any:
    """``function`` called with ``args`` in ``page``'s isolated world: :meth:`PageWorld.call` without marks."""
    return await world(page).call(function, *args)

