"""`glotbench tasks import-lm-eval`: lm-evaluation-harness task YAMLs (the ones it ships, and crafted
ones) become glotbench task files that validate and render, on the same rows, exactly the requests
lm-eval's own TaskManager builds from the YAML, and score as it scores; what cannot be translated is
one line per key, naming the file and line it comes from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import cli
from lm_eval_ref import filtered, lm_task, requests, tasks_dir
from glotbench.scoring import score_output
from glotbench.errors import DataError
from glotbench.tasks import from_file
from glotbench.tasks.lm_eval_import import NotTranslatable, import_file, translate
from glotbench.tasks.loglik import reply_text
from test_tasks_lm_eval import BELEBELE, XNLI, XNLI_TRAIN, as_requests, write


def imported(tmp_path: Path, yaml_path: Path, **options: Any) -> Any:
    out = tmp_path / "imported.yaml"
    import_file(yaml_path, out)
    return from_file(out)(**options)


def rendered(bench: Any, data: str) -> tuple[Any, list[Any]]:
    ds = bench.load(data)
    return ds, [bench.render(it.to_public()) for it in ds]


def check_scores(bench: Any, ds: Any, task: Any, lls: list[list[float]]) -> None:
    for item, doc, ll in zip(ds, task.eval_docs, lls):
        s = score_output(bench, item, reply_text(bench.render(item.to_public()).choices, ll, [1] * len(ll)))
        ref = task.process_results(doc, [(x, False) for x in ll])
        assert s.score.stats["loglik_sum:correct"] == ref["acc"]
        if "acc_norm" in ref:
            assert s.score.stats["loglik_char:correct"] == ref["acc_norm"]


# -- lm-eval's shipped YAMLs -----------------------------------------------------------------------

@pytest.mark.parametrize("shots", [0, 2])
def test_belebele_yaml_through_its_include_chain(tmp_path, monkeypatch, shots):
    bench = imported(tmp_path, tasks_dir() / "belebele" / "belebele_lao_Laoo.yaml", shots=shots)
    ds, prompts = rendered(bench, write(tmp_path / "rows.jsonl", BELEBELE))
    task = lm_task("belebele", "belebele_lao_Laoo", {"test": BELEBELE}, monkeypatch, shots=shots)
    assert as_requests(prompts) == requests(task)
    check_scores(bench, ds, task, [[-1.0, -0.5, -2.0, -3.0], [-0.1, -0.2, -0.3, -0.4], [-3.0, -2.0, -1.0, -9.0],
                                   [-2.0, -2.0, -2.0, -1.5]])
    assert bench.method == "loglik" and bench.lang == "lo"  # lao_Laoo: the language's profile


def test_xnli_yaml_choices_from_a_template_list(tmp_path, monkeypatch):
    bench = imported(tmp_path, tasks_dir() / "xnli" / "xnli_th.yaml", shots=2,
                     fewshot_data=write(tmp_path / "train.jsonl", XNLI_TRAIN))
    ds, prompts = rendered(bench, write(tmp_path / "rows.jsonl", XNLI))
    task = lm_task("xnli", "xnli_th", {"train": XNLI_TRAIN, "validation": XNLI}, monkeypatch, shots=2)
    assert as_requests(prompts) == requests(task)
    check_scores(bench, ds, task, [[-20.0, -19.0, -25.0], [-30.0, -31.0, -29.5], [-5.0, -4.0, -6.0]])


ARC = [{"id": f"q{i}", "question": q, "choices": {"text": t, "label": lab}, "answerKey": k}
       for i, (q, t, lab, k) in enumerate([
           ("Which is a mammal?", ["Shark", "Whale", "Trout"], ["A", "B", "C"], "B"),
           ("Nước sôi ở bao nhiêu độ?", ["100 °C", "50 °C", "0 °C", "10 °C"], ["1", "2", "3", "4"], "1"),
           ("Pick 'two'", ["one", "two"], ["A", "B"], "B"),
           ("What melts ice?", ["Heat", "Cold", "Dark", "Salt water", "Wind"], ["A", "B", "C", "D", "E"], "A")])]


def test_arc_yaml_per_item_choices_and_a_template_target(tmp_path, monkeypatch):
    """ARC: the choices a template over a nested column (3 to 5 per item), the target an index
    computed in Jinja; two-shot from its train split by lm-eval's random stream."""
    train = [{**r, "id": f"t{i}"} for i, r in enumerate(ARC)]
    bench = imported(tmp_path, tasks_dir() / "arc" / "arc_easy.yaml", shots=2,
                     fewshot_data=write(tmp_path / "train.jsonl", train))
    ds, prompts = rendered(bench, write(tmp_path / "rows.jsonl", ARC))
    task = lm_task("arc", "arc_easy", {"train": train, "validation": ARC, "test": ARC}, monkeypatch, shots=2)
    assert as_requests(prompts) == requests(task)
    check_scores(bench, ds, task, [[-3.0, -1.0, -2.0], [-1.0, -2.0, -2.5, -9.0], [-4.0, -4.5], [-9, -1, -2, -3, -4]])


