"""The issue-#34 multiple-choice families' `prompt=lm-eval*` variants against lm-evaluation-harness
itself (as installed: its task YAMLs built by its TaskManager, tests/lm_eval_ref.py): every request
and every filtered, scored reply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lm_eval_ref import filtered, lm_task, requests
from glotbench.registry import get_benchmark
from glotbench.scoring import score_output

FX = Path(__file__).resolve().parent / "fixtures" / "tasks"


def rows(name: str) -> list[dict]:
    return [json.loads(x) for x in (FX / name).read_text(encoding="utf-8").splitlines()]


def ours(bench, data: str):
    ds = bench.load(data)
    return ds, [bench.render(it.to_public()) for it in ds]


def test_mmlu_prox_thai_five_shot_chat_and_text_are_lm_evals(monkeypatch):
    test, val = rows("mmlu_prox_th.jsonl"), rows("mmlu_prox_th_validation.jsonl")
    bench = get_benchmark("mmlu-prox", config="th", prompt="lm-eval-th", shots=2,
                          fewshot_data=str(FX / "mmlu_prox_th_validation.jsonl"))
    ds, prompts = ours(bench, str(FX / "mmlu_prox_th.jsonl"))
    for category in ("biology", "math", "history"):
        task = lm_task("mmlu_prox/th", f"mmlu_prox_th_{category}", {"test": test, "validation": val}, monkeypatch,
                       dataset=("li-lab/MMLU-ProX", "th"), shots=2)
        mine = [p for it, p in zip(ds, prompts) if it.meta["category"] == category]
        ref = requests(task)
        assert [p.text for p in mine] == [r[0][0] for r in ref]
        assert list(mine[0].text_stop) == list(ref[0][0][1]["until"])
        task = lm_task("mmlu_prox/th", f"mmlu_prox_th_{category}", {"test": test, "validation": val}, monkeypatch,
                       shots=2)
        chat = requests(task, chat=True)
        assert [list(p.messages) for p in mine] == [json.loads(r[0][0]) for r in chat]


@pytest.mark.parametrize("reply", ["คำตอบคือ (C) หรือ คำตอบคือ (A)", "คำตอบคือ c", "Answer: C", "", "คำตอบคือ (C)."])
def test_mmlu_prox_thai_replies_score_as_lm_eval(monkeypatch, reply):
    test = rows("mmlu_prox_th.jsonl")[:1]  # biology, gold C
    task = lm_task("mmlu_prox/th", "mmlu_prox_th_biology", {"test": test, "validation": rows("mmlu_prox_th_validation.jsonl")},
                   monkeypatch, shots=0)
    requests(task)
    ref = filtered(task, [reply])["custom-extract"][0]["exact_match"]
    bench = get_benchmark("mmlu-prox", config="th", prompt="lm-eval-th", shots=0)
    s = score_output(bench, bench.load(str(FX / "mmlu_prox_th.jsonl")).items[0], reply)
    assert s.score.stats["custom-extract:correct"] == ref


# -- Global PIQA ----------------------------------------------------------------------------------

def test_global_piqa_generation_requests_are_lm_evals(monkeypatch):
    test = rows("global_piqa_vie_latn.jsonl")
    task = lm_task("global_piqa/nonparallel_generation", "global_piqa_nonparallel_generation_vie_latn", {"test": test},
                   monkeypatch, dataset=("mrlbenchmarks/global-piqa-nonparallel", "vie_latn"))
    bench = get_benchmark("global-piqa", config="vie_latn", prompt="lm-eval")
    _, prompts = ours(bench, str(FX / "global_piqa_vie_latn.jsonl"))
    ref = requests(task)
    assert [p.text for p in prompts] == [r[0][0] for r in ref]
    task = lm_task("global_piqa/nonparallel_generation", "global_piqa_nonparallel_generation_vie_latn", {"test": test},
                   monkeypatch)
    assert [list(p.messages) for p in prompts] == [json.loads(r[0][0]) for r in requests(task, chat=True)]


@pytest.mark.parametrize("reply", ["The best answer is: A", "the final answer: b", "Answer: B ... \\boxed{A}",
                                   "The answer is A. No, the answer is B", "Đáp án: A", ""])
def test_global_piqa_replies_score_as_lm_eval(monkeypatch, reply):
    test = rows("global_piqa_vie_latn.jsonl")[:1]  # gold A
    task = lm_task("global_piqa/nonparallel_generation", "global_piqa_nonparallel_generation_vie_latn", {"test": test},
                   monkeypatch)
    requests(task)
    ref = filtered(task, [reply])["strict_match"][0]["exact_match"]
    bench = get_benchmark("global-piqa", config="vie_latn", prompt="lm-eval")
    s = score_output(bench, bench.load(str(FX / "global_piqa_vie_latn.jsonl")).items[0], reply)
    assert s.score.stats["strict_match:correct"] == ref


def test_global_piqa_cloze_requests_are_lm_evals(monkeypatch):
    test = rows("global_piqa_tha_thai.jsonl")
    task = lm_task("global_piqa/nonparallel_cloze", "global_piqa_nonparallel_cloze_tha_thai", {"test": test},
                   monkeypatch, dataset=("mrlbenchmarks/global-piqa-nonparallel", "tha_thai"))
    bench = get_benchmark("global-piqa", config="tha_thai", prompt="lm-eval-cloze")
    _, prompts = ours(bench, str(FX / "global_piqa_tha_thai.jsonl"))
    assert [[(p.text, c) for c in p.choices] for p in prompts] == requests(task)


# -- XStoryCloze ----------------------------------------------------------------------------------

@pytest.mark.parametrize("shots", [0, 1])
def test_xstorycloze_requests_and_scores_are_lm_evals(monkeypatch, shots):
    from test_tasks_lm_eval import same_scores

    evals, train = rows("xstorycloze_my.jsonl"), rows("xstorycloze_id.jsonl")
    task = lm_task("xstorycloze", "xstorycloze_my", {"train": train, "eval": evals}, monkeypatch,
                   dataset=("juletxara/xstory_cloze", "my"), shots=shots)
    bench = get_benchmark("xstorycloze", config="my", prompt="lm-eval", shots=shots,
                          fewshot_data=str(FX / "xstorycloze_id.jsonl"))
    ds, prompts = ours(bench, str(FX / "xstorycloze_my.jsonl"))
    assert [[(p.text, c) for c in p.choices] for p in prompts] == requests(task)
    same_scores(bench, ds, task, [[-1.0, -2.0], [-0.5, -0.4], [-3.0, -3.5]])


# -- INCLUDE --------------------------------------------------------------------------------------

def test_include_requests_and_scores_are_lm_evals(monkeypatch):
    from test_tasks_lm_eval import same_scores

    test = rows("include_vietnamese.jsonl")
    bench = get_benchmark("include", config="Vietnamese", prompt="lm-eval")
    ds, prompts = ours(bench, str(FX / "include_vietnamese.jsonl"))
    for domain in ("social_science", "stem"):
        task = lm_task("include/default/Vietnamese", f"include_base_44_vietnamese_{domain}", {"test": test}, monkeypatch,
                       dataset=("CohereForAI/include-base-44", "Vietnamese"))
        mine = [(it, p) for it, p in zip(ds, prompts) if it.meta["domain"].lower().replace(" ", "_") == domain]
        assert [[(p.text, c) for c in p.choices] for _, p in mine] == requests(task)
    task = lm_task("include/default/Vietnamese", "include_base_44_vietnamese_social_science", {"test": test}, monkeypatch)
    social = type(ds)(tuple(it for it in ds if it.meta["domain"] == "Social Science"), ds.source, ds.sha256)
    same_scores(bench, social, task, [[-2.0, -1.0, -3.0, -4.0], [-0.1, -0.2, -0.3, -0.4]])
