"""DeepSEA: the five scorers' rules, isolation, coverage, converters, archive check, diagnostic."""

from __future__ import annotations

import json
import zipfile
from decimal import Decimal

import pytest
from sacrebleu.metrics import CHRF

from conftest import cli
from glotbench.benchmarks.deepsea import DeepSEATask, extract_tag, load_official_json, mcq_letter, mgsm_number, xquad_answer
from glotbench.benchmarks.deepsea_tools import check_predictions, convert, score_predictions, verify_archive
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import DataError, GlotbenchError


# -- rules -----------------------------------------------------------------------------------

@pytest.mark.parametrize("reply, expected", [
    ("<answer>1,234</answer>", Decimal("1234")),
    ("<answer>1.50</answer>", Decimal("1.5")),
    ("<answer>-7</answer>", Decimal("-7")),
    ("first <answer>3</answer> then <answer>4</answer>", Decimal("4")),  # the last tag
    ("<answer>The total is 12 apples, so 12.</answer>", Decimal("12")),  # last number in the tag
    ("<answer>๑,๒๓๔</answer>", Decimal("1234")),  # native digits (default on)
    ("The answer is 5", None),  # no tag: no answer
    ("<answer>5", None),  # unclosed
])
def test_mgsm_number(reply, expected):
    got = mgsm_number(reply)
    # An exact Decimal (a float would compare equal to 1.5 and hide rounding), or None when no answer.
    assert got == expected and type(got) is type(expected)


def test_one_number_extractor_with_named_comma_rules():
    """MGSM and the numeric match read numbers through glotbench.extract.last_number; only the comma
    rule differs, by name. DeepSEA scores gold as its row validator reads it (parse_number)."""
    from glotbench.extract import last_number, parse_number
    from glotbench.items import Item
    from glotbench.metrics.numeric import extract_number

    assert extract_number("1234,567") == last_number("1234,567") == Decimal("567")  # not groups of three
    assert mgsm_number("<answer>1234,567</answer>") == last_number("1234,567", commas="between_digits") == Decimal("1234567")
    assert mgsm_number("<answer>๑,๒๓๔.๕</answer>") == extract_number("๑,๒๓๔.๕") == Decimal("1234.5")
    with pytest.raises(ValueError, match="commas must be one of grouped, between_digits"):
        last_number("1", commas="dots")
    # A gold written with Arabic-Indic digits and the Arabic decimal separator: valid on load, scored
    # as 4.5 (it was a scorer_error: Decimal() does not read the separator).
    item = Item.create("ar/00000", {"question": "q", "lang": "ar"}, {"answer_number": "٤٫٥"}, {"lang": "ar"})
    assert parse_number("٤٫٥") == Decimal("4.5")
    assert DeepSEATask("mgsm").score(Decimal("4.50"), item).stats["correct"] == 1.0


def test_mgsm_native_digits_option():
    assert mgsm_number("<answer>๔๒</answer>", native_digits=False) is None
    assert mgsm_number("<answer>٤٢</answer>") == 42


@pytest.mark.parametrize("reply, case, letter", [
    ("<answer>B</answer>", "upper_first", "B"),
    ("I pick (c), no wait, D", "upper_first", "D"),  # upper case first, wherever it is
    ("<answer>c</answer>", "upper_first", "C"),  # lower-case fallback
    ("<answer>c</answer>", "upper_only", None),
    ("<answer>A dog</answer> but also B", "upper_first", "A"),  # the tag's content wins
    ("Answer unknown", "upper_first", None),
])
def test_indommlu_letters(reply, case, letter):
    assert mcq_letter(reply, case) == letter


def test_xquad_extraction():
    assert xquad_answer("<answer>sông Hồng</answer>", "vi") == "sông Hồng"
    assert xquad_answer("Đọc kỹ thì câu trả lời là sông Hồng", "vi") == "sông Hồng"
    assert xquad_answer("คำตอบคือ แม่น้ำเจ้าพระยา", "th") == "แม่น้ำเจ้าพระยา"
    assert xquad_answer("I think The answer is: Jawa", "id") == "Jawa"  # the English phrase as fallback
    assert xquad_answer("sông Hồng", "vi") is None  # the whole text is not accepted


