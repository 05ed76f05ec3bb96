"""Adversarial review of task files (#24): hostile templates, YAML and names are one readable line,
bounded in time and memory, never a traceback, a hang or a silently wrong prompt."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from conftest import cli
from glotbench.errors import DataError
from glotbench.tasks.template import MAX_CHARS, render

SMALL = """\
name: lao-sums
version: "1.0"
language: lo
data:
  file: sums.jsonl
fields:
  id: id
  public: {question: q}
  gold: {answer: a}
prompt:
  user: "{{ question }}"
extract:
  number: [number]
scorer: numeric_match
"""
SUMS = '{"id": "s1", "q": "ໜຶ່ງບວກໜຶ່ງ", "a": "2"}\n{"id": "s2", "q": "ສາມບວກສີ່", "a": "7"}\n'


def write(tmp_path: Path, text: str, rows: str = SUMS) -> Path:
    (tmp_path / "sums.jsonl").write_text(rows, encoding="utf-8")
    p = tmp_path / "t.yaml"
    p.write_text(text, encoding="utf-8")
    return p


HOSTILE = {
    "a range past the sandbox's": ("{% for i in range(10**8) %}x{% endfor %}", "range: the argument"),
    "loops within loops": ("{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
                           "steps (loops within loops)"),
    "a string times a huge number": ("{{ q * 10**9 }}", "builds 2,000,000,000 items"),
    "a list times a huge number": ("{{ ([q] * 10**8) | length }}", "builds 100,000,000 items"),
    "doubling by ~": ("{% set ns = namespace(x=q) %}{% for i in range(40) %}{% set ns.x = ns.x ~ ns.x %}"
                      "{% endfor %}{{ ns.x | length }}", "builds a value of"),
    "doubling by +": ("{% set ns = namespace(x=q) %}{% for i in range(40) %}{% set ns.x = ns.x + ns.x %}"
                      "{% endfor %}{{ ns.x | length }}", "builds a value of"),
    "a filter's width": ("{{ q | center(10**9) }}", "center: the argument 1000000000"),
    "a string method's width": ("{{ q.ljust(10**9) }}", "ljust: the argument"),
    "replace that multiplies": ("{{ (q * 100000) | replace('a', q * 100000) }}", "replace: could build"),
    "a method replace": ("{{ (q * 100000).replace('a', q * 100000) }}", "replace: could build"),
    "a huge power": ("{{ 2 ** 100000 }}", "an exponent above"),
    "a recursive macro": ("{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", "without end"),
    "a division by zero": ("{{ 1 / 0 }}", "ZeroDivisionError"),
    "an output past the bound": ("{% for i in range(99999) %}{{ q * 100 }}{% endfor %}", "renders more than"),
}


@pytest.mark.parametrize("source,message", HOSTILE.values(), ids=list(HOSTILE))
def test_a_hostile_template_is_one_error_within_bounds(source, message):
    start = time.monotonic()
    with pytest.raises(DataError, match="^item 7: prompt.user: ") as e:
        render(source, {"q": "aa"}, "item 7: prompt.user")
    assert message in str(e.value)
    assert time.monotonic() - start < 20  # bounded: none of these may hang


def test_templates_within_the_bounds_render_as_before():
    ok = "{{ q }} {{ q|upper }} {% for c in ['x', 'y'] %}{{ loop.index }}{{ c }}{% endfor %} {{ 0 | letter }}"
    assert render(ok, {"q": "ສອງ"}, "t") == "ສອງ ສອງ 1x2y A"
    assert render("{{ q * 3 }}|{{ 2 ** 8 }}|{{ q ~ '!' }}", {"q": "ກ"}, "t") == "ກກກ|256|ກ!"
    big = "ກ" * (MAX_CHARS // 2)  # a long passage is fine: the bound is on what a template builds
    assert render("{{ q }}", {"q": big}, "t") == big


def test_a_run_of_a_task_whose_template_loops_is_one_error_line(tmp_path):
    path = write(tmp_path, SMALL.replace('"{{ question }}"',
                                         '"{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"'))
    proc = cli("run", str(path), "--model", "python:nowhere:none", "--out", str(tmp_path / "r"), "--no-progress",
               "--no-cache", timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"error: {path}:11: item s1: prompt.user: runs more than 1,000,000 steps"), \
        proc.stderr


BOMB = "".join(f"{a}: &{a} [{', '.join([f'*{p}'] * 9)}]\n" for p, a in zip("abcdefgh", "bcdefghi"))


@pytest.mark.parametrize("doc", [
    "a: &a [x, x, x, x, x, x, x, x, x]\n" + BOMB,  # nine anchors of nine aliases: 9**9 values
    "name: &a [x, *a]\n",  # an anchor that holds itself
], ids=["billion-laughs", "self-reference"])
def test_yaml_aliases_that_expand_without_end_are_refused(tmp_path, doc):
    path = tmp_path / "bomb.yaml"
    path.write_text(SMALL.replace("name: lao-sums\n", "") + "prompt_vars_padding: 1\n" + doc, encoding="utf-8")
    proc = cli("tasks", "check", str(path), timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith(f"error: {path}:") and "expands to more than 100,000 values" in proc.stderr
    lm = tmp_path / "lm.yaml"
    lm.write_text("task: t\noutput_type: multiple_choice\n" + doc, encoding="utf-8")
    proc = cli("tasks", "import-lm-eval", str(lm), timeout=60)
    assert proc.returncode == 2 and "expands to more than 100,000 values" in proc.stderr, proc.stderr


def test_anchors_and_aliases_of_an_ordinary_size_still_work(tmp_path):
    text = SMALL.replace('  user: "{{ question }}"', '  user: &p "{{ question }}"\n  text: *p')
    proc = cli("tasks", "check", str(write(tmp_path, text)))
    assert proc.returncode == 0, proc.stderr


MC = (SMALL.replace("name: lao-sums", "name: mc").replace("  gold: {answer: a}", "  choices: [c1, c2, c3]\n  gold: {answer: ans}")
      .replace('"{{ question }}"', '"{{ question }}\\n{{ options }}"').replace("number: [number]", "letter: [option_letter]")
      .replace("numeric_match", "option_accuracy"))


@pytest.mark.parametrize("task,row,message", [
    (SMALL, '{"id": "s1", "q": "ໜຶ່ງບວກໜຶ່ງ", "a": null}', "sums.jsonl:1: fields.gold.answer: null"),
    (SMALL.replace("gold: {answer: a}", "gold: {answers: [a, b]}").replace("numeric_match", "exact_match"),
     '{"id": "s1", "q": "ໜຶ່ງບວກໜຶ່ງ", "a": "2", "b": null}', "sums.jsonl:1: fields.gold.answers.1: null"),
    (SMALL, '{"id": "s1", "q": null, "a": "2"}', "t.yaml:11: item s1: prompt.user: a value is null"),
    (MC, '{"id": "s1", "q": "ຄຳຖາມ", "c1": "ກ", "c2": "ກ", "c3": "ຄ", "ans": "ກ"}',
     "sums.jsonl:1: fields.choices: options A and B are the same text ('ກ', 'ກ')"),
    (MC, '{"id": "s1", "q": "ຄຳຖາມ", "c1": "ກ", "c2": "\u200b\u2060", "c3": "ຄ", "ans": "A"}',
     "sums.jsonl:1: fields.choices.1: an empty option"),
], ids=["null gold", "null in a gold list", "null in a prompt", "gold text of two options", "a zero-width option"])
def test_a_null_or_ambiguous_value_is_an_error_not_a_number(tmp_path, task, row, message):
    """Before: a null gold was an item nobody could get right, scored as the model's miss (0.0 with
    a CI, exit 0); a null public field was written `None` into the prompt."""
    path = write(tmp_path, task, row + "\n")
    proc = cli("run", str(path), "--model", "python:nowhere:none", "--out", str(tmp_path / "r"), "--no-progress",
               "--no-cache")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("error: ") and message in proc.stderr, proc.stderr
    assert not (tmp_path / "r" / "results.json").exists()


def test_a_null_rendered_on_purpose_is_empty():
    assert render("[{{ q or '' }}]", {"q": None}, "t") == "[]"
    assert render("{% if q is none %}none{% endif %}", {"q": None}, "t") == "none"


def test_a_task_file_named_like_a_built_in_benchmark_is_refused_not_ignored(tmp_path):
    """Before: `tasks list --include-path` listed the file, and `run NAME` silently ran the built-in."""
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "lb.yaml").write_text(SMALL.replace("name: lao-sums", "name: laobench-mcq")
                                 .replace("file: sums.jsonl", "file: ../sums.jsonl"), encoding="utf-8")
    (inc / "bb.yaml").write_text(SMALL.replace("name: lao-sums", "name: belebele")
                                 .replace("file: sums.jsonl", "file: ../sums.jsonl"), encoding="utf-8")
    write(tmp_path, SMALL)
    listed = cli("tasks", "list", "--include-path", str(inc))
    assert listed.returncode == 0, listed.stderr
    lines = {ln.split()[0]: ln for ln in listed.stdout.splitlines() if ln.startswith("  ")}
    assert "also a built-in benchmark's name" in lines["laobench-mcq"]
    assert f"from {inc / 'bb.yaml'}, in place of the library's" in lines["belebele"]
    assert "in place of" not in lines["xnli"]
    proc = cli("run", "laobench-mcq", "--include-path", str(inc), "--model", "python:nowhere:none",
               "--out", str(tmp_path / "r"), "--no-progress", "--no-cache")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"error: laobench-mcq is a built-in benchmark and also the name of the task file "
                                  f"{inc / 'lb.yaml'}"), proc.stderr
    assert not (tmp_path / "r").exists()


def test_import_lm_eval_names_the_include_it_cannot_find_and_a_bad_template_s_line(tmp_path):
    """Before: a missing include's line was dropped when the import failed (only the key it left
    missing was named), and a template that does not parse had no FILE:LINE."""
    yml = tmp_path / "t.yaml"
    yml.write_text("include: _base_missing.yaml\ntask: t\ndoc_to_text: '{{ q }}'\n", encoding="utf-8")
    proc = cli("tasks", "import-lm-eval", str(yml))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0] == f"not translated: {yml}:1: include: _base_missing.yaml: not found (its keys are missing here)"
    assert any("dataset_path: missing" in ln for ln in lines[1:-1]) and lines[-1].startswith("error: ")
    yml.write_text("task: t\ndataset_path: o/n\noutput_type: generate_until\n\ndoc_to_text: '{{ q'\n"
                   "doc_to_target: '{{ a }}'\n", encoding="utf-8")
    proc = cli("tasks", "import-lm-eval", str(yml))
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: {yml}:5: doc_to_text: not a valid template"), \
        proc.stderr


@pytest.mark.parametrize("n,steps,message", [
    (6, "[option_letter]", "6 options, and option_letter (pipeline 'letter') reads A-E: use option_text"),
    (30, "[option_text]", "30 options; a task labels at most 26 (A-Z)"),
])
def test_options_per_row_the_task_cannot_read_are_refused_at_load(tmp_path, n, steps, message):
    """Before: a row of six options (a list column) with option_letter was a scorer error in a run
    that exited 0, valid, with its accuracy counting the item as wrong."""
    task = MC.replace("choices: [c1, c2, c3]", "choices: opts").replace("letter: [option_letter]", f"letter: {steps}")
    rows = ('{"id": "ok", "q": "ຂໍ້ໃດ", "opts": ["ກ", "ຂ"], "ans": "B"}\n'
            + '{"id": "many", "q": "ຂໍ້ໃດ", "opts": [%s], "ans": "A"}\n' % ", ".join(f'"{i}"' for i in range(n)))
    path = write(tmp_path, task, rows)
    proc = cli("run", str(path), "--model", "python:nowhere:none", "--out", str(tmp_path / "r"), "--no-progress",
               "--no-cache")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"error: {tmp_path / 'sums.jsonl'}:2: fields.choices: {message}"), proc.stderr


@pytest.mark.parametrize("task,rows,message", [
    (SMALL.replace("  gold: {answer: a}\n", ""), SUMS, "sums.jsonl:1: fields.gold: no answer (the numeric_match scorer "
                                                       "reads it; the item's gold has: nothing)"),
    (SMALL, SUMS + '{"id": "s3", "q": "ສີ່", "a": "four"}\n', "sums.jsonl:3: fields.gold.answer: 'four' is not a number"),
    (SMALL.replace("gold: {answer: a}", "gold: {reference: a}").replace("numeric_match", "exact_match"), SUMS,
     "fields.gold: no answer or answers (the exact_match scorer reads it; the item's gold has: reference)"),
    (SMALL.replace("gold: {answer: a}", "gold: {answer: a}").replace("numeric_match", "{kind: corpus, metrics: [chrf]}"),
     SUMS, None),  # corpus metrics read a reference, else the answer: fine
], ids=["no gold", "a gold that is not a number", "a gold key the scorer does not read", "corpus reads answer"])
def test_a_gold_the_scorer_cannot_read_is_refused_at_load(tmp_path, task, rows, message):
    """Before: a task without the gold its scorer reads ran every item as a scorer error, and a
    numeric gold `four` was an item nobody could get right; both exited 0 as valid runs."""
    path = write(tmp_path, task, rows)
    proc = cli("tasks", "check", str(path), "--data", str(tmp_path / "sums.jsonl"))
    if message is None:
        assert proc.returncode == 0, proc.stderr
        return
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("error: ") and message in proc.stderr, proc.stderr


def test_a_template_error_at_an_item_names_the_task_file_line(tmp_path):
    """Before: `item s1: prompt.user: 'questoin' is undefined`, without the task file's line."""
    text = SMALL.replace('  user: "{{ question }}"', '  system: "{{ language }}"\n  user: "{{ questoin }}"')
    path = write(tmp_path, text)
    proc = cli("prompt", str(path))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == f"error: {path}:12: item s1: prompt.user: 'questoin' is undefined\n"
    text = SMALL.replace("numeric_match", "option_accuracy").replace("  gold: {answer: a}", "  choices: [q, a]\n  gold: {answer: a}")
    path = write(tmp_path, text + "loglik:\n  continuations: [\"{{ question }}\", \"{{ nope }}\"]\n")
    proc = cli("prompt", str(path), "--bench-opt", "method=loglik")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == f"error: {path}:17: item s1: loglik.continuations.1: 'nope' is undefined\n"