def test_mmlu_yaml_description_and_a_choices_column_renamed(tmp_path, monkeypatch):
    """MMLU's prompt reads a column called `choices` (glotbench's name for the options): it is read
    under another name and renders the same; its description starts the prompt."""
    rows = [{"question": f" Câu {i}? ", "subject": "anatomy", "choices": [f"{i}a", f"{i}b", f"{i}c", f"{i}d"],
             "answer": i % 4} for i in range(3)]
    dev = [{**r, "question": f"Dev {i}"} for i, r in enumerate(rows + rows)]
    bench = imported(tmp_path, tasks_dir() / "mmlu" / "default" / "mmlu_anatomy.yaml", shots=2,
                     fewshot_data=write(tmp_path / "dev.jsonl", dev))
    ds, prompts = rendered(bench, write(tmp_path / "rows.jsonl", rows))
    task = lm_task("mmlu/default", "mmlu_anatomy", {"test": rows, "dev": dev}, monkeypatch, shots=2)
    assert as_requests(prompts) == requests(task)
    assert prompts[0].text.startswith("The following are multiple choice questions (with answers) about anatomy.")


def test_global_mmlu_yaml_notes_its_process_docs(tmp_path, monkeypatch):
    path = tasks_dir() / "global_mmlu" / "full" / "vi" / "global_mmlu_full_vi_astronomy.yaml"
    got = translate(path)
    assert any(n.startswith(f"{path}:") and ": process_docs: !function utils.process_astronomy: not translated" in n
               for n in got.notes)
    rows = [{"sample_id": f"astronomy/test/{i}", "subject": "astronomy", "subject_category": "STEM",
             "question": f"Hỏi {i}", "option_a": "a", "option_b": "b", "option_c": "c", "option_d": "d",
             "answer": "ABCD"[i], "cultural_sensitivity_label": "CA"} for i in range(3)]
    bench = imported(tmp_path, path)
    _, prompts = rendered(bench, write(tmp_path / "rows.jsonl", rows))
    task = lm_task("global_mmlu/full/vi", "global_mmlu_full_vi_astronomy", {"test": rows, "dev": rows}, monkeypatch)
    assert as_requests(prompts) == requests(task)  # rows of the one subject: the filter changes nothing here


GSM = [{"question": "Nam có 3 quả táo, mua thêm 4. Nam có mấy quả?", "answer": "3 + 4 = 7\n#### 7"},
       {"question": "Lan có 1,200 đồng, tiêu 200. Còn bao nhiêu?", "answer": "1,200 - 200 = 1,000\n#### 1,000"},
       {"question": "5 x 6?", "answer": "#### 30"}]


def test_gsm8k_yaml_generates_and_scores_both_filters_as_lm_eval(tmp_path, monkeypatch):
    """generate_until: the stop list, five-shot (here two) from train, and both filter pipelines
    (strict-match, flexible-extract) scored by exact_match with lm-eval's regexes_to_ignore."""
    bench = imported(tmp_path, tasks_dir() / "gsm8k" / "gsm8k.yaml", shots=2,
                     fewshot_data=write(tmp_path / "train.jsonl", GSM))
    ds, prompts = rendered(bench, write(tmp_path / "rows.jsonl", GSM))
    task = lm_task("gsm8k", "gsm8k", {"train": GSM, "test": GSM}, monkeypatch, shots=2)
    ref = requests(task)
    assert [p.text for p in prompts] == [r[0][0] for r in ref]
    assert [list(p.text_stop) for p in prompts] == [r[0][1]["until"] for r in ref]
    replies = ["3 + 4 = 7\n#### 7", "Lan còn $1,000.", "The answer is 31"]
    ref_scores = filtered(task, replies)
    for item, reply, i in zip(ds, replies, range(3)):
        stats = score_output(bench, item, reply).score.stats
        for pipeline in ("strict-match", "flexible-extract"):
            assert stats[f"{pipeline}:correct"] == ref_scores[pipeline][i]["exact_match"], (pipeline, reply)
    assert [ref_scores["strict-match"][i]["exact_match"] for i in range(3)] == [1.0, 0.0, 0.0]
    assert [ref_scores["flexible-extract"][i]["exact_match"] for i in range(3)] == [1.0, 1.0, 0.0]


