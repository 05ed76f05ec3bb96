"""Datasheets of the shipped families (the six first library tasks and every built-in benchmark) and
the multiple-choice families added for issue #34, each run on a fixture in its hub schema against the
loopback OpenAI-compatible server, with hand-computed scores and its reference's rule re-derived."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli
from test_tasks_hub import serve_hub
from glotbench.benchmarks.base import Benchmark
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.languages import language_group, resolve_code
from glotbench.plugins import import_path
from glotbench.registry import families, get_benchmark

FX = Path(__file__).resolve().parent / "fixtures" / "tasks"
LIBRARY = Path(__file__).resolve().parents[1] / "src" / "glotbench" / "tasks" / "library"

# every built-in benchmark class, listed or a phase of a command (arena, aragen)
BUILTINS = {
    "laobench-mcq": "glotbench.benchmarks.laobench:LaoBenchMCQ",
    "laobench-translation": "glotbench.benchmarks.laobench:LaoBenchTranslation",
    "laobench-arena-prompts": "glotbench.benchmarks.arena:ArenaPrompts",
    "deepsea-mgsm": "glotbench.benchmarks.deepsea:MGSM",
    "deepsea-indommlu": "glotbench.benchmarks.deepsea:IndoMMLU",
    "deepsea-xquad": "glotbench.benchmarks.deepsea:XQuAD",
    "deepsea-crosssum": "glotbench.benchmarks.deepsea:CrossSum",
    "deepsea-wmt24pp": "glotbench.benchmarks.deepsea:WMT24pp",
    "vi-diacritics": "glotbench.benchmarks.vi_diacritics:VietnameseDiacritics",
    "vi-tone-errors": "glotbench.benchmarks.vi_tone_errors:VietnameseToneErrors",
    "aragen-answers": "glotbench.benchmarks.aragen:AraGenAnswers",
    "aragen": "glotbench.benchmarks.aragen:AraGenJudging",
    "laobench-arena (judged)": "glotbench.benchmarks.arena:LaoBenchArena",
    "aragen (judged)": "glotbench.benchmarks.aragen:AraGen",
}


def run(tmp_path, srv, task: str, data: str, answers: dict[str, str], **opts: str):
    srv.configure(answers=answers)
    res = evaluate(task, srv.spec(), RunOptions(data=str(FX / data), bench_options=tuple(opts.items()), progress=False,
                                                out=str(tmp_path / "r"), cache_path=str(tmp_path / "c.sqlite")))
    return res.results, [json.loads(x) for x in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]


# -- datasheets of what exists ----------------------------------------------------------------

@pytest.mark.parametrize("name,target", sorted(BUILTINS.items()))
def test_every_builtin_benchmark_declares_a_datasheet(name, target):
    cls = import_path(target)
    assert issubclass(cls, Benchmark) and cls.datasheet is not None, name
    ds = cls.datasheet
    assert ds.languages and ds.citation.lstrip().startswith("@")
    if getattr(cls, "bundled_data", None) in ("sample", "own"):  # glotbench's own text says so
        assert "glotbench" in (ds.licence + ds.source + ds.licence_note)


def test_every_library_task_has_a_datasheet_whose_options_select_its_languages():
    """Each covered language's options build the task, and the task's language is that language: a
    datasheet cannot claim Lao for a config that runs Khmer."""
    names = sorted(p.stem for p in LIBRARY.glob("*.yaml"))
    by_name = {f.name: f for f in families()}
    for name in names:
        ds = by_name[name].datasheet
        assert ds is not None, f"{name} has no datasheet"
        for code, opts in ds.languages.items():
            bench = get_benchmark(name, **{k: str(v) for k, v in opts.items()})
            assert language_group(bench.language) == code, (name, code, opts, bench.language)


def test_non_commercial_and_unclear_licences_show_in_tasks_list():
    r = cli("tasks", "list", "--language", "th")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    lines = out.splitlines()

    def entry(name: str) -> str:  # a family's three lines: name, description, licence and source
        i = next(i for i, ln in enumerate(lines) if ln.lstrip(" *").startswith(name + " "))
        return "\n".join(lines[i:i + 3])

    assert "commercial use: no" in entry("xnli") and "config=th" in entry("xnli")
    assert "licence: CC-BY-NC-4.0" in entry("xnli")
    assert "commercial use: unclear" in entry("deepsea-mgsm")


@pytest.mark.parametrize("code,must", [
    ("lo", {"belebele", "sib200", "flores-plus", "laobench-mcq", "laobench-translation"}),
    ("km", {"belebele", "sib200", "flores-plus"}),
    ("my", {"belebele", "sib200", "flores-plus"}),
    ("th", {"belebele", "sib200", "flores-plus", "xnli", "xcopa"}),
    ("vi", {"belebele", "xnli", "xcopa", "global-mmlu", "vi-diacritics", "vi-tone-errors"}),
    ("id", {"belebele", "xcopa", "global-mmlu"}),
    ("tl", {"belebele", "sib200", "flores-plus", "global-mmlu"}),
])
def test_each_language_lists_the_families_covering_it(code, must):
    got = {f.name for f in families(code)}
    assert must <= got, must - got
    assert "xnli" not in got or code in ("th", "vi")  # XNLI has no lo, km, my, id or tl


# -- the reference rules, re-derived from their code (not imported: lm-eval is not a dependency) ----

def lm_eval_regex(reply: str, pattern: str, group_select: int = 0, fallback: str = "[invalid]") -> str:
    """lm-eval's RegexFilter.apply (lm_eval/filters/extraction.py): findall, item `group_select`, a
    tuple's first non-empty group, stripped; no match: the fallback."""
    import re

    found = re.findall(pattern, reply)
    if not found:
        return fallback
    m = found[group_select]
    if isinstance(m, tuple):
        m = next((g for g in m if g), fallback)
    return m.strip()


