"""Turn a model's raw answer (markdown with code fences, bare HTML, several files) into app files.

The answer is untrusted: file names are sanitised (no absolute paths, no ``..``), binary content is
refused, and an answer with no usable code is a classified :class:`NotAssessable`, never a crash.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from evaluator.models import ReasonCode, RejectedFile, Stack

MAX_ANSWER_BYTES = 4 * 1024 * 1024
MAX_FILES = 64
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<ticks>`{3,}|~{3,})(?P<info>[^\n`]*)$", re.MULTILINE)
_FILENAME = re.compile(r"^[\w][\w .@()+-]*(/[\w][\w .@()+-]*)*\.(html?|css|m?js|jsx|tsx?|vue|json|svg|txt|md)$", re.I)
_NAMEISH = re.compile(r"[\w./\\~-]+\.(?:html?|css|m?js|jsx|tsx?|vue|json|svg|txt|md|py|sh)\b", re.I)
_HTML_HINT = re.compile(r"<!doctype html|<html[\s>]|<body[\s>]|<head[\s>]", re.I)
_TAG_LINES = re.compile(r"^\s*<(div|p|h[1-6]|button|section|main|canvas|svg|table|form|ul|script|style)\b", re.I | re.M)
_LANG_DEFAULT = {"html": "index.html", "css": "style.css", "js": "script.js", "jsx": "App.jsx", "tsx": "App.tsx",
                 "vue": "App.vue"}
_LANG_ALIASES = {
    "html": "html", "htm": "html", "xml": "html", "markup": "html",
    "css": "css", "scss": "css",
    "js": "js", "javascript": "js", "mjs": "js",
    "jsx": "jsx", "react": "jsx", "tsx": "tsx", "ts": "ts", "typescript": "ts", "vue": "vue",
    "json": "json", "svg": "svg",
}
_COMPONENT = re.compile(r"\.(jsx|tsx|vue)$", re.I)
# Dependencies that say a package.json project is built, not served as it is.
_BUILT_WITH = re.compile(r'"(vite|react|react-dom|vue|@vitejs/[\w-]+|preact|solid-js)"\s*:')
_UNSERVED = "language not served"
_IGNORED_LANGS = {"bash", "sh", "shell", "console", "text", "txt", "plaintext", "powershell", "cmd", "diff"}


@dataclass(frozen=True)
class ExtractedApp:
    """Files of a servable app recovered from an answer."""

    files: dict[str, str]
    entrypoint: str
    stack: Stack
    rejected: list[RejectedFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class NotAssessable:
    """The answer holds nothing that can be run; the reason is the candidate's, not ours."""

    code: ReasonCode
    detail: str


@dataclass
class _Block:
    lang: str
    name: str | None
    code: str
    truncated: bool


def decode_answer(raw: bytes) -> str | NotAssessable:
    """Decode an answer as text, refusing binary garbage."""
    if len(raw) > MAX_ANSWER_BYTES:
        return NotAssessable(ReasonCode.TOO_LARGE, f"answer is {len(raw)} bytes, over the {MAX_ANSWER_BYTES} limit")
    if b"\x00" in raw:
        return NotAssessable(ReasonCode.BINARY_ANSWER, "answer contains NUL bytes: binary data, not text")
    text = raw.decode("utf-8-sig", errors="replace")
    bad = text.count("\ufffd") + sum(1 for c in text if ord(c) < 32 and c not in "\n\r\t\f")
    if text and bad / len(text) > 0.01:
        return NotAssessable(ReasonCode.BINARY_ANSWER, f"{bad} of {len(text)} characters are not valid text")
    return text.replace("\r\n", "\n")


def extract_app(raw: bytes) -> ExtractedApp | NotAssessable:
    """Recover the app files from a raw model answer."""
    text = decode_answer(raw)
    if isinstance(text, NotAssessable):
        return text
    blocks = _fenced_blocks(text)
    if not blocks:
        if _HTML_HINT.search(text) or len(_TAG_LINES.findall(text)) >= 3:
            return _assemble([_Block("html", "index.html", text.strip(), truncated=False)], notes=["bare HTML answer"])
        return NotAssessable(ReasonCode.NO_CODE, "the answer contains no code block and no HTML")
    return _assemble(blocks, notes=[])


