"""vi-tone-errors: data generation and validation, scoring rules, and scripted replies through the
real OpenAI-compatible test server (perfect, partly wrong, over-correcting, malformed, rewritten).
Every expected figure below is computed by hand in the comments."""

from __future__ import annotations

import json
import sys
import unicodedata
from collections import Counter
from pathlib import Path

import pytest

from glotbench.benchmarks.vi_tone_errors import VietnameseToneErrors, error_positions
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import DataError
from glotbench.text.vietnamese import comparison_key, strip, words

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_vi_tone_errors as gen  # noqa: E402

# A small data set; words are numbered from 0.
ITEMS = [
    # errors at 0 (Tội) and 5 (ân)
    {"id": "a1", "category": "c1", "input": "Tội nay cả nhà mình ân cơm.", "references": ["Tối nay cả nhà mình ăn cơm."]},
    # error at 6 (Há); hoả is a placement variant of hỏa, not an error
    {"id": "a2", "category": "c1", "input": "Chúng tôi đi tàu hoả từ Há Nội.", "references": ["Chúng tôi đi tàu hỏa từ Hà Nội."]},
    # no error
    {"id": "a3", "category": "c2", "input": "Cảm ơn chị rất nhiều.", "references": ["Cảm ơn chị rất nhiều."]},
    # no error (placement only)
    {"id": "a4", "category": "c2", "input": "Sức khoẻ của ông đã tốt hơn.", "references": ["Sức khỏe của ông đã tốt hơn."]},
    # error at 1 (bao); two valid corrections
    {"id": "a5", "category": "c2", "input": "Sếp bao mọi người đi họp.",
     "references": ["Sếp bảo mọi người đi họp.", "Sếp báo mọi người đi họp."]},
]


def _reply(text, changes=()):
    return json.dumps({"corrected_text": text, "changes": [{"original": a, "corrected": b} for a, b in changes]},
                      ensure_ascii=False)


@pytest.fixture
def data(tmp_path):
    p = tmp_path / "tone.jsonl"
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ITEMS), encoding="utf-8")
    return str(p)


def _run(srv, cache_path, tmp_path, data, replies, full=False):
    srv.configure(answers={ITEMS[i]["input"]: r for i, r in replies.items()})
    res = evaluate("vi-tone-errors", srv.spec(), RunOptions(
        data=data, cache_path=cache_path, progress=False, out=str(tmp_path / f"run{len(list(tmp_path.iterdir()))}")))
    return res if full else res.results


def _values(scores):
    return {k: v["value"] for k, v in scores.items()}


# -- scripted replies through the test server -------------------------------------------------------

def test_perfect_replies(srv, cache_path, tmp_path, data):
    res = _run(srv, cache_path, tmp_path, data, {
        0: _reply("Tối nay cả nhà mình ăn cơm.", [("Tội", "Tối"), ("ân", "ăn")]),
        1: _reply("Chúng tôi đi tàu hoả từ Hà Nội.", [("Há", "Hà")]),
        2: _reply("Cảm ơn chị rất nhiều."),
        3: _reply("Sức khoẻ của ông đã tốt hơn."),
        4: _reply("Sếp báo mọi người đi họp.", [("bao", "báo")]),  # the second reference
    })
    v = _values(res["scores"]["overall"])
    assert v["sentence_exact"] == 1.0 and v["detection_precision"] == 1.0 and v["detection_recall"] == 1.0
    assert v["detection_f1"] == 1.0 and v["correction_recall"] == 1.0 and v["changes_field_agreement"] == 1.0
    assert v["false_alarm_rate"] == 0.0 and v["format_failure_rate"] == 0.0 and v["rewritten_rate"] == 0.0


