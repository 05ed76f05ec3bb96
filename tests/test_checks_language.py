"""Answers in the wrong language or script (glotbench.checks.language): script shares counted by
hand, verdicts on real sentences, the labelled fixture's precision and recall (docs/checks.md), and
the check on real runs against the loopback server (flag by default, a failure with
wrong_language=fail)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from glotbench.checks.language import check_text, identify, script_shares
from glotbench.engine.evaluate import RunOptions, evaluate

FIXTURE = Path(__file__).parent / "fixtures" / "langid" / "labelled.jsonl"
SCRIPT_DISTINCT = ("lo", "km", "my", "th", "ar", "zh")


def test_script_shares_counted_by_hand():
    # ສະບາຍດີ: 7 Lao letters and marks (ີ is a mark), "hello" 5 Latin letters; digits, spaces and
    # punctuation are not counted.
    n, shares = script_shares("ສະບາຍດີ hello, 123!")
    assert n == 12
    assert shares == {"Lao": round(7 / 12, 3), "Latin": round(5 / 12, 3)}
    # A combining accent (Inherited) counts for the letter before it: e + U+0301 is two Latin marks.
    assert script_shares("cafe\u0301") == (5, {"Latin": 1.0})
    assert script_shares("12 + 30 = 42") == (0, {})


@pytest.mark.parametrize("text, expected, verdict", [
    ("I go to school every day.", "lo", "wrong_script"),  # English for a Lao translation
    ("ฉันไปโรงเรียนทุกวันกับเพื่อน", "lo", "wrong_script"),  # Thai letters for Lao
    ("ຂ້ອຍໄປໂຮງຮຽນທຸກມື້ກັບໝູ່ເພື່ອນ.", "lo", "ok"),
    ("Wo ai laowo, jintian tianqi hen hao", "zh", "wrong_script"),  # pinyin for Chinese
    ("Saya pergi ke sekolah setiap hari bersama teman-teman saya.", "vi", "wrong_language"),
    ("Anh ấy push code lên GitHub rồi mới đi ăn trưa.", "vi", "ok"),  # code-mixed: Vietnamese
    ("Saya pergi ke sekolah setiap hari bersama teman-teman saya.", "ms", "ok"),  # id and ms: one
    ("1,250", "th", "unchecked"),  # nothing to judge
    ("Vientiane", "en", "ok"),  # too short for the identifier: the script decides
])
def test_verdicts(text, expected, verdict):
    got = check_text(text, expected)
    assert got["verdict"] == verdict, got


def test_the_verdict_carries_what_it_saw():
    got = check_text("Saya pergi ke sekolah setiap hari bersama teman-teman saya.", "vi")
    assert got["detected"] == "id" and got["expected"] == "vi" and got["scripts"] == {"Latin": 1.0}
    assert got["expected_probability"] <= 0.1 and "identified as id" in got["why"]


def _fixture() -> list[dict]:
    return [json.loads(x) for x in FIXTURE.read_text(encoding="utf-8").splitlines()]


def test_fixture_is_labelled_real_text_in_every_language():
    rows = _fixture()
    counts = Counter(r["lang"] for r in rows)
    assert set(counts) == {"lo", "km", "my", "th", "vi", "id", "ms", "tl", "ar", "en", "zh"}
    assert min(counts.values()) >= 60
    assert all(r["source"] for r in rows)
    assert sum(1 for r in rows if r.get("mixed")) >= 15  # code-mixed Vietnamese/English, labelled vi


def test_identifier_precision_and_recall_on_the_fixture():
    """The figures of docs/checks.md: per language, precision and recall of the identifier (among the
    profile languages), with Indonesian and Malay reported apart (they are confused: about 0.8)."""
    rows = _fixture()
    tp, fp, fn = Counter(), Counter(), Counter()
    for r in rows:
        got = identify(r["text"])[0]
        if got == r["lang"]:
            tp[r["lang"]] += 1
        else:
            fn[r["lang"]] += 1
            fp[got] += 1
    for lang in (*SCRIPT_DISTINCT, "vi", "tl", "en"):
        precision = tp[lang] / (tp[lang] + fp[lang])
        recall = tp[lang] / (tp[lang] + fn[lang])
        assert precision >= 0.98 and recall >= 0.95, (lang, precision, recall)


def test_no_fixture_sentence_is_flagged_in_its_own_language_and_each_is_caught_in_another():
    rows = _fixture()
    false_flags = [r for r in rows if check_text(r["text"], r["lang"])["verdict"] not in ("ok", "unchecked")]
    assert false_flags == []
    # Every script-distinct sentence checked against English, and English against each of them.
    for r in rows:
        if r["lang"] in SCRIPT_DISTINCT:
            assert check_text(r["text"], "en")["verdict"] == "wrong_script"
        if r["lang"] == "en":
            assert all(check_text(r["text"], lang)["verdict"] == "wrong_script" for lang in SCRIPT_DISTINCT)


def _translation_answers() -> dict[str, str]:
    """Right translations except sample-029 (en-lo), answered in English."""
    from glotbench.benchmarks.laobench import LaoBenchTranslation

    out = {it.public["question"]: it.gold["reference"] for it in LaoBenchTranslation().load()}
    out["Translate into Lao: Thank you very much."] = "Thank you very much."
    return out


def _opts(tmp_path, cache_path, **kw):
    return RunOptions(out=str(tmp_path / kw.pop("name", "run")), cache_path=cache_path, progress=False, **kw)


def test_a_wrong_language_answer_is_flagged_counted_and_kept_in_the_sample(srv, cache_path, tmp_path):
    srv.configure(answers=_translation_answers())
    res = evaluate("laobench-translation", srv.spec(), _opts(tmp_path, cache_path))
    lang = res.results["checks"]["language"]
    assert lang["policy"] == "flag" and lang["checked"] == 8 and lang["wrong"] == 1
    assert lang["groups"]["direction"]["en-lo"] == {"checked": 2, "wrong": 1, "wrong_rate": 0.5, "ok": 1,
                                                    "wrong_script": 1}
    assert [e["id"] for e in lang["examples"]] == ["sample-029"]
    rows = [json.loads(x) for x in (res.out_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    bad = next(r for r in rows if r["id"] == "sample-029")
    assert bad["checks"]["language"]["verdict"] == "wrong_script"
    assert bad["checks"]["language"]["scripts"] == {"Latin": 1.0}
    assert bad["failure"] is None  # flagged, still scored as a translation
    assert "wrong_language" not in res.results["signature"]
    from glotbench.report.html import browser_rows, run_report

    html = run_report(res.out_dir)
    assert '<section id="checks-language">' in html and "<code>sample-029</code>" in html
    rows = browser_rows(res.results, [json.loads(x) for x in (res.out_dir / "samples.jsonl").read_text().splitlines()],
                        {}, set())
    assert [r["id"] for r in rows if "wrong_language" in r["fl"]] == ["sample-029"]


def test_wrong_language_fail_makes_it_a_failure_of_its_own_kind(srv, cache_path, tmp_path):
    srv.configure(answers=_translation_answers())
    flag = evaluate("laobench-translation", srv.spec(), _opts(tmp_path, cache_path, name="flag")).results
    fail = evaluate("laobench-translation", srv.spec(),
                    _opts(tmp_path, cache_path, name="fail", bench_options=(("wrong_language", "fail"),))).results
    assert fail["counts"]["failures"] == {"wrong_language": 1}
    assert "|wrong_language:fail(py3langid-" in fail["signature"]
    assert fail["checks"]["language"]["policy"] == "fail" and fail["checks"]["language"]["wrong"] == 1
    # The English reply is scored by the benchmark's failure rule (an empty translation), not as a
    # bad translation: en-lo is sacrebleu's corpus chrF++ of [reference, ""]; other directions unchanged.
    from glotbench.benchmarks.laobench import LaoBenchTranslation
    from glotbench.metrics.corpus import SacreMetric

    refs = {it.id: it.gold["reference"] for it in LaoBenchTranslation().load()}
    want = SacreMetric("chrf++", "lo").corpus_score([refs["sample-030"], ""], [[refs["sample-030"]], [refs["sample-029"]]],
                                                    resamples=0).estimate.value
    f, g = fail["scores"]["groups"]["direction"], flag["scores"]["groups"]["direction"]
    assert f["en-lo"]["chrf++"]["value"] == pytest.approx(want)
    assert f["en-lo"]["chrf++"]["value"] != g["en-lo"]["chrf++"]["value"]
    assert f["lo-en"]["chrf++"]["value"] == g["lo-en"]["chrf++"]["value"]
    rows = [json.loads(x) for x in (tmp_path / "fail" / "samples.jsonl").read_text().splitlines()]
    bad = next(r for r in rows if r["id"] == "sample-029")
    assert bad["failure"] == "wrong_language" and bad["checks"]["language"]["verdict"] == "wrong_script"


def test_wrong_language_fail_is_refused_where_answers_are_letters():
    from glotbench.errors import SpecError
    from glotbench.registry import get_benchmark

    with pytest.raises(SpecError, match="wrong_language=fail needs"):
        get_benchmark("laobench-mcq", wrong_language="fail")
    with pytest.raises(SpecError, match="wrong_language must be one of"):
        get_benchmark("laobench-translation", wrong_language="maybe")


def test_option_tasks_have_no_expected_language(srv, cache_path, tmp_path):
    res = evaluate("laobench-mcq", srv.spec(), _opts(tmp_path, cache_path, limit=2)).results
    assert "language" not in res["checks"]


def test_a_cached_rerun_keeps_its_checks_without_the_identifier(tmp_path, cache_path, monkeypatch):
    """The checks are kept in the call cache: a fully cached re-run gives the same block and never
    loads the language identifier (here made to fail). LaoBench translation: the lo-en answers (an
    English sentence of 33 letters) are identified; the en-lo ones fail on their script."""
    import glotbench.checks.language as L

    model = "python:checks_models:english_sentence"
    first = evaluate("laobench-translation", model, _opts(tmp_path, cache_path, name="a"))
    rows = [json.loads(x) for x in (first.out_dir / "samples.jsonl").read_text().splitlines()]
    assert {r["checks"]["language"].get("detected") for r in rows if r["meta"]["direction"] == "lo-en"} == {"en"}
    monkeypatch.setattr(L, "_identifier", lambda codes: (_ for _ in ()).throw(AssertionError("identifier loaded")))
    again = evaluate("laobench-translation", model, _opts(tmp_path, cache_path, name="b"))
    assert again.results["counts"]["model_calls"] == 0
    assert again.results["checks"] == first.results["checks"]
    assert [json.loads(x) for x in (again.out_dir / "samples.jsonl").read_text().splitlines()] != []
    # without the cache the checks are computed (and the identifier asked: here it fails, which the
    # sample records as an unchecked reply and never stops the run)
    fresh = evaluate("laobench-translation", model, _opts(tmp_path, cache_path, name="c", use_cache=False))
    rows = [json.loads(x) for x in (fresh.out_dir / "samples.jsonl").read_text().splitlines()]
    asked = [r["checks"]["language"] for r in rows if r["meta"]["direction"] == "lo-en"]
    assert asked and all(c["verdict"] == "unchecked" and "identifier loaded" in c["why"] for c in asked)


def test_vietnamese_restoration_with_the_inputs_words_is_not_identified():
    """Undiacritised Vietnamese reads as another language to the identifier; vi-diacritics' answers
    that keep the input's words are Vietnamese by construction."""
    from glotbench.checks.language import check_text, verdict
    from glotbench.registry import get_benchmark

    bench = get_benchmark("vi-diacritics")
    source = "To bao sang nay dang tin bao sap vao dat lien."
    assert check_text(source, "vi")["verdict"] == "wrong_language"  # the identifier alone: tl
    assert verdict(bench, source, "vi", {"text": source})["verdict"] == "ok"
    english = "The storm is about to make landfall this morning, the news says."
    assert verdict(bench, english, "vi", {"text": source})["verdict"] == "wrong_language"


def test_full_width_latin_replies_are_identified_as_the_letters_they_are():
    """Full-width Latin (an East Asian input method's habit) is the same text to a reader: the
    identifier saw it as Chinese (Indonesian p=0.00), so a right-language answer was `wrong_language`."""
    from glotbench.checks.language import check_text

    cases = {"id": "Saya suka makan nasi goreng setiap pagi", "ms": "Saya mahu pergi ke pasar hari ini",
             "tl": "Magandang umaga sa inyong lahat", "vi": "Trả lời: đáp án đúng là C vì nó hợp lý nhất"}
    for lang, text in cases.items():
        wide = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)
        assert wide != text
        plain, folded = check_text(text, lang), check_text(wide, lang)
        assert folded["verdict"] == plain["verdict"] == "ok", (lang, folded)
        assert folded["scripts"] == {"Latin": 1.0}  # full-width letters are Latin: the script share is unchanged
    # a Chinese reply where Indonesian is expected stays the wrong script
    assert check_text("我喜欢每天早上吃炒饭和喝咖啡", "id")["verdict"] == "wrong_script"
