"""A whole sweep with live generation, an LLM judge beside the heuristic one, and a budget cap.

Both models are scripted OpenAI-compatible servers on loopback (no model can run deterministically
here); the sweep, the browser, the runner, the ledger and the leaderboard are real.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster.cli import main
from cluster.store.results_log import ResultsLog
from evaluator.models import OutcomeStatus
from tests.llm.scripted_server import Turn, scripted_server
from tests.llm.test_llm_judge import STATIC, _dynamic, _phase

pytestmark = pytest.mark.browser

APP = """Here is the app.

```html
<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;padding:2rem;background:#f1f5f9}} button{{padding:.5rem 1rem}}</style></head>
<body><h1>{title}</h1><p id="n">0</p><button id="b">Add one</button>
<script>let n=0;document.getElementById('b').onclick=()=>{{n++;document.getElementById('n').textContent=n;}};</script>
</body></html>
```
"""


def _generator(body: dict[str, Any]) -> Turn:
    brief = body["messages"][-1]["content"]
    guided = "accessible" in brief
    return Turn(content=APP.format(title="Accessible counter" if guided else "Counter"), model="gen-a-0613")


def _judge(body: dict[str, Any]) -> Turn:
    if _phase(body) == "static_audit":
        return Turn(content=json.dumps({**STATIC, "code_problems": []}), model="judge-7b")
    return Turn(content=json.dumps(_dynamic(problems=[])), model="judge-7b")


def _sweep(root: Path, generator_url: str, judge_url: str, budget: float) -> Path:
    queries = {"queries": [
        {"id": f"q{i}", "brief": f"Build counter number {i}.", "domain": "tools", "leaf": "counters",
         "difficulty": "easy", "language": "en", "kind": "interactive_application"} for i in range(3)]}
    (root / "queries.yaml").write_text(yaml.safe_dump(queries))
    sweep = {
        "name": "live", "queries": "queries.yaml", "concurrency": 1, "budget_usd": budget,
        "sandbox": {"backend": "local"},
        "endpoints": {
            # Output at $1,000 per million tokens: a 1,000-token max_tokens reserves $1 per generation.
            "models": {"base_url": generator_url, "output_usd_per_mtok": 1000.0, "backoff_s": 0.01},
            "judge": {"base_url": judge_url, "input_usd_per_mtok": 0.5, "output_usd_per_mtok": 1.5, "backoff_s": 0.01},
        },
        "candidates": [{"id": "model-a", "provider": "openai", "endpoint": "models", "model": "gen-a",
                        "params": {"max_tokens": 1000}}],
        "variants": ["unguided", "little_guidance"],
        "agent": {"max_steps": 2},
        "judges": [{"name": "llm", "options": {"endpoint": "judge", "model": "judge-7b", "images": False}},
                   {"name": "heuristic"}],
    }
    path = root / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep))
    return path


def test_a_budget_stops_calls_at_the_cap_and_raising_it_continues(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    argv = ["--scheduler", "local", "--no-progress", "--run-dir", str(run_dir)]
    with scripted_server(responder=_generator) as gen, scripted_server(responder=_judge) as judge:
        sweep = _sweep(tmp_path, gen.url, judge.url, budget=1.2)
        assert main(["run", str(sweep), *argv]) == 3  # stopped at the budget
        first = "".join(capsys.readouterr())
        generated_first = len(gen.requests)
        deferred = json.loads((run_dir / "deferred.json").read_text())
        log = ResultsLog(run_dir / "results.jsonl").load()
        # $1.00 reserved per generation and ~$0.2 spent: two fit under $1.20, the third does not.
        assert generated_first == 2 and len(log) == 2 and len(deferred["runs"]) == 4
        assert "budget reached: 4 run(s)" in first and deferred["spent_usd"] <= 1.2

        sweep = _sweep(tmp_path, gen.url, judge.url, budget=100.0)
        assert main(["run", str(sweep), *argv]) == 0
        second = "".join(capsys.readouterr())
        assert "4 runs executed, 2 skipped" in second
        assert len(gen.requests) == generated_first + 4  # nothing generated twice
    outcomes = ResultsLog(run_dir / "results.jsonl").load()
    assert len(outcomes) == 6 and all(o.status is OutcomeStatus.JUDGED for o in outcomes.values())
    assert {o.variant for o in outcomes.values()} == {"unguided", "little_guidance"}
    any_outcome = next(iter(outcomes.values()))
    roles = {(u.role, u.model) for u in any_outcome.usage}
    assert roles == {("generation", "gen-a-0613"), ("judge", "judge-7b")}
    assert any_outcome.panel and any_outcome.panel[0].judge_label.startswith("HEURISTIC")
    assert set(any_outcome.disagreement) == {"functional", "aesthetic"}
    board = json.loads((run_dir / "leaderboard.json").read_text())
    [row] = board["rows"]
    total = sum(u.cost_usd for o in outcomes.values() for u in o.usage)
    assert row["cost_usd"] == pytest.approx(total, abs=1e-6) and row["tokens"] > 0
    assert {(u["role"], u["model"]) for u in board["usage"]} == roles
    assert "Model usage" in (run_dir / "leaderboard.md").read_text()
    # The guided variant's prompt carried the guidance.
    guided = [r for r in gen.requests if "accessible" in r["messages"][-1]["content"]]
    assert len(guided) == 3
