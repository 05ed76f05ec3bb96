"""The shipped task library runs generatively on fixtures in each dataset's own hub schema, against a
real OpenAI-compatible server on loopback: Lao, Khmer, Burmese, Thai, Vietnamese and Arabic replies
written the way models write them (zero-width spaces, native labels, the option's text, a label word),
each with the score it must give."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import cli
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.registry import get_benchmark
from glotbench.testing.conformance import check_benchmark

FX = Path(__file__).resolve().parent / "fixtures" / "tasks"
LIBRARY = Path(__file__).resolve().parents[1] / "src" / "glotbench" / "tasks" / "library"


def run(tmp_path, srv, task: str, data: str, answers: dict[str, str], **opts: str):
    srv.configure(answers=answers)
    res = evaluate(task, srv.spec(), RunOptions(data=str(FX / data), bench_options=tuple(opts.items()), progress=False,
                                                out=str(tmp_path / "r"), cache_path=str(tmp_path / "c.sqlite")))
    return res.results, [json.loads(x) for x in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]


# (config, {question substring: reply}, headline accuracy, answers in item order)
BELEBELE = [
    ("lao_Laoo", {"ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ": "ຄຳຕອບ:\u200bກ", "ວຽງຈັນຕັ້ງຢູ່ແຄມແມ່ນ້ຳໃດ": "ຄຳຕອບ: ຄ",
                  "ລາວຢູ່ໃນທະວີບໃດ": "ອາຊີ"}, 2 / 3, ["A", "C", "C"]),
    ("khm_Khmr", {"តើរាជធានីនៃកម្ពុជាគឺជាអ្វី": "ចម្លើយ\u200bគឺ\u200bB", "តើទន្លេណាហូរកាត់កម្ពុជា": "ទន្លេ\u200bមេគង្គ",
                  "តើអង្គរវត្តស្ថិតនៅខេត្តណា": "ចម្លើយ: C"}, 2 / 3, ["B", "A", "C"]),
    ("mya_Mymr", {"မြန်မာနိုင်ငံ၏ အကြီးဆုံးမြို့ကား": "အဖြေ\u200bမှာ\u200bB", "ဖြတ်စီးသော မြစ်ကား": "A",
                  "ရွှေတိဂုံစေတီ မည်သည့်မြို့": "ရန်ကုန်"}, 1.0, ["B", "A", "C"]),
    ("tha_Thai", {"เมืองหลวงของประเทศไทยคือเมืองใด": "คำตอบคือ ข", "แม่น้ำใดไหลผ่าน": "ตอบ ค",
                  "ประเทศไทยมีกี่จังหวัด": "๗๗"}, 1.0, ["B", "C", "A"]),
    ("vie_Latn", {"Thủ đô của Việt Nam là thành phố nào": "Đáp án là C", "Sông nào chảy qua": "Đáp án đúng: A",
                  "Món ăn nổi tiếng nào": "Câu trả lời: D"}, 2 / 3, ["C", "A", "D"]),
    ("arb_Arab", {"ما هي عاصمة مصر": "الإجابة هي ج", "أي نهر يجري": "النيل", "ما هي عاصمة السعودية": "الإجابة: B"},
     1.0, ["C", "A", "B"]),
]


@pytest.mark.parametrize("config,answers,accuracy,letters", BELEBELE, ids=[b[0] for b in BELEBELE])
def test_belebele_generative_in_six_scripts(tmp_path, srv, config, answers, accuracy, letters):
    r, samples = run(tmp_path, srv, "belebele", f"belebele_{config}.jsonl", answers, config=config)
    assert r["scores"]["overall"]["accuracy"]["value"] == pytest.approx(accuracy)
    assert [s["answer"]["letter"] for s in samples] == letters
    assert r["counts"]["failures"] == {} and r["random_baseline"] == 0.25
    assert f"opt.config:{config}" in r["signature"] and "method:generate" in r["signature"]
    clustered = config == "lao_Laoo"  # two of its three questions share a passage
    c = r["scores"]["clusters"]
    assert (c["key"], c["clusters"], c["items"], c["items_without_key"]) == ("passage", 2 if clustered else 3, 3, 0)
    assert r["scores"]["overall"]["accuracy"]["ci_method"] == ("wilson_effective" if clustered else "wilson")
    assert "accuracy[first_letter]" in r["scores"]["overall"]  # the second pipeline, side by side
    # the gold never reaches the server
    for req in srv.requests():
        assert "correct_answer_num" not in json.dumps(req, ensure_ascii=False)


def test_zero_width_spaces_are_word_breaks_for_the_letter_rules(tmp_path, srv):
    """Without reading U+200B as a break, `ចម្លើយ\\u200bគឺ\\u200bB` glues B to the Khmer word before it
    and the release-style first_standalone rule finds no letter; with it, both pipelines agree."""
    r, samples = run(tmp_path, srv, "belebele", "belebele_khm_Khmr.jsonl",
                     {"តើរាជធានីនៃកម្ពុជាគឺជាអ្វី": "ចម្លើយ\u200bគឺ\u200bB"}, config="khm_Khmr")
    assert samples[0]["answer"] == {"letter": "B", "first_letter": "B"}


def test_a_headline_failure_is_counted_while_other_pipelines_score(tmp_path, srv):
    r, samples = run(tmp_path, srv, "xnli", "xnli_th.jsonl", {"ฝนตกหนัก": "entailment", "เขาซื้อรถ": "I cannot tell",
                                                             "ร้านปิด": "Answer: C"}, config="th")
    overall = r["scores"]["overall"]
    assert overall["accuracy"]["value"] == pytest.approx(2 / 3)  # the letter rule reads "entailment" as option A
    assert overall["no_answer_rate"]["value"] == pytest.approx(1 / 3)
    assert overall["accuracy[label]"]["value"] == pytest.approx(1 / 3)
    assert r["counts"]["failures"] == {"no_letter": 1}
    assert samples[1]["failure"] == "no_letter" and samples[1]["answer"] is None  # every pipeline failed


LIBRARY_RUNS = [
    ("sib200", "sib200_lao_Laoo.jsonl", {"ທີມບານເຕະ": "sports", "ທ່ານໝໍແນະນຳ": "Topic: health.",
                                         "ນັກທ່ອງທ່ຽວ": "geography"}, {"config": "lao_Laoo"}, "accuracy", 2 / 3),
    ("sib200", "sib200_tha_Thai.jsonl", {"รัฐสภา": "politics", "นักวิทยาศาสตร์": "science/technology",
                                         "ภาพยนตร์": "entertainment\u200b"}, {"config": "tha_Thai"}, "accuracy", 1.0),
    ("sib200", "sib200_khm_Khmr.jsonl", {"ភ្នំឱរ៉ាល់": "travel", "ក្រុមបាល់ទាត់": "sports", "គ្រូពេទ្យ": "health"},
     {"config": "khm_Khmr"}, "accuracy", 2 / 3),
    ("xnli", "xnli_th.jsonl", {"ฝนตกหนัก": "Answer: A", "เขาซื้อรถ": "neutral", "ร้านปิด": "คำตอบคือ ค"},
     {"config": "th"}, "accuracy", 1.0),
    ("xnli", "xnli_vi.jsonl", {"Trời mưa": "Đáp án: A", "Anh ấy mua": "Đáp án: C", "Cửa hàng đóng": "contradiction"},
     {"config": "vi"}, "accuracy", 2 / 3),
    ("xnli", "xnli_ar.jsonl", {"أمطرت": "الإجابة: أ", "اشترى": "ب", "المتجر مغلق": "الإجابة هي C"},
     {"config": "ar"}, "accuracy", 1.0),
    ("xcopa", "xcopa_th.jsonl", {"ผู้ชายเปิดก๊อกน้ำ": "Answer: B", "เด็กร้องไห้": "เด็กหกล้ม"}, {"config": "th"},
     "accuracy", 1.0),
    ("xcopa", "xcopa_vi.jsonl", {"Người đàn ông": "Đáp án: A", "Đứa trẻ khóc": "Đáp án: A"}, {"config": "vi"},
     "accuracy", 0.5),
    ("global-mmlu", "global_mmlu_vi.jsonl", {"Hành tinh nào": "Đáp án: B", "Tết Nguyên Đán": "Đáp án: C",
                                            "Thủ đô của Việt Nam là gì": "Hà Nội"}, {"config": "vi"}, "accuracy", 2 / 3),
    ("global-mmlu", "global_mmlu_ar.jsonl", {"الأقرب إلى الشمس": "الإجابة: ب", "يصوم المسلمون": "رمضان",
                                            "ما هي عاصمة مصر": "الإجابة: د"}, {"config": "ar"}, "accuracy", 2 / 3),
]


@pytest.mark.parametrize("task,data,answers,opts,metric,value", LIBRARY_RUNS,
                         ids=[f"{t}-{o.get('config')}" for t, _, _, o, _, _ in LIBRARY_RUNS])
def test_library_tasks_generative(tmp_path, srv, task, data, answers, opts, metric, value):
    r, _ = run(tmp_path, srv, task, data, answers, **opts)
    assert r["scores"]["overall"][metric]["value"] == pytest.approx(value)
    assert r["benchmark"]["name"] == task and r["task"]["data"]["revision"]


def test_global_mmlu_groups_by_subject_category_and_cultural_sensitivity(tmp_path, srv):
    r, _ = run(tmp_path, srv, "global-mmlu", "global_mmlu_ar.jsonl", {"الأقرب إلى الشمس": "الإجابة: ب"}, config="ar")
    groups = r["scores"]["groups"]
    assert set(groups["cultural_sensitivity"]) == {"CA", "CS", "UNK"}
    assert groups["cultural_sensitivity"]["CA"]["accuracy"]["value"] == 1.0
    assert set(groups["subject_category"]) == {"STEM", "Humanities", "Social Sciences"}


def test_global_mmlu_five_shot_from_the_dev_file(tmp_path, srv):
    r, _ = run(tmp_path, srv, "global-mmlu", "global_mmlu_vi.jsonl", {}, config="vi", shots="1",
               fewshot_data=str(FX / "global_mmlu_vi_dev.jsonl"))
    by_subject = {q["messages"][-1]["content"].split("about ")[-1].split(",")[0]: q["messages"][-1]["content"]
                  for q in srv.requests()}
    astronomy = by_subject["astronomy"]  # the shot is the dev question of the item's own subject
    assert astronomy.count("about astronomy") == 2 and "1 + 1 = ?" in astronomy and "2 + 2 = ?" not in astronomy
    assert '"Answer: X".\nAnswer: B\n\nThe following' in astronomy  # the shot, answered
    import hashlib

    dev = hashlib.sha256((FX / "global_mmlu_vi_dev.jsonl").read_bytes()).hexdigest()[:12]
    assert "shots:1" in r["signature"] and f"fewshot:dev=file:{dev},first_n,seed=1234,match=subject" in r["signature"]


def test_flores_plus_direction_scores_as_sacrebleu_with_the_target_segmenter(tmp_path, srv):
    from glotbench.metrics.corpus import SacreMetric

    answers = {"The river flows": "ແມ່ນ້ຳໄຫຼຜ່ານນະຄອນຫຼວງ.", "The market opens": "ຕະຫຼາດເປີດຕອນເຊົ້າ.\nA second line",
               "Many tourists": ""}
    r, samples = run(tmp_path, srv, "flores-plus", "flores_plus_devtest.jsonl", answers, source="eng_Latn",
                     target="lao_Laoo")
    refs = ["ແມ່ນ້ຳໄຫຼຜ່ານນະຄອນຫຼວງ.", "ຕະຫຼາດເປີດແຕ່ເຊົ້າ.", "ນັກທ່ອງທ່ຽວຫຼາຍຄົນຢ້ຽມຢາມວັດເກົ່າ."]
    hyps = ["ແມ່ນ້ຳໄຫຼຜ່ານນະຄອນຫຼວງ.", "ຕະຫຼາດເປີດຕອນເຊົ້າ.\nA second line", ""]  # the empty reply scores as ""
    for kind in ("chrf++", "bleu"):
        want = SacreMetric(kind, "lo").corpus_score(hyps, [[x] for x in refs], resamples=0).estimate.value
        assert r["scores"]["overall"][kind]["value"] == pytest.approx(want)
    first = SacreMetric("chrf++", "lo").corpus_score([hyps[0], "ຕະຫຼາດເປີດຕອນເຊົ້າ.", ""], [[x] for x in refs],
                                                     resamples=0).estimate.value
    assert r["scores"]["overall"]["chrf++[first_line]"]["value"] == pytest.approx(first)
    assert "seg:laonlp" in r["signature"] and r["counts"]["failures"] == {"empty": 1}
    assert srv.requests()[0]["messages"][1]["content"].startswith("Translate this text from English into Lao.")
    # the input-unchanged floor: the English sources copied as the translations, sacrebleu's chrF++ of them
    sources = [json.loads(ln) for ln in (FX / "flores_plus_devtest.jsonl").read_text(encoding="utf-8").splitlines()]
    src = {s["id"]: s["text"] for s in sources if s["iso_639_3"] == "eng"}
    copied = SacreMetric("chrf++", "lo").corpus_score([src[i] for i in sorted(src, key=int)], [[x] for x in refs],
                                                      resamples=0).estimate.value
    assert r["input_floor"]["field"] == "text" and r["input_floor"]["items"] == 3
    assert r["input_floor"]["overall"]["chrf++"] == pytest.approx(copied) and copied < r["scores"]["overall"]["chrf++"]["value"]
    # Khmer and Burmese targets from the same file: their own segmenters
    for target, lang in (("khm_Khmr", "km"), ("mya_Mymr", "my")):
        bench = get_benchmark("flores-plus", target=target)
        assert bench.lang == lang and "seg:charcluster" in bench.scorer.signature()
        assert len(bench.load(str(FX / "flores_plus_devtest.jsonl"))) == 3


@pytest.mark.parametrize("task,data,opts", [
    ("belebele", "belebele_mya_Mymr.jsonl", {"config": "mya_Mymr"}), ("sib200", "sib200_tha_Thai.jsonl", {"config": "tha_Thai"}),
    ("flores-plus", "flores_plus_devtest.jsonl", {"target": "khm_Khmr"}), ("xnli", "xnli_vi.jsonl", {"config": "vi"}),
    ("xcopa", "xcopa_th.jsonl", {"config": "th"}), ("global-mmlu", "global_mmlu_ar.jsonl", {"config": "ar"}),
    ("belebele", "belebele_lao_Laoo.jsonl", {"method": "loglik"})])
def test_library_tasks_keep_the_benchmark_contract(task, data, opts):
    bench = get_benchmark(task, **opts)
    dataset = bench.load(str(FX / data))
    answers = [{p: "A" for p in bench.pipelines}] if bench.spec.scorer.kind == "option_accuracy" else \
        [{p: "text" for p in bench.pipelines}]
    assert check_benchmark(bench, dataset, answers) == []


def test_every_library_file_is_named_as_its_task_and_pins_a_commit():
    from glotbench.tasks import task_names
    from glotbench.tasks.files import read_task_file

    files = sorted(LIBRARY.glob("*.yaml"))
    assert {f.stem for f in files} >= {"belebele", "sib200", "flores-plus", "xnli", "xcopa", "global-mmlu",
                                       "global-piqa", "mmlu-prox", "xstorycloze", "include", "seaexam", "indommlu",
                                       "sea-ifeval", "ntrex-128", "mkqa", "xquad", "tydiqa-goldp"}
    # no commit hash of the dataset could be found; the file says where it was looked for, and a
    # download asks for --bench-opt revision=SHA (tests/test_library_ifgen.py)
    unpinned = {"sea-ifeval"}
    for f in files:
        spec, _ = read_task_file(f)
        # the revision as a run fills it in (mmlu-prox picks one of two repositories' by its `subset`)
        pinned = re.fullmatch(r"[0-9a-f]{40}", get_benchmark(spec.name).data.revision) is not None
        assert spec.name == f.stem and pinned is (spec.name not in unpinned)
        assert spec.name in task_names()


def test_cli_runs_a_library_task_by_name_with_its_config(tmp_path, srv):
    """The issue's command line: glotbench run belebele --bench-opt config=lao_Laoo --data FILE --model ..."""
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ": "ຄຳຕອບ: ກ"})
    proc = cli("run", "belebele", "--bench-opt", "config=lao_Laoo", "--data", str(FX / "belebele_lao_Laoo.jsonl"),
               "--model", srv.spec(), "--out", str(tmp_path / "r"), "--no-progress", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    assert "belebele v1.0" in proc.stdout and "random baseline: 25.0%" in proc.stdout
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    assert res["scores"]["overall"]["accuracy"]["value"] == pytest.approx(1 / 3)
    assert res["benchmark"]["spec"] == "belebele" and res["config"]["bench_options"] == {"config": "lao_Laoo"}


def test_report_compare_board_and_sweeps_read_task_runs(tmp_path, srv):
    from glotbench.engine.sweep import load_sweep
    from glotbench.report.compare import compare_runs

    runs = []
    for i, reply in enumerate(("ຄຳຕອບ: ກ", "ຄຳຕອບ: ຂ")):
        srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ": reply, "ລາວຢູ່ໃນທະວີບໃດ": "ຄຳຕອບ: ຄ"})
        proc = cli("run", "belebele", "--data", str(FX / "belebele_lao_Laoo.jsonl"), "--model", srv.spec(f"m{i}"),
                   "--out", str(tmp_path / f"r{i}"), "--no-progress", "--no-cache")
        assert proc.returncode == 0, proc.stderr
        runs.append(str(tmp_path / f"r{i}"))
    cmp = compare_runs(*runs, resamples=200)
    assert cmp["items"] == 3
    assert cli("report", runs[0], "--html").returncode == 0 and (tmp_path / "r0" / "report.html").is_file()
    board = cli("board", *runs)
    assert board.returncode == 0 and "belebele" in board.stdout
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(f"models: [{{spec: '{srv.spec()}'}}]\nbenchmarks: [{{name: belebele, options: {{config: lao_Laoo}}, "
                     f"data: '{FX / 'belebele_lao_Laoo.jsonl'}'}}, {{name: xcopa, data: '{FX / 'xcopa_th.jsonl'}'}}]\n")
    assert len(load_sweep(str(sweep)).benchmarks) == 2