def lm_eval_exact_match(pred: str, gold: str, ignore_case: bool = True, ignore_punctuation: bool = True) -> float:
    """lm-eval's exact_match (lm_eval/api/metrics.py, exact_match_hf_evaluate) on one pair."""
    import string

    if ignore_case:
        pred, gold = pred.lower(), gold.lower()
    if ignore_punctuation:
        table = str.maketrans("", "", string.punctuation)
        pred, gold = pred.translate(table), gold.translate(table)
    return float(pred == gold)


# -- Global PIQA ----------------------------------------------------------------------------------

PIQA_REGEX = (r"[Tt]he (?:[Bb]est [Aa]nswer|[Ff]inal [Aa]nswer|[Aa]nswer)[^A-B]*([A-B])|[Aa]nswer\s*:[^A-B]*([A-B])|"
              r"\\boxed\{([A-B])\}")  # nonparallel_generation/_template's regex_pattern, as YAML reads it


def test_global_piqa_thai_generative(tmp_path, srv):
    answers = {"ข้าวเหนียวนุ่ม": "คำตอบ: A",  # gold A: right
               "กันมด": "ข",  # gold B, the Thai label ข: right
               "พริกแห้ง": "ใส่ขวดโหลปิดฝาให้สนิท",  # gold A, named by its text: right
               "เผ็ดน้อยลง": "Answer: A"}  # gold B: wrong
    r, samples = run(tmp_path, srv, "global-piqa", "global_piqa_tha_thai.jsonl", answers, config="tha_thai")
    assert r["scores"]["overall"]["accuracy"]["value"] == pytest.approx(3 / 4)
    assert [s["answer"]["letter"] for s in samples] == ["A", "B", "A", "A"]
    assert r["random_baseline"] == 0.5 and "opt.config:tha_thai" in r["signature"]
    for req in srv.requests():  # the gold never reaches the server
        assert '"label"' not in json.dumps(req, ensure_ascii=False)