def test_partly_wrong_over_correcting_and_malformed_replies(srv, cache_path, tmp_path, data):
    res = _run(srv, cache_path, tmp_path, data, {
        # fixes 1 of 2: errors 2, detected 1, changed 1, corrected 1; field agrees
        0: _reply("Tối nay cả nhà mình ân cơm.", [("Tội", "Tối")]),
        # wrong fix Há->Hả (detected, not corrected); hoả->hỏa is no change, so the field still agrees
        1: _reply("Chúng tôi đi tàu hỏa từ Hả Nội.", [("Há", "Hả"), ("hoả", "hỏa")]),
        # over-correction of an error-free sentence: a false alarm, and the field does not list it
        2: _reply("Cám ơn chị rất nhiều."),
        # placement only: exact, no false alarm
        3: _reply("Sức khỏe của ông đã tốt hơn."),
        # no JSON: a format failure with its error missed
        4: "Tôi nghĩ là: Sếp bảo mọi người đi họp.",
    })
    v = _values(res["scores"]["overall"])
    assert v["sentence_exact"] == pytest.approx(1 / 5)  # a4
    assert v["detection_precision"] == pytest.approx(2 / 3)  # detected 1+1, changed 1+1+1
    assert v["detection_recall"] == pytest.approx(2 / 4)  # errors 2+1+1
    assert v["detection_f1"] == pytest.approx(4 / 7)  # 2*2 / (3+4)
    assert v["correction_recall"] == pytest.approx(1 / 4)
    assert v["false_alarm_rate"] == pytest.approx(1 / 2)  # a3 of a3, a4
    assert v["changes_field_agreement"] == pytest.approx(3 / 5)  # a1, a2, a4
    assert v["format_failure_rate"] == pytest.approx(1 / 5)
    c1 = _values(res["scores"]["groups"]["category"]["c1"])
    c2 = _values(res["scores"]["groups"]["category"]["c2"])
    assert c1["sentence_exact"] == 0.0 and c1["detection_precision"] == 1.0
    assert c1["detection_recall"] == pytest.approx(2 / 3) and c1["correction_recall"] == pytest.approx(1 / 3)
    assert c1["false_alarm_rate"] is None  # no error-free sentence in c1: undefined, not 0
    assert c2["sentence_exact"] == pytest.approx(1 / 3) and c2["detection_precision"] == 0.0
    assert c2["detection_recall"] == 0.0 and c2["false_alarm_rate"] == pytest.approx(1 / 2)
    assert res["counts"]["failures"] == {"format": 1}
    for est in res["scores"]["overall"].values():  # bootstrap CIs around every value
        if est["value"] is not None and est.get("ci_low") is not None:
            assert est["ci_low"] <= est["value"] <= est["ci_high"]