def test_tags():
    assert extract_tag("<summary>a</summary>", "summary") == ("a", "closed")
    assert extract_tag("<summary>a", "summary") == ("", "unclosed")
    assert extract_tag("a", "summary") == (None, "missing")


def _run(srv, cache_path, tmp_path, task, answers, **kw):
    srv.configure(answers=answers)
    return evaluate(f"deepsea-{task}", srv.spec(), RunOptions(progress=False, cache_path=cache_path,
                                                              out=str(tmp_path / f"r{len(list(tmp_path.iterdir()))}"), **kw)).results


def test_indommlu_macro_over_subjects_not_pooled(srv, cache_path, tmp_path):
    bench = DeepSEATask("indommlu")
    items = bench.load()
    # Indonesian: right on Biologi only (1 of 4 subjects, one item each) -> 25; Vietnamese: all right.
    answers = {}
    for it in items:
        prompt = bench.render(it.to_public()).messages[0]["content"]
        right = it.meta["lang"] == "vi" or it.meta["subject"] == "Biologi"
        answers[prompt] = f"<answer>{it.gold['answer'] if right else 'D'}</answer>"
    res = _run(srv, cache_path, tmp_path, "indommlu", answers)
    by_lang = res["scores"]["groups"]["lang"]
    assert by_lang["id"]["accuracy_macro_subjects"]["value"] == pytest.approx(25.0)
    assert by_lang["vi"]["accuracy_macro_subjects"]["value"] == pytest.approx(100.0)
    assert res["scores"]["overall"] == {}


def test_crosssum_is_corpus_chrf_and_unclosed_tag_is_empty(srv, cache_path, tmp_path):
    bench = DeepSEATask("crosssum")
    items = [it for it in bench.load() if it.meta["lang"] == "en"]
    hyps = ["The council approved parks in the north.", "Floods closed schools."]
    answers = {bench.render(it.to_public()).messages[0]["content"]: f"<summary>{h}</summary>" for it, h in zip(items, hyps)}
    res = _run(srv, cache_path, tmp_path, "crosssum", answers)
    refs = [it.gold["summary"] for it in items]
    corpus = CHRF().corpus_score(hyps, [refs]).score
    sentence_mean = sum(CHRF().sentence_score(h, [r]).score for h, r in zip(hyps, refs)) / 2
    got = res["scores"]["groups"]["lang"]["en"]["corpus_chrf2"]["value"]
    assert got == corpus and got != pytest.approx(sentence_mean)
    assert DeepSEATask("crosssum").extract("<summary>unfinished", items[0].to_public()).answer == ""


def test_wmt_metric_name_and_metricx_refusal():
    assert DeepSEATask("wmt24pp").metrics[0].name == "corpus_chrf2_not_metricx24"
    with pytest.raises(GlotbenchError, match="MetricX-24.*not run"):
        DeepSEATask("wmt24pp", metric="metricx24")
    out = cli("run", "deepsea-wmt24pp", "--bench-opt", "metric=metricx24", "--model", "python:helpers:async_echo")
    assert out.returncode == 2 and "MetricX-24" in out.stderr and "Traceback" not in out.stderr


def test_gold_and_extra_fields_never_reach_the_model(srv, cache_path, tmp_path):
    data = {"task": "xquad", "languages": {"vi": [{"context": "Hà Nội là thủ đô.", "question": "Thủ đô là gì?",
                                                   "answers": ["GOLD-SECRET"], "cot_answer": "COT-SECRET",
                                                   "fewshot": "SHOT-SECRET"}]}}
    p = tmp_path / "x.json"
    p.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    _run(srv, cache_path, tmp_path, "xquad", {}, data=str(p))
    sent = json.dumps(srv.requests(), ensure_ascii=False)
    assert "Hà Nội là thủ đô." in sent
    assert not any(s in sent for s in ("GOLD-SECRET", "COT-SECRET", "SHOT-SECRET"))