@pytest.mark.parametrize("name,fmt", [("sums.jsonl.gz", "gzip"), ("sums.csv.xz", "lzma"), ("sums.json.bz2", "bz2")])
def test_compressed_data_files_are_read_as_the_hub_ships_them(tmp_path, name, fmt):
    """Before: `rows.jsonl.gz` (a common layout on the hub) was `not UTF-8 text`."""
    import importlib
    import json

    rows = [json.loads(x) for x in SUMS.splitlines()]
    body = {"jsonl": SUMS, "csv": "id,q,a\n" + "".join(f"{r['id']},{r['q']},{r['a']}\n" for r in rows),
            "json": json.dumps(rows, ensure_ascii=False)}[name.split(".")[1]]
    path = write(tmp_path, SMALL.replace("file: sums.jsonl", f"file: {name}"))
    (tmp_path / name).write_bytes(importlib.import_module(fmt).compress(body.encode("utf-8")))
    proc = cli("tasks", "check", str(path), "--data", str(tmp_path / name))
    assert proc.returncode == 0, proc.stderr
    assert f"2 items from {tmp_path / name}" in proc.stdout and "ໜຶ່ງບວກໜຶ່ງ" in proc.stdout


def test_a_broken_compressed_file_is_one_line_naming_it(tmp_path):
    import gzip

    path = write(tmp_path, SMALL.replace("file: sums.jsonl", "file: sums.jsonl.gz"))
    gz = tmp_path / "sums.jsonl.gz"
    gz.write_bytes(gzip.compress((SUMS + "{not json\n").encode()))
    proc = cli("tasks", "check", str(path), "--data", str(gz))
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: {gz}:3: not valid JSON"), proc.stderr
    gz.write_bytes(b"not gzip at all")
    proc = cli("tasks", "check", str(path), "--data", str(gz))
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: {gz}: not a readable gz file"), proc.stderr


