"""Open vocabularies: a scorer kind and an extraction step added from outside the package, by an
entry point of an installed distribution (a .dist-info folder on the path, what `pip install`
leaves) or by the decorators, and named in a task file as the built-in ones are."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
# the plugin of docs/extending.md, as written there, and a step that misbehaves
(PLUGIN,) = [b for b in re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)
             if b.startswith("# lao_plugin.py")]
PLUGIN += """

def broken(arg):
    return lambda text, options: 42  # neither an Extraction, a string nor None
"""

TASK = '''\
name: lao-sums
version: "1.0"
language: lo
data: {file: sums.jsonl}
fields: {id: id, public: {question: question}, gold: {answer: answer}}
prompt:
  user: "{{ question }}"
  max_tokens: 16
extract: {digits: [lao_digits, first_line]%s}
scorer: {kind: digits_equal%s}
'''

ROWS = [{"id": "a", "question": "ສອງບວກສອງ", "answer": 4}, {"id": "b", "question": "ສີ່ສິບບວກສອງ", "answer": 42},
        {"id": "c", "question": "ຫ້າບວກຫ້າ", "answer": 10}, {"id": "d", "question": "ສາມບວກສາມ", "answer": 6}]


def _install(tmp_path: Path, module: str = PLUGIN, entry_points: str | None = None) -> dict[str, str]:
    (tmp_path / "lao_plugin.py").write_text(module, encoding="utf-8")
    dist = tmp_path / "lao_plugin-0.1.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: lao-plugin\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(entry_points or (
        "[glotbench.scorers]\ndigits_equal = lao_plugin:DigitsEqual\n"
        "[glotbench.steps]\nlao_digits = lao_plugin:lao_digits\nbroken = lao_plugin:broken\n"), encoding="utf-8")
    (tmp_path / "sums.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}


def _glotbench(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """The console script in a fresh interpreter: the entry points are scanned as a user's are (a
    forked child would keep this process's tables)."""
    return subprocess.run([sys.executable, "-m", "glotbench", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=180)


def test_a_plugin_scorer_and_step_score_a_task_run(tmp_path, srv):
    env = _install(tmp_path)
    (tmp_path / "sums.yaml").write_text(TASK % ("", ", min_digits: 1"), encoding="utf-8")
    # Lao digits (read by the plugin's step), ASCII digits in prose, a wrong number, an empty reply
    srv.configure(answers={"ສອງບວກສອງ": "໔", "ສີ່ສິບບວກສອງ": "ຄຳຕອບ: 42", "ຫ້າບວກຫ້າ": "11", "ສາມບວກສາມ": " "})
    out = _glotbench(tmp_path, env, "run", "sums.yaml", "--model", srv.spec(), "--out", "r", "--no-progress",
                     "--no-cache")
    assert out.returncode == 0, out.stderr
    res = json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))
    overall = res["scores"]["overall"]
    assert overall["digits_equal"]["value"] == 2 / 4 and overall["no_answer_rate"]["value"] == 1 / 4
    from glotbench.signature import Signature

    sig = Signature.parse(res["signature"])
    assert sig.head == "glotbench:lao-sums"
    assert "lao_digits@v1>first_line" in res["signature"] and "digits_equal(min_digits=1)" in res["signature"]
    samples = [json.loads(x) for x in (tmp_path / "r" / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {s["id"]: s["answer"] for s in samples} == {"a": {"digits": "4"}, "b": {"digits": "ຄຳຕອບ: 42"},
                                                              "c": {"digits": "11"}, "d": None}
    # the plugin's scorer declared an answer kind: the extraction check reads it as a built-in's
    assert "extraction" in res.get("checks", {}), res.get("checks")


def test_glotbench_list_names_the_plugins_kinds_and_steps(tmp_path):
    out = _glotbench(tmp_path, _install(tmp_path), "list")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    at = lines.index("task scorer kinds from plugins (scorer: {kind: KIND}):")
    assert lines[at + 1].split() == ["digits_equal", "(plugin", "lao_plugin:DigitsEqual)"]  # not imported to list it
    at = lines.index("extraction steps from plugins (extract: {NAME: [STEP, ...]}):")
    assert [x.split()[0] for x in lines[at + 1:at + 3]] == ["broken", "lao_digits"]


def test_a_plugin_scorer_key_is_validated_by_its_own_model(tmp_path):
    env = _install(tmp_path)
    (tmp_path / "sums.yaml").write_text(TASK % ("", ", min_digits: many"), encoding="utf-8")
    out = _glotbench(tmp_path, env, "tasks", "check", "sums.yaml")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    (line,) = [x for x in out.stderr.splitlines() if x.startswith("error:")]
    assert "sums.yaml:10" in line and "digits_equal: min_digits" in line and "integer" in line, line


@pytest.mark.parametrize(("task", "said"), [
    (TASK.replace("digits_equal", "digits_equals") % ("", ""), "unknown scorer kind 'digits_equals'; kinds: option_accuracy"),
    (TASK.replace("lao_digits, ", "lao_digitz, ") % ("", ""), "unknown step 'lao_digitz'; steps: strip_think"),
])
def test_an_unknown_kind_or_step_is_one_line_naming_the_registered_ones(tmp_path, task, said):
    env = _install(tmp_path)
    (tmp_path / "sums.yaml").write_text(task, encoding="utf-8")
    out = _glotbench(tmp_path, env, "tasks", "check", "sums.yaml")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    (line,) = [x for x in out.stderr.splitlines() if x.startswith("error:")]
    assert said in line and ("digits_equal" in line if "kind" in said else "lao_digits" in line), line


def test_a_plugin_that_takes_a_built_in_name_is_refused_not_silently_used(tmp_path):
    env = _install(tmp_path, entry_points="[glotbench.steps]\nnumber = lao_plugin:lao_digits\n"
                                          "lao_digits = lao_plugin:lao_digits\n"
                                          "[glotbench.scorers]\nnumeric_match = lao_plugin:DigitsEqual\n")
    (tmp_path / "a.yaml").write_text(TASK.replace("lao_digits, first_line", "number").replace("digits_equal", "exact_match")
                                     % ("", ""), encoding="utf-8")
    out = _glotbench(tmp_path, env, "tasks", "check", "a.yaml")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "number is a built-in step and also registered by a plugin (lao_plugin:lao_digits)" in out.stderr
    (tmp_path / "b.yaml").write_text(TASK.replace("digits_equal", "numeric_match") % ("", ""), encoding="utf-8")
    out = _glotbench(tmp_path, env, "tasks", "check", "b.yaml")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "numeric_match is a built-in scorer kind and also registered by a plugin (lao_plugin:DigitsEqual)" in out.stderr


def test_a_plugin_that_fails_to_load_or_build_is_one_error_line(tmp_path):
    env = _install(tmp_path, entry_points="[glotbench.scorers]\ndigits_equal = lao_plugin:Missing\n"
                                          "other = lao_plugin:broken_scorer\n[glotbench.steps]\nlao_digits = lao_plugin:lao_digits\n")
    with open(tmp_path / "lao_plugin.py", "a", encoding="utf-8") as f:
        f.write("\n\nclass OtherSpec(Part):\n    kind: Literal['other']\n"
                "\n\nclass broken_scorer(DigitsEqual):\n    Spec = OtherSpec\n"
                "    def __init__(self, spec, lang):\n        raise RuntimeError('no model file')\n")
    (tmp_path / "a.yaml").write_text(TASK % ("", ""), encoding="utf-8")
    (tmp_path / "b.yaml").write_text(TASK.replace("digits_equal", "other") % ("", ""), encoding="utf-8")
    lines = []
    for name in ("a.yaml", "b.yaml"):
        out = _glotbench(tmp_path, env, "tasks", "check", name)
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        lines += [x for x in out.stderr.splitlines() if x.startswith("error:")]
    assert len(lines) == 2
    assert "plugin scorer digits_equal (lao_plugin:Missing) cannot be loaded" in lines[0], lines[0]
    assert "plugin scorer other (lao_plugin:broken_scorer) failed: RuntimeError: no model file" in lines[1], lines[1]


def test_a_plugin_step_that_misbehaves_is_that_reply_s_failure_and_the_run_goes_on(tmp_path, srv):
    env = _install(tmp_path)
    (tmp_path / "sums.yaml").write_text(TASK % (", other: [broken]", ""), encoding="utf-8")
    srv.configure(answers={"ສອງບວກສອງ": "໔", "ສີ່ສິບບວກສອງ": "42", "ຫ້າບວກຫ້າ": "10", "ສາມບວກສາມ": "6"})
    out = _glotbench(tmp_path, env, "run", "sums.yaml", "--model", srv.spec(), "--out", "r", "--no-progress",
                     "--no-cache", "--max-failure-rate", "1")
    assert "Traceback" not in out.stderr
    res = json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))
    assert res["counts"]["failures"].get("scorer_error") == 4, res["counts"]


