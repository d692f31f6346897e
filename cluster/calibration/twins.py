"""Mutation twins: a model's answer with one core behaviour broken, or its design damaged.

A twin is made from the raw answer, so it goes through the grid like any answer: extraction, build, the
sandbox, the agent and the judge see nothing special. Each operator is generic: it needs no marker in
the app and applies as well to apps nobody here wrote.

- Functional operators break one behaviour and leave the first screen as it was. Most are a small script
  (``cluster/calibration/twin_shims/<operator>.js``) placed before the app's own code: in an HTML page, the first
  element of ``<head>``; in a built component, its first statement. ``scripts_removed``
  instead deletes the app's own scripts (CDN libraries stay), which leaves a script-rendered app blank.
- Aesthetic operators damage the design and leave the function: every stylesheet switched off, the layout
  forced to 1400 px, text contrast collapsed.
- Patched operators (the core action dead, a wrong result, a dead drop) have no generic form on apps nobody
  here wrote: each app of the real-app suite records its own edit, and its play-test confirms the break.
"""

from __future__ import annotations

import functools
import re
from enum import StrEnum
from importlib import resources

from evaluator import ConfigError


class Operator(StrEnum):
    """A mutation that makes a twin."""

    ENTER_SWALLOWED = "enter_swallowed"
    """Enter in a text field and form submission do nothing."""
    CHECKBOX_DEAD = "checkbox_dead"
    """Checkboxes cannot be toggled."""
    CLICK_THROWS = "click_throws"
    """A button's click handler throws before doing anything."""
    SCRIPTS_REMOVED = "scripts_removed"
    """The app's own scripts are gone; libraries from a CDN stay."""
    RENDER_FROZEN = "render_frozen"
    """After the first input, state changes are not rendered."""
    DELETE_NOOP = "delete_noop"
    """Delete and remove controls do nothing."""
    KEYS_SWALLOWED = "keys_swallowed"
    """Keyboard input outside text fields never reaches the app."""
    CSS_REMOVED = "css_removed"
    """Every author stylesheet is switched off."""
    FIXED_WIDTH = "fixed_width"
    """The layout is forced to a fixed 1400 px width."""
    CONTRAST_COLLAPSED = "contrast_collapsed"
    """Text is drawn in nearly its background colour."""
    CORE_DEAD = "core_dead"
    """The app's core action does nothing (a per-app patch from the suite's record)."""
    WRONG_RESULT = "wrong_result"
    """The app shows a wrong result (a per-app patch)."""
    DROP_DEAD = "drop_dead"
    """A drag's drop, or a move, does nothing (a per-app patch)."""

    @property
    def patched(self) -> bool:
        """Whether the twin comes from a per-app patch in the suite's record, not from a generic mutation."""
        return self in _PATCHED

    @property
    def aesthetic(self) -> bool:
        """Whether the operator damages design (function intact) rather than function."""
        return self in _AESTHETIC


_AESTHETIC = frozenset({Operator.CSS_REMOVED, Operator.FIXED_WIDTH, Operator.CONTRAST_COLLAPSED})
_PATCHED = frozenset({Operator.CORE_DEAD, Operator.WRONG_RESULT, Operator.DROP_DEAD})
FUNCTIONAL_OPERATORS = tuple(op for op in Operator if not op.aesthetic and not op.patched)
"""The generic functional operators (the patched ones come from a suite's records)."""
AESTHETIC_OPERATORS = tuple(op for op in Operator if op.aesthetic)

# The app feature an operator breaks (as the calibration suite declares them per app): a twin is made only
# from apps that have it, or the "broken" twin would be the working app under another name.
REQUIRES: dict[Operator, str | None] = {
    Operator.ENTER_SWALLOWED: "enter",
    Operator.CHECKBOX_DEAD: "checkbox",
    Operator.CLICK_THROWS: "click",
    Operator.SCRIPTS_REMOVED: None,
    Operator.RENDER_FROZEN: None,
    Operator.DELETE_NOOP: "delete",
    Operator.KEYS_SWALLOWED: "keyboard",
    Operator.CSS_REMOVED: None,
    Operator.FIXED_WIDTH: None,
    Operator.CONTRAST_COLLAPSED: None,
    Operator.CORE_DEAD: None,
    Operator.WRONG_RESULT: None,
    Operator.DROP_DEAD: None,
}

# A feature that makes an operator's twin no different from the original: a canvas game draws without
# changing the DOM, so a frozen DOM does not break it.
EXCLUDED_BY: dict[Operator, str] = {Operator.RENDER_FROZEN: "canvas"}