def _fenced_blocks(text: str) -> list[_Block]:
    blocks: list[_Block] = []
    pos = 0
    while True:
        opening = _FENCE.search(text, pos)
        if opening is None:
            return blocks
        ticks = opening["ticks"]
        info = opening["info"].strip()
        closing = re.compile(rf"^ {{0,3}}{re.escape(ticks[0])}{{{len(ticks)},}}[ \t]*$", re.MULTILINE)
        end = closing.search(text, opening.end() + 1)
        body_start = opening.end() + 1
        code = text[body_start:end.start()] if end else text[body_start:]
        lang, name = _parse_info(info)
        if name is None:
            name = _name_from_preceding_line(text[:opening.start()]) or _name_from_first_line(code)
        blocks.append(_Block(lang, name, code.rstrip("\n"), truncated=end is None))
        if end is None:
            return blocks
        pos = end.end()


def _parse_info(info: str) -> tuple[str, str | None]:
    tokens = info.replace(":", " ").split()
    lang = tokens[0].lower() if tokens else ""
    name = None
    for token in tokens[1:] if tokens else []:
        candidate = token.split("=", 1)[-1].strip("\"'")
        if _NAMEISH.fullmatch(candidate):
            name = candidate
    if name is None and _NAMEISH.fullmatch(lang):
        name, lang = lang, lang.rsplit(".", 1)[-1]
    return lang, name


def _name_from_preceding_line(before: str) -> str | None:
    lines = [ln for ln in before.rstrip().splitlines()[-2:] if ln.strip()]
    if not lines:
        return None
    line = lines[-1].strip().strip("#*_`>:- ").strip()
    line = re.sub(r"^(file(name)?|path)\s*[:=]?\s*", "", line, flags=re.I).strip("`*_ :")
    return line if _NAMEISH.fullmatch(line) else None


def _name_from_first_line(code: str) -> str | None:
    first = code.lstrip().split("\n", 1)[0].strip()
    m = re.fullmatch(r"(?:<!--|//|/\*)\s*(?:file(?:name)?\s*:\s*)?([\w./-]+)\s*(?:-->|\*/)?", first, re.I)
    return m.group(1) if m and _NAMEISH.fullmatch(m.group(1)) else None


def _safe_path(name: str) -> str | None:
    name = name.strip().replace("\\", "/")
    if not name or name.startswith("/") or re.match(r"^[A-Za-z]:", name) or "\x00" in name:
        return None
    parts = name.split("/")
    if any(p in ("..", "") for p in parts) or len(name) > 200:
        return None
    normal = posixpath.normpath(name).removeprefix("./")
    return normal if _FILENAME.fullmatch(normal) else None


def _assemble(blocks: list[_Block], notes: list[str]) -> ExtractedApp | NotAssessable:
    files: dict[str, str] = {}
    rejected: list[RejectedFile] = []
    unserved: list[str] = []
    loose: dict[str, list[str]] = {"css": [], "js": []}
    has_html = any(_kind(b) == "html" for b in blocks)
    for block in blocks:
        kind = _kind(block)
        if block.truncated:
            notes.append(f"code block {block.name or block.lang or '?'} is not closed: the answer looks truncated")
        if block.name is not None:
            path = _safe_path(block.name)
            if path is None:
                rejected.append(RejectedFile(name=block.name[:200], reason="unsafe or unsupported file name"))
                continue
        elif kind in ("css", "js") and has_html:
            loose[kind].append(block.code)
            continue
        elif kind in _LANG_DEFAULT:
            path = _LANG_DEFAULT[kind]
        else:
            if block.lang not in _IGNORED_LANGS:
                unserved.append(block.lang or "unlabelled")
                rejected.append(RejectedFile(name=f"<{block.lang or 'unlabelled'} block>", reason=_UNSERVED))
            continue
        if path in files:
            notes.append(f"{path} appears twice; the later block wins")
        files[path] = block.code
        if len(files) > MAX_FILES:
            return NotAssessable(ReasonCode.TOO_LARGE, f"answer has more than {MAX_FILES} files")
    if _needs_build(files):
        built = _built_app(files, rejected, notes)
        if built is not None:
            return built
    html_files = sorted(p for p in files if p.lower().endswith((".html", ".htm")))
    if not html_files:
        if files or unserved:
            found = sorted(files)[:5] + [f"<{lang} block>" for lang in unserved[:5]]
            return NotAssessable(ReasonCode.UNSUPPORTED_STACK,
                                 "no HTML entry point and no component to mount: "
                                 + ", ".join(found))
        if rejected:
            return NotAssessable(ReasonCode.UNSAFE_FILES_ONLY, "every file of the answer has an unsafe name: "
                                 + ", ".join(r.name for r in rejected[:5]))
        return NotAssessable(ReasonCode.NO_CODE, "the answer's code blocks contain no web code")
    entry = "index.html" if "index.html" in files else html_files[0]
    files[entry] = _attach_loose(files, entry, loose, notes)
    stack = Stack.HTML if len(files) == 1 else Stack.STATIC
    return ExtractedApp(files=files, entrypoint=entry, stack=stack, rejected=rejected, notes=notes)