def test_resource_groups_only_when_complete(tmp_path, srv, cache_path):
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps({"high": ["id", "th", "vi"], "low": ["lo"]}))
    res = _run(srv, cache_path, tmp_path, "mgsm", {}, bench_options=(("groups", str(groups)),))
    rg = res["scores"]["resource_groups"]
    assert rg["high"]["languages"] == ["id", "th", "vi"] and rg["high"]["value"] == 0.0
    assert rg["low"] == {"value": None, "missing": ["lo"]}
    assert rg["southeast_asia"]["value"] is None  # lo missing; English never counts


# -- data ------------------------------------------------------------------------------------

def test_load_official_json_checks(tmp_path):
    p = tmp_path / "m.json"
    p.write_text(json.dumps({"task": "mgsm", "languages": {"th": [{"question": "q"}]}}))
    with pytest.raises(DataError, match="th example 0: missing field 'answer_number'"):
        load_official_json(p, "mgsm")
    with pytest.raises(DataError, match="sha256 is"):
        load_official_json(p, "mgsm", expected_sha256="0" * 64)
    with pytest.raises(DataError, match="holds task 'mgsm', not 'xquad'"):
        load_official_json(p, "xquad")


def test_predictions_coverage_is_strict():
    data = {"th": [{"subject": "a"}, {"subject": "b"}], "vi": [{"subject": "a"}]}
    assert check_predictions("mgsm", data, {"th": ["1", "2"], "vi": ["3"]}) == {"th": ["1", "2"], "vi": ["3"]}
    for pred, msg in [({"th": ["1", "2"]}, "language 'vi' is missing"),
                      ({"th": ["1"], "vi": ["3"]}, "expected 2 predictions, got 1"),
                      ({"th": ["1", 2], "vi": ["3"]}, r"\[1\] is int"),
                      ({"th": ["1", "2"], "vi": ["3"], "lo": ["x"]}, "not in the data: lo")]:
        with pytest.raises(GlotbenchError, match=msg):
            check_predictions("mgsm", data, pred)
    with pytest.raises(GlotbenchError, match="subject 'b' is missing"):
        check_predictions("indommlu", data, {"th": {"a": ["A"]}, "vi": {"a": ["A"]}})
    assert check_predictions("indommlu", data, {"th": {"a": ["A"], "b": ["B"]}, "vi": {"a": ["C"]}})["th"] == ["A", "B"]


def test_score_predictions_without_a_model():
    bench = DeepSEATask("mgsm")
    preds: dict[str, list[str]] = {}
    for it in bench.load():
        preds.setdefault(it.meta["lang"], []).append(f"<answer>{it.gold['answer_number']}</answer>")
    res = score_predictions("mgsm", None, preds)
    assert all(v["numeric_em"]["value"] == 100.0 for v in res["scores"]["groups"]["lang"].values())