def test_rewritten_fenced_think_and_malformed_changes(srv, cache_path, tmp_path, data):
    run = _run(srv, cache_path, tmp_path, data, full=True, replies={
        # an added word: rewritten (exact 0); changed 0, 5 and the insertion: changed 3, detected 2,
        # corrected 2; `changes` is a string, not a list: malformed, no agreement
        0: json.dumps({"corrected_text": "Tối nay cả nhà mình ăn cơm rồi.", "changes": "Tội->Tối, ân->ăn"},
                      ensure_ascii=False),
        # prose and a code fence around a perfect answer
        1: "Here you go:\n```json\n" + _reply("Chúng tôi đi tàu hỏa từ Hà Nội.", [("Há", "Hà")]) + "\n```",
        # exact, but no `changes` field: no agreement
        2: json.dumps({"corrected_text": "Cảm ơn chị rất nhiều."}, ensure_ascii=False),
        # an unclosed think block: no answer; on an error-free sentence it counts as a false alarm
        3: "<think>Let me check khoẻ against khỏe",
        # a dropped word (đi), listed as such: rewritten, detected 1, corrected 1 against "báo",
        # changed 2; the field agrees with the text
        4: _reply("Sếp báo mọi người họp.", [("bao", "báo"), ("đi", "")]),
    })
    v = _values(run.results["scores"]["overall"])
    assert v["sentence_exact"] == pytest.approx(2 / 5)  # a2, a3
    assert v["detection_precision"] == pytest.approx(4 / 6)  # detected 2+1+0+0+1, changed 3+1+0+0+2
    assert v["detection_recall"] == 1.0 and v["correction_recall"] == 1.0
    assert v["detection_f1"] == pytest.approx(0.8)  # 2*4 / (6+4)
    assert v["false_alarm_rate"] == pytest.approx(1 / 2)  # a4 (no answer) of a3, a4
    assert v["changes_field_agreement"] == pytest.approx(2 / 5)  # a2, a5
    assert v["rewritten_rate"] == pytest.approx(2 / 5) and v["format_failure_rate"] == pytest.approx(1 / 5)
    rows = {json.loads(line)["id"]: json.loads(line)
            for line in (run.out_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()}
    assert set(rows["a1"]["flags"]) == {"rewritten", "changes_malformed"}
    assert rows["a4"]["failure"] == "think_unclosed"


def test_bundled_data_perfect_model_and_no_gold_in_prompts(srv, cache_path, tmp_path):
    bench = VietnameseToneErrors()
    items = bench.load()
    answers = {}
    for it in items:
        src, ref = it.public["text"], it.gold["references"][0]
        ch = [(words(src)[i], words(ref)[i]) for i in error_positions(src, ref)]
        answers[bench.render(it.to_public()).messages[-1]["content"]] = _reply(ref, ch)
    srv.configure(answers=answers)
    res = evaluate("vi-tone-errors", srv.spec(), RunOptions(cache_path=cache_path, progress=False,
                                                              out=str(tmp_path / "bundled"))).results
    v = _values(res["scores"]["overall"])
    assert v["sentence_exact"] == 1.0 and v["detection_f1"] == 1.0 and v["false_alarm_rate"] == 0.0
    assert v["changes_field_agreement"] == 1.0 and v["correction_recall"] == 1.0
    assert len(res["scores"]["groups"]["category"]) == 8
    assert set(res["scores"]["groups"]["has_errors"]) == {"yes", "no"}
    sent = unicodedata.normalize("NFC", json.dumps(srv.requests(), ensure_ascii=False))
    leaked = [it.id for it in items if it.gold["references"][0] != it.public["text"]
              and it.gold["references"][0] in sent]
    assert leaked == []


def test_echo_model_scores_exactly_the_clean_share(srv, cache_path, tmp_path):
    """Returning the input unchanged is exact on the error-free sentences (placement variants
    included) and on nothing else, with no false alarm and no detection."""
    bench = VietnameseToneErrors()
    items = bench.load()
    srv.configure(answers={bench.render(it.to_public()).messages[-1]["content"]: _reply(it.public["text"])
                           for it in items})
    res = evaluate("vi-tone-errors", srv.spec(), RunOptions(cache_path=cache_path, progress=False,
                                                              out=str(tmp_path / "echo"))).results
    v = _values(res["scores"]["overall"])
    clean = sum(it.meta["has_errors"] == "no" for it in items)
    assert v["sentence_exact"] == pytest.approx(clean / len(items))
    assert v["false_alarm_rate"] == 0.0 and v["detection_recall"] == 0.0 and v["detection_precision"] is None
    by = res["scores"]["groups"]["has_errors"]
    assert by["no"]["sentence_exact"]["value"] == 1.0 and by["yes"]["sentence_exact"]["value"] == 0.0


def test_structured_output_sends_the_schema(srv, cache_path, tmp_path, data):
    srv.configure(answers={ITEMS[0]["input"]: _reply("Tối nay cả nhà mình ăn cơm.", [("Tội", "Tối"), ("ân", "ăn")])})
    res = evaluate("vi-tone-errors", srv.spec(), RunOptions(data=data, limit=1, cache_path=cache_path, progress=False,
                                                              structured_output=True, out=str(tmp_path / "so"))).results
    assert res["counts"]["structured_output"] == {"json_schema": 1}
    fmt = srv.requests()[-1]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "correction"
    assert fmt["json_schema"]["schema"]["required"] == ["corrected_text", "changes"]
    assert res["scores"]["overall"]["sentence_exact"]["value"] == 1.0


# -- scoring units ------------------------------------------------------------------------------------

def test_tone_placement_is_never_an_error():
    src = "Bàn ghế đều mới và có điều hoà."
    assert error_positions(src, "Bàn ghế đều mới và có điều hòa.") == []
    assert error_positions("Bàn ghế đều mới và có điều hóa.", "Bàn ghế đều mới và có điều hòa.") == [7]


def test_nfd_reply_is_the_same_answer(data):
    bench = VietnameseToneErrors()
    item = bench.load(data)[0]
    nfd = unicodedata.normalize("NFD", "Tối nay cả nhà mình ăn cơm.")
    s = bench.score({"corrected_text": nfd, "changes": [{"original": "Tội", "corrected": "Tối"},
                                                         {"original": "ân", "corrected": "ăn"}]}, item)
    assert s.stats["exact"] == 1.0 and s.stats["field_agree"] == 1.0 and s.flags == ()


def test_plain_text_answer_is_scored_without_a_changes_list(data):
    bench = VietnameseToneErrors()
    item = bench.load(data)[0]
    s = bench.score("Tối nay cả nhà mình ăn cơm.", item)
    assert s.stats["exact"] == 1.0 and s.stats["detected"] == 2.0 and s.stats["field_agree"] == 0.0
    assert s.flags == ("changes_malformed",)
    assert bench.answer_key("Tối nay") == bench.answer_key({"corrected_text": "Tối nay", "changes": []})


def test_failure_score_counts_errors_and_false_alarms(data):
    bench = VietnameseToneErrors()
    items = bench.load(data)
    s = bench.failure_score("timeout", items[0])
    assert s.stats["errors"] == 2 and s.stats["f1_den"] == 2 and s.stats["false_alarm"] == 0.0
    assert s.stats["format_failure"] == 0.0
    s = bench.failure_score("format", items[2])
    assert s.stats["clean"] == 1.0 and s.stats["false_alarm"] == 1.0 and s.stats["format_failure"] == 1.0


# -- data: generation and validation -------------------------------------------------------------

def test_generator_reproduces_the_bundled_file():
    bundled = (ROOT / "src/glotbench/benchmarks/data/vi_tone_errors.jsonl").read_text(encoding="utf-8")
    assert gen.render(gen.build()) == bundled


def test_bundled_data_shape():
    records = [json.loads(line) for line in
               (ROOT / "src/glotbench/benchmarks/data/vi_tone_errors.jsonl").read_text(encoding="utf-8").splitlines()]
    diacritics = {json.loads(line)["category"] for line in
                  (ROOT / "src/glotbench/benchmarks/data/vi_diacritics.jsonl").read_text(encoding="utf-8").splitlines()}
    assert len(records) >= 120
    assert {r["category"] for r in records} == diacritics
    clean = sum(not r["errors"] for r in records)
    assert 0.15 <= clean / len(records) <= 0.25
    kinds = Counter(e["kind"] for r in records for e in r["errors"])
    assert set(kinds) == {"hoi_nga", "tone_swap", "tone_missing", "vowel_mark", "d_stroke"}
    assert sum(len(r["placement_variants"]) for r in records) >= 5
    for r in records:
        src, ref = r["input"], r["references"][0]
        assert [e["index"] for e in r["errors"]] == error_positions(src, ref)
        for p in r["placement_variants"]:  # differs in bytes, not under the comparison
            assert words(src)[p["index"]] != words(ref)[p["index"]]
            assert comparison_key(words(src)[p["index"]]) == comparison_key(words(ref)[p["index"]])
        assert strip(src) == strip(ref)


@pytest.mark.parametrize("word, cls, expected", [
    ("hỏi", "hoi_nga", "hõi"), ("ngã", "hoi_nga", "ngả"), ("Tết", "tone_swap", "Tệt"), ("ễnh", "tone_missing", "ênh"),
    ("đi", "d_stroke", "di"), ("Đà", "d_stroke", "Dà"), ("cá", "hoi_nga", None), ("ăn", "tone_missing", None),
])
def test_typo_classes(word, cls, expected):
    import random

    assert gen.CLASSES[cls](word, random.Random(0)) == expected


def test_vowel_mark_typos_keep_the_tone():
    import random

    outs = {gen.vowel_mark("người", random.Random(s)) for s in range(40)}
    assert outs == {"nguời", "ngưòi", "ngưồi"}  # ư->u, ơ->o or ơ->ô; the tone kept
    assert {gen.vowel_mark("ễnh", random.Random(s)) for s in range(10)} == {"ẽnh"}


@pytest.mark.parametrize("word, expected", [("hòa", "hoà"), ("hoà", "hòa"), ("khỏe", "khoẻ"), ("Thủy", "Thuỷ"),
                                            ("quý", None), ("toán", None), ("hoa", None)])
def test_placement_variants(word, expected):
    assert gen.placement(word) == expected


def test_validation_catches_bad_records():
    good = gen.corrupt({"id": "x", "category": "c", "text": "Tối nay cả nhà mình ăn cơm."}, clean=False)
    gen.validate(good)
    bad = dict(good, input=good["input"].replace("nay", "này"))  # an unmarked word differs
    with pytest.raises(ValueError, match="word 1 'này' vs 'nay': unmarked difference"):
        gen.validate(bad)
    with pytest.raises(ValueError, match="unmarked difference"):
        gen.validate(dict(good, errors=[]))
    fake = dict(good, errors=good["errors"] + [{"index": 1, "input": "nay", "gold": "nay", "kind": "tone_swap"}])
    with pytest.raises(ValueError, match="word 1 'nay' vs 'nay': marked error is no error"):
        gen.validate(fake)
    with pytest.raises(ValueError, match="letters differ"):
        gen.validate(dict(good, references=["Tối mai cả nhà mình ăn cơm."]))


def _write(tmp_path, records):
    p = tmp_path / "d.jsonl"
    p.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records),
                 encoding="utf-8")
    return str(p)


