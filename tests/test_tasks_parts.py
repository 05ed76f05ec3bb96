"""The parts a task is composed from, one by one: every extraction step on replies in several scripts,
the scorers (normalised match, numeric, token F1 with the language's segmenter), native option labels
in prompts, and the parts used from Python."""

from __future__ import annotations

import json

import pytest

from glotbench.errors import DataError, SpecError
from glotbench.registry import get_benchmark
from glotbench.tasks import Task
from glotbench.tasks.files import Where
from glotbench.tasks.pipelines import build_pipeline
from glotbench.tasks.benchmark import TaskBenchmark
from glotbench.testing.conformance import check_benchmark

OPTIONS = {"A": "ວຽງຈັນ", "B": "ຫຼວງພະບາງ", "C": "ປາກເຊ", "D": "ສະຫວັນນະເຂດ"}


def pipe(*steps):
    return build_pipeline("p", list(steps), Where("t"))


@pytest.mark.parametrize("steps,reply,answer,failure", [
    (["option_letter"], "ຄຳຕອບແມ່ນ ຂ", "B", None),
    (["option_letter"], "ຫຼວງ\u200bພະບາງ", "B", None),  # the option's text, with a zero-width space inside
    ([{"option_letter": {"text": False}}], "ຫຼວງພະບາງ", None, "no_letter"),
    (["option_letter"], "คำตอบคือ ค", "C", None),
    (["option_letter"], "الإجابة هي د", "D", None),
    ([{"option_letter": {"rule": "first_standalone"}}], "B is wrong, the answer is C", "B", None),
    (["option_letter"], "B is wrong, the answer is C", "C", None),
    (["option_text"], "I would say ປາກເຊ.", "C", None),
    (["option_text"], "ວຽງຈັນ or ປາກເຊ", None, "no_option"),
    (["number"], "ຜົນລວມແມ່ນ ໑໒", "12", None),
    (["number"], "ចម្លើយ\u200b៣៤", "34", None),
    ([{"number": {"marker": "####"}}], "3 steps #### ٤٢", "42", None),
    ([{"json_field": "answer"}], 'Sure: ```json\n{"answer": "ສະບາຍດີ"}\n```', "ສະບາຍດີ", None),
    ([{"tag": "answer"}, "number"], "work... <answer>๗</answer>", "7", None),
    ([{"tag": "answer"}], "no tag here", None, "no_tag"),
    ([{"tag": {"name": "answer", "missing": "keep"}}, "free_text"], "plain", "plain", None),
    ([{"regex": r"Đáp án: (\w+)"}], "Đáp án: Hà_Nội", "Hà_Nội", None),
    ([{"regex": {"pattern": r"\d+", "last": True}}], "1 then 2 then 3", "3", None),
    (["first_line"], "\n  Xin chào\nthế giới", "Xin chào", None),
    (["strip_think", "free_text"], "<think>hmm</think> ok", "ok", None),
    (["strip_think"], "<think>never closed", None, "think_unclosed"),
    (["remove_zero_width", "free_text"], "ក\u200bខ", "កខ", None),
    (["free_text"], "   ", None, "empty"),
])
def test_each_step(steps, reply, answer, failure):
    got = pipe(*steps)(reply, OPTIONS)
    assert (got.answer, got.failure) == (answer, failure)


def test_bad_steps_are_named():
    for steps, msg in ((["nope"], "unknown step 'nope'"), (["regex"], "regex needs an argument"),
                       ([{"regex": "("}], "not a valid pattern"), ([{"option_letter": {"rule": "x"}}], "rule must be"),
                       ([{"tag": {"name": "a", "missing": "maybe"}}], "missing must be fail or keep"),
                       ([{"a": 1, "b": 2}], "a step is a name")):
        with pytest.raises(DataError, match=msg):
            pipe(*steps)


def _task(tmp_path, scorer, gold, rows, language="th", extract=None, **extra):
    (tmp_path / "d.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    spec = Task(name="t", version="1", language=language, data={"file": str(tmp_path / "d.jsonl")},
                fields={"id": "id", "public": {"q": "q"}, "gold": gold}, prompt={"user": "{{ q }}"},
                extract=extract or {"answer": ["free_text"]}, scorer=scorer, **extra)
    bench = TaskBenchmark(spec)
    return bench, bench.load()


def test_exact_match_with_named_normalisation(tmp_path):
    bench, data = _task(tmp_path, {"kind": "exact_match", "normalise": ["nfkc", "casefold", "remove_punct",
                                                                        "collapse_spaces", "strip"]},
                        {"answer": "a"}, [{"id": 1, "q": "x", "a": "Hà Nội"}, {"id": 2, "q": "y", "a": ["ＡＢＣ", "abd"]}])
    assert bench.score({"answer": "  hà   NỘI. "}, data[0]).stats["answer:correct"] == 1.0
    assert bench.score({"answer": "abc!"}, data[1]).stats["answer:correct"] == 1.0  # NFKC folds the fullwidth letters
    assert bench.score({"answer": "Ha Noi"}, data[0]).stats["answer:correct"] == 0.0  # tones are not removed
    assert "exact_match(nfkc+casefold+remove_punct+collapse_spaces+strip)" in bench.signature_parts()["scorer"]
    assert check_benchmark(bench, data, [{"answer": "x"}]) == []


