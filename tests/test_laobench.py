"""LaoBench: data validation, multiple choice, translation scoring, black-box scoring, contamination."""

from __future__ import annotations

import json
import re

import pytest
from sacrebleu.metrics import BLEU, CHRF

from glotbench.benchmarks.laobench import LaoBenchMCQ, LaoBenchTranslation, load_rows, parse_rows
from glotbench.contamination import check
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import DataError
from glotbench.text.segment import segment
from helpers import lao_mcq_answers, lao_translations


def _opts(tmp_path, cache_path, **kw):
    return RunOptions(progress=False, cache_path=cache_path, out=str(tmp_path / f"r{len(list(tmp_path.iterdir()))}"), **kw)


def test_sample_is_labelled_and_split():
    mcq, trans = parse_rows(load_rows(None)[0])
    assert len(mcq) == 25 and len(trans) == 8
    assert {it.meta["dimension"] for it in mcq} == {"K12 Foundational Education", "Knowledge Application",
                                                    "Bilingual Translation"}
    assert {it.meta["direction"] for it in trans} == {"lo-en", "en-lo", "lo-zh", "zh-lo"}
    assert "not LaoBench data" in load_rows(None)[1]


def test_bad_rows_are_reported_by_id(tmp_path):
    def rows(*rs):
        p = tmp_path / "d.jsonl"
        p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rs) + "\n", encoding="utf-8")
        return load_rows(str(p))[0]

    good = {"id": "q1", "data_type": "Knowledge Application", "question": "?", "A": "a", "B": "b", "C": "c",
            "D": "d", "answer": "B"}
    assert len(parse_rows(rows(good))[0]) == 1
    with pytest.raises(DataError, match=r"id q2\): unknown data_type"):
        parse_rows(rows(good, {**good, "id": "q2", "data_type": "Sports"}))
    with pytest.raises(DataError, match=r"id q3\): field 'C' must be a non-empty string"):
        parse_rows(rows({**good, "id": "q3", "C": ""}))
    with pytest.raises(DataError, match=r"id q4\): answer 'E' is neither"):
        parse_rows(rows({**good, "id": "q4", "answer": "E"}))
    with pytest.raises(DataError, match="duplicate id 'q1'"):
        parse_rows(rows(good, good))


def test_parquet_and_direction_detection(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"data_type": ["Bilingual Translation", "Bilingual Translation", "K12 Foundational Education"],
                      "question": ["ແປເປັນພາສາອັງກິດ: ສະບາຍດີ", "翻译成老挝语：你好", "1 + 1 = ?"],
                      "A": [None, None, "1"], "B": [None, None, "2"], "C": [None, None, "3"], "D": [None, None, "4"],
                      "answer": ["Hello", "ສະບາຍດີ", "B"]})
    path = tmp_path / "test.parquet"
    pq.write_table(table, path)
    rows, source, digest = load_rows(str(path))
    mcq, trans = parse_rows(rows)
    assert [t.meta["direction"] for t in trans] == ["lo-en", "zh-lo"]
    assert mcq[0].public["lang"] == "en" and len(digest) == 64
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(DataError, match="not a readable parquet file"):
        load_rows(str(bad))


def test_hub_source_needs_a_pinned_revision_and_hash(monkeypatch):
    with pytest.raises(DataError, match="pinned revision"):
        load_rows("hub:org/laobench")
    with pytest.raises(DataError, match="pin the file's sha256"):
        load_rows("hub:org/laobench@abc123")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DataError, match="cannot fetch org/laobench@abc123 from the hub"):
        load_rows("hub:org/laobench@abc123#sha256=" + "0" * 64)


def test_mcq_run_lao_and_english_answers(srv, cache_path, tmp_path):
    srv.configure(answers=lao_mcq_answers())
    res = evaluate("laobench-mcq", srv.spec(), _opts(tmp_path, cache_path, thinking=False)).results
    assert res["scores"]["overall"]["accuracy"]["value"] == 1.0
    assert set(res["scores"]["groups"]["dimension"]) == {"K12 Foundational Education", "Knowledge Application",
                                                         "Bilingual Translation"}
    assert res["scores"]["groups"]["dimension_subdomain"]["K12 Foundational Education/mathematics"]["accuracy"]["n"] == 6
    assert res["random_baseline"] == 0.25
    assert all(r["chat_template_kwargs"] == {"enable_thinking": False} for r in srv.requests())
    assert "ຄຳຕອບ" in srv.requests()[0]["messages"][0]["content"]  # the Lao prompt for Lao items


