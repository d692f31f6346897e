"""Tests of sweep loading (cluster.sweep.spec.load_sweep) and the CLI's handling of bad input.

Every invalid sweep must raise :class:`~evaluator.errors.ConfigError` with a message that says what
to fix; the CLI must turn it into one ``error:`` line and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
import random
import textwrap
from pathlib import Path

import pytest

from cluster.cli import main
from cluster.cli.commands import RECORDS
from cluster.cli.tools import SCHEMAS
from cluster.sweep.spec import Sweep, load_sweep
from evaluator.errors import ConfigError
from evaluator.judges import create_judge
from evaluator.models import JudgeConfig, Kind, LanguageGroup

QUERIES = """\
version: 1
queries:
  - id: game-tictactoe
    brief: Build a two-player tic-tac-toe game with a turn indicator and a restart button.
    domain: games
    leaf: board_games
    difficulty: easy
    language: en
    kind: interactive_application
    checklist: [3x3 board, turn indicator, restart button]
  - id: tool-calculator
    brief: 做一个简单的计算器，支持加减乘除和清除。
    domain: tools
    leaf: calculators
    difficulty: medium
    language: zh
    kind: interactive_application
  - id: land-cafe
    brief: Crea una página de presentación para una cafetería con menú, horario y mapa.
    domain: landing_pages
    leaf: restaurants
    difficulty: easy
    language: es
    kind: static_presentation
"""

SWEEP = """\
name: unit-sweep
queries: queries/mini.yaml
candidates:
  - id: careful
    answers: answers/careful
  - id: sloppy
    answers: answers/sloppy
    params: {temperature: 0.7}
agent:
  policy: explorer
  max_steps: 6
judge:
  name: heuristic
concurrency: 2
"""


def _write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A directory with a query file and two candidates' answer directories (sweep file not written)."""
    _write(tmp_path / "queries" / "mini.yaml", QUERIES)
    (tmp_path / "answers" / "careful").mkdir(parents=True)
    (tmp_path / "answers" / "sloppy").mkdir(parents=True)
    return tmp_path