def test_converters(tmp_path):
    (tmp_path / "m.tsv").write_text("Two plus two?\t4\nTen minus one?\t9\n")
    assert convert("mgsm", str(tmp_path / "m.tsv")) == [{"question": "Two plus two?", "answer_number": "4"},
                                                         {"question": "Ten minus one?", "answer_number": "9"}]
    (tmp_path / "i.csv").write_text('subject,level,kelas,soal,jawaban,kunci\nBiologi,SMA,10,Organ?,"A. paru\nB. jantung",B\n')
    assert convert("indommlu", str(tmp_path / "i.csv"))[0]["options"] == {"A": "paru", "B": "jantung"}
    (tmp_path / "x.json").write_text(json.dumps({"data": [{"paragraphs": [{"context": "c", "qas": [
        {"question": "q", "answers": [{"text": "a1"}, {"text": "a2"}]}]}]}]}))
    assert convert("xquad", str(tmp_path / "x.json")) == [{"context": "c", "question": "q", "answers": ["a1", "a2"]}]
    (tmp_path / "c.jsonl").write_text(json.dumps({"text": "t", "summary": "s", "source_url": "u"}) + "\n")
    assert convert("crosssum", str(tmp_path / "c.jsonl")) == [{"text": "t", "summary": "s"}]
    rows = [{"lp": "en-th_TH", "domain": "news", "document_id": "d", "segment_id": i, "is_bad_source": i == 1,
             "source": f"s{i}", "target": f"t{i}", "original_target": "o"} for i in range(3)]
    (tmp_path / "w.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert [r["source"] for r in convert("wmt24pp", str(tmp_path / "w.jsonl"))] == ["s0", "s2"]
    assert len(convert("wmt24pp", str(tmp_path / "w.jsonl"), keep_bad_source=True)) == 3
    (tmp_path / "bad.tsv").write_text("only one column\n")
    with pytest.raises(DataError, match=":1: expected 2 tab-separated columns"):
        convert("mgsm", str(tmp_path / "bad.tsv"))


def test_verify_archive(tmp_path):
    from glotbench.loading import sha256_file

    langs = {lang: [{"question": f"Q-TEXT-{lang}-{i}", "answer_number": i} for i in range(3)]
             for lang in ("en", "id", "ms", "th", "vi", "tl", "my", "km", "lo", "jv", "su", "ceb", "ta")}
    arc = tmp_path / "release.zip"
    with zipfile.ZipFile(arc, "w") as z:
        z.writestr("deepsea/mgsm.json", json.dumps({"task": "mgsm", "languages": langs}))
    digest = sha256_file(arc)
    rep = verify_archive(str(arc), digest)
    assert not rep["ok"] and len([p for p in rep["problems"] if "expected 250" in p]) == 13
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"mgsm": {"count": 3, "order_hashes": rep["tasks"]["mgsm"]["order_hashes"]}}))
    assert verify_archive(str(arc), digest, str(manifest))["ok"]
    assert "Q-TEXT" not in json.dumps(verify_archive(str(arc), digest, str(manifest)))  # no benchmark text
    with pytest.raises(GlotbenchError, match="sha256 is"):
        verify_archive(str(arc), "0" * 64)
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("../../etc/x.json", "{}")
    with pytest.raises(GlotbenchError, match="unsafe member path"):
        verify_archive(str(evil), sha256_file(evil))


def test_diagnostic_command():
    out = cli("deepsea", "diagnostic", "--seed", "11")
    assert out.returncode == 0, out.stderr
    assert "contract_cases=601" in out.stdout and "reference_score_error=0.0" in out.stdout
    assert "coverage_rejections=5/5" in out.stdout


def test_sample_runs_on_every_task(srv, cache_path, tmp_path):
    for task in ("mgsm", "indommlu", "xquad", "crosssum", "wmt24pp"):
        res = _run(srv, cache_path, tmp_path, task, {})
        assert len(res["scores"]["groups"]["lang"]) >= 3


def test_each_task_takes_only_its_own_options():
    """One definition per task: MGSM's native_digits is not an IndoMMLU setting (it used to be
    accepted and ignored), and DeepSEATask(name) builds the task's own definition."""
    from glotbench.benchmarks.deepsea import IndoMMLU, MGSM
    from glotbench.errors import SpecError
    from glotbench.registry import get_benchmark

    with pytest.raises(SpecError, match="native_digits"):
        get_benchmark("deepsea-indommlu", native_digits="false")
    assert isinstance(DeepSEATask("mgsm", native_digits=False), MGSM)
    assert type(get_benchmark("deepsea-indommlu", letter_case="upper_only")) is IndoMMLU
    with pytest.raises(DataError, match="unknown DeepSEA task"):
        DeepSEATask("mmlu")
