"""Tests of evaluator.answer.extract: turning a raw, untrusted model answer into servable app files.

The answers below are shaped like real model output (prose around fenced blocks, file-name headings,
truncated answers, refusals). Every test checks what reaches the browser: the admitted files, the
entry point, the notes and the classified reason when nothing can be run.
"""

from __future__ import annotations

import random

import pytest

from evaluator.answer.extract import MAX_ANSWER_BYTES, ExtractedApp, NotAssessable, decode_answer, extract_app
from evaluator.models import ReasonCode, Stack

TODO_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <title>Todo List</title>
  <style>
    body { font-family: system-ui, sans-serif; background: #f4f4f9; }
    .done { text-decoration: line-through; color: #999; }
  </style>
</head>
<body>
  <h1>My Tasks</h1>
  <input id="task" placeholder="What needs to be done?">
  <button id="add">Add</button>
  <ul id="list"></ul>
  <script>
    document.getElementById('add').addEventListener('click', () => {
      const li = document.createElement('li');
      li.textContent = document.getElementById('task').value;
      document.getElementById('list').appendChild(li);
    });
  </script>
</body>
</html>"""

LINKED_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <title>Pomodoro Timer</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <main class="timer">
    <h1 id="clock">25:00</h1>
    <button id="start">Start</button>
    <button id="reset">Reset</button>
  </main>
  <script src="app.js"></script>
</body>
</html>"""

PLAIN_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <title>Unit Converter</title>
</head>
<body>
  <h1>Unit Converter</h1>
  <input id="km" type="number"> km = <span id="miles">0</span> miles
</body>
</html>"""

CSS = """.timer { display: grid; place-items: center; min-height: 100vh; }
button { padding: 0.5rem 1.25rem; border-radius: 6px; }"""

JS = """let left = 25 * 60;
document.getElementById('start').addEventListener('click', () => {
  setInterval(() => { left -= 1; }, 1000);
});"""


def _app(answer: str | bytes) -> ExtractedApp:
    result = extract_app(answer.encode("utf-8") if isinstance(answer, str) else answer)
    assert isinstance(result, ExtractedApp), f"expected an app, got {result!r}"
    return result


def _refused(answer: str | bytes) -> NotAssessable:
    result = extract_app(answer.encode("utf-8") if isinstance(answer, str) else answer)
    assert isinstance(result, NotAssessable), f"expected NotAssessable, got {result!r}"
    return result


def _assert_safe_paths(app: ExtractedApp) -> None:
    for path in app.files:
        assert not path.startswith("/"), path
        assert ".." not in path, path
        assert "\\" not in path, path
        assert ":" not in path, path
    assert app.entrypoint in app.files


# ------------------------------------------------------------------------------ single file


def test_single_html_fence_is_the_whole_app() -> None:
    answer = (
        "Here's a simple to-do app in a single HTML file. Save it as `index.html` and open it in a browser.\n\n"
        f"```html\n{TODO_HTML}\n```\n\n"
        "You can type a task and press **Add** to append it to the list."
    )
    app = _app(answer)
    assert app.files == {"index.html": TODO_HTML}
    assert app.entrypoint == "index.html"
    assert app.stack is Stack.HTML
    assert app.rejected == []
    assert not any("truncated" in n for n in app.notes)


def test_crlf_line_endings_are_normalised() -> None:
    answer = f"Here you go:\n\n```html\n{TODO_HTML}\n```\n".replace("\n", "\r\n")
    assert answer.count("\r\n") > 20
    app = _app(answer)
    assert app.files["index.html"] == TODO_HTML
    assert "\r" not in app.files["index.html"]


def test_tilde_fence_and_longer_backtick_fence() -> None:
    assert _app(f"~~~html\n{PLAIN_HTML}\n~~~\n").files == {"index.html": PLAIN_HTML}
    # A four-backtick fence is only closed by four or more backticks, so an inner ``` line stays code.
    inner = PLAIN_HTML.replace("</body>", "<pre>\n```\n</pre>\n</body>")
    assert _app(f"````html\n{inner}\n````\n").files == {"index.html": inner}


def test_bare_html_answer_without_fences() -> None:
    answer = f"\n\n{PLAIN_HTML}\n"
    app = _app(answer)
    assert app.files == {"index.html": PLAIN_HTML}
    assert app.entrypoint == "index.html"
    assert app.stack is Stack.HTML
    assert "bare HTML answer" in app.notes


def test_bare_html_fragment_with_several_tags_is_accepted() -> None:
    fragment = (
        '<div class="card">\n  <h2>Loan calculator</h2>\n  <p>Monthly payment</p>\n'
        "  <button>Compute</button>\n</div>"
    )
    app = _app(fragment)
    assert app.files == {"index.html": fragment}


# ------------------------------------------------------------------------------ several files


def test_multi_file_answer_with_heading_lines() -> None:
    answer = f"""I'll split the timer into three files.

**index.html**
```html
{LINKED_HTML}
```

### style.css
```css
{CSS}
```

`app.js`
```javascript
{JS}
```

Open `index.html` in your browser to start the timer.
"""
    app = _app(answer)
    assert app.files == {"index.html": LINKED_HTML, "style.css": CSS, "app.js": JS}
    assert app.entrypoint == "index.html"
    assert app.stack is Stack.STATIC
    assert app.rejected == []
    _assert_safe_paths(app)


def test_heading_with_file_prefix_and_blank_line_before_fence() -> None:
    answer = f"""**File: `index.html`**

```html
{LINKED_HTML}
```

#### File: style.css
```css
{CSS}
```
"""
    app = _app(answer)
    assert set(app.files) == {"index.html", "style.css"}
    assert app.files["style.css"] == CSS


@pytest.mark.parametrize(
    ("html_info", "css_info", "js_info"),
    [
        ('html title="index.html"', 'css title="style.css"', 'js title="app.js"'),
        ("html index.html", "css style.css", "js app.js"),
        ("html:index.html", "css:style.css", "javascript:app.js"),
        ("index.html", "style.css", "app.js"),
    ],
)
def test_file_names_in_the_info_string(html_info: str, css_info: str, js_info: str) -> None:
    answer = (
        "Project structure:\n\n"
        f"```{html_info}\n{LINKED_HTML}\n```\n\n"
        f"```{css_info}\n{CSS}\n```\n\n"
        f"```{js_info}\n{JS}\n```\n"
    )
    app = _app(answer)
    assert app.files == {"index.html": LINKED_HTML, "style.css": CSS, "app.js": JS}
    assert app.stack is Stack.STATIC


def test_subdirectory_names_are_kept() -> None:
    html = LINKED_HTML.replace('href="style.css"', 'href="css/main.css"').replace('src="app.js"', 'src="js/app.js"')
    answer = f"```html index.html\n{html}\n```\n```css css/main.css\n{CSS}\n```\n```js js/app.js\n{JS}\n```\n"
    app = _app(answer)
    assert set(app.files) == {"index.html", "css/main.css", "js/app.js"}


def test_entrypoint_prefers_index_html_otherwise_first_html_by_name() -> None:
    about = PLAIN_HTML.replace("Unit Converter", "About")
    app = _app(f"**about.html**\n```html\n{about}\n```\n\n**index.html**\n```html\n{PLAIN_HTML}\n```\n")
    assert app.entrypoint == "index.html"
    app = _app(f"**home.html**\n```html\n{PLAIN_HTML}\n```\n\n**about.html**\n```html\n{about}\n```\n")
    assert app.entrypoint == "about.html"
    assert set(app.files) == {"home.html", "about.html"}


def test_the_same_file_twice_keeps_the_later_block_and_says_so() -> None:
    fixed = PLAIN_HTML.replace("Unit Converter</h1>", "Unit Converter v2</h1>")
    answer = (
        f"First attempt:\n\n```html\n{PLAIN_HTML}\n```\n\nActually, here is a corrected version:\n\n"
        f"```html\n{fixed}\n```\n"
    )
    app = _app(answer)
    assert app.files == {"index.html": fixed}
    assert any("index.html appears twice" in n for n in app.notes)


def test_shell_blocks_are_ignored_without_rejection() -> None:
    answer = (
        "Install nothing, just serve it:\n\n```bash\npython3 -m http.server 8000\n```\n\n"
        f"```html\n{PLAIN_HTML}\n```\n"
    )
    app = _app(answer)
    assert app.files == {"index.html": PLAIN_HTML}
    assert app.rejected == []


# ------------------------------------------------------------------------------ unnamed CSS / JS


def test_unnamed_css_and_js_are_inlined_when_the_html_references_nothing() -> None:
    answer = (
        f"```html\n{PLAIN_HTML}\n```\n\nAnd some styling:\n\n```css\n{CSS}\n```\n\n"
        f"Plus the logic:\n\n```js\n{JS}\n```\n"
    )
    app = _app(answer)
    assert list(app.files) == ["index.html"]
    assert app.stack is Stack.HTML
    html = app.files["index.html"]
    assert f"<style>\n{CSS}\n</style>" in html
    assert f"<script>\n{JS}\n</script>" in html
    # CSS goes into the head, JS at the end of the body.
    assert html.index(CSS) < html.index("</head>") < html.index("<body>")
    assert html.index("<h1>") < html.index(JS) < html.index("</body>")
    assert "unnamed css block inlined into index.html" in app.notes
    assert "unnamed js block inlined into index.html" in app.notes


def test_unnamed_css_and_js_saved_under_the_one_missing_name_the_html_references() -> None:
    html = LINKED_HTML.replace('href="style.css"', 'href="./styles.css"').replace('src="app.js"', 'src="main.js"')
    answer = f"```html\n{html}\n```\n\n```css\n{CSS}\n```\n\n```javascript\n{JS}\n```\n"
    app = _app(answer)
    assert app.files == {"index.html": html, "styles.css": CSS, "main.js": JS}
    assert app.stack is Stack.STATIC
    assert "unnamed css block saved as styles.css, which the HTML references" in app.notes


def test_external_references_are_not_mistaken_for_missing_local_files() -> None:
    html = PLAIN_HTML.replace(
        "</head>",
        '<link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/water.css@2/out/water.css">\n</head>',
    )
    app = _app(f"```html\n{html}\n```\n```css\n{CSS}\n```\n")
    assert list(app.files) == ["index.html"]
    assert "<style>" in app.files["index.html"]


def test_unnamed_css_without_html_gets_a_default_name() -> None:
    result = extract_app(f"```css\n{CSS}\n```\n".encode())
    assert isinstance(result, NotAssessable)
    assert result.code is ReasonCode.UNSUPPORTED_STACK
    assert "style.css" in result.detail


# ------------------------------------------------------------------------------ truncation


def test_truncated_answer_keeps_the_code_and_says_truncated() -> None:
    cut = TODO_HTML[: TODO_HTML.index("document.getElementById('list')")]
    answer = f"Sure! Here is the complete app:\n\n```html\n{cut}"
    app = _app(answer)
    assert app.files["index.html"] == cut.rstrip("\n")
    assert app.entrypoint == "index.html"
    assert any("truncated" in n for n in app.notes)


def test_truncated_second_file_keeps_the_first_intact() -> None:
    answer = f"**index.html**\n```html\n{LINKED_HTML}\n```\n\n**app.js**\n```js\nlet left = 25 * 60;\nfunction tick("
    app = _app(answer)
    assert app.files["index.html"] == LINKED_HTML
    assert app.files["app.js"] == "let left = 25 * 60;\nfunction tick("
    truncation = [n for n in app.notes if "truncated" in n]
    assert len(truncation) == 1 and "app.js" in truncation[0]


# ------------------------------------------------------------------------------ no code


@pytest.mark.parametrize(
    "answer",
    [
        "I'm sorry, but I can't help with building that. If you'd like, I can explain how web pages work in general.",
        "To build a recipe page, start with a clear title, list the ingredients with quantities, then number the "
        "steps. Use a warm colour palette and large photos so the dishes look appetising.",
        "",
        "   \n\n  ",
    ],
    ids=["refusal", "prose", "empty", "whitespace"],
)
def test_answers_without_code_are_no_code(answer: str) -> None:
    assert _refused(answer).code is ReasonCode.NO_CODE


def test_answer_with_only_shell_commands_is_no_code() -> None:
    answer = (
        "Run this scaffold:\n\n```bash\nnpm create vite@latest my-app -- --template react\n"
        "cd my-app\nnpm run dev\n```\n"
    )
    assert _refused(answer).code is ReasonCode.NO_CODE


def test_prose_that_merely_names_html_tags_is_no_code() -> None:
    # No code at all: the model only describes which elements it would use. Regression: tag names
    # mentioned in prose once made the bare-HTML heuristic call this "an app".
    answer = (
        "I can't write the whole game for you, but here is the plan: draw the board on a <canvas> element, "
        "put the score in a <div> above it, and add a <button> underneath to restart the round."
    )
    assert _refused(answer).code is ReasonCode.NO_CODE


def test_unlabelled_fence_holding_a_full_html_document_is_an_app() -> None:
    # A plain ``` fence (no language) around a complete document. Regression: such a block was once
    # skipped, so the answer was classed NO_CODE although the same HTML unfenced was accepted.
    answer = f"Here is the converter:\n\n```\n{PLAIN_HTML}\n```\n"
    app = _app(answer)
    assert app.files == {"index.html": PLAIN_HTML}


def test_utf8_bom_before_the_first_fence_does_not_hide_the_code() -> None:
    # Regression: a kept BOM put the opening fence off the line start; the closing fence was then read
    # as an opening one and the HTML was lost (NO_CODE).
    answer = "\ufeff```html\n" + PLAIN_HTML + "\n```\n"
    app = _app(answer)
    assert app.files == {"index.html": PLAIN_HTML}


# ------------------------------------------------------------------------------ binary and size


def test_nul_bytes_are_binary() -> None:
    raw = b"```html\n<html><body>\x00\x00\x00</body></html>\n```\n"
    result = extract_app(raw)
    assert isinstance(result, NotAssessable)
    assert result.code is ReasonCode.BINARY_ANSWER
    assert "NUL" in result.detail


def test_random_bytes_are_binary() -> None:
    raw = random.Random(0).randbytes(4096)
    result = extract_app(raw)
    assert isinstance(result, NotAssessable)
    assert result.code is ReasonCode.BINARY_ANSWER


def test_random_bytes_without_nul_are_binary_too() -> None:
    raw = random.Random(0).randbytes(4096).replace(b"\x00", b"")
    assert b"\x00" not in raw
    result = decode_answer(raw)
    assert isinstance(result, NotAssessable)
    assert result.code is ReasonCode.BINARY_ANSWER
    assert "not valid text" in result.detail


def test_a_few_bad_bytes_in_long_text_are_tolerated() -> None:
    answer = f"Voil\xe0 the page:\n\n```html\n{PLAIN_HTML}\n```\n".encode("latin-1")
    app = _app(answer)
    assert app.files == {"index.html": PLAIN_HTML}


def test_decode_answer_returns_text_for_utf8() -> None:
    assert decode_answer("做一个计算器\r\n```html\n".encode()) == "做一个计算器\n```html\n"


def test_oversized_answer_is_refused() -> None:
    html = PLAIN_HTML.encode()
    raw = b"```html\n" + html + b"\n<!--" + b"x" * MAX_ANSWER_BYTES + b"-->\n```\n"
    assert len(raw) > MAX_ANSWER_BYTES
    result = extract_app(raw)
    assert isinstance(result, NotAssessable)
    assert result.code is ReasonCode.TOO_LARGE
    assert str(MAX_ANSWER_BYTES) in result.detail


def test_answer_of_exactly_the_limit_is_decoded() -> None:
    raw = b"a" * MAX_ANSWER_BYTES
    assert isinstance(decode_answer(raw), str)
    assert isinstance(decode_answer(raw + b"a"), NotAssessable)


# ------------------------------------------------------------------------------ unsafe names

UNSAFE_NAMES = [
    "../evil.html",
    "../../etc/passwd",
    "/etc/x.html",
    "C:\\x.html",
    "a/../../b.html",
    "..\\..\\evil.html",
    "sub\\..\\..\\x.html",
    "~/evil.html",
    ".hidden.html",
    "a//b.html",
]

PLACEMENTS = {
    "bold-heading": "**{name}**\n```html\n{code}\n```\n",
    "markdown-heading": "### {name}\n```html\n{code}\n```\n",
    "backticks": "`{name}`\n```html\n{code}\n```\n",
    "info-string": "```html {name}\n{code}\n```\n",
    "info-title": '```html title="{name}"\n{code}\n```\n',
    "first-line-comment": "```html\n<!-- {name} -->\n{code}\n```\n",
}


@pytest.mark.parametrize("name", UNSAFE_NAMES)
@pytest.mark.parametrize("placement", sorted(PLACEMENTS))
def test_unsafe_names_are_never_admitted(name: str, placement: str) -> None:
    answer = "Here is the page:\n\n" + PLACEMENTS[placement].format(name=name, code=PLAIN_HTML)
    result = extract_app(answer.encode())
    if isinstance(result, NotAssessable):
        assert result.code is ReasonCode.UNSAFE_FILES_ONLY
        return
    _assert_safe_paths(result)
    assert name not in result.files
    assert name.replace("\\", "/") not in result.files
    assert all("etc" not in path and "evil" not in path for path in result.files)


@pytest.mark.parametrize(
    "name", ["../evil.html", "/etc/x.html", "a/../../b.html", "..\\..\\evil.html", "sub\\..\\..\\x.html"]
)
def test_unsafe_name_alone_is_unsafe_files_only(name: str) -> None:
    result = _refused(f"**{name}**\n```html\n{PLAIN_HTML}\n```\n")
    assert result.code is ReasonCode.UNSAFE_FILES_ONLY
    assert name in result.detail


def test_windows_drive_in_info_string_is_unsafe_files_only() -> None:
    result = _refused(f"```html C:\\x.html\n{PLAIN_HTML}\n```\n")
    assert result.code is ReasonCode.UNSAFE_FILES_ONLY


def test_unsafe_files_are_listed_in_rejected_next_to_safe_ones() -> None:
    answer = f"""**index.html**
```html
{LINKED_HTML}
```

**../evil.html**
```html
<script>fetch('/steal')</script>
```

```js title="/etc/x.js"
console.log('pwned');
```

**a/../../b.css**
```css
body {{ display: none; }}
```

### style.css
```css
{CSS}
```
"""
    app = _app(answer)
    assert set(app.files) == {"index.html", "style.css"}
    assert [r.name for r in app.rejected] == ["../evil.html", "/etc/x.js", "a/../../b.css"]
    assert all(r.reason for r in app.rejected)
    _assert_safe_paths(app)


def test_backslash_name_is_admitted_only_as_a_posix_path() -> None:
    html = LINKED_HTML.replace("app.js", "js/app.js")
    answer = f"**index.html**\n```html\n{html}\n```\n\n**js\\app.js**\n```js\n{JS}\n```\n"
    app = _app(answer)
    assert "js\\app.js" not in app.files
    _assert_safe_paths(app)


def test_html_referencing_a_traversal_path_does_not_create_it() -> None:
    html = LINKED_HTML.replace('href="style.css"', 'href="../style.css"')
    app = _app(f"```html\n{html}\n```\n```css\n{CSS}\n```\n")
    assert list(app.files) == ["index.html"]
    assert CSS in app.files["index.html"]
    _assert_safe_paths(app)


# ------------------------------------------------------------------------------ built stacks


@pytest.mark.parametrize(
    "answer",
    [
        "Here's a React component:\n\n```jsx\nexport default function App() {\n  return <h1>Hello</h1>;\n}\n```\n",
        "**App.jsx**\n```jsx\nexport default function App() {\n  return <h1>Hello</h1>;\n}\n```\n",
        "```tsx\nexport default function App(): JSX.Element {\n  return <h1>Hello</h1>;\n}\n```\n",
        # Regression: a named .tsx file was once taken for an unsafe name (UNSAFE_FILES_ONLY).
        "**App.tsx**\n```tsx\nexport default function App(): JSX.Element {\n  return <h1>Hello</h1>;\n}\n```\n",
    ],
    ids=["jsx", "named-jsx", "tsx", "named-tsx"],
)
def test_component_only_answer_is_a_component_to_build(answer: str) -> None:
    app = _app(answer)
    assert app.stack is Stack.COMPONENT
    assert app.entrypoint in ("App.jsx", "App.tsx")


def test_vue_sfc_is_a_component_named_vue() -> None:
    app = _app("```vue\n<template><h1>{{ title }}</h1></template>\n"
               "<script setup>\nconst title = 'Hi'\n</script>\n```\n")
    assert (app.stack, app.entrypoint, list(app.files)) == (Stack.COMPONENT, "App.vue", ["App.vue"])


def test_the_component_to_mount_is_the_default_export_named_app() -> None:
    app = _app("**Button.jsx**\n```jsx\nexport default function Button() { return <button/>; }\n```\n"
               "**App.jsx**\n```jsx\nimport Button from './Button';\n"
               "export default function App() { return <Button/>; }\n```\n"
               "**utils.jsx**\n```jsx\nexport const x = 1;\n```\n")
    assert app.entrypoint == "App.jsx"
    assert any("3 component files" in note for note in app.notes)


def test_a_vite_project_is_built_from_its_index_html() -> None:
    app = _app('**package.json**\n```json\n{"scripts": {"dev": "vite"}, "devDependencies": {"vite": "^5.0.0"}}\n```\n'
               '**index.html**\n```html\n<!doctype html><div id="root"></div>'
               '<script type="module" src="/src/main.js"></script>\n```\n'
               "**src/main.js**\n```js\ndocument.getElementById('root').textContent = 'hi';\n```\n")
    assert (app.stack, app.entrypoint) == (Stack.PROJECT, "index.html")


def test_a_framework_project_with_nothing_to_mount_is_unsupported_not_a_crash() -> None:
    # Create React App's layout: src/App.js, with neither a root index.html nor a .jsx file.
    result = _refused('**package.json**\n```json\n{"dependencies": {"react": "^18.2.0"}}\n```\n'
                      "**src/App.js**\n```js\nexport default function App() { return null; }\n```\n")
    assert result.code is ReasonCode.UNSUPPORTED_STACK


def test_a_project_without_a_page_mounts_its_component() -> None:
    app = _app('**package.json**\n```json\n{"dependencies": {"react": "^18.2.0"}}\n```\n'
               "**src/App.jsx**\n```jsx\nexport default function App() { return <p/>; }\n```\n")
    assert (app.stack, app.entrypoint) == (Stack.COMPONENT, "src/App.jsx")


def test_a_package_json_without_a_framework_stays_static() -> None:
    # A dev-server script alone does not make a build (the fork-bomb fixture is such an app).
    app = _app('**package.json**\n```json\n{"scripts": {"dev": "node server.js"}}\n```\n'
               "**index.html**\n```html\n<!doctype html><h1>hi</h1>\n```\n")
    assert app.stack is Stack.STATIC


def test_python_only_answer_is_not_called_unsafe() -> None:
    # A Flask server instead of a page: the code is not servable, but nothing in it is an unsafe file
    # name. Regression: the "<python block>" placeholder in `rejected` once made this UNSAFE_FILES_ONLY.
    answer = (
        "Here's a small Flask app:\n\n```python\nfrom flask import Flask\napp = Flask(__name__)\n\n"
        "@app.route('/')\ndef home():\n    return '<h1>Hello</h1>'\n```\n"
    )
    assert _refused(answer).code is not ReasonCode.UNSAFE_FILES_ONLY


def test_unserved_language_next_to_html_is_recorded_as_rejected() -> None:
    answer = f"```html\n{PLAIN_HTML}\n```\n\nOptional backend:\n\n```python\nprint('hi')\n```\n"
    app = _app(answer)
    assert list(app.files) == ["index.html"]
    assert [r.name for r in app.rejected] == ["<python block>"]
