"""Inspect's eval.yaml as a glotbench task (glotbench.tasks.inspect_yaml): run from the loopback hub
in the hub's layout (`hf/ORG/NAME/TASK@SHA`), prompts and scores as inspect_ai 0.3.285 makes them,
refusals one line each; and the rules of glotbench.tasks.inspect_rules against inspect's own functions
(the test extra `inspect-ai`) on many replies."""

from __future__ import annotations

import json
import re

import pytest

from conftest import cli
from test_tasks_hub import serve_hub
from test_tasks_inspect_roundtrip import ROWS as EXPORTED  # the exportable library tasks' fixture rows

SHA = "2222222222222222222222222222222222222222"
ROWS = [
    {"question": "ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ?", "choices": ["ວຽງຈັນ", "ຫຼວງພະບາງ", "ປາກເຊ"], "answer": 0, "subject": "ພູມສາດ",
     "city": "Vientiane"},
    {"question": "ແມ່ນ້ຳໃຫຍ່ທີ່ສຸດ?", "choices": ["ນ້ຳງື່ມ", "ຂອງ", "ນ້ຳອູ"], "answer": 1, "subject": "ພູມສາດ",
     "city": "the Mekong"},
    {"question": "ສອງ ບວກ ສອງ?", "choices": ["3", "5", "4"], "answer": "C", "subject": "ເລກ", "city": "4.0"},
]
EVAL_YAML = """\
tasks:
  - id: mcq
    config: default
    split: test
    field_spec: {input: question, target: answer, choices: choices, metadata: [subject]}
    solvers:
      - {name: system_message, args: {template: "You answer questions about {subject}. {{braces}} {unknown}"}}
      - {name: multiple_choice}
    scorers: [{name: choice}]
  - id: short
    field_spec: {input: question, target: city}
    solvers:
      - {name: prompt_template, args: {template: "Q: {prompt}\\nA:"}}
      - {name: generate}
    scorers: [{name: exact}]
  - id: graded
    field_spec: {input: question, target: city, input_image: image}
    epochs: 3
    solvers: [{name: chain_of_thought}, {name: generate}]
    scorers: [{name: model_graded_qa}, {name: match, args: {numeric: true}}]
"""
CARD = ("---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n    path: data/test.jsonl\n---\n"
        "# a Lao quiz\n")


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("hub")
    base = root / "glotbench-test" / "lao-quiz" / SHA
    (base / "data").mkdir(parents=True)
    (base / "data" / "test.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS),
                                              encoding="utf-8")
    (base / "README.md").write_text(CARD, encoding="utf-8")
    (base / "eval.yaml").write_text(EVAL_YAML, encoding="utf-8")
    (root / "glotbench-test" / "lao-quiz" / "repo.json").write_text(json.dumps({"refs": {"main": SHA}}))
    yield from serve_hub(root)


def run(tmp_path, hub, name, *args, out="r", offline=False):
    env = {"HF_ENDPOINT": hub, "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1",
           "HF_HUB_OFFLINE": "1" if offline else "0", "HF_TOKEN": "", "GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")}
    return cli("run", name, *args, "--out", str(tmp_path / out), "--no-progress", "--no-cache", env=env)


def inspect_mc_prompt(question: str, choices: list[str]) -> str:
    """multiple_choice's prompt as inspect_ai builds it (its own function when installed)."""
    try:
        from inspect_ai.solver._multiple_choice import SINGLE_ANSWER_TEMPLATE, prompt
        from inspect_ai.solver._task_state import Choices
    except ImportError:
        letters = ",".join("ABC"[:len(choices)])
        opts = "\n".join(f"{'ABC'[i]}) {c}" for i, c in enumerate(choices))
        return ("Answer the following multiple choice question. The entire content of your response should be of the "
                f"following format: 'ANSWER: $LETTER' (without quotes) where LETTER is one of {letters}.\n\n"
                f"{question}\n\n{opts}")
    return prompt(question, Choices(choices), SINGLE_ANSWER_TEMPLATE)