def _config_error(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_sweep(path)
    return str(info.value)


# ------------------------------------------------------------------------------ valid sweeps


def test_valid_sweep_loads(project: Path) -> None:
    sweep = load_sweep(_write(project / "sweep.yaml", SWEEP))
    assert isinstance(sweep, Sweep)
    assert sweep.spec.name == "unit-sweep"
    assert [c.id for c in sweep.spec.candidates] == ["careful", "sloppy"]
    assert sweep.spec.agent.max_steps == 6
    assert [q.id for q in sweep.queries] == ["game-tictactoe", "tool-calculator", "land-cafe"]
    assert [q.language_group for q in sweep.queries] == [
        LanguageGroup.ENGLISH, LanguageGroup.CHINESE, LanguageGroup.OTHER]
    assert sweep.queries[2].kind is Kind.STATIC_PRESENTATION
    assert sweep.path == (project / "sweep.yaml").resolve()
    assert sweep.size == 6


def test_plan_is_candidates_times_queries_with_distinct_keys(project: Path) -> None:
    """Candidates interleaved, query by query: no candidate's runs come as one block that could delay or stop
    the others (a hostile candidate's, or an outage during it)."""
    sweep = load_sweep(_write(project / "sweep.yaml", SWEEP))
    runs = list(sweep.plan())
    assert len(runs) == sweep.size == 6
    assert [(r.candidate.id, r.query.id) for r in runs] == [
        (c, q) for q in ("game-tictactoe", "tool-calculator", "land-cafe") for c in ("careful", "sloppy")
    ]
    assert len({r.run_key for r in runs}) == 6
    assert all(r.run_key.startswith("run-") for r in runs)
    assert all(r.agent == sweep.spec.agent and r.judge == sweep.spec.judge for r in runs)
    for run in runs:
        expected = (project / "answers" / run.candidate.id).resolve()
        assert Path(run.answers_dir) == expected
        assert Path(run.answers_dir).is_absolute()


def test_plan_is_lazy(project: Path) -> None:
    sweep = load_sweep(_write(project / "sweep.yaml", SWEEP))
    plan = sweep.plan()
    assert iter(plan) is plan
    assert next(plan).query.id == "game-tictactoe"


def test_run_keys_are_identical_when_loaded_twice_and_from_another_cwd(
    project: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(project / "sweep.yaml", SWEEP)
    first = [r.run_key for r in load_sweep(path).plan()]
    assert first == [r.run_key for r in load_sweep(path).plan()]
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    again = load_sweep(path)
    assert [r.run_key for r in again.plan()] == first
    assert Path(next(again.plan()).answers_dir) == (project / "answers" / "careful").resolve()


def test_run_keys_change_with_the_agent_config(project: Path) -> None:
    first = [r.run_key for r in load_sweep(_write(project / "sweep.yaml", SWEEP)).plan()]
    changed = [r.run_key for r in load_sweep(_write(project / "sweep.yaml", SWEEP.replace("max_steps: 6",
                                                                                           "max_steps: 7"))).plan()]
    assert not set(first) & set(changed)


def test_a_replayed_answer_edited_added_or_removed_is_a_new_run(project: Path) -> None:
    """A replay candidate's run is keyed by its answer's bytes: an edited answer is never kept with the old
    answer's verdict (a re-run once said "102 of 102 runs already have an outcome" after answers were edited)."""
    path = _write(project / "sweep.yaml", SWEEP)
    answer = project / "answers" / "careful" / "game-tictactoe.md"

    def keys() -> dict[tuple[str, str], str]:
        return {(r.candidate.id, r.query.id): r.run_key for r in load_sweep(path).plan()}

    missing = keys()
    answer.write_text("```html\n<p>v1</p>\n```\n", encoding="utf-8")
    first = keys()
    answer.write_text("```html\n<p>v2</p>\n```\n", encoding="utf-8")
    edited = keys()
    answer.unlink()
    changed = {cell for cell in first if first[cell] != missing[cell]}
    assert changed == {("careful", "game-tictactoe")}
    assert {cell for cell in first if first[cell] != edited[cell]} == changed
    assert keys() == missing  # the same bytes (here: none) give the same key


def test_only_queries_restricts_the_plan(project: Path) -> None:
    sweep = load_sweep(_write(project / "sweep.yaml", SWEEP + "only_queries: [land-cafe]\n"))
    assert [q.id for q in sweep.queries] == ["land-cafe"]
    assert sweep.size == 2


def test_defaults_apply(project: Path) -> None:
    minimal = "name: tiny\nqueries: queries/mini.yaml\ncandidates:\n  - id: careful\n    answers: answers/careful\n"
    sweep = load_sweep(_write(project / "sweep.yaml", minimal))
    assert sweep.spec.agent.policy == "explorer"
    assert sweep.spec.judge.name == "heuristic"
    assert sweep.spec.max_attempts == 2


# ------------------------------------------------------------------------------ invalid sweeps


def test_malformed_yaml_mentions_the_line(project: Path) -> None:
    broken = SWEEP.replace("  - id: sloppy\n", "  - id: sloppy\n   answers: [answers/sloppy\n")
    message = _config_error(_write(project / "sweep.yaml", broken))
    assert "not valid YAML" in message
    assert "line" in message
    assert "sweep.yaml" in message


def test_unknown_top_level_field(project: Path) -> None:
    message = _config_error(_write(project / "sweep.yaml", SWEEP + "concurency: 4\n"))
    assert "concurency: unknown field" in message


def test_unknown_candidate_field(project: Path) -> None:
    message = _config_error(_write(project / "sweep.yaml", SWEEP.replace(
        "    answers: answers/sloppy\n", "    answers: answers/sloppy\n    modle: gpt-x\n")))
    assert "candidates.1.modle: unknown field" in message


def test_unknown_agent_field(project: Path) -> None:
    message = _config_error(_write(project / "sweep.yaml", SWEEP.replace("max_steps: 6", "max_step: 6")))
    assert "agent.max_step: unknown field" in message


def test_a_replay_candidate_without_answers_is_a_clear_error(project: Path) -> None:
    message = _config_error(_write(project / "sweep.yaml", SWEEP.replace("    answers: answers/careful\n", "")))
    assert "candidates.0: " in message and "a replay candidate needs `answers:`" in message


@pytest.mark.parametrize(
    ("remove", "field"),
    [("name: unit-sweep\n", "name"), ("queries: queries/mini.yaml\n", "queries")],
)
def test_missing_required_field(project: Path, remove: str, field: str) -> None:
    assert remove in SWEEP
    message = _config_error(_write(project / "sweep.yaml", SWEEP.replace(remove, "")))
    assert f"{field}: required field is missing" in message


def test_invalid_value_is_explained(project: Path) -> None:
    message = _config_error(_write(project / "sweep.yaml", SWEEP.replace("concurrency: 2", "concurrency: 0")))
    assert "concurrency:" in message
    message = _config_error(_write(project / "sweep.yaml", SWEEP.replace("name: unit-sweep", "name: ../escape")))
    assert "name:" in message


def test_sweep_file_missing(tmp_path: Path) -> None:
    message = _config_error(tmp_path / "nope.yaml")
    assert "sweep file" in message and "nope.yaml" in message and "does not exist" in message


def test_sweep_path_is_a_directory(tmp_path: Path) -> None:
    assert "does not exist" in _config_error(tmp_path)


def test_query_file_missing(project: Path) -> None:
    message = _config_error(_write(project / "sweep.yaml", SWEEP.replace("queries/mini.yaml", "queries/gone.yaml")))
    assert "query file" in message and "gone.yaml" in message and "does not exist" in message


def test_invalid_query_file_names_the_query_file(project: Path) -> None:
    _write(project / "queries" / "mini.yaml", QUERIES.replace("difficulty: medium", "difficulty: brutal"))
    message = _config_error(_write(project / "sweep.yaml", SWEEP))
    assert "mini.yaml" in message and "queries.1.difficulty" in message


def test_query_file_with_duplicate_ids(project: Path) -> None:
    _write(project / "queries" / "mini.yaml", QUERIES.replace("id: land-cafe", "id: game-tictactoe"))
    message = _config_error(_write(project / "sweep.yaml", SWEEP))
    assert "game-tictactoe" in message and "twice" in message


def test_answers_directory_missing_names_the_candidate(project: Path) -> None:
    message = _config_error(_write(project / "sweep.yaml", SWEEP.replace("answers/sloppy", "answers/slopy")))
    assert "'sloppy'" in message
    assert "slopy" in message and "does not exist" in message


def test_duplicate_candidate_ids(project: Path) -> None:
    message = _config_error(_write(project / "sweep.yaml", SWEEP.replace("id: sloppy", "id: careful")))
    assert "unique" in message and "careful" in message


def test_only_queries_with_unknown_id(project: Path) -> None:
    message = _config_error(_write(project / "sweep.yaml", SWEEP + "only_queries: [land-cafe, game-chess]\n"))
    assert "game-chess" in message
    assert "land-cafe" not in message.split("unknown query ids:")[-1]


@pytest.mark.parametrize(
    "text",
    ["- name: unit-sweep\n- queries: queries/mini.yaml\n", "just a string\n", "", "42\n"],
    ids=["list", "scalar", "empty", "number"],
)
def test_sweep_that_is_not_a_mapping(project: Path, text: str) -> None:
    assert "must be a YAML mapping" in _config_error(_write(project / "sweep.yaml", text))


def test_binary_garbage_sweep(project: Path) -> None:
    garbage = random.Random(0).randbytes(512)
    message = _config_error(_write(project / "sweep.yaml", garbage))
    assert "sweep.yaml" in message
    assert "UTF-8" in message


def test_control_characters_in_sweep(project: Path) -> None:
    message = _config_error(_write(project / "sweep.yaml", b"name: x\x00\x01\nqueries: q\n"))
    assert "sweep.yaml" in message and "not valid YAML" in message


# ------------------------------------------------------------------------------ CLI


def test_cli_run_with_bad_sweep_prints_error_and_returns_2(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)  # nothing may be written outside tmp
    bad = _write(project / "sweep.yaml", SWEEP + "colour: red\n")
    assert main(["run", str(bad)]) == 2
    captured = capsys.readouterr()
    lines = [ln for ln in captured.err.splitlines() if ln.strip()]
    assert lines and lines[0].startswith("error:")
    assert "colour" in captured.err and "unknown field" in captured.err
    assert "Traceback" not in captured.err
    assert captured.out == ""
    assert not (project / "runs").exists()


def test_cli_run_with_missing_sweep_returns_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tmp_path / "missing.yaml")]) == 2
    assert capsys.readouterr().err.startswith("error:")


