"""`--bench-opt wrong_language=zero` (benchmarks/settings.py, issue 36): EuroEval's chrF rule
reproduced exactly, and the property that replacing a reply by a wrong-language one never raises
any metric, over every scorer of task files and the built-ins with an expected output language."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glotbench.metrics import ScoredSample, aggregate, zero_credit
from glotbench.registry import get_benchmark
from glotbench.scoring import score_output

TASK = """\
name: zero-{scorer}
version: "1.0"
language: {lang}
data:
  file: items.jsonl
fields:
  id: id
  public: {{question: q}}
  gold: {{answer: a}}
prompt:
  user: "{{{{ question }}}}"
scorer: {spec}
"""
# Lao target texts (the references) and replies of every kind: right-language ones near and far
# from the reference, and wrong-language ones (English, Thai script for Lao).
LAO = ["ຂ້ອຍໄປໂຮງຮຽນທຸກມື້ກັບໝູ່ເພື່ອນ.", "ມື້ນີ້ອາກາດດີຫຼາຍ ພວກເຮົາໄປທ່ຽວກັນ.", "ນະຄອນຫຼວງວຽງຈັນຕັ້ງຢູ່ແຄມແມ່ນ້ຳຂອງ."]
WRONG = ["I go to school every day with my friends.", "ฉันไปโรงเรียนทุกวันกับเพื่อน",
         "The capital Vientiane lies on the bank of the Mekong river."]
SCORERS = {"corpus": "{kind: corpus, metrics: [chrf, chrf++, bleu]}", "token_f1": "token_f1", "rouge": "{kind: rouge}"}


def _task(tmp: Path, scorer: str) -> str:
    import json

    path = tmp / f"{scorer}.yaml"
    path.write_text(TASK.format(scorer=scorer.replace("_", "-"), lang="lo", spec=SCORERS[scorer]), encoding="utf-8")
    (tmp / "items.jsonl").write_text("".join(json.dumps({"id": f"i{i}", "q": f"q{i}", "a": a}, ensure_ascii=False) + "\n"
                                             for i, a in enumerate(LAO)), encoding="utf-8")
    return str(path)


def _values(bench, replies) -> dict[str, float]:
    items = list(bench.load())
    samples = [score_output(bench, it, r) for it, r in zip(items, replies)]
    scored = [ScoredSample(s.id, 0, s.meta, s.score) for s in samples]
    agg = aggregate(bench.run_metrics(bench.dataset(items)), scored, (), resamples=0)
    return {k: v["value"] for k, v in agg["overall"].items() if isinstance(v, dict) and "value" in v}


def _no_rise(before: dict[str, float], after: dict[str, float]) -> None:
    for name, v in after.items():
        if v is None or math.isnan(v):
            continue
        assert before[name] is not None and not math.isnan(before[name]), (name, before[name], v)
        assert v <= before[name] + 1e-9, (name, before[name], v)


_reply = st.one_of(st.sampled_from(LAO + WRONG), st.sampled_from(LAO).map(lambda s: s[: len(s) // 2]),
                   st.text(alphabet="ກຂຄງຈຊຍດຕຖທນບປຜຝພຟມຢຣລວສຫອຮະາິີຶືຸູເແໂໃໄ່້ ", min_size=0, max_size=40))


@pytest.mark.parametrize("scorer", sorted(SCORERS))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(replies=st.lists(_reply, min_size=3, max_size=3), which=st.integers(0, 2), wrong=st.sampled_from(WRONG))
def test_a_wrong_language_reply_never_raises_a_task_files_metrics(tmp_path, scorer, replies, which, wrong):
    bench = get_benchmark(_task(tmp_path, scorer), wrong_language="zero")
    before = _values(bench, replies)
    after = _values(bench, [wrong if i == which else r for i, r in enumerate(replies)])
    _no_rise(before, after)


# Built-ins with an expected output language, each with a wrong-language reply for its items.
BUILTINS = {"laobench-translation": "Это совсем другой язык, а не тот, который нужен здесь.",
            "deepsea-wmt24pp": "Это совсем другой язык, а не тот, который нужен здесь.",
            "deepsea-crosssum": "Это совсем другой язык, а не тот, который нужен здесь.",
            "deepsea-xquad": "Это совсем другой язык, а не тот, который нужен здесь.",
            "laobench-arena-prompts": "This answer is written in English, not in Lao at all.",
            "aragen-answers": "This answer is written in English, not in Arabic at all.",
            "vi-diacritics": "ຂ້ອຍໄປໂຮງຮຽນທຸກມື້ກັບໝູ່ເພື່ອນ ແລະ ຄູ.",
            "vi-tone-errors": "ຂ້ອຍໄປໂຮງຮຽນທຸກມື້ກັບໝູ່ເພື່ອນ ແລະ ຄູ."}


@pytest.mark.parametrize("name", sorted(BUILTINS))
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_a_wrong_language_reply_never_raises_a_builtins_metrics(name, data):
    bench = get_benchmark(name, wrong_language="zero")
    items = list(bench.load())[:6]
    pool = [str(v) for it in items for v in (*it.gold.values(), *it.public.values()) if isinstance(v, str)]
    replies = [data.draw(st.sampled_from(pool + [""])) for _ in items]
    which = data.draw(st.integers(0, len(items) - 1))
    scored = lambda rs: [ScoredSample(s.id, 0, s.meta, s.score)  # noqa: E731
                         for s in (score_output(bench, it, r) for it, r in zip(items, rs))]
    metrics = bench.run_metrics(bench.dataset(items))
    before = aggregate(metrics, scored(replies), (), resamples=0)["overall"]
    after = aggregate(metrics, scored([BUILTINS[name] if i == which else r for i, r in enumerate(replies)]), (),
                      resamples=0)["overall"]
    _no_rise({k: v["value"] for k, v in before.items() if isinstance(v, dict) and "value" in v},
             {k: v["value"] for k, v in after.items() if isinstance(v, dict) and "value" in v})


def test_the_replaced_reply_is_flagged_and_scores_zero():
    bench = get_benchmark("laobench-translation", wrong_language="zero")
    it = next(i for i in bench.load() if i.public["direction"] == "en-lo")
    right = score_output(bench, it, it.gold["reference"])
    wrong = score_output(bench, it, "I go to school every day with my friends and my teacher.")
    assert right.score.stats["chrf++.sentence"] == pytest.approx(1.0) and "wrong_language" not in right.flags
    assert wrong.score.stats["chrf++.sentence"] == 0.0 and wrong.score.stats["chrf++.sentences"] == 1.0
    assert "wrong_language" in wrong.flags and wrong.score.failure is None
    assert "|wrong_language:zero(py3langid-" in "|" + "|".join(f"{k}:{v}" for k, v in bench.run_signature_parts().items())


def test_chrf_is_euroevals_rule_exactly(tmp_path):
    """EuroEval (euroeval/metrics/sacrebleu.py, ChrF.__call__): the mean over replies of
    sacrebleu's CHRF(char_order=6, word_order, beta).sentence_score(prediction, [reference]).score
    times 1 (right language) or 0; here on an English-target task (no segmentation)."""
    import json

    from sacrebleu.metrics import CHRF

    path = tmp_path / "en.yaml"
    path.write_text(TASK.format(scorer="en", lang="en", spec="{kind: corpus, metrics: [chrf, chrf++]}"), encoding="utf-8")
    refs = ["The cat sat on the mat by the door.", "Rain is expected in the north tomorrow.",
            "She bought three apples and a loaf of bread.", "The river floods every year in August."]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps({"id": f"i{i}", "q": "q", "a": a}) + "\n"
                                                  for i, a in enumerate(refs)), encoding="utf-8")
    replies = ["The cat sat on a mat near the door.", "ຝົນຈະຕົກຢູ່ພາກເໜືອໃນມື້ອື່ນນີ້ແນ່ນອນ",  # Lao: wrong script
               "She bought apples and bread.", "Sungai itu banjir setiap tahun pada bulan Agustus di desa kami."]
    bench = get_benchmark(str(path), wrong_language="zero")
    got = _values(bench, replies)
    in_language = [1.0, 0.0, 1.0, 0.0]  # Indonesian: identified as id, not English
    for name, order in (("chrf", 0), ("chrf++", 2)):
        metric = CHRF(char_order=6, word_order=order, beta=2)
        want = sum(metric.sentence_score(hypothesis=h, references=[r]).score * p
                   for h, r, p in zip(replies, refs, in_language)) / len(refs)
        assert got[name] == pytest.approx(want, abs=1e-9)


def test_zero_credit_keeps_denominators_and_zeroes_numerators():
    """SEA-HELM's rule (seahelm_tasks/instruction_following/ifeval/if_eval.py: `lang_normalized_result`
    is False where the language is wrong, the count of items unchanged): a pass counts only in the
    expected language."""
    from glotbench.metrics import MacroMetric, RatioMetric

    metrics = (RatioMetric("acc", "correct", "items"), MacroMetric("macro", ("a", "b")),
               RatioMetric("answered_share", "answered", "items"), RatioMetric("precision", "correct", "answered"))
    stats = {"correct": 1.0, "items": 1.0, "correct:a": 1.0, "n:a": 1.0, "answered": 1.0}
    # `answered` is a denominator (of precision): kept, or precision would be undefined rather than 0
    assert zero_credit(metrics, stats) == {"correct": 0.0, "items": 1.0, "correct:a": 0.0, "n:a": 1.0, "answered": 1.0}


@pytest.mark.parametrize("scorer", ["exact_match", "numeric_match"])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(replies=st.lists(st.sampled_from(["2", "7", "8", "seven", "", "ສອງ"]), min_size=3, max_size=3),
       which=st.integers(0, 2))
def test_zero_credit_never_raises_label_and_number_metrics(tmp_path, scorer, replies, which):
    """Option, number and exact-match tasks have no expected output language (the policy is refused
    for them), but their metrics obey the same rule: an item's credit taken away never raises one."""
    import json

    path = tmp_path / "t.yaml"
    path.write_text(TASK.format(scorer="n", lang="lo", spec=scorer), encoding="utf-8")
    (tmp_path / "items.jsonl").write_text("".join(json.dumps({"id": f"i{i}", "q": "q", "a": a}) + "\n"
                                                  for i, a in enumerate(["2", "7", "8"])), encoding="utf-8")
    bench = get_benchmark(str(path))
    items = list(bench.load())
    metrics = bench.run_metrics(bench.dataset(items))
    samples = [score_output(bench, it, r) for it, r in zip(items, replies)]
    rows = [ScoredSample(s.id, 0, s.meta, s.score) for s in samples]
    before = aggregate(metrics, rows, (), resamples=0)["overall"]
    s = samples[which].score
    rows[which] = ScoredSample(samples[which].id, 0, samples[which].meta,
                               type(s)(zero_credit(metrics, s.stats), s.flags, s.failure))
    after = aggregate(metrics, rows, (), resamples=0)["overall"]
    _no_rise({k: v["value"] for k, v in before.items() if isinstance(v, dict) and "value" in v},
             {k: v["value"] for k, v in after.items() if isinstance(v, dict) and "value" in v})


