"""`glotbench rescore`: finished runs scored again from their stored answers under other settings,
with the endpoint gone; `as_run` reproduces each run's own figures; rankings and flips by hand."""

from __future__ import annotations

import json

import pytest

from checks_models import write_vi_tone
from conftest import cli, start_server
from glotbench.checks.rescore import RunRescore, normalise, rankings, rescore
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import GlotbenchError


def test_normalisations():
    assert normalise("Hòa", "vi_tone") == normalise("Hoà", "vi_tone") == "Hoa\u0300"
    assert normalise("كَتَبَ ـ", "ar_harakat") == "كتب "
    assert normalise("\u0e81\u0ecd\u0eb2", "lao_am") == "\u0e81\u0eb3"
    assert normalise("ﬁ", "nfkc") == "fi" and normalise("ﬁ", "nfc") == "ﬁ"


def _vi_runs(tmp_path, cache_path):
    data = write_vi_tone(tmp_path / "vi.jsonl")
    for name in ("old_tone_placement", "new_tone_placement"):
        evaluate("vi-diacritics", f"python:checks_models:{name}",
                 RunOptions(data=data, out=str(tmp_path / "runs" / name), cache_path=cache_path, progress=False))
    return str(tmp_path / "runs")


def test_vietnamese_tone_position_flips_an_order(tmp_path, cache_path):
    """As run (the tone position ignored) the old placement is 3/3 and the new one 2/3 (one wrong
    tone); compared strictly (norm=nfc) the old placement is 0/3: the order flips."""
    got = rescore([_vi_runs(tmp_path, cache_path)], ["norm=nfc", "norm=vi_tone"])
    by = {r["model"].rsplit(":", 1)[1]: r for r in got["runs"]}
    old, new = by["old_tone_placement"], by["new_tone_placement"]
    assert old["stored"]["sentence_exact"]["overall"] == old["scores"]["as_run"]["sentence_exact"]["overall"] == 1.0
    assert new["scores"]["as_run"]["sentence_exact"]["overall"] == pytest.approx(2 / 3)
    assert old["scores"]["norm=nfc"]["sentence_exact"]["overall"] == 0.0
    assert new["scores"]["norm=nfc"]["sentence_exact"]["overall"] == pytest.approx(2 / 3)
    rank = next(r for r in got["rankings"] if r["metric"] == "sentence_exact")
    assert rank["variants"]["as_run"]["flips"] == [] and rank["variants"]["norm=vi_tone"]["flips"] == []
    assert rank["variants"]["norm=nfc"]["flips"] == [["python:checks_models:old_tone_placement",
                                                     "python:checks_models:new_tone_placement"]]


def test_rankings_and_flips_by_hand():
    def run(model, as_run, variant):
        return RunRescore("p", model, "b", "sig", None,
                          {"as_run": {"m": {"overall": as_run, "groups": {}}}, "v": {"m": {"overall": variant, "groups": {}}}}, {})
    r = rankings([run("a", 0.9, 0.5), run("b", 0.8, 0.6), run("c", 0.7, 0.7)])[0]
    assert r["variants"]["as_run"]["order"] == ["a", "b", "c"]
    assert r["variants"]["v"]["order"] == ["c", "b", "a"]
    assert r["variants"]["v"]["flips"] == [["a", "b"], ["a", "c"], ["b", "c"]]