def test_global_piqa_lm_eval_variant_scores_as_lm_eval(tmp_path, srv):
    replies = {"bánh chưng": "Phương án A hợp lý. The best answer is: A",  # gold A: right
               "nón lá": "The answer is A... no: the best answer is: B",  # the last match, B; gold B: right
               "cà phê phin": "Đáp án: A"}  # no English answer phrase: lm-eval's [invalid]; gold A: wrong
    r, samples = run(tmp_path, srv, "global-piqa", "global_piqa_vie_latn.jsonl", replies, config="vie_latn",
                     prompt="lm-eval")
    assert r["scores"]["overall"]["exact_match"]["value"] == pytest.approx(2 / 3)
    gold = ["A", "B", "A"]
    want = [lm_eval_exact_match(lm_eval_regex(reply, PIQA_REGEX, -1), g) for reply, g in zip(replies.values(), gold)]
    assert [s["score"]["strict_match:correct"] for s in samples] == want == [1.0, 1.0, 0.0]
    assert [s["answer"] for s in samples][:2] == [{"strict_match": "A"}, {"strict_match": "B"}]
    prompt = next(q["messages"][-1]["content"] for q in srv.requests() if "bánh chưng" in q["messages"][-1]["content"])
    assert prompt.startswith("Given the following situation, which option is more likely to be correct?\n\nSituation:\n"
                             "Để bánh chưng không bị khô khi luộc, ...\n\nOption A: giữ cho nồi luôn ngập nước.")
    assert prompt.endswith('where [answer_letter] is one of A or B.')


def test_global_piqa_tagalog_and_the_cloze_variant_builds():
    bench = get_benchmark("global-piqa", config="tgl_latn", prompt="lm-eval-cloze")
    assert resolve_code(bench.language) == "tl"
    ds = bench.load(str(FX / "global_piqa_tgl_latn.jsonl"))
    assert [it.gold["answer"] for it in ds.items] == ["A", "B"]
    p = bench.render(ds.items[1].to_public())
    assert p.text.startswith("Para lumambot ang karne ng adobo,")
    assert [c.strip() for c in p.choices] == ["lutuin ito nang limang minuto lamang.",
                                             "pakuluan ito nang matagal sa mahinang apoy."]


# -- MMLU-ProX -------------------------------------------------------------------------------------

# lm_eval/tasks/mmlu_prox/lang_libs.py, LANG_LIBS["th"] (question, options, answer-with-steps, -, shot prefix)
TH_LIB = ["คำถาม:", "ตัวเลือก:", "คำตอบ: มาคิดทีละขั้นตอนกัน", None, "A: มาคิดทีละขั้นตอนกัน", "คำตอบคือ ({})"]


def format_cot_example(row: dict, lib: list, including_answer: bool) -> str:
    """lm-eval's mmlu_prox utils.format_cot_example, re-derived."""
    prompt = f"{lib[0]}\n{row['question']}\n{lib[1]}\n"
    for i in range(10):
        if row[f"option_{i}"] is not None:
            prompt += f"{'ABCDEFGHIJ'[i]}. {row[f'option_{i}']}\n"
    if including_answer:
        return prompt + row["cot_content"].replace(lib[4], lib[2]) + "\n\n"
    return prompt + lib[2]


def test_mmlu_prox_thai_default_prompt_reads_the_last_answer_line(tmp_path, srv):
    answers = {"สูบฉีดเลือด": "หัวใจทำหน้าที่นี้\nAnswer: C",  # gold C: right
               "ผลบวกของ 15 และ 27": "15 + 27 = 42. Answer: (B)",  # gold B: right
               "เสียกรุงครั้งที่สอง": "Answer: A... no. Answer: C"}  # the last one, C; gold B: wrong
    r, samples = run(tmp_path, srv, "mmlu-prox", "mmlu_prox_th.jsonl", answers, config="th")
    assert r["scores"]["overall"]["accuracy"]["value"] == pytest.approx(2 / 3)
    assert [s["answer"]["answer"] for s in samples] == ["C", "B", "C"]
    assert set(r["scores"]["groups"]["category"]) == {"biology", "math", "history"}
    assert r["task"]["data"]["revision"] == "8e6106a6c6ce1c5027e66cc338143cf997b2aa09"