def test_multiple_choice_task_runs_from_the_hub_as_inspect_prompts_and_scores(tmp_path, hub, srv):
    srv.configure(answers={ROWS[0]["question"]: "ANSWER: A", ROWS[1]["question"]: "I think **(C)**.\nANSWER: $C$",
                           ROWS[2]["question"]: "The answer is C"})
    proc = run(tmp_path, hub, f"hf/glotbench-test/lao-quiz/mcq@{SHA}", "--model", srv.spec())
    assert proc.returncode == 0, proc.stderr
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    assert res["benchmark"]["data"] == f"hub:glotbench-test/lao-quiz@{SHA}/test"
    # A right; C where B is gold: wrong; "The answer is C" has no ANSWER: line, so Inspect reads nothing
    assert res["counts"]["items"] == 3 and res["scores"]["overall"]["accuracy"]["value"] == pytest.approx(1 / 3)
    reqs = srv.requests()
    first = next(r for r in reqs if ROWS[0]["question"] in r["messages"][-1]["content"])
    assert first["messages"][0] == {"role": "system", "content": "You answer questions about ພູມສາດ. {braces} {unknown}"}
    assert first["messages"][-1]["content"] == inspect_mc_prompt(ROWS[0]["question"], ROWS[0]["choices"])


def test_exact_task_scores_with_inspects_normalisation(tmp_path, hub, srv):
    srv.configure(answers={ROWS[0]["question"]: "vientiane.", ROWS[1]["question"]: "Mekong",
                           ROWS[2]["question"]: "4"})
    proc = run(tmp_path, hub, f"hf/glotbench-test/lao-quiz/short@{SHA}", "--model", srv.spec())
    assert proc.returncode == 0, proc.stderr
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    # casefolded, punctuation and articles removed, 4 and 4.0 the same number: all three match
    assert res["scores"]["overall"]["exact"]["value"] == pytest.approx(1.0)
    assert srv.requests()[0]["messages"][-1]["content"].startswith("Q: ")


def test_offline_from_the_hub_cache_and_the_run_keeps_its_task_file(tmp_path, hub, srv):
    import urllib.request

    srv.configure(answers={ROWS[0]["question"]: "Vientiane"})
    name = f"hf/glotbench-test/lao-quiz/short@{SHA}"
    assert run(tmp_path, hub, name, "--model", srv.spec()).returncode == 0
    with urllib.request.urlopen(f"{hub}/_requests", timeout=10) as r:
        before = len(json.loads(r.read()))
    proc = run(tmp_path, hub, name, "--model", srv.spec(), out="r2", offline=True)
    assert proc.returncode == 0, proc.stderr
    with urllib.request.urlopen(f"{hub}/_requests", timeout=10) as r:
        assert len(json.loads(r.read())) == before  # eval.yaml and the rows from the cache: no request
    res = json.loads((tmp_path / "r2" / "results.json").read_text())
    kept = res["benchmark"]["task_file"]
    assert kept["path"].endswith(f"glotbench-test+lao-quiz+short+{SHA}.yaml")  # the translation, in the cache folder
    assert __import__("pathlib").Path(kept["copy"]).read_text(encoding="utf-8").startswith(
        f"# Imported from Inspect's eval.yaml of glotbench-test/lao-quiz@{SHA} (task short)")
    assert res["scores"]["overall"]["exact"]["value"] == pytest.approx(1 / 3)


def test_refusals_one_line_each_and_a_pin_required(tmp_path, hub, srv):
    proc = run(tmp_path, hub, f"hf/glotbench-test/lao-quiz/graded@{SHA}", "--model", srv.spec())
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    proc = cli("tasks", "import-inspect", str(_write(tmp_path, EVAL_YAML)), "--repo", "glotbench-test/lao-quiz",
               "--revision", SHA, "--task", "graded")
    assert proc.returncode == 2, proc.stderr
    lines = [x for x in proc.stderr.splitlines() if x.startswith("not translated: ")]
    for what in ("input_image", "epochs", "chain_of_thought", "model_graded_qa", "scorers: 2 scorers"):
        assert any(what in x for x in lines), (what, lines)
    assert all(re.match(r"not translated: \S*eval\.yaml:\d+: tasks\.2(\.|:)", x) for x in lines), lines  # FILE:LINE: key
    proc = run(tmp_path, hub, "hf/glotbench-test/lao-quiz/mcq", "--model", srv.spec())
    assert proc.returncode == 2 and "pin the dataset to a commit" in proc.stderr
    proc = cli("tasks", "import-inspect", str(_write(tmp_path, EVAL_YAML)), "--repo", "glotbench-test/lao-quiz",
               "--task", "mcq")
    assert proc.returncode == 0 and "PIN-A-COMMIT" in proc.stdout and proc.stderr.count("\n") == 1


def _write(tmp_path, text):
    p = tmp_path / "eval.yaml"
    p.write_text(text, encoding="utf-8")
    return p


# -- the rules against inspect_ai's own functions -------------------------------------------------

