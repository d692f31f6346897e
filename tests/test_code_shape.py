"""The shape the code keeps: no function over ~60 lines, no signature over 8 parameters, in the Python
packages and in the sandbox's JavaScript. A long function is a design smell the layout review found
hiding defects (issue 18); this keeps new ones from creeping back."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 60
MAX_PARAMETERS = 8

pytestmark = pytest.mark.pure


def _python_functions() -> list[tuple[str, int, int]]:
    """(where, lines, parameters) of every function and method; ``self``/``cls`` are not counted."""
    found = []
    for path in sorted([*ROOT.joinpath("evaluator").rglob("*.py"), *ROOT.joinpath("cluster").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = node.args
                names = [*args.posonlyargs, *args.args, *args.kwonlyargs]
                count = len(names) + bool(args.vararg) + bool(args.kwarg)
                if names and names[0].arg in ("self", "cls"):
                    count -= 1
                assert node.end_lineno is not None
                found.append((f"{path.relative_to(ROOT)}:{node.lineno} {node.name}",
                              node.end_lineno - node.lineno + 1, count))
    return found


def test_no_python_function_is_long_or_takes_many_parameters() -> None:
    functions = _python_functions()
    assert len(functions) > 500  # the walk found the code
    long = [f"{where} ({lines} lines)" for where, lines, _ in functions if lines > MAX_LINES]
    wide = [f"{where} ({count} parameters)" for where, _, count in functions if count > MAX_PARAMETERS]
    assert not long and not wide, "split these: " + "; ".join(long + wide)


# A parser the repository already has (the CDN mirror serves @babel/standalone), so no new dependency.
_JS_LENGTHS = """
const Babel = require(process.argv[1]);
const fs = require("fs");
const out = [];
for (const file of process.argv.slice(2)) {
  const code = fs.readFileSync(file, "utf8");
  const { ast } = Babel.transform(code, {
    ast: true, code: false, babelrc: false, configFile: false, sourceType: "unambiguous",
    parserOpts: { allowReturnOutsideFunction: true },
  });
  const visit = (node) => {
    if (!node || typeof node.type !== "string") return;
    if (/Function|ObjectMethod|ClassMethod/.test(node.type) && node.loc) {
      const name = (node.id && node.id.name) || (node.key && node.key.name) || "(anonymous)";
      out.push([file + ":" + node.loc.start.line + " " + name, node.loc.end.line - node.loc.start.line + 1,
                node.params.length]);
    }
    for (const key of Object.keys(node)) {
      if (key === "loc" || key === "start" || key === "end") continue;
      const value = node[key];
      if (Array.isArray(value)) value.forEach(visit); else if (value && typeof value === "object") visit(value);
    }
  };
  visit(ast.program);
}
process.stdout.write(JSON.stringify(out));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node (make setup installs it)")
def test_no_sandbox_javascript_function_is_long_or_takes_many_parameters(mirror_root: Path) -> None:
    files = sorted(str(p.relative_to(ROOT)) for p in ROOT.joinpath("images", "sandbox").glob("**/*.*js")
                   if "node_modules" not in p.parts and "build" not in p.relative_to(ROOT / "images" / "sandbox").parts)
    assert "images/sandbox/sandboxd.js" in files
    babel = mirror_root / "node_modules" / "@babel" / "standalone"
    result = subprocess.run(["node", "-e", _JS_LENGTHS, str(babel), *files], cwd=ROOT, capture_output=True,
                            text=True, check=True, timeout=120)
    functions = json.loads(result.stdout)
    assert len(functions) > 50
    long = [f"{where} ({lines} lines)" for where, lines, _ in functions if lines > MAX_LINES]
    wide = [f"{where} ({count} parameters)" for where, _, count in functions if count > MAX_PARAMETERS]
    assert not long and not wide, "split these: " + "; ".join(long + wide)