def test_mmlu_prox_lm_eval_variant_five_shot_prompt_and_first_match(tmp_path, srv):
    """lm-eval's prompt re-derived (description as the system turn; each shot's question and chain of
    thought as format_cot_example writes it, nothing between them; then the item), with 2 shots from
    the category's validation rows, and its regex filter's first match scored by exact match."""
    answers = {"สูบฉีดเลือด": "หัวใจ คำตอบคือ (C) ไม่ใช่ คำตอบคือ (A)",  # the first phrase: C; gold C: right
               "ผลบวกของ 15 และ 27": "คำตอบคือ B",  # gold B: right
               "เสียกรุงครั้งที่สอง": "Answer: B"}  # no Thai phrase: lm-eval's [invalid]; gold B: wrong
    r, samples = run(tmp_path, srv, "mmlu-prox", "mmlu_prox_th.jsonl", answers, config="th", prompt="lm-eval-th",
                     shots="2", fewshot_data=str(FX / "mmlu_prox_th_validation.jsonl"))
    assert r["scores"]["overall"]["exact_match"]["value"] == pytest.approx(2 / 3)
    regex = r"คำตอบคือ \(?([ABCDEFGHIJ])\)?"  # th/_th_template_yaml
    gold = ["C", "B", "B"]
    want = [lm_eval_exact_match(lm_eval_regex(a, regex, 0), g) for a, g in zip(answers.values(), gold)]
    assert [s["score"]["custom-extract:correct"] for s in samples] == want == [1.0, 1.0, 0.0]
    rows = [json.loads(x) for x in (FX / "mmlu_prox_th.jsonl").read_text(encoding="utf-8").splitlines()]
    shots = [json.loads(x) for x in (FX / "mmlu_prox_th_validation.jsonl").read_text(encoding="utf-8").splitlines()]
    desc = ('ต่อไปนี้เป็นคำถามปรนัย (พร้อมคำตอบ) เกี่ยวกับ ชีววิทยา คิดทีละขั้นตอนแล้วสรุปคำตอบด้วย "คำตอบคือ (X)" '
            'โดยที่ X คือตัวอักษรที่เป็นตัวเลือกที่ถูกต้อง\n')  # th/mmlu_prox_th_biology.yaml's description
    biology = [s for s in shots if s["category"] == "biology"][:2]
    user = "".join(format_cot_example(s, TH_LIB, True) for s in biology) + format_cot_example(rows[0], TH_LIB, False)
    first = next(q for q in srv.requests() if "สูบฉีดเลือด" in q["messages"][-1]["content"])
    assert first["messages"] == [{"role": "system", "content": desc}, {"role": "user", "content": user}]


def test_mmlu_prox_vietnamese_lm_eval_variant_zero_shot(tmp_path, srv):
    answers = {"bơm máu": "Tim bơm máu. Câu trả lời là (C).", "15 cộng 27": "Câu trả lời là (D)"}  # right, wrong
    r, samples = run(tmp_path, srv, "mmlu-prox", "mmlu_prox_vi.jsonl", answers, config="vi", prompt="lm-eval-vi",
                     shots="0")
    assert r["scores"]["overall"]["exact_match"]["value"] == pytest.approx(1 / 2)
    want = [lm_eval_exact_match(lm_eval_regex(a, r"Câu trả lời là \(?([ABCDEFGHIJ])\)?", 0), g)
            for a, g in zip(answers.values(), ["C", "B"])]
    assert [s["score"]["custom-extract:correct"] for s in samples] == want
    msgs = next(q["messages"] for q in srv.requests() if "bơm máu" in q["messages"][-1]["content"])
    assert msgs[0]["content"].startswith("Dưới đây là câu hỏi trắc nghiệm về Sinh học")
    assert msgs[1]["content"].startswith("Câu hỏi:\nCơ quan nào bơm máu đi khắp cơ thể?\nLựa chọn:\nA. Phổi\n")
    assert msgs[1]["content"].endswith("G. Não\nTrả lời: Hãy suy nghĩ từng bước một.")


def test_mmlu_prox_lite_is_its_own_pinned_repository():
    full, lite = get_benchmark("mmlu-prox"), get_benchmark("mmlu-prox", subset="lite")
    assert (full.data.hub, full.data.revision) == ("li-lab/MMLU-ProX", "8e6106a6c6ce1c5027e66cc338143cf997b2aa09")
    assert (lite.data.hub, lite.data.revision) == ("li-lab/MMLU-ProX-Lite", "e82aafb9460529687d3c7e51b401d8dd1dd309dd")
    assert full.signature_parts() != lite.signature_parts()


# -- XStoryCloze -----------------------------------------------------------------------------------