REPLIES = ["ANSWER: A", "answer: b", "ANSWER: $C$", "**ANSWER: D**", "ANSWER: (B).", "I pick A.\nANSWER: B", "ANSWER: A, B",
           "ANSWER: E", "The answer is C", "", "ANSWER:C\nmore", "Answer: **B**", "ANSWER: a and b", "ANSWER: 2",
           "x ANSWER: c!", "ANSWER: ກ", "ANSWER:\nA", "  ANSWER :  d  ", "ANSWER: AB"]
TEXTS = ["The Mekong", "mekong", "the  Mekong!", "4", "4.0", "(3.14)", "3.14.", "a", "the", "-", "An apple-pie",
         "ວຽງຈັນ", "ວຽງ ຈັນ", "Ἀθῆναι", "STRASSE", "straße", "1e3", "1000", "nan", "inf", "", "  ", "hello, world",
         "world hello", "x-y z", "ສອງ ບວກ ສອງ ແມ່ນ 4", "… 42 …", "$20", "1,000"]


def _state(completion: str, n: int):
    from inspect_ai.model import ModelOutput
    from inspect_ai.solver import TaskState
    from inspect_ai.solver._task_state import Choices

    st = TaskState(model="m", sample_id=1, epoch=1, input="q", messages=[], choices=["x"] * n)
    st.output = ModelOutput.from_content("m", completion)
    st.choices = Choices(["x"] * n)
    return st


def test_choice_answer_as_inspects_parse_answers():
    pytest.importorskip("inspect_ai")
    from inspect_ai.solver._multiple_choice import parse_answers

    from glotbench.tasks.inspect_rules import choice_answer

    for reply in REPLIES + TEXTS:
        for n in (2, 4, 5):
            want = parse_answers(_state(reply, n), multiple_correct=False)
            got = choice_answer(reply, n)
            assert ({got} if got else set()) == want, (reply, n)


def test_exact_f1_match_includes_as_inspects():
    pytest.importorskip("inspect_ai")
    from inspect_ai.scorer._classification import max_exact_score, max_f1_score
    from inspect_ai.scorer._common import match_str

    from glotbench.tasks import inspect_rules as r

    for a in TEXTS:
        for t in TEXTS:
            assert r.exact_score(a, [t]) == (max_exact_score(a, [t]) == 1.0), (a, t)
            assert r.f1_score(a, [t]) == max_f1_score(a, [t]), (a, t)
            assert r.f1_score(a, [t], ["the", "ສອງ"]) == max_f1_score(a, [t], ["the", "ສອງ"]), (a, t)
            for loc in ("begin", "end", "any", "exact"):
                for case in (True, False):
                    assert r.match_text(a, t, loc, case) == match_str(a, t, loc, case)[1], (a, t, loc, case)
            for case in (True, False):
                assert r.includes_text(a, t, case) == _includes(a, t, case), (a, t, case)


def _includes(answer: str, target: str, ignore_case: bool) -> bool:
    """inspect_ai's own `includes` scorer on one completion and target."""
    import asyncio

    from inspect_ai.scorer import Target, includes

    score = asyncio.run(includes(ignore_case)(_state(answer, 2), Target(target)))
    return score.value == "C"


def _pattern(answer: str, target: str, pattern: str, ignore_case: bool, match_all: bool) -> bool:
    import asyncio

    from inspect_ai.scorer import Target, pattern as inspect_pattern

    score = asyncio.run(inspect_pattern(pattern, ignore_case, match_all)(_state(answer, 2), Target(target)))
    return score.value == "C"


PATTERNS = [r"ANSWER\s*:\s*(\w+)", r"(\d+)\s*(?:km|กม)", r"(a)|(b)", r"(x)?(y)?", r"ຄຳຕອບ[:：]\s*(\S+)", r"the",
            r"(?i)(yes|no)\b", r"()"]


def test_pattern_and_answer_as_inspects():
    pytest.importorskip("inspect_ai")
    from glotbench.tasks.inspect_rules import ANSWER_PATTERNS, pattern_score

    replies = REPLIES[:12] + TEXTS[::3] + ["ANSWER: yes", "answer: No.\nANSWER: yes!", "ຄຳຕອບ: ວຽງຈັນ", "12 km", "x", "y", "xy",
                                "ANSWER: first line\nANSWER: the last line  "]
    targets = ["A", "b", "yes", "ວຽງຈັນ", "12", "x", "xy", "", "first line", "the last line", "the"]
    for pat in PATTERNS + list(ANSWER_PATTERNS.values()):
        for a in replies:
            for t in targets:
                for ic in (True, False):
                    for ma in (False, True):
                        assert pattern_score(a, [t], pat, ic, ma) == _pattern(a, t, pat, ic, ma), (pat, a, t, ic, ma)