def test_flores_yaml_scores_bleu_and_chrf_as_lm_eval_and_names_ter(tmp_path, monkeypatch):
    path = tasks_dir() / "spanish_bench" / "flores_es" / "flores_en-es.yaml"
    got = translate(path)
    assert any(": metric_list: ter: not computed" in n for n in got.notes)
    rows = [{"id": i, "sentence_eng_Latn": e, "sentence_spa_Latn": s} for i, (e, s) in
            enumerate([("It rained.", "Llovió."), ("The market opens early.", "El mercado abre temprano.")])]
    bench = imported(tmp_path, path)
    ds, prompts = rendered(bench, write(tmp_path / "rows.jsonl", rows))
    task = lm_task("spanish_bench/flores_es", "spanish_bench_flores_en-es", {"dev": rows, "devtest": rows},
                   monkeypatch)
    assert [p.text for p in prompts] == [r[0][0] for r in requests(task)]
    replies = [" Llueve.", "El mercado abre pronto."]
    got_scores = bench.aggregate([score_output(bench, it, r) for it, r in zip(ds, replies)], ds, resamples=0)["overall"]
    items = [task.process_results(doc, [r]) for doc, r in zip(task.eval_docs, replies)]
    for metric in ("bleu", "chrf"):
        assert got_scores[metric]["value"] == pytest.approx(task.aggregation()[metric]([x[metric] for x in items]))


def test_xcopa_yaml_is_not_imported_and_names_each_python_key(tmp_path):
    r = cli("tasks", "import-lm-eval", str(tasks_dir() / "xcopa" / "default_th.yaml"), "-o", str(tmp_path / "x.yaml"))
    assert r.returncode == 2 and not (tmp_path / "x.yaml").exists()
    lines = r.stderr.strip().splitlines()
    assert lines[0].endswith("default_th.yaml:4: doc_to_text: !function utils.doc_to_text_th: Python, which a task "
                             "file cannot hold")
    assert lines[1].endswith("default_et.yaml:9: doc_to_choice: !function utils.doc_to_choice: Python, which a "
                             "task file cannot hold")
    assert lines[2].startswith("error: ") and "not imported" in lines[2] and len(lines) == 3


# -- crafted YAMLs ---------------------------------------------------------------------------------