@pytest.mark.parametrize("record, message", [
    ({"id": "a", "input": "Tôi đi học.", "references": ["Tôi đi chơi."]}, "differs from the input in more than"),
    ({"id": "a", "input": "Toi đi học.", "references": ["Tôi đi học."], "errors": [{"index": 1}]},
     r"marks word positions \[1\] but the input differs from the first reference at \[0\]"),
    ({"id": "a", "input": "Toi đi học.", "references": ["Tôi đi học."], "errors": [{"index": 0, "gold": "Tôj"}]},
     "error at word 0 names"),
    ({"id": "a", "input": "Toi đi học.", "references": ["Tôi đi học."], "errors": "0"}, "list of objects"),
    ({"id": "a", "references": ["Tôi đi học."]}, "missing field 'input'"),
    ({"id": "a", "input": "  ", "references": ["Tôi"]}, "field 'input' is empty"),
    ({"id": "a", "input": "Toi", "references": []}, "non-empty list"),
])
def test_bad_user_data_names_line_and_field(tmp_path, record, message):
    with pytest.raises(DataError, match=":1: .*" + message):
        VietnameseToneErrors().load(_write(tmp_path, [record]))


def test_duplicate_ids_and_cli_error(tmp_path):
    from conftest import cli

    rec = {"id": "a", "input": "Toi", "references": ["Tôi"]}
    path = _write(tmp_path, [rec, rec])
    with pytest.raises(DataError, match=":2: duplicate id 'a'"):
        VietnameseToneErrors().load(path)
    out = cli("run", "vi-tone-errors", "--data", path, "--model", "python:helpers:async_echo")
    assert out.returncode == 2 and out.stderr.startswith("error: ") and "duplicate id" in out.stderr