def test_answer_and_pattern_scorers_import(tmp_path):
    import yaml

    from glotbench.tasks.inspect_rules import ANSWER_PATTERNS
    from glotbench.tasks.inspect_yaml import task_text

    doc = ("tasks:\n  - field_spec: {input: question, target: city}\n    solvers: [{name: generate}]\n"
           "    scorers: [{name: answer, args: {pattern: word}}]\n")
    keys = yaml.safe_load(task_text(doc, "eval.yaml", "o/d", SHA))
    assert keys["scorer"] == {"kind": "inspect", "scorer": "pattern", "pattern": ANSWER_PATTERNS["word"]}
    from glotbench.tasks.inspect_yaml import NotTranslatable

    with pytest.raises(NotTranslatable) as e:
        task_text(doc.replace("pattern: word", "pattern: sentence"), "eval.yaml", "o/d", SHA)
    assert e.value.lines == ["eval.yaml:4: tasks.0.scorers.0.args.pattern: letter, word or line"]


def test_rules_as_inspects_on_generated_text():
    """Random replies in Lao, Thai, Latin letters, digits, punctuation and spaces: the rules agree
    with inspect_ai's functions on every one (hypothesis)."""
    pytest.importorskip("inspect_ai")
    from hypothesis import given, settings, strategies as st
    from inspect_ai.scorer._classification import max_exact_score, max_f1_score
    from inspect_ai.scorer._common import match_str
    from inspect_ai.solver._multiple_choice import parse_answers

    from glotbench.tasks import inspect_rules as r

    alphabet = st.sampled_from(list("ABCDabcd ANSWER:answer*$()-.,!?\n\t 0123456789ກຂຄງາີ່ກขคงาี่ ß") + ["the ", "An ", "ANSWER:", "answer :", "**", "\n", ", ", " and "])
    text = st.lists(alphabet, max_size=30).map("".join)

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(text, text, st.sampled_from(["begin", "end", "any", "exact"]), st.booleans(), st.integers(2, 6))
    def check(a, t, loc, case, n):
        assert r.exact_score(a, [t]) == (max_exact_score(a, [t]) == 1.0)
        assert r.f1_score(a, [t]) == max_f1_score(a, [t])
        assert r.match_text(a, t, loc, case) == match_str(a, t, loc, case)[1]
        got = r.choice_answer(a, n)
        assert ({got} if got else set()) == parse_answers(_state(a, n), multiple_correct=False)

    check()


# -- export: every library task writes an eval.yaml or names why not; the written files round-trip ----

FX = __import__("pathlib").Path(__file__).resolve().parent / "fixtures" / "tasks"


def _inspect_prompt(task: dict, row: dict) -> tuple[str | None, str]:
    """The system message and user prompt inspect_ai makes of a record for the exported task: its own
    _record_to_sample_hf, format_template (prompt_template, system_message) and multiple_choice prompt."""
    from inspect_ai._eval.task.hf import HFTask, _record_to_sample_hf
    from inspect_ai._util.format import format_template
    from inspect_ai.solver._multiple_choice import prompt
    from inspect_ai.solver._task_state import Choices

    t = HFTask.model_validate(task)
    sample = _record_to_sample_hf(row, t.field_spec)
    meta = sample.metadata or {}
    system, text = None, sample.input
    for s in t.solvers:
        if s.name == "system_message":
            system = format_template(s.args["template"], meta)
        elif s.name == "prompt_template":
            text = format_template(s.args["template"], {"prompt": text} | meta)
        elif s.name == "multiple_choice":
            text = prompt(text, Choices(sample.choices), s.args["template"])
    return system, text, sample.target