def test_the_decorators_register_in_process(tmp_path):
    """`register_scorer` and `register_step` (re-exported by glotbench.registry): a module that
    registers them is imported, then a task names them."""
    (tmp_path / "sums.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8")
    (tmp_path / "sums.yaml").write_text(TASK.replace("lao_digits", "lao_digits_deco").replace("digits_equal", "digits_equal_deco")
                                        % ("", ""), encoding="utf-8")
    code = PLUGIN.replace('Literal["digits_equal"]', 'Literal["digits_equal_deco"]') + '''
from glotbench.registry import get_benchmark, register_scorer, register_step, scorers, steps
register_scorer("digits_equal_deco")(DigitsEqual)
register_step("lao_digits_deco", version="1")(lao_digits)
assert "digits_equal_deco" in scorers() and "lao_digits_deco" in steps()
bench = get_benchmark("sums.yaml")
item = bench.load(None)[1]
from glotbench.scoring import score_output
s = score_output(bench, item, "\\u0ed4\\u0ed2")
print(bench.answer_kind, s.answer["digits"], s.stats["digits:correct"], bench.scorer.signature())
'''
    (tmp_path / "run_deco.py").write_text(code, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "run_deco.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["number", "42", "1.0", "digits_equal(min_digits=1)"]


def test_every_built_in_kind_validates_to_its_own_model() -> None:
    """The scorer union's tags are the built-in kinds (tasks/spec.py); any other kind goes to the
    registered scorers, and a plain mapping without a kind is refused in one line."""
    from pydantic import TypeAdapter, ValidationError

    from glotbench.tasks import spec

    adapter = TypeAdapter(spec.Scorer)
    for kind, model in spec._BUILT_IN_KINDS.items():
        minimal = {"kind": kind, **({"scorer": "exact"} if kind == "inspect" else {}),
                   **({"pairwise": True} if kind == "rubric" else {})}
        assert type(adapter.validate_python(minimal)) is model
    with pytest.raises(ValidationError, match="unknown scorer kind 'nope'; kinds: option_accuracy"):
        adapter.validate_python({"kind": "nope"})
