"""Task files: every error one line `FILE:LINE: field: problem` (the YAML's own line numbers), rows
named by theirs; a small task file runs with no Python; a @task function builds the same benchmark
as the file; few-shot in one turn or as chat turns; options are typed and named in the signature."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import DataError, SpecError
from glotbench.registry import get_benchmark
from glotbench.tasks import Task, from_file, task

FX = Path(__file__).resolve().parent / "fixtures" / "tasks"

# A task of 19 lines: a local JSONL file, a Lao prompt, a number with native digits, numeric match.
SMALL = """\
name: lao-sums
version: "1.0"
description: Lao arithmetic word problems, answered with a number
language: lo
data:
  file: sums.jsonl
fields:
  id: id
  public: {question: q}
  gold: {answer: a}
prompt:
  system: Answer with a number only.
  user: "{{ question }}"
  answer_prefix: "ຄຳຕອບ:"
  max_tokens: 32
extract:
  number: [number]
  first_line: [first_line, number]
scorer: numeric_match
"""
SUMS = ['{"id": "s1", "q": "ໜຶ່ງບວກໜຶ່ງເທົ່າກັບເທົ່າໃດ?", "a": "2"}',
        '{"id": "s2", "q": "ສາມບວກສີ່ເທົ່າກັບເທົ່າໃດ?", "a": 7}',
        '{"id": "s3", "q": "ສິບລົບສອງເທົ່າກັບເທົ່າໃດ?", "a": "8"}']


def write(tmp_path: Path, text: str, name: str = "t.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    (tmp_path / "sums.jsonl").write_text("\n".join(SUMS) + "\n", encoding="utf-8")
    return p


def test_a_task_file_of_19_lines_runs_with_no_python(tmp_path, srv):
    path = write(tmp_path, SMALL)
    assert len(SMALL.splitlines()) == 19
    srv.configure(answers={"ໜຶ່ງບວກໜຶ່ງ": "໒", "ສາມບວກສີ່": "The sum is\u200b7.", "ສິບລົບສອງ": "6\n8"})
    proc = cli("run", str(path), "--model", srv.spec(), "--out", str(tmp_path / "r"), "--no-progress", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    overall = res["scores"]["overall"]
    assert overall["numeric_em"]["value"] == 1.0  # ໒ is Lao 2; "is\u200b7." gives 7; the last number of "6\n8" is 8
    assert overall["numeric_em[first_line]"]["value"] == pytest.approx(2 / 3)  # the first line of "6\n8" is 6
    assert res["benchmark"]["spec"] == str(path) and res["benchmark"]["name"] == "lao-sums"
    assert srv.requests()[0]["messages"][0] == {"role": "system", "content": "Answer with a number only."}


def test_include_path_runs_a_folder_of_task_files_by_name(tmp_path, srv):
    folder = tmp_path / "tasks"
    folder.mkdir()
    write(folder, SMALL, "sums.yaml")
    srv.configure(answers={})
    proc = cli("run", "lao-sums", "--include-path", str(folder), "--model", srv.spec(), "--out", str(tmp_path / "r"),
               "--no-progress", "--no-cache", "--limit", "1")
    assert proc.returncode == 0, proc.stderr
    listed = cli("tasks", "list", "--include-path", str(folder))
    assert "lao-sums" in listed.stdout and "belebele" in listed.stdout
    missing = cli("run", "lao-sums", "--model", srv.spec(), "--no-progress")
    assert missing.returncode == 2 and "unknown benchmark 'lao-sums'" in missing.stderr


# (edit of the small task, the error's line, a part of the message)
ERRORS = [
    (lambda t: t.replace("prompt:", "promt:"), 11, "promt: unknown key (did you mean prompt?)"),
    (lambda t: t.replace('version: "1.0"', "version: 1.0"), 2, "version: must be a string, got a number"),
    (lambda t: t.replace("  file: sums.jsonl", "  hub: owner/name"), 5, "data: revision: missing"),
    (lambda t: t.replace('user: "{{ question }}"', 'user: "{{ question }"'), 13, "prompt.user: not a valid template"),
    (lambda t: t.replace("[first_line, number]", "[first_line, numbr]"), 18, "extract.first_line.1: unknown step 'numbr'"),
    (lambda t: t.replace("  number: [number]", "  number: [number]\n  number: [first_line]"), 18,
     "extract.number: given twice in one mapping"),
    (lambda t: t.replace("scorer: numeric_match", "scorer: {kind: corpus, metrics: [meteor]}"), 19,
     "scorer.metrics.0: must be 'chrf++', 'chrf' or 'bleu'"),
    (lambda t: t.replace("  max_tokens: 32", "  max_tokens: 0"), 15, "prompt.max_tokens: must be greater than or equal to 1"),
    (lambda t: t.replace("fields:\n  id: id\n  public: {question: q}\n  gold: {answer: a}\n", "fields: [id, q]\n"), 7,
     "fields: must be an object, got a list"),
    (lambda t: t.replace("name: lao-sums", "name: Lao Sums"), 1, "name: must be lower-case letters"),
    (lambda t: t + "headline: nope\n", 1, "headline: 'nope' is not one of the pipelines"),
    (lambda t: t.replace("  public: {question: q}", "  public: {question: q}\n  choices: [x, y]"), 7, None),
]


@pytest.mark.parametrize("edit,line,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_task_file_errors_name_file_line_and_field(tmp_path, edit, line, message):
    path = write(tmp_path, edit(SMALL))
    if message is None:  # a valid file (choices with numeric_match): the rows are where it fails
        with pytest.raises(DataError, match=r"sums.jsonl:1: fields.choices.0: no column 'x' \(the row has: a, id, q\)"):
            get_benchmark(str(path)).load(None)
        return
    with pytest.raises(DataError) as e:
        get_benchmark(str(path))
    assert str(e.value).startswith(f"{path}:{line}: "), str(e.value)
    assert message in str(e.value)


def test_bad_yaml_and_bad_rows_are_one_line_each(tmp_path):
    path = write(tmp_path, SMALL.replace("fields:", "fields: {id: id\n"))
    proc = cli("tasks", "check", str(path))
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: {path}:") and "not valid YAML" in proc.stderr
    assert proc.stderr.count("\n") == 1
    bench = get_benchmark("belebele")
    bad = tmp_path / "bad.jsonl"
    rows = [json.loads(x) for x in (FX / "belebele_lao_Laoo.jsonl").read_text().splitlines()]
    rows[1]["correct_answer_num"] = "5"
    bad.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    with pytest.raises(DataError, match=rf"^{bad}:2: fields.gold.answer: correct_answer_num '5' \(made 'E'\) is neither an option label \(A, B, C, D\)"):
        bench.load(str(bad))
    rows[1]["correct_answer_num"] = "2"
    del rows[2]["mc_answer3"]
    bad.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    with pytest.raises(DataError, match=rf"^{bad}:3: fields.choices.2: no column 'mc_answer3'"):
        bench.load(str(bad))
    dup = tmp_path / "dup.jsonl"
    dup.write_text("\n".join([SUMS[0], SUMS[0]]) + "\n")
    with pytest.raises(DataError, match=rf"{dup}:2: fields.id: 's1' is also the id of {dup}:1"):
        from_file(write(tmp_path, SMALL))().load(str(dup))


def test_options_are_typed_checked_and_in_the_signature(tmp_path):
    with pytest.raises(SpecError, match="belebele has no option 'conifg'; its options: bleu_tokenize, config, fewshot_data"):
        get_benchmark("belebele", conifg="khm_Khmr")
    with pytest.raises(SpecError, match="shots must be a whole number|shots must be an integer"):
        get_benchmark("belebele", shots="many")
    with pytest.raises(SpecError, match=r"xnli: split must be one of train, validation, test, got 'dev'"):
        get_benchmark("xnli", split="dev")
    a, b = get_benchmark("belebele"), get_benchmark("belebele", config="khm_Khmr")
    da = a.load(str(FX / "belebele_lao_Laoo.jsonl"))
    db = b.load(str(FX / "belebele_khm_Khmr.jsonl"))
    assert "opt.config:lao_Laoo" in a.signature(da) and "opt.config:khm_Khmr" in b.signature(db)
    assert a.signature_parts()["task"] != b.signature_parts()["task"] and b.lang == "km"


def test_a_task_function_builds_the_same_benchmark_as_the_file(tmp_path):
    @task("lao-sums-fn")
    def lao_sums(limit_note: str = "Answer with a number only."):
        return dict(version="1.0", language="lo", data={"file": str(tmp_path / "sums.jsonl")},
                    fields={"id": "id", "public": {"question": "q"}, "gold": {"answer": "a"}},
                    prompt={"system": limit_note, "user": "{{ question }}", "answer_prefix": "ຄຳຕອບ:", "max_tokens": 32},
                    extract={"number": ["number"], "first_line": ["first_line", "number"]}, scorer="numeric_match")

    path = write(tmp_path, SMALL)
    from_yaml = get_benchmark(str(path))
    from_fn = get_benchmark("lao-sums-fn")
    dy, df = from_yaml.load(), from_fn.load()
    assert from_yaml.prompt_hash(dy) == from_fn.prompt_hash(df) and dy.sha256 == df.sha256
    assert [m.name for m in from_yaml.metrics] == [m.name for m in from_fn.metrics]
    parts_y, parts_f = from_yaml.signature_parts(), from_fn.signature_parts()
    assert {k: v for k, v in parts_y.items() if k != "task"} == {k: v for k, v in parts_f.items() if k != "task"}
    assert get_benchmark("lao-sums-fn", limit_note="Digits only.", shots=0).render(df[0].to_public()).messages[0]["content"] == "Digits only."
    with pytest.raises(DataError, match=r"^lao-sums-fn: promt: unknown key \(did you mean prompt\?\)"):
        Task(name="lao-sums-fn", version="1", data={"file": "x"}, promt={}, prompt={"user": "x"}, scorer="exact_match")


def test_few_shot_in_one_turn_or_as_chat_turns(tmp_path):
    path = write(tmp_path, SMALL.replace("scorer: numeric_match", "scorer: numeric_match\nfewshot: {n: 2, seed: 7}"))
    one = get_benchmark(str(path))
    data = one.load()
    msgs = one.render(data[0].to_public()).messages
    assert [m["role"] for m in msgs] == ["system", "user"]
    shots = data[0].public["fewshot"]
    assert len(shots) == 2 and all(s["public"]["question"] != data[0].public["question"] for s in shots)  # never itself
    assert msgs[1]["content"].startswith(f"{shots[0]['public']['question']}\nຄຳຕອບ: {shots[0]['answer']}\n\n")
    multi = get_benchmark(str(path), multiturn=True)
    msgs = multi.render(multi.load()[0].to_public()).messages
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert msgs[2]["content"] == shots[0]["answer"]
    assert "one_turn" in one.signature_parts()["fewshot"] and "multiturn" in multi.signature_parts()["fewshot"]
    assert one.prompt_hash(data) != multi.prompt_hash(multi.load())
    other_seed = get_benchmark(str(path), fewshot_seed=8)
    assert "seed=8" in other_seed.signature_parts()["fewshot"]
    assert get_benchmark(str(path), shots=0).load()[0].public.get("fewshot") is None


def test_templates_are_sandboxed_and_strict(tmp_path):
    path = write(tmp_path, SMALL.replace('user: "{{ question }}"', 'user: "{{ question.__class__.__mro__ }}"'))
    bench = get_benchmark(str(path))
    with pytest.raises(DataError, match="item s1: prompt.user: .*unsafe"):
        bench.render(bench.load()[0].to_public())
    path = write(tmp_path, SMALL.replace('user: "{{ question }}"', 'user: "{{ questoin }}"'))
    bench = get_benchmark(str(path))
    with pytest.raises(DataError, match="item s1: prompt.user: 'questoin' is undefined"):
        bench.render(bench.load()[0].to_public())


def test_gold_never_reaches_a_prompt_even_when_the_template_asks(tmp_path):
    path = write(tmp_path, SMALL.replace('user: "{{ question }}"', 'user: "{{ question }} {{ answer }}"'))
    bench = get_benchmark(str(path))
    with pytest.raises(DataError, match="'answer' is undefined"):
        bench.render(bench.load()[0].to_public())


def test_tasks_check_prints_the_signature_parts_and_the_first_prompt():
    proc = cli("tasks", "check", "xcopa", "--bench-opt", "config=vi", "--data", str(FX / "xcopa_vi.jsonl"))
    assert proc.returncode == 0, proc.stderr
    assert "xcopa v1.0: ok" in proc.stdout and "opt.config: vi" in proc.stdout and "2 items" in proc.stdout
    assert "Which alternative is the more plausible effect of the premise?" in proc.stdout


def test_a_plugin_entry_point_can_name_a_task_file(tmp_path, srv):
    """`glotbench.tasks.from_file` gives the factory a `glotbench.benchmarks` entry point names."""
    path = write(tmp_path, SMALL)
    (tmp_path / "my_tasks.py").write_text(f"from glotbench.tasks import from_file\nsums = from_file({str(path)!r})\n")
    srv.configure(answers={})
    proc = cli("run", "my_tasks:sums", "--model", srv.spec(), "--out", str(tmp_path / "r"), "--no-progress",
               "--no-cache", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "r" / "results.json").read_text())["benchmark"]["name"] == "lao-sums"


def test_evaluate_in_python_with_a_file_task(tmp_path, srv):
    srv.configure(answers={"ໜຶ່ງບວກໜຶ່ງ": "2"})
    res = evaluate(from_file(write(tmp_path, SMALL))(), srv.spec(),
                   RunOptions(progress=False, out=str(tmp_path / "r"), cache_path=str(tmp_path / "c.sqlite")))
    assert res.results["scores"]["overall"]["numeric_em"]["value"] == pytest.approx(1 / 3)