@pytest.mark.parametrize("options,reply,answer", [
    ({"A": "แมว", "B": "แมวดำ", "C": "หมา"}, "คำตอบคือ แมวดำ", "B"),  # Thai, no spaces: แมว is inside แมวดำ
    ({"A": "ແມວ", "B": "ແມວດຳ"}, "ແມວ", "A"),  # the shorter alone is still the shorter
    ({"A": "York", "B": "New York", "C": "Paris"}, "The answer is New York.", "B"),
    ({"A": "York", "B": "New York"}, "New York, or maybe York", None),  # both named apart: ambiguous
    ({"A": "ឆ្មា", "B": "ឆ្មា", "C": "ឆ្កែ"}, "ឆ្មា", None),  # two options of one text: ambiguous
    ({"A": "ឆ្មា\u200bខ្មៅ", "B": "ឆ្មា"}, "ចម្លើយ\u200bគឺ\u200bឆ្មាខ្មៅ", "A"),  # Khmer with a zero-width space
])
def test_option_text_names_the_longest_option_a_reply_names(options, reply, answer):
    """Before: a reply naming แมวดำ also named แมว (a substring in a script without spaces), so
    option_text found no answer (no_option) for a reply that plainly chose."""
    from glotbench.tasks.pipelines import build_pipeline

    got = build_pipeline("t", ["option_text"], lambda *a: "t")(reply, options)
    assert got.answer == answer and got.failure == (None if answer else "no_option")