def test_a_run_with_wrong_language_zero_through_the_loopback_server(srv, cache_path, tmp_path):
    """laobench-translation against the loopback server, every reply right but sample-029 (en-lo)
    answered in English: under `zero` that reply is scored, flagged, and its sentence counts 0, so
    en-lo's chrF++ is the mean of 100 and 0; under `fail` it is sacrebleu's corpus chrF++ with an
    empty hypothesis, which is higher."""
    from test_checks_language import _opts, _translation_answers

    from glotbench.engine.evaluate import evaluate

    srv.configure(answers=_translation_answers())
    zero = evaluate("laobench-translation", srv.spec(),
                    _opts(tmp_path, cache_path, name="zero", bench_options=(("wrong_language", "zero"),))).results
    fail = evaluate("laobench-translation", srv.spec(),
                    _opts(tmp_path, cache_path, name="fail", bench_options=(("wrong_language", "fail"),))).results
    assert "|wrong_language:zero(py3langid-" in zero["signature"]
    assert zero["counts"]["failures"] == {} and zero["checks"]["language"]["policy"] == "zero"
    z = zero["scores"]["groups"]["direction"]
    assert z["en-lo"]["chrf++"]["value"] == pytest.approx(50.0)
    assert z["lo-en"]["chrf++"]["value"] == pytest.approx(100.0)
    flag = evaluate("laobench-translation", srv.spec(), _opts(tmp_path, cache_path, name="flag")).results
    # the figures in docs/metrics.md: flag (the English reply scored) 57.93, fail (empty) 64.02, zero 50.00
    assert flag["scores"]["groups"]["direction"]["en-lo"]["chrf++"]["value"] == pytest.approx(57.93, abs=0.005)
    assert fail["scores"]["groups"]["direction"]["en-lo"]["chrf++"]["value"] == pytest.approx(64.02, abs=0.005)
    import json

    rows = [json.loads(x) for x in (tmp_path / "zero" / "samples.jsonl").read_text().splitlines()]
    bad = next(r for r in rows if r["id"] == "sample-029")
    assert "wrong_language" in bad["flags"] and bad["failure"] is None and bad["answer"] == "Thank you very much."
    # rescore keeps the run's policy: as_run reproduces the stored figures per direction
    from glotbench.checks.rescore import rescore

    got = rescore([str(tmp_path / "zero")], ["segmenter=charcluster"])["runs"][0]
    for metric in ("chrf++", "bleu"):
        for g, v in got["stored"][metric]["groups"].items():
            assert got["scores"]["as_run"][metric]["groups"][g] == pytest.approx(v, abs=1e-9), (metric, g)