def test_xstorycloze_burmese_and_indonesian_generative(tmp_path, srv):
    r, samples = run(tmp_path, srv, "xstorycloze", "xstorycloze_my.jsonl",
                     {"မောင်မောင်": "အဖြေ: A",  # gold A: right
                      "မိုးသည်": "သူမသည် ခြောက်သွေ့စွာ အိမ်ရောက်ခဲ့သည်။",  # ending A's text; gold B: wrong
                      "ကိုကို": "A"}, config="my")  # gold A: right
    assert r["scores"]["overall"]["accuracy"]["value"] == pytest.approx(2 / 3)
    assert [s["answer"]["letter"] for s in samples] == ["A", "A", "A"]
    assert r["task"]["data"]["revision"] == "681c9fd7fbd1b4957db8d6a5f45eadba059fc2b9"
    r, samples = run(tmp_path / "id", srv, "xstorycloze", "xstorycloze_id.jsonl",
                     {"Budi lupa": "Jawaban: A", "Ibu menanam": "Jawabannya adalah B"}, config="id")
    assert r["scores"]["overall"]["accuracy"]["value"] == 1.0


# -- INCLUDE ---------------------------------------------------------------------------------------

def test_include_vietnamese_and_indonesian_by_domain(tmp_path, srv):
    r, samples = run(tmp_path, srv, "include", "include_vietnamese.jsonl",
                     {"Điện Biên Phủ": "Đáp án là B", "3 × 4": "Đáp án: D", "Sông nào dài nhất": "Sông Mê Kông"},
                     config="Vietnamese")  # golds B, C, A: right, wrong, right (by the option's text)
    assert r["scores"]["overall"]["accuracy"]["value"] == pytest.approx(2 / 3)
    assert r["scores"]["groups"]["domain"]["Social Science"]["accuracy"]["value"] == 1.0
    assert r["scores"]["groups"]["domain"]["STEM"]["accuracy"]["value"] == 0.0
    assert samples[0]["meta"]["lang"] == "vi" and r["task"]["data"]["revision"].startswith("13fb8e06")
    r, _ = run(tmp_path / "id", srv, "include", "include_indonesian.jsonl",
               {"posisi keuangan": "Jawaban: A", "Satuan gaya": "Jawabannya adalah C"}, config="Indonesian")
    assert r["scores"]["overall"]["accuracy"]["value"] == 1.0


# -- SeaExam ---------------------------------------------------------------------------------------

def seaexam_zero_shot_prompt(row: dict) -> str:
    """SeaExam's scripts/utils_data.py: generate_prompt('zero-shot', ...) with dynamic_template 0."""
    letters = ["A", "B", "C", "D", "E", "F", "G", "H"]
    choices = "\n".join(f"{letters[i]}. {row['choices'][i]}" for i in range(len(row["choices"])))
    description = ("The following is a multiple-choice question. Please only give the correct option, without any "
                   "other details or explanations.")
    return description + "\n\n" + row["question"] + "\n" + choices + "\nAnswer:"


def seaexam_match(pred: str, answer: int) -> float:
    """SeaExam's scripts/utils.py compute_acc_score on one reply: the first capital A-E, stripped."""
    import re

    found = re.findall(r"[A-E]", pred.strip())
    return float(["A", "B", "C", "D", "E"][answer] == (found[0] if found else ""))


def test_seaexam_thai_m3exam_generative_by_subject(tmp_path, srv):
    r, samples = run(tmp_path, srv, "seaexam", "seaexam_m3exam_thai.jsonl",
                     {"คำนาม": "คำตอบ: C", "ผลคูณ": "ข", "แม่น้ำสายใด": "Answer: A"}, config="thai")
    assert r["scores"]["overall"]["accuracy"]["value"] == pytest.approx(2 / 3)  # C right, ข = B right, A wrong
    assert r["scores"]["groups"]["subject"]["social-science"]["accuracy"]["value"] == 0.0
    assert samples[0]["meta"]["lang"] == "th"