def test_a_revision_option_that_is_not_a_commit_is_refused_by_check():
    """Before: `tasks check belebele --bench-opt revision=main` said ok; the run failed later, at
    the download."""
    proc = cli("tasks", "check", "belebele", "--bench-opt", "revision=main")
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr == ("error: belebele: revision 'main' is not a commit hash (40 hex): pin the data to a "
                           "commit of the dataset's history, not a branch that moves\n")
    proc = cli("tasks", "check", "belebele", "--bench-opt", "revision=" + "a" * 40)
    assert proc.returncode == 0, proc.stderr


def test_import_lm_eval_refuses_a_task_list_without_a_group_key(tmp_path):
    """lm-eval reads `task: [a, b]` as a group even without `group:`; it was imported as one task `a-b`."""
    yml = tmp_path / "g.yaml"
    yml.write_text("task:\n  - xnli_th\n  - xnli_vi\ndataset_path: x/y\noutput_type: multiple_choice\n"
                   "doc_to_text: '{{ q }}'\ndoc_to_choice: [a, b]\ndoc_to_target: 0\n", encoding="utf-8")
    proc = cli("tasks", "import-lm-eval", str(yml), "-o", str(tmp_path / "out.yaml"))
    assert proc.returncode == 2 and not (tmp_path / "out.yaml").exists()
    assert proc.stderr == f"error: {yml}:1: task: a list of tasks (a group, as lm-eval reads it); import each task's YAML\n"



