"""`--bench-opt prompt=lm-eval`: the library tasks render lm-evaluation-harness's own prompts, byte
for byte, and score as it scores. The reference is lm-eval itself: its shipped task YAMLs, built by
its TaskManager into ConfigurableTasks, on the same rows (tests/lm_eval_ref.py): every request's
context and continuation (zero-shot, few-shot, chat single- and multi-turn) and every item's acc,
acc_norm, BLEU and chrF."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lm_eval_ref import lm_task, requests
from glotbench.scoring import score_output
from glotbench.registry import get_benchmark
from glotbench.tasks.loglik import reply_text


def write(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def ours(bench: Any, data: str) -> tuple[Any, list[Any]]:
    ds = bench.load(data)
    return ds, [bench.render(it.to_public()) for it in ds]


def as_requests(prompts: list[Any]) -> list[list[tuple[str, str]]]:
    return [[(p.text, c) for c in p.choices] for p in prompts]


def same_scores(bench: Any, ds: Any, task: Any, lls: list[list[float]]) -> None:
    """lm-eval's acc and acc_norm (and acc_bytes) of each document from these log-likelihoods are
    glotbench's accuracy under norm sum, char and byte."""
    for item, doc, ll in zip(ds, task.eval_docs, lls):
        prompt = bench.render(item.to_public())
        s = score_output(bench, item, reply_text(prompt.choices, ll, [1] * len(ll)))
        ref = task.process_results(doc, [(x, False) for x in ll])
        assert s.score.stats["loglik_sum:correct"] == ref["acc"]
        if "acc_norm" in ref:
            assert s.score.stats["loglik_char:correct"] == ref["acc_norm"]
        if "acc_bytes" in ref:
            assert s.score.stats["loglik_byte:correct"] == ref["acc_bytes"]


# -- Belebele ------------------------------------------------------------------------------------

BELEBELE = [
    {"link": "https://example.org/p0", "question_number": 1, "flores_passage": "ນະຄອນຫຼວງວຽງຈັນ ຕັ້ງຢູ່ແຄມແມ່ນ້ຳຂອງ.",
     "question": "  ວຽງຈັນຕັ້ງຢູ່ໃສ?\n", "mc_answer1": "ແຄມແມ່ນ້ຳຂອງ", "mc_answer2": "ເທິງພູ", "mc_answer3": "ໃນທະເລ",
     "mc_answer4": "\"ບໍ່ຮູ້\"", "correct_answer_num": "1", "ds": "2023-05-03"},
    {"link": "https://example.org/p0", "question_number": 2, "flores_passage": "ນະຄອນຫຼວງວຽງຈັນ ຕັ້ງຢູ່ແຄມແມ່ນ້ຳຂອງ.",
     "question": "ແມ່ນ້ຳໃດ?", "mc_answer1": "ແມ່ນ້ຳຂອງ", "mc_answer2": "ແມ່ນ້ຳງື່ມ", "mc_answer3": "ແມ່ນ້ຳອູ",
     "mc_answer4": "ບໍ່ມີ", "correct_answer_num": "1", "ds": "2023-05-03"},
    {"link": "https://example.org/p1", "question_number": 1, "flores_passage": "ລາວ\u200bມີ\u200bພູ\u200bຫຼາຍ.",
     "question": "ລາວມີຫຍັງຫຼາຍ?", "mc_answer1": "ທະເລ", "mc_answer2": "ທະເລຊາຍ", "mc_answer3": "ພູ", "mc_answer4": "ນ້ຳກ້ອນ",
     "correct_answer_num": "3", "ds": "2023-05-03"},
    {"link": "https://example.org/p2", "question_number": 1, "flores_passage": "ຂໍ້ຄວາມ with 'quotes' and a \\ backslash.",
     "question": "Which one?", "mc_answer1": "one", "mc_answer2": "two", "mc_answer3": "three", "mc_answer4": "four",
     "correct_answer_num": "4", "ds": "2023-05-03"},
]


@pytest.mark.parametrize("shots", [0, 2])
def test_belebele_renders_lm_evals_requests(tmp_path, monkeypatch, shots):
    data = write(tmp_path / "lao.jsonl", BELEBELE)
    task = lm_task("belebele", "belebele_lao_Laoo", {"test": BELEBELE}, monkeypatch,
                   dataset=("facebook/belebele", "lao_Laoo"), shots=shots)
    bench = get_benchmark("belebele", config="lao_Laoo", prompt="lm-eval", shots=shots)
    ds, prompts = ours(bench, data)
    assert as_requests(prompts) == requests(task)
    # scored as lm-eval scores: acc (the summed log-likelihood) and acc_norm (divided by characters)
    same_scores(bench, ds, task, [[-1.0, -0.5, -2.0, -3.0], [-0.1, -0.2, -0.3, -0.4], [-3.0, -2.0, -1.0, -9.0],
                                  [-2.0, -2.0, -2.0, -1.5]])
    sig = bench.signature(ds)
    assert "prompt_variant:lm-eval" in sig and "method:loglik" in sig and "norm:sum" in sig


