"""The do-nothing floor: where a benchmark's input is itself a possible answer (Benchmark.input_answer:
restoration, correction, translation by copying the source), every run scores the input unchanged as
every answer, from its own items, and every view shows it beside the score (as a multiple-choice
table shows the random baseline); and every interval on too few units is marked † with its n."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from glotbench.benchmarks.deepsea import DeepSEATask
from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
from glotbench.benchmarks.vi_tone_errors import VietnameseToneErrors
from glotbench.engine.evaluate import RunOptions, evaluate


def _copy_run(tmp_path, cache_path, bench, field, wrap, **kw):
    items = bench.load()
    f = tmp_path / "copy.jsonl"
    f.write_text("".join(json.dumps({"id": it.id, "output": wrap(it.public[field])}, ensure_ascii=False) + "\n"
                         for it in items), encoding="utf-8")
    return evaluate(bench, f"replay:{f}", RunOptions(cache_path=cache_path, progress=False,
                                                      out=str(tmp_path / "run"), **kw))


def test_a_model_that_returns_the_input_scores_the_floor(tmp_path, cache_path):
    """The floor is scored by the benchmark's own rules: a replay of the inputs unchanged through the
    whole run path scores exactly it, overall and per group, on the run's own (quick) items."""
    res = _copy_run(tmp_path, cache_path, VietnameseDiacritics(), "text",
                    lambda t: json.dumps({"restored_text": t}, ensure_ascii=False), subset="quick").results
    floor = res["input_floor"]
    assert floor["field"] == "text" and floor["items"] == res["counts"]["items"] == 30
    for metric, est in res["scores"]["overall"].items():
        assert floor["overall"][metric] == pytest.approx(est["value"])
    for key, groups in res["scores"]["groups"].items():
        for g, ests in groups.items():
            assert floor["groups"][key][g]["word_accuracy"] == pytest.approx(ests["word_accuracy"]["value"])
    assert 0.1 < floor["overall"]["word_accuracy"] < 0.3  # stripped Vietnamese keeps its unmarked words


def test_the_correction_floor_is_the_share_of_sentences_without_errors():
    bench = VietnameseToneErrors()
    ds = bench.load()
    floor = bench.input_floor(ds)
    clean = sum(1 for it in ds if it.meta["has_errors"] == "no")
    assert floor["overall"]["sentence_exact"] == pytest.approx(clean / len(ds))
    assert floor["overall"]["correction_recall"] == 0.0


def test_the_translation_floor_is_the_chrf_of_the_copied_source():
    import sacrebleu

    bench = DeepSEATask("wmt24pp")
    ds = bench.load()
    floor = bench.input_floor(ds)
    for lang, values in floor["groups"]["lang"].items():
        its = [it for it in ds if it.meta["lang"] == lang]
        ref = sacrebleu.corpus_chrf([it.public["source"] for it in its], [[it.gold["target"] for it in its]]).score
        (value,) = values.values()
        assert value == pytest.approx(ref)


@pytest.mark.parametrize("make", [lambda: __import__("glotbench.benchmarks.laobench", fromlist=["x"]).LaoBenchMCQ(),
                                  lambda: DeepSEATask("mgsm"), lambda: DeepSEATask("xquad")])
def test_benchmarks_whose_input_is_no_answer_have_no_floor(make):
    bench = make()
    assert bench.input_answer is None and bench.input_floor(bench.load()) is None


def test_every_view_shows_the_floor_and_the_marks(tmp_path, cache_path):
    from glotbench.report.board import build_board, to_markdown
    from glotbench.report.html import run_report
    from glotbench.report.terminal import print_results

    run = _copy_run(tmp_path, cache_path, VietnameseDiacritics(), "text",
                    lambda t: json.dumps({"restored_text": t}, ensure_ascii=False), subset="quick")
    out = Console(record=True, width=200)
    print_results(run.results, out)
    text = out.export_text()
    assert "input unchanged (the text as every answer), the do-nothing floor: exact 0.0 · word acc 19.2" in text
    assert "at or below it: exact 0.0, word acc 19.2" in text
    assert "0.0 (0.0–49.0)†" in text and "† too few units" in text  # groups of 4 items
    import re

    assert re.search(r"19\.2 \(\d+\.\d–\d+\.\d\) ", text)  # word accuracy over 30 items: no mark

    page = run_report(run.out_dir)
    assert 'id="input-floor"' in page and "do-nothing floor" in page
    assert "n=4" in page and "n=30" in page and "†" in page  # the plotted intervals carry their n

    board = to_markdown(build_board([str(run.out_dir)]))
    assert "vi-diacritics exact · input unchanged 0.0" in board


def test_glotbench_score_marks_a_bootstrap_on_few_segments(tmp_path):
    from conftest import cli

    h, r = tmp_path / "h.txt", tmp_path / "r.txt"
    h.write_text("the cat sat on the mat\nhello world\nthe end\n", encoding="utf-8")
    r.write_text("the cat sat on a mat\nhello there world\nthis is the end\n", encoding="utf-8")
    out = cli("score", "--metric", "chrf++", str(h), str(r))
    assert out.returncode == 0 and "n=3)†" in out.stdout and "† fewer than 100 segments" in out.stdout
    plain = cli("score", "--metric", "chrf++", "--resamples", "0", str(h), str(r))
    assert "†" not in plain.stdout  # no interval asked for: nothing to mark