def _needs_build(files: dict[str, str]) -> bool:
    """A project that declares a framework or a bundler, or component files with no page of their own."""
    if "package.json" in files:
        return bool(_BUILT_WITH.search(files["package.json"])) or any(_COMPONENT.search(p) for p in files)
    return any(_COMPONENT.search(p) for p in files) and not any(p.lower().endswith((".html", ".htm")) for p in files)


def _built_app(files: dict[str, str], rejected: list[RejectedFile], notes: list[str]) -> ExtractedApp | None:
    """A project (built from its ``index.html``) or a component (the one to mount is the entry point);
    ``None`` when there is neither a page nor a component to mount (the answer is then served as it is)."""
    if "package.json" in files and "index.html" in files:
        return ExtractedApp(files=files, entrypoint="index.html", stack=Stack.PROJECT, rejected=rejected, notes=notes)
    components = sorted((p for p in files if _COMPONENT.search(p)), key=lambda p: (p.count("/"), p))
    if not components:
        return None
    exported = [p for p in components if re.search(r"^\s*export\s+default\b", files[p], re.M) or p.endswith(".vue")]
    apps = [p for p in exported if p.rsplit("/", 1)[-1].split(".")[0].lower() == "app"]
    entry = (apps or exported or components)[0]
    if len(components) > 1:
        notes.append(f"{len(components)} component files; {entry} is mounted")
    # Without an index.html a project has no page of its own: its component is mounted on a generated one.
    return ExtractedApp(files=files, entrypoint=entry, stack=Stack.COMPONENT, rejected=rejected, notes=notes)


def _kind(block: _Block) -> str | None:
    """The served kind of a block: its language, or for an unlabelled block, what its content looks like."""
    kind = _LANG_ALIASES.get(block.lang)
    if kind is None and block.lang in ("", "plaintext", "text") and _HTML_HINT.search(block.code):
        return "html"
    if kind is None and block.name is not None:
        return _LANG_ALIASES.get(block.name.rsplit(".", 1)[-1].lower())
    return kind


def _attach_loose(files: dict[str, str], entry: str, loose: dict[str, list[str]], notes: list[str]) -> str:
    """Place unnamed CSS/JS blocks: under the name the HTML references, else inline."""
    html = files[entry]
    for kind, pattern, default_tag, anchor in (
        ("css", r'<link[^>]+href=["\']([^"\':]+\.css)["\']', "<style>\n{}\n</style>", "</head>"),
        ("js", r'<script[^>]+src=["\']([^"\':]+\.m?js)["\']', "<script>\n{}\n</script>", "</body>"),
    ):
        if not loose[kind]:
            continue
        referenced = {p for ref in re.findall(pattern, html, re.I) if (p := _safe_path(ref)) is not None}
        missing = sorted(referenced - files.keys())
        if len(missing) == 1:
            files_path = missing[0]
            files[files_path] = "\n\n".join(loose[kind])
            notes.append(f"unnamed {kind} block saved as {files_path}, which the HTML references")
            continue
        snippet = default_tag.format("\n\n".join(loose[kind]))
        idx = html.lower().rfind(anchor)
        html = html[:idx] + snippet + html[idx:] if idx >= 0 else html + snippet
        notes.append(f"unnamed {kind} block inlined into {entry}")
    return html