@pytest.mark.parametrize("multiturn", [False, True])
def test_belebele_chat_turns_are_lm_evals(tmp_path, monkeypatch, multiturn):
    """A chat model's messages (method=generate), as lm-eval hands them to a chat template, with the
    few-shot examples in one user turn or as turns of their own (fewshot_as_multiturn)."""
    data = write(tmp_path / "lao.jsonl", BELEBELE)
    task = lm_task("belebele", "belebele_lao_Laoo", {"test": BELEBELE}, monkeypatch, shots=2)
    bench = get_benchmark("belebele", config="lao_Laoo", prompt="lm-eval", method="generate", shots=2,
                          multiturn=multiturn)
    _, prompts = ours(bench, data)
    ref = requests(task, chat=True, multiturn=multiturn)
    assert [list(p.messages) for p in prompts] == [json.loads(r[0][0]) for r in ref]


# -- Global-MMLU ---------------------------------------------------------------------------------

def mmlu_row(subject: str, split: str, i: int, question: str, answer: str) -> dict[str, Any]:
    return {"sample_id": f"{subject}/{split}/{i}", "subject": subject, "subject_category": "STEM", "question": question,
            "option_a": f"{i} a", "option_b": f"{i} b", "option_c": f"{i} c", "option_d": f"{i} d", "answer": answer,
            "required_knowledge": "[]", "time_sensitive": "[]", "reference": "[]", "culture": "[]", "region": "[]",
            "country": "[]", "cultural_sensitivity_label": "CA", "is_annotated": True}


def test_global_mmlu_renders_lm_evals_requests_per_subject(tmp_path, monkeypatch):
    """Five-shot as lm-eval's global_mmlu_full tasks: the subject's dev questions, first n."""
    subjects = ("astronomy", "anatomy")
    test = [mmlu_row(s, "test", i, f" Câu hỏi {s} số {i}?  ", "ABCD"[i]) for s in subjects for i in range(3)]
    dev = [mmlu_row(s, "dev", i, f"Ví dụ {s} {i}", "DCBA"[i]) for s in subjects for i in range(4)]
    data, dev_file = write(tmp_path / "vi.jsonl", test), write(tmp_path / "vi_dev.jsonl", dev)
    bench = get_benchmark("global-mmlu", config="vi", prompt="lm-eval", shots=3, fewshot_data=dev_file)
    ds, prompts = ours(bench, data)
    for subject in subjects:
        task = lm_task("global_mmlu/full/vi", f"global_mmlu_full_vi_{subject}", {"test": test, "dev": dev}, monkeypatch,
                       dataset=("CohereForAI/Global-MMLU", "vi"), shots=3)
        mine = [p for it, p in zip(ds, prompts) if it.meta["subject"] == subject]
        assert as_requests(mine) == requests(task)


# -- XNLI ----------------------------------------------------------------------------------------

XNLI = [
    {"premise": "ฝนตกหนักทั้งวัน", "hypothesis": "วันนี้มีฝนตก", "label": 0},
    {"premise": "เขาพูดว่า \"ไม่\" และ 'ไป'", "hypothesis": "เขาตอบ\\ปฏิเสธ", "label": 2},
    {"premise": "ร้านเปิดทุกวัน", "hypothesis": "ร้านขายข้าว", "label": 1},
]
XNLI_TRAIN = [{"premise": f"ประโยค {i}", "hypothesis": f"ข้อความ {i}", "label": i % 3} for i in range(6)]


@pytest.mark.parametrize("shots", [0, 2])
def test_xnli_renders_lm_evals_requests(tmp_path, monkeypatch, shots):
    """No prompt; each choice the whole sentence "premise, ถูกต้อง? ใช่, hypothesis" (quotes and a
    backslash survive lm-eval's list literal); few-shot drawn as lm-eval's sampler draws."""
    data, train = write(tmp_path / "th.jsonl", XNLI), write(tmp_path / "train.jsonl", XNLI_TRAIN)
    task = lm_task("xnli", "xnli_th", {"train": XNLI_TRAIN, "validation": XNLI, "test": XNLI}, monkeypatch,
                   dataset=("facebook/xnli", "th"), shots=shots)
    bench = get_benchmark("xnli", config="th", prompt="lm-eval", shots=shots, fewshot_data=train)
    ds, prompts = ours(bench, data)
    assert as_requests(prompts) == requests(task)
    same_scores(bench, ds, task, [[-20.0, -19.0, -25.0], [-30.0, -31.0, -29.5], [-5.0, -4.0, -6.0]])


# -- XCOPA ---------------------------------------------------------------------------------------