def test_translation_rescored_with_the_endpoint_down(tmp_path, cache_path):
    from glotbench.benchmarks.laobench import LaoBenchTranslation
    from glotbench.metrics.corpus import SacreMetric
    from glotbench.text.segment import char_clusters

    items = LaoBenchTranslation().load()
    refs = {it.id: it.gold["reference"] for it in items}
    server = start_server()
    try:
        server.configure(answers={it.public["question"]: refs[it.id][:-2] for it in items})
        evaluate("laobench-translation", server.spec(), RunOptions(out=str(tmp_path / "t"), cache_path=cache_path,
                                                                   progress=False))
    finally:
        server.proc.terminate()
        server.proc.wait(10)
    r = cli("rescore", str(tmp_path / "t"), "--variant", "segmenter=charcluster", "--format", "json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)["runs"][0]
    for metric in ("bleu", "chrf++"):  # as_run reproduces every stored figure
        assert got["scores"]["as_run"][metric]["groups"] == pytest.approx(got["stored"][metric]["groups"])
    en_lo = [it for it in items if it.meta["direction"] == "en-lo"]
    hyps = [" ".join(char_clusters(refs[it.id][:-2])) for it in en_lo]
    want = SacreMetric("bleu", None, tokenize="none").corpus_score(
        hyps, [[" ".join(char_clusters(refs[it.id]))] for it in en_lo], resamples=0).estimate.value
    assert got["scores"]["segmenter=charcluster"]["bleu"]["groups"]["en-lo"] == pytest.approx(want)


def test_bad_variants_and_benchmarks_are_one_error(tmp_path, cache_path):
    with pytest.raises(GlotbenchError, match="unknown variant 'segmenter=jieba'"):
        rescore([str(tmp_path)], ["segmenter=jieba"])
    evaluate("laobench-mcq", "python:checks_models:always_a",
             RunOptions(limit=1, out=str(tmp_path / "m"), cache_path=cache_path, progress=False))
    r = cli("rescore", str(tmp_path / "m"), "--variant", "norm=nfc")
    assert r.returncode == 2 and "rescore has no settings to vary for laobench-mcq" in r.stderr


def test_token_f1_as_run_reproduces_and_variants_move_thai(tmp_path, cache_path):
    """DeepSEA XQuAD (Thai segmented by PyThaiNLP as run): the first three words of each passage."""
    evaluate("deepsea-xquad", "python:checks_models:passage_words",
             RunOptions(out=str(tmp_path / "x"), cache_path=cache_path, progress=False))
    run = rescore([str(tmp_path / "x")], ["segmenter=charcluster", "f1_norm=squad"])["runs"][0]
    m = "token_f1_first_ref"
    assert run["scores"]["as_run"][m]["groups"] == pytest.approx(run["stored"][m]["groups"])
    assert run["stored"][m]["groups"]["th"] > 0
    assert run["scores"]["segmenter=charcluster"][m]["groups"]["th"] != run["stored"][m]["groups"]["th"]
    assert run["scores"]["f1_norm=squad"][m]["groups"]["th"] == 0.0  # no segmentation: one Thai token


def test_an_invalid_run_and_a_subset_run_are_not_ranked_with_valid_full_runs(tmp_path, cache_path):
    """rescore ranked an invalid run (every item failed) and a --limit run against full valid runs,
    with no word of either. Now each run's notes are printed with its figures, an invalid run is
    listed as not ranked (why), and a run on other items is ranked only against runs on its items."""
    runs = tmp_path / "runs"
    data = write_vi_tone(tmp_path / "vi.jsonl")
    for name, model, kw in (("old", "python:checks_models:old_tone_placement", {}),
                            ("new", "python:checks_models:new_tone_placement", {}),
                            ("sub", "python:checks_models:old_tone_placement", {"limit": 2}),
                            ("bad", "python:helpers:broken_model", {})):
        evaluate("vi-diacritics", model, RunOptions(data=data, out=str(runs / name), cache_path=cache_path,
                                                    progress=False, **kw))
    r = cli("rescore", str(runs), "--variant", "norm=nfc", "--format", "json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    by_path = {p["path"].rsplit("/", 1)[1]: p for p in got["runs"]}
    assert not by_path["bad"]["valid"] and by_path["bad"]["notes"][0].startswith("invalid: 3 of 3 items failed")
    assert any(n.startswith("subset: 2 of 3 items") for n in by_path["sub"]["notes"])
    full = [x for x in got["rankings"] if x["item_set"] == "all 3 items"]
    assert full and all(sorted(x["variants"]["as_run"]["order"]) == ["python:checks_models:new_tone_placement",
                                                                     "python:checks_models:old_tone_placement"] for x in full)
    assert all(x["not_ranked"] == [{"model": "python:helpers:broken_model", "path": str(runs / "bad"),
                                    "why": "; ".join(by_path["bad"]["notes"])}] for x in full)
    assert all(x["note"] == "runs on other items or with another signature are ranked apart" for x in full)
    md = cli("rescore", str(runs), "--variant", "norm=nfc")
    assert "> invalid: 3 of 3 items failed" in md.stdout and "- not ranked: vi-diacritics · python:helpers:broken_model" in md.stdout