def test_a_broken_task_file_in_an_include_path_is_reported_not_unknown(tmp_path):
    """Before: `run mytask --include-path DIR` with DIR/mytask.yaml not parsing said `unknown
    benchmark 'mytask'`, and `tasks list` left the file out without a word."""
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "mytask.yaml").write_text('name: mytask\nversion: "1"\ndata: {file: x.jsonl\n', encoding="utf-8")
    (inc / "notes.yaml").write_text("just: notes\n", encoding="utf-8")
    proc = cli("run", "mytask", "--include-path", str(inc), "--model", "python:nowhere:none", "--out",
               str(tmp_path / "r"), "--no-progress")
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: {inc / 'mytask.yaml'}:4: not valid YAML"), proc.stderr
    listed = cli("tasks", "list", "--include-path", str(inc))
    assert listed.returncode == 0 and "mytask" not in listed.stdout
    assert listed.stderr.splitlines() == [
        f"skipped {inc / 'mytask.yaml'}: not valid YAML (glotbench tasks check {inc / 'mytask.yaml'} says where)",
        f"skipped {inc / 'notes.yaml'}: no name: key (glotbench tasks check {inc / 'notes.yaml'} says where)"]


def test_the_step_bound_holds_under_another_tracer_and_gives_it_back():
    """Under coverage or a debugger (a tracer already set) the bound still holds, the tracer still
    sees every other frame, and it is set back afterwards."""
    import sys

    seen: list[str] = []

    def tracer(frame, event, arg):
        seen.append(frame.f_code.co_name)

    before = sys.gettrace()
    sys.settrace(tracer)
    try:
        with pytest.raises(DataError, match="runs more than 1,000,000 steps"):
            render(HOSTILE["loops within loops"][0], {}, "t")
        seen.clear()
        assert render("{% for c in q %}{{ c | upper }}{% endfor %}", {"q": "ສອງ"}, "t") == "ສອງ"
        assert sys.gettrace() is tracer
        assert "run" in seen and "root" not in seen  # the filter's frame inside render; not the template's
    finally:
        sys.settrace(before)