_FENCE = re.compile(r"^(?P<open>```+|~~~+)(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=open)[ \t]*$", re.M | re.S)
_HEAD = re.compile(r"<head\b[^>]*>", re.I)
_HTML = re.compile(r"<html\b[^>]*>", re.I)
_DOCTYPE = re.compile(r"<!doctype\b[^>]*>", re.I)
_SCRIPT = re.compile(r"<script\b(?P<attrs>[^>]*)>(?P<body>.*?)</script\s*>", re.I | re.S)
_STYLE = re.compile(r"<style\b[^>]*>.*?</style\s*>", re.I | re.S)
_STYLESHEET_LINK = re.compile(r"<link\b[^>]*\brel\s*=\s*[\"']?stylesheet[^>]*>", re.I)
_STYLE_ATTR = re.compile(r"""\sstyle\s*=\s*("[^"]*"|'[^']*')""", re.I)
_HANDLER_ATTR = re.compile(r"""\son[a-z]+\s*=\s*("[^"]*"|'[^']*')""", re.I)
_SRC = re.compile(r"""\bsrc\s*=\s*["']?(?P<src>[^"'\s>]+)""", re.I)
_CSS_CDN = re.compile(r"cdn\.tailwindcss\.com|@tailwindcss/browser", re.I)
_SCRIPT_SETUP = re.compile(r"<script\b[^>]*\bsetup\b[^>]*>\n?", re.I)


@functools.cache
def shim(operator: Operator) -> str:
    """The script that makes ``operator``'s twin (package data, versioned with the code)."""
    path = resources.files("cluster.calibration").joinpath(f"twin_shims/{operator.value}.js")
    if not path.is_file():
        raise ConfigError(f"operator {operator.value} has no shim: it works on the source (see make_twin)")
    return path.read_text(encoding="utf-8")


def make_twin(answer: str, operator: Operator) -> str | None:
    """The answer with ``operator`` applied, or ``None`` when it does not apply to this answer.

    The first code fence that holds the app (an HTML page, a JSX/TSX component or a Vue SFC) is changed;
    the prose around it is kept, so the twin reads like the original answer. A patched operator has no
    generic form: its twin comes from the app's record (:meth:`SuiteApp.twin`).
    """
    if operator.patched:
        return None
    for match in _FENCE.finditer(answer):
        body = match.group("body")
        changed = _mutate(body, _fence_kind(match.group("info"), body), operator)
        if changed is not None:
            return answer[:match.start("body")] + changed + answer[match.end("body"):]
        if _fence_kind(match.group("info"), body) is not None:
            return None
    if _HTML.search(answer) or _HEAD.search(answer):  # a bare HTML answer, no fence
        return _mutate(answer, "html", operator)
    return None


def _fence_kind(info: str, body: str) -> str | None:
    lang = (info.strip().split() or [""])[0].lower()
    if lang == "vue" or (lang in ("html", "") and _SCRIPT_SETUP.search(body) and "<template" in body):
        return "vue"  # an SFC fenced as html is still an SFC
    if lang in ("html", "htm") or (not lang and re.search(r"<(!doctype|html|head|body)\b", body, re.I)):
        return "html"
    if lang in ("jsx", "tsx", "javascript", "js", "typescript", "ts") and re.search(r"\bexport\s+default\b", body):
        return "module"
    return None


def _mutate(code: str, kind: str | None, operator: Operator) -> str | None:
    if kind is None:
        return None
    if operator is Operator.SCRIPTS_REMOVED:
        return _without_own_scripts(code) if kind == "html" else None
    if operator is Operator.CSS_REMOVED and kind == "html":
        code = _without_css(code)
    script = shim(operator)
    if kind == "html":
        tag = f"<script>\n{script}</script>\n"
        # never before a doctype: quirks mode would change the first screen
        head = _HEAD.search(code) or _HTML.search(code) or _DOCTYPE.search(code)
        at = head.end() if head else 0
        return code[:at] + "\n" + tag + code[at:]
    # A module's imports are hoisted, so a statement placed first still runs before the app's own code.
    if kind == "module":
        return script + code
    setup = _SCRIPT_SETUP.search(code)
    if setup is None:
        return None
    return code[:setup.end()] + script + code[setup.end():]


def _without_own_scripts(html: str) -> str:
    """Drop inline scripts, scripts from the app's own files and inline event handlers; CDN scripts stay."""
    def keep(match: re.Match[str]) -> str:
        src = _SRC.search(match.group("attrs"))
        return match.group(0) if src and re.match(r"(https?:)?//", src.group("src")) else ""
    return _HANDLER_ATTR.sub("", _SCRIPT.sub(keep, html))


def _without_css(html: str) -> str:
    """Drop style elements, stylesheet links, style attributes and CSS-generating CDN scripts.

    Only the markup is edited: a script's text (jQuery's ``style="..."`` strings, a ``<style>`` built in a
    string) is code, and editing it would break the script, which is not what an aesthetic twin is for.
    """
    def strip(markup: str) -> str:
        return _STYLE_ATTR.sub("", _STYLESHEET_LINK.sub("", _STYLE.sub("", markup)))

    parts, at = [], 0
    for match in _SCRIPT.finditer(html):
        src = _SRC.search(match.group("attrs"))
        parts += [strip(html[at:match.start()]), "" if src and _CSS_CDN.search(src.group("src")) else match.group(0)]
        at = match.end()
    return "".join(parts) + strip(html[at:])