def test_token_f1_with_the_languages_segmenter(tmp_path):
    from glotbench.metrics.token_f1 import token_f1

    bench, data = _task(tmp_path, {"kind": "token_f1"}, {"answers": ["a"]},
                        [{"id": 1, "q": "x", "a": "แม่น้ำเจ้าพระยา"}])
    got = bench.score({"answer": "แม่น้ำโขง"}, data[0]).stats["answer:f1"]
    assert got == pytest.approx(token_f1("แม่น้ำโขง", ["แม่น้ำเจ้าพระยา"], "th")) and 0 < got < 1
    assert "seg:pythainlp" in bench.signature_parts()["scorer"]


def test_numeric_match_reads_native_digits_in_gold_and_reply(tmp_path):
    bench, data = _task(tmp_path, "numeric_match", {"answer": "a"}, [{"id": 1, "q": "x", "a": "๑,๒๐๐"}],
                        extract={"n": ["number"]})
    assert bench.score({"n": "1200"}, data[0]).stats["n:correct"] == 1.0
    assert bench.extract("ตอบ ๑๒๐๐ บาท", data[0].to_public()).answer == {"n": "1200"}


def test_native_option_labels_in_the_prompt(tmp_path):
    (tmp_path / "d.jsonl").write_text(json.dumps({"q": "เมืองหลวง?", "a": "กรุงเทพ", "b": "เชียงใหม่", "ans": "0"},
                                                 ensure_ascii=False) + "\n")
    spec = Task(name="t", version="1", language="th", data={"file": str(tmp_path / "d.jsonl")},
                fields={"public": {"q": "q"}, "choices": ["a", "b"], "gold": {"answer": "{{ ans | letter }}"}},
                prompt={"user": "{{ q }}\n{{ options }}", "labels": "native"}, extract={"l": ["option_letter"]},
                scorer="option_accuracy", loglik={"continuations": "labels"})
    bench = TaskBenchmark(spec)
    item = bench.load()[0]
    assert bench.render(item.to_public()).messages[0]["content"] == "เมืองหลวง?\nก. กรุงเทพ\nข. เชียงใหม่"
    assert bench.extract("ตอบ ก", item.to_public()).answer == {"l": "A"}
    loglik = TaskBenchmark(spec, method="loglik")
    assert loglik.render(item.to_public()).choices == (" ก", " ข")
    with pytest.raises(SpecError, match="the language 'vi' has no native labels"):
        TaskBenchmark(spec.model_copy(update={"language": "vi"}))


def test_a_classification_of_seven_labels_refuses_option_letter():
    with pytest.raises(DataError, match="extract.topic: option_letter reads A-E and the task has 7 choices"):
        spec = get_benchmark("sib200").spec
        TaskBenchmark(spec.model_copy(update={"extract": {"topic": ["option_letter"]}}))


def test_an_lm_eval_shaped_template_renders_as_written(tmp_path):
    """lm-eval's belebele doc_to_text and doc_to_target, as its YAML writes them, over the columns kept
    under their own names: method calls (`.strip()`, `.index()`) work in the sandbox."""
    row = {"flores_passage": "P1", "question": "  Q1? ", "mc_answer1": "a", "mc_answer2": "b", "mc_answer3": "c",
           "mc_answer4": "d", "correct_answer_num": "3"}
    (tmp_path / "b.jsonl").write_text(json.dumps(row) + "\n")
    spec = Task(name="belebele-lmeval", version="0", data={"file": str(tmp_path / "b.jsonl")},
                fields={"public": ["flores_passage", "question", "mc_answer1", "mc_answer2", "mc_answer3", "mc_answer4"],
                        "choices": {"fixed": ["A", "B", "C", "D"]},
                        "gold": {"answer": "{{ ['1', '2', '3', '4'].index(correct_answer_num) | letter }}"}},
                prompt={"user": "unused", "text": "P: {{flores_passage}}\nQ: {{question.strip()}}\nA: {{mc_answer1}}\n"
                                                  "B: {{mc_answer2}}\nC: {{mc_answer3}}\nD: {{mc_answer4}}\nAnswer："},
                loglik={"continuations": "texts"}, extract={"l": ["option_letter"]}, scorer="option_accuracy")
    bench = TaskBenchmark(spec, method="loglik")
    item = bench.load()[0]
    prompt = bench.render(item.to_public())
    assert prompt.text == "P: P1\nQ: Q1?\nA: a\nB: b\nC: c\nD: d\nAnswer：" and prompt.choices == (" A", " B", " C", " D")
    assert item.gold["answer"] == "C"


@pytest.mark.parametrize("fmt,body", [
    ("csv", 'id,q,a\n1,"ສອງ, ບວກ ສອງ",4\n2,x,5\n'),
    ("tsv", "id\tq\ta\n1\tສອງ ບວກ ສອງ\t4\n2\tx\t5\n"),
    ("json", '[{"id": 1, "q": "ສອງ ບວກ ສອງ", "a": "4"},\n {"id": 2, "q": "x", "a": "5"}]'),
])
def test_local_files_in_each_format(tmp_path, fmt, body):
    (tmp_path / f"d.{fmt}").write_text(body, encoding="utf-8")
    spec = Task(name="t", version="1", data={"file": str(tmp_path / f"d.{fmt}")},
                fields={"id": "id", "public": {"q": "q"}, "gold": {"answer": "a"}}, prompt={"user": "{{ q }}"},
                extract={"n": ["number"]}, scorer="numeric_match")
    data = TaskBenchmark(spec).load()
    assert [it.id for it in data] == ["1", "2"] and data[0].public["q"].startswith("ສອງ")