def test_log_likelihood_on_a_backend_that_only_generates_is_one_line_naming_those_that_can(tmp_path):
    task = SMALL.replace("numeric_match", "option_accuracy").replace("  gold: {answer: a}", "  choices: [q, a]\n  gold: {answer: a}")
    path = write(tmp_path, task)
    (tmp_path / "fn.py").write_text("def reply(messages, **kw):\n    return 'A'\n")
    proc = cli("run", str(path), "--bench-opt", "method=loglik", "--model", "python:fn:reply", "--out",
               str(tmp_path / "r"), "--no-progress", "--no-cache", cwd=str(tmp_path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr == ("error: the log-likelihood method needs a local model (local, hf:, vllm:); "
                           "python:fn:reply only generates\n")


@pytest.mark.parametrize("edit,message", [
    (lambda t: t.replace("  user:", "  usr:"), "t.yaml:11: prompt.usr: unknown key (did you mean user?)"),
    (lambda t: t.replace("scorer:", "scorr:"), "t.yaml:14: scorr: unknown key (did you mean scorer?) (and 1 more problem)"),
    (lambda t: t.replace("  file: sums.jsonl", "  file: sums.jsonl\n  revison: abc"),
     "t.yaml:6: data.revison: unknown key (did you mean revision?)"),
    (lambda t: t.replace("  user:", "  zzzqq:"), "t.yaml:11: prompt.zzzqq: unknown key (docs/tasks.md lists every key)"),
])
def test_an_unknown_key_says_so_and_names_the_key_it_resembles(tmp_path, edit, message):
    """Before: `FILE:LINE: prompt.usr: Extra inputs are not permitted` (pydantic's words)."""
    path = write(tmp_path, edit(SMALL))
    proc = cli("tasks", "check", str(path))
    assert proc.returncode == 2 and proc.stderr == f"error: {tmp_path / message}\n", proc.stderr


def test_parquet_cells_of_other_types_are_read_as_json_and_bytes_only_where_used(tmp_path):
    """Before: a timestamp or decimal column (common in parquet) ended the run with `run: unexpected
    input (TypeError: Object of type datetime is not JSON serializable)`."""
    import datetime
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist([{"id": "s1", "q": "ໜຶ່ງບວກໜຶ່ງ", "a": decimal.Decimal("2.0"),
                                          "when": datetime.datetime(2024, 1, 1, 8, 30), "image": b"\x89PNG..."}]),
                   tmp_path / "rows.parquet")
    task = SMALL.replace("file: sums.jsonl", "file: rows.parquet").replace(
        "public: {question: q}", "public: {question: q, when: when}").replace('"{{ question }}"', '"{{ question }} {{ when }}"')
    path = write(tmp_path, task)
    proc = cli("prompt", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "ໜຶ່ງບວກໜຶ່ງ 2024-01-01T08:30:00" in proc.stdout
    path = write(tmp_path, task.replace("when: when}", "when: when, image: image}"))
    proc = cli("prompt", str(path))
    assert proc.returncode == 2 and proc.stderr == (
        f"error: {tmp_path / 'rows.parquet'}:row 1: fields.public.image: column 'image': binary data (7 bytes: an "
        "image or audio?); a task reads text, numbers and lists of them\n"), proc.stderr


def test_a_nan_cell_is_a_null_not_the_text_nan(tmp_path):
    """Before: a parquet NaN (pandas' missing value) was written `nan` into the prompt, and a NaN gold
    was an item nobody could get right."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist([{"id": "s1", "q": "ໜຶ່ງ", "a": 2.0, "hint": float("nan")},
                                         {"id": "s2", "q": "ສອງ", "a": float("nan"), "hint": 1.0}]),
                   tmp_path / "rows.parquet")
    task = SMALL.replace("file: sums.jsonl", "file: rows.parquet")
    proc = cli("tasks", "check", str(write(tmp_path, task)), "--data", str(tmp_path / "rows.parquet"))
    assert proc.returncode == 2 and "rows.parquet:row 2: fields.gold.answer: null" in proc.stderr, proc.stderr
    pq.write_table(pa.Table.from_pylist([{"id": "s1", "q": "ໜຶ່ງ", "a": 2.0, "hint": float("nan")}]),
                   tmp_path / "rows.parquet")
    task = task.replace("public: {question: q}", "public: {question: q, hint: hint}").replace(
        '"{{ question }}"', '"{{ question }} {{ hint }}"')
    proc = cli("prompt", str(write(tmp_path, task)))
    assert proc.returncode == 2 and "item s1: prompt.user: a value is null" in proc.stderr, proc.stderr


def test_a_label_written_as_a_whole_float_reads_as_its_number():
    """A pandas label column that held a missing value is written as floats (`1.0`); `letter` read
    every such row as an error. A fraction is still one."""
    from glotbench.tasks.template import letter

    assert [letter(v) for v in (0, "1", 1.0, "2.0", " 3 ")] == ["A", "B", "B", "C", "D"]
    assert letter(4.0, 1) == "D"
    for bad in (1.5, "x", True, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="is not a whole number"):
            letter(bad)


def test_the_signature_names_a_few_shot_file_by_its_content_not_its_path(tmp_path):
    """Before: `fewshot:test,...` (the evaluated split) for examples from `fewshot_data=FILE`, and the
    task hash held the file's path, so the same file elsewhere made another signature."""
    import shutil

    fx = Path(__file__).resolve().parent / "fixtures" / "tasks"
    copy = tmp_path / "elsewhere.jsonl"
    shutil.copy(fx / "belebele_khm_Khmr.jsonl", copy)
    outs = []
    for shots_file in (fx / "belebele_khm_Khmr.jsonl", copy):
        proc = cli("tasks", "check", "belebele", "--data", str(fx / "belebele_lao_Laoo.jsonl"), "--bench-opt",
                   "shots=1", "--bench-opt", f"fewshot_data={shots_file}")
        assert proc.returncode == 0, proc.stderr
        outs.append([ln for ln in proc.stdout.splitlines() if ln.strip().startswith(("task:", "fewshot:"))])
    assert outs[0] == outs[1]
    import hashlib

    sha = hashlib.sha256(copy.read_bytes()).hexdigest()[:12]
    assert f"  fewshot: test=file:{sha},random,seed=1234,one_turn" in outs[0]  # the test split's stand-in


def test_a_few_shot_pool_holding_the_test_rows_is_counted_and_noted(tmp_path):
    """fewshot_data= the test file itself: lm-eval's rule (leave an item out only when the few-shot
    split is the test split) lets an item be its own example; the run counts such items in
    results.json (`fewshot_leak`) and every view notes them beside the number."""
    import json as _json

    from glotbench.engine.evaluate import RunOptions, evaluate
    from glotbench.registry import get_benchmark
    from glotbench.rundir.validity import notes

    rows = [{"premise": f"ประโยคที่ {i} ฝนตก", "hypothesis": f"ข้อความที่ {i}", "label": i % 3} for i in range(8)]
    data = tmp_path / "test.jsonl"
    data.write_text("".join(_json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    bench = get_benchmark("xnli", config="th", shots=3, fewshot_data=str(data))
    ds = bench.load(str(data))
    # by hand, from the rendered prompts: an item is leaked when its premise is in it twice
    by_hand = sorted(it.id for it in ds
                     if sum(str(m["content"]).count(it.public["premise"]) for m in bench.render(it.to_public()).messages) > 1)
    assert by_hand, "with 3 of 8 drawn from a pool holding the item, some item draws itself (seeded)"
    res = evaluate(bench, "python:helpers:plain_answer",
                   RunOptions(out=str(tmp_path / "run"), progress=False, use_cache=False, bootstrap_resamples=20,
                              data=str(data)))
    leak = res.results["fewshot_leak"]
    assert leak["items"] == len(by_hand) and leak["of"] == 8 and sorted(leak["first"]) == by_hand
    assert f"few-shot leak: {len(by_hand)} of 8 items are among their own examples" in notes(res.results)
    # a pool apart from the test rows: nothing to note
    train = tmp_path / "train.jsonl"
    train.write_text("".join(_json.dumps({**r, "premise": r["premise"] + " (train)"}, ensure_ascii=False) + "\n"
                             for r in rows), encoding="utf-8")
    clean = get_benchmark("xnli", config="th", shots=3, fewshot_data=str(train))
    assert "fewshot_leak" not in clean.extra_results(clean.load(str(data)))