def test_mcq_extraction_failures_counted_apart(srv, cache_path, tmp_path):
    srv.configure(answers={"ຈົ່ງເລືອກ": "ບໍ່ຮູ້", "Choose": "The answer is B"})
    res = evaluate("laobench-mcq", srv.spec(), _opts(tmp_path, cache_path)).results
    assert res["counts"]["failures"] == {"no_letter": 24}
    assert res["scores"]["overall"]["extraction_failure_rate"]["value"] == pytest.approx(24 / 25)
    assert res["scores"]["overall"]["accuracy"]["value"] == pytest.approx(1 / 25)  # the English item


def test_translation_scores_equal_sacrebleu_on_presegmented_text(srv, cache_path, tmp_path):
    srv.configure(answers=lao_translations())
    bench = LaoBenchTranslation()
    items = bench.load()
    res = evaluate("laobench-translation", srv.spec(), _opts(tmp_path, cache_path)).results
    assert res["scores"]["overall"] == {}  # no pooled number across segmenters
    by_dir = res["scores"]["groups"]["direction"]
    # en-lo: hypotheses and references segmented by LaoNLP first, then plain sacrebleu.
    refs = [it.gold["reference"] for it in items if it.meta["direction"] == "en-lo"]
    seg = [" ".join(segment(r, "lo")) for r in refs]
    assert by_dir["en-lo"]["bleu"]["value"] == BLEU(tokenize="none").corpus_score(seg, [seg]).score == pytest.approx(100)
    assert by_dir["en-lo"]["chrf++"]["value"] == CHRF(word_order=2).corpus_score(seg, [seg]).score
    zh = [it.gold["reference"] for it in items if it.meta["direction"] == "lo-zh"]
    assert by_dir["lo-zh"]["bleu"]["value"] == BLEU(tokenize="zh").corpus_score(zh, [zh]).score
    assert "seg:laonlp-1.3.0" in res["metric_signatures"]["bleu:lo"] and "tok:zh" in res["metric_signatures"]["bleu:zh"]


def test_translation_partial_credit_matches_sacrebleu(srv, cache_path, tmp_path):
    hyp = {"ແປເປັນພາສາອັງກິດ: ຂ້ອຍໄປໂຮງຮຽນທຸກມື້.": "I go to the school every day"}
    srv.configure(answers=hyp)
    res = evaluate("laobench-translation", srv.spec(), _opts(tmp_path, cache_path, limit=1)).results
    ref = "I go to school every day."
    assert res["scores"]["groups"]["direction"]["lo-en"]["bleu"]["value"] == \
        BLEU().corpus_score(["I go to the school every day"], [[ref]]).score


def test_contamination_on_a_built_corpus(tmp_path):
    items = LaoBenchMCQ().load()
    lao_q = items[0].public["question"]
    corpus = tmp_path / "corpus.txt"
    # One item copied with its options (split over two lines), one English item, noise.
    opts = "\n".join(items[0].public["options"].values())
    corpus.write_text(f"ຂ່າວມື້ນີ້ {lao_q}\n{opts}\nunrelated text\n{items[18].public['question']} "
                      f"{' '.join(items[18].public['options'].values())}\n", encoding="utf-8")
    res = check(items, [str(corpus)], char_n=30)
    assert res["overlapping_ids"] == sorted([items[0].id, items[18].id])
    assert res["share"] == pytest.approx(2 / 25)
    # Items shorter than n count as one n-gram of their own length: both are still found whole.
    assert check(items, [str(corpus)], char_n=200)["overlapping"] == 2
    # The question alone is not the whole item: found with short n-grams, not with n longer than it.
    only_q = tmp_path / "q.txt"
    only_q.write_text(f"{lao_q}\n", encoding="utf-8")
    assert check(items, [str(only_q)], char_n=20)["overlapping_ids"] == [items[0].id]
    assert check(items, [str(only_q)], char_n=200)["overlapping"] == 0


def test_bad_rows_name_file_line_and_field(tmp_path):
    """Rows are read through their schema: each problem as FILE:LINE: field: problem, every bad row counted."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from glotbench.benchmarks.laobench import load_rows

    good = {"id": 1, "data_type": "Knowledge", "question": "q", "answer": "A", "A": "a", "B": "b", "C": "c", "D": "d"}
    p = tmp_path / "rows.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in [good, {**good, "question": ""}, {**good, "A": 5},
                                                   {**good, "data_type": None}]), encoding="utf-8")
    with pytest.raises(DataError, match=rf"^{re.escape(str(p))}:2: question: must not be empty \(and 2 more bad rows\)$"):
        load_rows(str(p))
    q = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist([good, {**good, "answer": None}]), q)
    with pytest.raises(DataError, match=rf"^{re.escape(str(q))}:row 2: answer: must be a string, got null$"):
        load_rows(str(q))