@pytest.mark.parametrize("name", sorted(EXPORTED))
def test_exported_eval_yaml_round_trips_on_fixture_rows(name, tmp_path):
    """write -> HFTask validates -> import -> the same items, the prompts Inspect makes (glotbench's own
    with its option lines as Inspect writes them), and the same scores of well-formed replies."""
    import yaml

    from glotbench.registry import get_benchmark
    from glotbench.scoring import score_output
    from glotbench.tasks.inspect_yaml import export_text, task_text

    bench = get_benchmark(name)
    text, _ = export_text(bench)
    task = yaml.safe_load(text)["tasks"][0]
    (tmp_path / "eval.yaml").write_text(text, encoding="utf-8")
    back = task_text(text, "eval.yaml", bench.data.hub, bench.data.revision, task["id"])
    (tmp_path / "back.yaml").write_text(back, encoding="utf-8")
    again = get_benchmark(str(tmp_path / "back.yaml"))
    data = str(FX / EXPORTED[name])
    a, b = bench.load(data), again.load(data)
    assert [i.gold["answer"] for i in a] == [i.gold["answer"] for i in b] and len(a) >= 2
    rows = [json.loads(x) for x in (FX / EXPORTED[name]).read_text(encoding="utf-8").splitlines() if x.strip()]
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        rows = []  # inspect_ai not installed: the comparison with its own rendering is skipped
    for x, y, row in zip(a, b, rows or [None] * len(a)):
        mine = bench.render(x.to_public()).messages[-1]["content"]
        theirs = again.render(y.to_public()).messages
        assert theirs[-1]["content"] == re.sub(r"(?m)^([A-Z])\. ", r"\1) ", mine)
        if row is not None:
            system, user, target = _inspect_prompt(task, row)
            assert theirs[-1]["content"] == user and (system is None) == (theirs[0]["role"] != "system")
            assert y.gold["answer"] == target
        right = []
        for letter in "ABCDEFGHIJ"[:len(x.public["choices"])]:
            reply = f"Reasoning first.\nAnswer: {letter}"
            sa, sb = score_output(bench, x, reply), score_output(again, y, reply)
            assert sa.score.stats["letter:correct"] == sb.score.stats["letter:correct"], (name, reply)
            right.append(sb.score.stats["letter:correct"])
        assert right.count(1.0) == 1, right  # exactly the gold letter scores


def test_tasks_check_writes_the_eval_yaml_or_names_why_not(tmp_path):
    out = tmp_path / "eval.yaml"
    proc = cli("tasks", "check", "xcopa", "--eval-yaml", str(out))
    assert proc.returncode == 0 and "wrote" in proc.stdout and out.read_text(encoding="utf-8").startswith("# Written")
    # flores-plus (corpus chrF++, joined configs) exports derived with glotbench's scorer
    # (tests/test_tasks_inspect_derived.py); a log-likelihood run is what no export expresses
    proc = cli("tasks", "check", "belebele", "--bench-opt", "method=loglik", "--eval-yaml", str(tmp_path / "no.yaml"))
    assert proc.returncode == 2 and not (tmp_path / "no.yaml").exists()
    assert proc.stderr.startswith("error: belebele: no eval.yaml written: Inspect cannot express method: loglik: ") \
        and proc.stderr.count("\n") == 1


def test_malformed_eval_yaml_is_an_error_line_never_a_crash():
    """Each key of two valid eval.yaml tasks replaced, one at a time, by a value of another shape:
    a DataError (one line) or a valid task file, never an exception of another kind."""
    import copy
    import random

    import yaml

    from glotbench.errors import GlotbenchError
    from glotbench.tasks.inspect_yaml import task_text

    mc = {"tasks": [{"id": "t", "config": "c", "split": "s", "epochs": 1,
                     "field_spec": {"input": "q", "target": "a", "choices": "c", "metadata": ["m"]},
                     "solvers": [{"name": "system_message", "args": {"template": "x {m}", "p": "y"}},
                                 {"name": "prompt_template", "args": {"template": "{prompt}"}},
                                 {"name": "multiple_choice", "args": {"template": "{question}\n{choices}", "max_tokens": 5}}],
                     "scorers": [{"name": "choice"}]}]}
    gen = {"tasks": [{"field_spec": {"input": "q", "target": "a"}, "solvers": [{"name": "generate"}],
                      "scorers": [{"name": "pattern", "args": {"pattern": "(x)", "match_all": True}}]}]}
    values = [None, 1, -1, True, "x", "{", "{0}", "{x!r}", "{x:>3}", "literal:", "pattern", "(", [], [1],
              ["a", {"b": 1}], {}, {"a": 1}]

    def paths(d, p=()):
        yield p
        items = d.items() if isinstance(d, dict) else enumerate(d) if isinstance(d, list) else ()
        for k, v in items:
            yield from paths(v, p + (k,))

    rng = random.Random(7)
    tried = 0
    for base in (mc, gen):
        every = list(paths(base))[1:]
        for _ in range(600):
            doc, where, value = copy.deepcopy(base), rng.choice(every), rng.choice(values)
            cur = doc
            for k in where[:-1]:
                cur = cur[k]
            cur[where[-1]] = value
            try:
                task_text(yaml.safe_dump(doc), "eval.yaml", "o/d", SHA)
            except GlotbenchError as e:
                assert "\n" not in str(e).strip() or e.__class__.__name__ == "NotTranslatable", (where, value, e)
            tried += 1
    assert tried == 1200