def yaml_file(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder / name


def test_a_crafted_task_with_every_translated_key_renders_as_lm_eval(tmp_path, monkeypatch):
    """Fixed choices whose texts are letters in another order (the target is the text "A", the
    second option), a Thai description, an empty target delimiter, a custom few-shot delimiter,
    first_n shots; quotes, backslashes and a zero-width space in the choices."""
    folder = tmp_path / "crafted"
    yaml_file(folder, "_base.yaml", 'dataset_path: example/thai-letters\noutput_type: multiple_choice\n'
                                    'test_split: test\nfewshot_split: test\nfewshot_config:\n  sampler: first_n\n')
    path = yaml_file(folder, "letters.yaml", "\n".join([
        "include: _base.yaml", "task: thai_letters", "dataset_name: th",
        'description: "ตอบคำถามต่อไปนี้ ({{ topic }})\\n\\n"',
        'doc_to_text: "คำถาม: {{ q }}\\nคำตอบ:"',
        "doc_to_choice: ['B', 'A', '\"q\" \\\\ x', 'ก\u200bข']",
        "doc_to_target: gold",
        'target_delimiter: ""', 'fewshot_delimiter: "\\n###\\n"',
        "metric_list:", "  - metric: acc", "  - metric: acc_norm", "  - metric: brier_score",
        "metadata: {version: 2.0}", ""]))
    rows = [{"q": f"ข้อ {i}", "topic": "ทดสอบ", "gold": ["A", "B", '"q" \\\\ x', "ก\u200bข"][i]} for i in range(4)]
    got = translate(path)
    assert any(n.startswith(f"{path}:") and "brier_score: not computed" in n for n in got.notes)
    bench = imported(tmp_path, path, shots=2)
    ds, prompts = rendered(bench, write(tmp_path / "rows.jsonl", rows))
    assert [it.gold["answer"] for it in ds] == ["B", "A", "C", "D"]  # "A" is the text of the second option
    task = lm_task(folder, "thai_letters", {"test": rows}, monkeypatch, shots=2)
    assert as_requests(prompts) == requests(task)
    check_scores(bench, ds, task, [[-1.0, -2.0, -3.0, -4.0], [-1.0, -2.0, -3.0, -4.0], [-9.0, -9.0, -1.0, -9.0],
                                   [-5.0, -5.0, -5.0, -2.0]])
    assert bench.version == "2.0" and bench.lang == "th"


def test_what_is_not_translated_is_one_line_per_key_with_its_file_and_line(tmp_path):
    folder = tmp_path / "notes"
    path = yaml_file(folder, "t.yaml", "\n".join([
        "include: missing_base.yaml",                                   # 1
        "task: notes_task", "dataset_path: example/x", "output_type: generate_until",
        "doc_to_text: 'Q: {{ q }}'", "doc_to_target: a",                 # 5, 6
        "process_results: !function utils.score",                       # 7
        "filter_list:",                                                  # 8
        "  - name: custom", "    filter:", "      - function: custom", "        filter_fn: !function utils.f",
        "  - name: plain", "    filter:", "      - function: regex", "        regex_pattern: '(\\d+)'",
        "generation_kwargs: {until: ['\\n'], top_p: 0.9}",               # 17
        "repeats: 3",                                                    # 18
        "surprise_key: 1",                                               # 19
        "metric_list:", "  - metric: rouge", "  - metric: exact_match", "    ignore_case: true", ""]))
    got = translate(path)
    expected = [f"{path}:1: include: missing_base.yaml: not found (its keys are missing here)",
                f"{path}:3: dataset_path: example/x: no pinned revision",
                f"{path}:7: process_results: !function utils.score: not translated (Python scoring)",
                f"{path}:18: repeats: not translated",
                f"{path}:17: generation_kwargs: top_p: not translated",
                f"{path}:20: metric_list: rouge: not computed",
                f"{path}:8: filter_list: custom: filter custom: not translated (the pipeline is left out)",
                f"{path}:19: surprise_key: not translated"]
    for line in expected:
        assert sum(n.startswith(line) for n in got.notes) == 1, (line, got.notes)
    assert len(got.notes) == len(expected)
    assert got.keys["extract"] == {"plain": [{"regex": {"pattern": "(\\d+)", "select": 0}}]}
    assert got.keys["scorer"] == {"kind": "exact_match", "ignore": [], "normalise": ["lower"]}
    text, _ = import_file(path, tmp_path / "out.yaml")
    assert all(f"#   {n}" in text for n in got.notes)  # the file's header says it too


@pytest.mark.parametrize("text,problem", [
    ("group: g\ntask: [a, b]\n", "a group of tasks"),
    ("task: t\noutput_type: loglikelihood_rolling\ndoc_to_text: x\n", "not one of the kinds imported"),
    ("task: t\nclass: !function m.C\n", "a Python task class"),
    ("task: t\ndataset_path: a/b\noutput_type: multiple_choice\ndoc_to_text: 'q'\ndoc_to_target: 0\n",
     "doc_to_choice: missing"),
    ("task: t\ndataset_path: a/b\ndoc_to_text: !function u.f\ndoc_to_target: y\n", "doc_to_text: !function u.f"),
    ("include: t.yaml\ntask: t\n", "include: a cycle"),
    ("task: t\ndoc_to_text: [unclosed\n", "not valid YAML"),
])
def test_what_cannot_be_imported_is_an_error_naming_the_key(tmp_path, text, problem):
    path = yaml_file(tmp_path / "bad", "t.yaml", text)
    with pytest.raises(DataError, match=problem.replace("[", r"\[").replace("!", "!")):
        import_file(path)


def test_the_command_writes_a_task_that_runs(tmp_path, srv, cache_path):
    out = tmp_path / "bele.yaml"
    r = cli("tasks", "import-lm-eval", str(tasks_dir() / "belebele" / "belebele_lao_Laoo.yaml"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "not translated:" in r.stderr and "no pinned revision" in r.stderr and "wrote" in r.stderr
    data = write(tmp_path / "rows.jsonl", BELEBELE)
    srv.configure(answers={"ວຽງຈັນຕັ້ງຢູ່ໃສ": "A", "ແມ່ນ້ຳໃດ": "ຄຳຕອບ: ກ"})
    r = cli("run", str(out), "--model", srv.spec(), "--data", data, "--bench-opt", "method=generate",
            "--out", str(tmp_path / "run"), "--cache-path", cache_path)
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["scores"]["overall"]["accuracy"]["value"] == pytest.approx(0.5)
    printed = cli("tasks", "import-lm-eval", str(tasks_dir() / "belebele" / "belebele_lao_Laoo.yaml"))
    assert printed.returncode == 0 and printed.stdout == out.read_text(encoding="utf-8")