def test_cli_error_message_is_printed_verbatim(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Regression: errors printed through rich markup lost "[a-z]" from the language pattern, and a
    # "[/x]" in a message raised rich.errors.MarkupError instead of printing "error:".
    monkeypatch.setenv("COLUMNS", "400")
    _write(project / "queries" / "mini.yaml", QUERIES.replace("language: en", "language: EN"))
    path = _write(project / "sweep.yaml", SWEEP)
    expected = _config_error(path)
    assert "[a-z]" in expected
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "[a-z]" in err
    assert expected.splitlines()[-1].strip() in err


def test_cli_schema_of_one_record(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "Verdict"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["title"] == "Verdict"
    assert {"functional", "aesthetic", "attributions"} <= set(schema["properties"])
    assert schema["additionalProperties"] is False


def test_cli_schema_prints_every_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    schemas = json.loads(capsys.readouterr().out)
    assert set(schemas) == {*SCHEMAS, "PluginOptions"} == {*RECORDS, "PluginOptions"}
    assert {"SweepSpec", "QuerySet", "Query", "Artifact", "Verdict", "Outcome"} <= set(schemas)
    for name, schema in schemas.items():
        assert schema["title"] == name


def test_cli_schema_shows_each_plugins_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "PluginOptions"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert {"heuristic", "llm"} <= set(schema["judges"]) and {"explorer", "llm"} <= set(schema["agent_policies"])
    llm = schema["judges"]["llm"]
    assert set(llm["required"]) == {"endpoint", "model"} and llm["additionalProperties"] is False
    assert llm["properties"]["keyframes"]["maximum"] == 32


@pytest.mark.parametrize(("edit", "expected"), [
    (("name: heuristic", "name: heuristc"), "unknown judge 'heuristc'. Did you mean 'heuristic'?"),
    (("name: heuristic", "name: heuristic\n  options: {rubrc: heuristic-v1}"),
     "unknown option 'rubrc'; did you mean 'rubric'?"),
    (("name: heuristic", "name: llm\n  options: {endpoint: judge, model: m, temprature: 0.2}"),
     "unknown option 'temprature'; did you mean 'temperature'?"),
    (("name: heuristic", "name: llm\n  options: {endpoint: judge, model: m, keyframes: 99}"),
     "option 'keyframes': Input should be less than or equal to 32"),
    (("name: heuristic", "name: llm\n  options: {model: m}"), "option 'endpoint': Field required"),
])
def test_a_wrong_judge_or_option_is_named_when_the_sweep_loads(project: Path, edit: tuple[str, str],
                                                                expected: str) -> None:
    text = SWEEP.replace(*edit).replace("concurrency: 2", "concurrency: 2\nendpoints:\n  judge: "
                                                          "{base_url: 'http://127.0.0.1:9/v1'}")
    message = _config_error(_write(project / "sweep.yaml", text))
    assert expected in message and "judges[0]" in message, message


def test_a_wrong_agent_option_is_named_when_the_sweep_loads(project: Path) -> None:
    text = SWEEP.replace("max_steps: 6", "max_steps: 6\n  options: {depth: 3}")
    message = _config_error(_write(project / "sweep.yaml", text))
    assert "agent: agent policy 'explorer': unknown option 'depth'" in message, message


def test_a_judge_is_built_from_its_options_as_checked() -> None:
    """What passes the check is what the judge gets: "false" is False, "8" is 8, a model may be named 7."""
    judge = create_judge(JudgeConfig(name="llm", options={"endpoint": "j", "model": 7, "keyframes": "4",
                                                          "images": "false"}))
    assert ":7:" in judge.version and ":k=4:" in judge.version and ":img=0:" in judge.version, judge.version
    with pytest.raises(ConfigError, match="option 'images'"):
        create_judge(JudgeConfig(name="llm", options={"endpoint": "j", "model": "m", "images": "maybe"}))


def test_options_enter_the_keys_as_given(project: Path) -> None:
    text = SWEEP.replace("name: heuristic", "name: heuristic\n  options: {rubric: heuristic-v3}")
    given = load_sweep(_write(project / "sweep.yaml", text))
    assert given.spec.judge.options == {"rubric": "heuristic-v3"}
    plain = load_sweep(_write(project / "plain.yaml", SWEEP))
    assert plain.spec.judge.options == {}
    assert [r.run_key for r in given.plan()] != [r.run_key for r in plain.plan()]  # as before typed options


def test_cli_schema_rejects_unknown_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["schema", "Nope"])
    assert info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_fast_planning_gives_the_same_keys_as_make_run_spec() -> None:
    """Sweep.plan() serialises each model once; its keys must equal the one-run path's."""
    from evaluator.judges import create_judge
    from evaluator.run import make_run_spec

    root = Path(__file__).resolve().parents[2]
    sweep = load_sweep(root / "fixtures" / "sweeps" / "demo.yaml")
    version = create_judge(sweep.spec.judge).version
    planned = list(sweep.plan())
    assert len(planned) == sweep.size
    for spec in planned[::7]:
        again = make_run_spec(candidate=spec.candidate, query=spec.query, agent=spec.agent, judge=spec.judge,
                              judge_version=version, answers_dir=Path(spec.answers_dir))
        assert again == spec


def test_a_pairwise_stage_keeps_every_run_key_and_a_wrong_one_is_refused_with_why(tmp_path: Path) -> None:
    demo = (Path(__file__).resolve().parents[2] / "fixtures" / "sweeps" / "demo.yaml").read_text(encoding="utf-8")
    without = demo.split("\npairwise:")[0].replace("../", str(Path(__file__).resolve().parents[2] / "fixtures") + "/")
    (tmp_path / "plain.yaml").write_text(without, encoding="utf-8")
    (tmp_path / "paired.yaml").write_text(
        without + "\npairwise: {judge: {name: heuristic}, pairs: adjacent, known_order: [careful, broken]}\n",
        encoding="utf-8")
    plain, paired = load_sweep(tmp_path / "plain.yaml"), load_sweep(tmp_path / "paired.yaml")
    assert plain.spec.pairwise is None and paired.spec.pairwise is not None
    assert [r.run_key for r in plain.plan()] == [r.run_key for r in paired.plan()]
    for wrong, message in (("pairs: some", "all, adjacent, sample:N"), ("known_order: [nobody]", "nobody"),
                           ("judge: {name: llm, options: {endpoint: nowhere, model: m}}", "nowhere"),
                           ("judge: {name: heuristik}", "Did you mean 'heuristic'"),
                           ("pairs: twins", "evalgrid calibrate"), ("candidates: [careful]", "two candidates or more")):
        (tmp_path / "wrong.yaml").write_text(without + f"\npairwise: {{{wrong}}}\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=message):
            load_sweep(tmp_path / "wrong.yaml")