def test_seaexam_own_prompt_and_first_capital_letter_rule(tmp_path, srv):
    replies = {"Hành tinh": " B.", "Nguyên tố": "Answer: C"}  # B right; "Answer" gives A first: wrong
    r, samples = run(tmp_path, srv, "seaexam", "seaexam_mmlu_vietnamese.jsonl", replies, subset="mmlu",
                     config="vietnamese", prompt="seaexam")
    rows = [json.loads(x) for x in (FX / "seaexam_mmlu_vietnamese.jsonl").read_text(encoding="utf-8").splitlines()]
    want = [seaexam_match(reply, row["answer"]) for reply, row in zip(replies.values(), rows)]
    assert [s["score"]["first_letter:correct"] for s in samples] == want == [1.0, 0.0]
    assert r["scores"]["overall"]["exact_match"]["value"] == pytest.approx(1 / 2)
    sent = [q["messages"] for q in srv.requests()]
    key = json.dumps  # the requests arrive concurrently: compared as sets
    assert sorted(map(key, sent)) == sorted(key([{"role": "user", "content": seaexam_zero_shot_prompt(row)}]) for row in rows)
    assert all(q["max_tokens"] == 4 for q in srv.requests())


# -- IndoMMLU (the hub's CSV file) ----------------------------------------------------------------

def test_indommlu_generative_by_subject_and_level(tmp_path, srv):
    r, samples = run(tmp_path, srv, "indommlu", "indommlu.csv",
                     {"respirasi sel": "Jawaban: B",  # gold B: right
                      "gembira": "senang",  # gold C, the option's text: right
                      "Proklamasi": "Jawabannya adalah C",  # gold B: wrong
                      "mangan": "A. dhahar"})  # gold A: right
    assert r["scores"]["overall"]["accuracy"]["value"] == pytest.approx(3 / 4)
    assert [s["answer"]["letter"] for s in samples] == ["B", "C", "C", "A"]
    assert r["scores"]["groups"]["level"]["Seleksi PTN"]["accuracy"]["value"] == 0.0
    assert [s["input"]["choices"] for s in samples][1] == ["sedih", "marah", "senang"]  # "A. " labels cut
    # 3, 4 and 5 options: the chance floor is their mean
    assert r["random_baseline"] == pytest.approx((1 / 5 + 1 / 3 + 1 / 4 + 1 / 4) / 4)


def test_indommlu_conflicting_licence_shows_in_tasks_list():
    r = cli("tasks", "list", "--language", "id")
    out = r.stdout + r.stderr
    lines = out.splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.lstrip(" *").startswith("indommlu "))
    entry = "\n".join(lines[i:i + 3])
    assert "commercial use: unclear" in entry and "CC-BY-NC-SA-4.0" in entry and "MIT" in entry
    ds = next(f for f in families("id") if f.name == "indommlu").datasheet
    assert ds.commercial is None and "MIT" in ds.licence_note and "CC BY-NC-SA 4.0" in ds.licence_note


@pytest.fixture(scope="module")
def mcq_hub(tmp_path_factory):
    """A loopback hub (glotbench.testing.hub) holding IndoMMLU's CSV and INCLUDE's parquet files at
    their pinned revisions, laid out as the repositories lay them out."""

    from test_tasks_hub import _repo

    root = tmp_path_factory.mktemp("hub")
    _repo(root, "indolem/IndoMMLU", "df6d6d348d7f8a0b1c98b56f4443977b60fae0f5",
          {"IndoMMLU.csv": (FX / "indommlu.csv").read_text(encoding="utf-8"), "README.md": "---\nlicense: mit\n---\n"})
    rows = [json.loads(x) for x in (FX / "include_vietnamese.jsonl").read_text(encoding="utf-8").splitlines()]
    _repo(root, "CohereForAI/include-base-44", "13fb8e065b96c9291768204ab2ebd077cc044809",
          {"Vietnamese/test-00000-of-00001.parquet": rows})
    yield from serve_hub(root)


@pytest.mark.parametrize("task,opts,answers,accuracy", [
    ("indommlu", [], {"respirasi sel": "Jawaban: B", "gembira": "Jawaban: C"}, 2 / 4),  # both right; the two unscripted wrong
    ("include", ["--bench-opt", "config=Vietnamese"], {"Điện Biên Phủ": "Đáp án: B"}, 1 / 3),
])
def test_pinned_hub_files_load_through_the_hub_client(tmp_path, mcq_hub, srv, task, opts, answers, accuracy):
    from test_tasks_hub import glot

    srv.configure(answers=answers)
    proc = glot(tmp_path, mcq_hub, task, *opts, "--model", srv.spec())
    assert proc.returncode == 0, proc.stderr
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    assert res["scores"]["overall"]["accuracy"]["value"] == pytest.approx(accuracy)
    assert res["benchmark"]["data"].startswith("hub:")