XCOPA = {
    "th": [{"premise": "ผู้ชายเปิดก๊อกน้ำ", "choice1": "ห้องน้ำสะอาด", "choice2": "น้ำไหลออกมา", "question": "effect",
            "label": 1, "idx": 0, "changed": False},
           {"premise": "เด็กร้องไห้", "choice1": "เด็กหกล้ม", "choice2": "เด็กหัวเราะ", "question": "cause", "label": 0,
            "idx": 1, "changed": False}],
    "vi": [{"premise": "Cô ấy mở cửa sổ. ", "choice1": "Phòng trở nên thoáng.", "choice2": "Ánh đèn tắt.",
            "question": "effect", "label": 0, "idx": 0, "changed": False},
           {"premise": "Tôi đói.", "choice1": "Ăn cơm", "choice2": "Ô tô hỏng", "question": "cause", "label": 0, "idx": 1,
            "changed": False}],
}


@pytest.mark.parametrize("config", ["th", "vi"])
@pytest.mark.parametrize("shots", [0, 1])
def test_xcopa_renders_lm_evals_requests(tmp_path, monkeypatch, config, shots):
    """lm-eval drops the premise's last character (a period it expects) and adds the language's
    connector; each choice with its first character lower-cased (Ánh -> ánh)."""
    rows = XCOPA[config]
    data = write(tmp_path / "x.jsonl", rows)
    task = lm_task("xcopa", f"xcopa_{config}", {"validation": rows, "test": rows}, monkeypatch,
                   dataset=("cambridgeltl/xcopa", config), shots=shots)
    bench = get_benchmark("xcopa", config=config, prompt="lm-eval", shots=shots, fewshot_data=data)
    ds, prompts = ours(bench, data)
    assert as_requests(prompts) == requests(task)
    same_scores(bench, ds, task, [[-4.0, -9.0], [-12.0, -11.0]])


def test_xcopa_lm_eval_drops_the_last_letter_of_a_premise_without_a_period(tmp_path):
    bench = get_benchmark("xcopa", config="th", prompt="lm-eval")
    _, prompts = ours(bench, write(tmp_path / "x.jsonl", XCOPA["th"]))
    assert prompts[0].text == "ผู้ชายเปิดก๊อกน้ ดังนั้น"  # ผู้ชายเปิดก๊อกน้ำ loses its last vowel sign, as lm-eval renders it


# -- FLORES --------------------------------------------------------------------------------------

PAIRS = [("The river flows through the capital.", "El río atraviesa la capital."),
         ("Many tourists visit the old temple.", "Muchos turistas visitan el templo antiguo."),
         ("The market opens early.", "El mercado abre temprano."),
         ("It rained all day.", "Llovió todo el día.")]


def flores_plus(split: str) -> list[dict[str, Any]]:
    rows = []
    for code, script, k in (("eng", "Latn", 0), ("spa", "Latn", 1)):
        rows += [{"id": i, "iso_639_3": code, "iso_15924": script, "glottocode": "x", "text": p[k], "url": "u",
                  "domain": "wikinews", "topic": "t", "has_image": 0, "has_hyperlink": 0, "last_updated": "1"}
                 for i, p in enumerate(PAIRS) if (i < 2) == (split == "dev")]
    return rows


@pytest.mark.parametrize("shots", [0, 1])
def test_flores_renders_lm_evals_translation_requests_and_scores_its_bleu_and_chrf(tmp_path, monkeypatch, shots):
    """lm-eval has no FLORES task for Lao, Thai, Khmer or Burmese: its FLORES tasks' prompt is
    checked on one it has (spanish_bench_flores_en-es, facebook/flores), then BLEU and chrF as its
    aggregations compute them (sacrebleu's defaults, the text as written)."""
    from glotbench.languages import PROFILES, LanguageProfile

    monkeypatch.setitem(PROFILES, "spa", LanguageProfile("spa", "Spanish", (r"respuesta",), (r"es",), (), ()))
    lm_rows = {split: [{"id": i, "sentence_eng_Latn": e, "sentence_spa_Latn": s} for i, (e, s) in enumerate(PAIRS)
                       if (i < 2) == (split == "dev")] for split in ("dev", "devtest")}
    task = lm_task("spanish_bench/flores_es", "spanish_bench_flores_en-es", lm_rows, monkeypatch,
                   dataset=("facebook/flores", "all"), shots=shots)
    data, dev = write(tmp_path / "devtest.jsonl", flores_plus("devtest")), write(tmp_path / "dev.jsonl", flores_plus("dev"))
    bench = get_benchmark("flores-plus", source="eng_Latn", target="spa_Latn", prompt="lm-eval", shots=shots,
                          fewshot_data=dev)
    ds, prompts = ours(bench, data)
    ref = requests(task)
    assert [p.text for p in prompts] == [r[0][0] for r in ref]
    assert [list(p.text_stop) for p in prompts] == [r[0][1]["until"] for r in ref]
    replies = [" El río cruza la capital.", "Llueve todo el día"]
    samples = [score_output(bench, it, r) for it, r in zip(ds, replies)]
    got = bench.aggregate(samples, ds, resamples=0)["overall"]
    items = [task.process_results(doc, [r]) for doc, r in zip(task.eval_docs, replies)]
    agg = task.aggregation()
    for metric in ("bleu", "chrf"):
        assert got[metric]["value"] == pytest.approx(agg[metric]([x[metric] for x in items]), abs=1e-9)