def test_a_scorer_error_on_the_input_is_that_items_failure_score_not_a_crash():
    class Broken(VietnameseDiacritics):
        def score(self, answer, item):
            if item.id == first:
                raise ValueError("no score for this one")
            return super().score(answer, item)

    ds = VietnameseDiacritics().load()
    first = ds[0].id if hasattr(ds, "__getitem__") else next(iter(ds)).id
    floor = Broken().input_floor(ds)
    plain = VietnameseDiacritics().input_floor(ds)
    assert floor["scorer_errors"] == 1 and "scorer_errors" not in plain
    assert floor["overall"]["word_accuracy"] <= plain["overall"]["word_accuracy"]


def test_a_run_scores_each_items_floor_as_it_goes_and_counts_a_scorer_error(tmp_path, cache_path):
    """In a run each item's floor score is made beside its reply's (engine/evaluate.py `on_sample`): a
    scorer error on one input is counted there as in a pass of its own, and the floor equals it."""
    class Broken(VietnameseDiacritics):
        def score(self, answer, item):
            if answer == item.public["text"] and item.id == first:
                raise ValueError("no score for this input")
            return super().score(answer, item)

    ds = VietnameseDiacritics().load()
    items = list(ds)
    first = items[3].id
    f = tmp_path / "replies.jsonl"
    f.write_text("".join(json.dumps({"id": it.id, "output": json.dumps({"restored_text": it.gold["references"][0]},
                                                                         ensure_ascii=False)}) + "\n" for it in items),
                 encoding="utf-8")
    res = evaluate(Broken(), f"replay:{f}", RunOptions(cache_path=cache_path, progress=False, out=str(tmp_path / "r")))
    in_one_pass = Broken().input_floor(ds)
    assert res.results["input_floor"]["scorer_errors"] == 1
    assert res.results["input_floor"] == json.loads(json.dumps(in_one_pass))


def test_floor_scores_given_for_some_items_and_made_for_the_rest_give_the_floor_of_one_pass():
    bench = VietnameseDiacritics()
    ds = bench.load()
    items = list(ds)
    some = {it.id: bench.input_floor_score(it) for it in items[::3]}
    assert bench.input_floor(ds, items, some) == bench.input_floor(ds, items)
    wrong = {items[0].id: (bench.run_failure_score("format", items[0]), False)}  # a given score is used as given
    assert bench.input_floor(ds, items, wrong) != bench.input_floor(ds, items)


class _FloorFailureScoreBroken(VietnameseDiacritics):
    """A plugin whose scorer fails on some items' input (not on the replies), and whose failure score
    for a scorer error fails too: the floor of those items has no statistics."""

    def score(self, answer, item):
        if answer == item.public["text"] and item.id.endswith(("1", "5")):
            raise ValueError("no score for the input")
        return super().score(answer, item)

    def failure_score(self, failure, item):
        if failure == "scorer_error":
            raise RuntimeError("no failure score either")
        return super().failure_score(failure, item)


def test_a_floor_whose_failure_score_fails_never_stops_the_run(tmp_path, cache_path):
    """The floor is scored as each reply comes in (engine/evaluate.py `on_sample`): a failure score
    that raises there stopped the run at its first such item (every later sample lost, and the same
    on every re-run). Now the item's floor score has no statistics, as a reply's would, the floor
    that cannot be aggregated says why, and the run and every sample are kept."""
    bench = _FloorFailureScoreBroken()
    items = list(bench.load())
    broken = sum(it.id.endswith(("1", "5")) for it in items)
    assert broken
    f = tmp_path / "replies.jsonl"
    f.write_text("".join(json.dumps({"id": it.id, "output": json.dumps({"restored_text": it.gold["references"][0]},
                                                                         ensure_ascii=False)}) + "\n" for it in items),
                 encoding="utf-8")
    run = evaluate(bench, f"replay:{f}", RunOptions(cache_path=cache_path, progress=False, out=str(tmp_path / "r")))
    res = run.results
    assert res["counts"]["samples"] == len(items) and res["counts"]["failed"] == 0
    assert res["scores"]["overall"]["sentence_exact"]["value"] == 1.0  # the replies' own scores: untouched
    floor = res["input_floor"]
    assert floor["scorer_errors"] == broken and floor["items"] == len(items)
    assert "no failure score" not in floor["error"] and "exact" in floor["error"]  # the aggregate's reason
    assert floor["overall"] == {} and floor["groups"] == {}
    assert len((run.out_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()) == len(items)
    # every view that shows the floor says it is not computed, and why
    from glotbench.report.terminal import floor_line

    line = floor_line(res)
    assert line is not None and "do-nothing floor: not computed" in line and floor["error"] in line


def test_the_floor_score_of_an_item_never_raises():
    bench = _FloorFailureScoreBroken()
    it = next(x for x in bench.load() if x.id.endswith("1"))
    score, failed = bench.input_floor_score(it)
    assert failed and score.failure == "scorer_error" and dict(score.stats) == {}
    ok = next(x for x in bench.load() if not x.id.endswith(("1", "5")))
    score, failed = bench.input_floor_score(ok)
    assert not failed and "exact" in score.stats
