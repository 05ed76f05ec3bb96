"""The core shape: one scoring path, loud metrics, a prompt hash that follows render, extraction
that sees the item, stateless benchmarks shared by the service and `compare`, the registry."""

from __future__ import annotations

import asyncio
import json
import math

import pytest

from glotbench.benchmarks.aragen import AraGenJudging, judging_dataset, load_entries
from glotbench.benchmarks.arena import ArenaPrompts, JudgeGames
from glotbench.benchmarks.deepsea import DeepSEATask
from glotbench.benchmarks.laobench import LaoBenchMCQ
from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
from glotbench.core import Dataset, RunResult, Sample
from glotbench.engine.evaluate import RunOptions, evaluate, evaluate_async
from glotbench.scoring import score_output
from glotbench.items import Item
from glotbench.metrics import ItemScore, MissingStatistic, RatioMetric, aggregate
from glotbench.models.base import Prompt
from glotbench.registry import benchmarks, get_benchmark
from glotbench.testing.conformance import check_benchmark


def _opts(tmp_path, name="run", **kw):
    return RunOptions(out=str(tmp_path / name), progress=False, use_cache=False, bootstrap_resamples=50, **kw)


# -- extraction sees the item ------------------------------------------------------------------

def test_laobench_mcq_option_text_fallback_reaches_production():
    bench = LaoBenchMCQ()
    item = Item.create("q1", {"question": "Which city is on the Mekong in the south?", "lang": "en",
                              "options": {"A": "Vientiane", "B": "Luang Prabang", "C": "Pakse", "D": "Savannakhet"}},
                       {"answer": "C"}, {"dimension": "d", "subdomain": "geography", "lang": "en"})
    s = score_output(bench, item, "I think it's Pakse")
    assert s.answer == "C" and s.failure is None and s.stats["correct"] == 1.0
    assert score_output(bench, item, "No idea").failure == "no_letter"


def test_laobench_run_uses_the_items_options(srv, tmp_path):
    items = LaoBenchMCQ().load()
    first = items[0]  # the options are Lao town names; the reply names one in Lao, without a letter
    srv.configure(answers={first.public["question"]: f"ຂ້ອຍຄິດວ່າແມ່ນ {first.public['options']['C']}"})
    res = evaluate("laobench-mcq", srv.spec(), _opts(tmp_path, limit=1))
    assert res.samples[0].answer == "C" and res.samples[0].failure is None


# -- one scoring path: a scorer exception is a recorded failure ---------------------------------

def test_scorer_exception_is_a_recorded_failure(tmp_path):
    # A file with a non-numeric gold is rejected on load (test_data_errors); items built in memory are
    # not validated, so this one makes the scorer raise.
    from glotbench.benchmarks.deepsea import DeepSEATask
    from glotbench.items import Item

    bench = DeepSEATask("mgsm")
    items = [Item.create("en/00000", {"question": "6 + 6?", "lang": "en"}, {"answer_number": "twelve"}, {"lang": "en"}),
             Item.create("en/00001", {"question": "10 + 2?", "lang": "en"}, {"answer_number": 12}, {"lang": "en"})]
    res = evaluate(bench, "python:helpers:mgsm_twelve", _opts(tmp_path), dataset=bench.dataset(items))
    assert (res.out_dir / "results.json").is_file()
    assert res.results["counts"]["failures"] == {"scorer_error": 1} and res.results["counts"]["failed"] == 1
    bad = next(s for s in res.samples if s.failure)
    assert bad.id == "en/00000" and "InvalidOperation" in bad.error and bad.error.startswith("scorer_error")
    assert res.results["scores"]["groups"]["lang"]["en"]["numeric_em"]["value"] == 50.0  # counted, not dropped
    rec = json.loads((res.out_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert rec["failure"] == "scorer_error" and rec["score"] == {"correct": 0.0, "n": 1.0}
    # an item the scorer could not score is not the model's number: 1 of 2 makes the run invalid
    v = res.results["validity"]
    assert v["valid"] is False and v["kinds"] == {"scorer_error": 1} and v["failed"] == 1 and v["of"] == 2
    from glotbench.rundir.validity import validity_text

    assert validity_text(res.results) == "invalid: 1 of 2 items failed (scorer_error)"
    # under the threshold it is counted and the run stays valid
    ok = evaluate(bench, "python:helpers:mgsm_twelve", _opts(tmp_path, name="ok", max_failure_rate=0.5), dataset=bench.dataset(items))
    assert ok.results["validity"]["valid"] is True and ok.results["validity"]["kinds"] == {"scorer_error": 1}


def test_extract_exception_is_a_recorded_failure():
    class Broken(VietnameseDiacritics):
        def extract(self, text, item):
            raise RuntimeError("extractor bug")

    bench = Broken()
    item = bench.load()[0]
    s = score_output(bench, item, '{"restored_text": "x"}')
    assert s.failure == "scorer_error" and "extractor bug" in s.error and set(s.stats) == {
        "exact", "texts", "words_correct", "words", "rewritten", "format_failure"}


# -- metrics fail loudly ------------------------------------------------------------------------

def test_missing_statistic_is_an_error_naming_metric_and_key():
    samples = [Sample("a", 0, {}, ItemScore({"correct": 1.0, "items": 1.0}))]
    with pytest.raises(MissingStatistic, match=r"'acc'.*'corect'"):
        aggregate([RatioMetric("acc", "corect", "items")], samples, resamples=10)


def test_metric_key_typo_in_a_benchmark_fails_the_run(tmp_path):
    class Typo(VietnameseDiacritics):
        metrics = (RatioMetric("sentence_exact", "exactt", "texts"),)

    with pytest.raises(MissingStatistic, match="exactt"):
        evaluate(Typo(), "python:helpers:async_echo", _opts(tmp_path, limit=2))


# -- the signature follows the prompt -----------------------------------------------------------

def test_prompt_hash_follows_render():
    class Reworded(VietnameseDiacritics):
        def render(self, item):
            p = super().render(item)
            return Prompt(messages=({"role": "user", "content": p.messages[0]["content"] + " Please."},),
                          text=p.text, text_stop=p.text_stop, json_schema=p.json_schema, text_max_tokens=p.text_max_tokens)

    class PlainOnly(VietnameseDiacritics):  # only the plain-text form changes
        def render(self, item):
            p = super().render(item)
            return Prompt(messages=p.messages, text=p.text.replace("Input:", "In:"), text_stop=p.text_stop,
                          json_schema=p.json_schema, text_max_tokens=p.text_max_tokens)

    data = VietnameseDiacritics().load()
    base = VietnameseDiacritics().prompt_hash(data)
    assert VietnameseDiacritics().prompt_hash(data) == base  # deterministic
    assert Reworded().prompt_hash(data) != base and PlainOnly().prompt_hash(data) != base
    assert f"prompt:{Reworded().prompt_hash(data)}" in Reworded().signature(data)


def test_judge_prompt_hash_follows_render_not_the_answers():
    entries, source, digest = load_entries(None)
    one = judging_dataset(entries, {e.sn: ["x", "y"] for e in entries}, source, digest)
    two = judging_dataset(entries, {e.sn: ["other", "answers"] for e in entries}, source, digest)
    judge = AraGenJudging()
    assert judge.prompt_hash(one) == judge.prompt_hash(two)  # same rubric, different answers

    class Changed(AraGenJudging):
        def render(self, item):
            p = super().render(item)
            return Prompt(messages=({"role": "user", "content": "Be strict.\n" + p.messages[0]["content"]},), text=p.text)

    assert Changed().prompt_hash(one) != judge.prompt_hash(one)


# -- stateless benchmarks: service and compare ---------------------------------------------------

def test_service_scores_a_deepsea_set(tmp_path):
    from glotbench.service.core import Service, Settings

    # exact released values: the release noise off (its own tests: tests/test_service_collusion.py)
    svc = Service(Settings(db_url=f"sqlite:///{tmp_path}/db.sqlite", min_group=1, resamples=50, release_noise=0))
    svc.load_set("sea-mmlu", "deepsea-indommlu", None)
    svc.rotate("sea-mmlu")
    svc.load_set("sea-mgsm", "deepsea-mgsm", None)
    svc.rotate("sea-mgsm")
    key_id, _ = svc.create_key("k")
    bench = DeepSEATask("indommlu")
    data = bench.load()
    outputs = {it.id: f"<answer>{it.gold['answer']}</answer>" for it in data}
    res = svc.submit_answers(key_id, outputs, benchmark="deepsea-indommlu")["result"]
    assert res["metric"] == "accuracy_macro_subjects" and res["score"] == 100.0 and res["coverage"] == 1.0
    mgsm = DeepSEATask("mgsm").load()
    half = {it.id: f"<answer>{it.gold['answer_number'] if i % 2 == 0 else -1}</answer>" for i, it in enumerate(mgsm)}
    res = svc.submit_answers(key_id, half, benchmark="deepsea-mgsm")["result"]
    assert res["score"] is not None and 0 < res["score"] < 100
    assert not any(it.id in json.dumps(res) for it in mgsm)


def test_compare_indommlu_runs_gives_a_number(tmp_path):
    from glotbench.report.compare import compare_runs

    opt = (("letter_case", "upper_only"),)
    a = evaluate("deepsea-indommlu", "python:helpers:deepsea_letter_b", _opts(tmp_path, "a", bench_options=opt))
    b = evaluate("deepsea-indommlu", "python:helpers:deepsea_letter_gold", _opts(tmp_path, "b", bench_options=opt))
    cmp = compare_runs(str(a.out_dir), str(b.out_dir), resamples=50)
    by_lang = {k: v for k, v in cmp["metrics"].items() if k.endswith("accuracy_macro_subjects")}
    assert by_lang and all(not math.isnan(v["b"]) and not math.isnan(v["a"]) for v in by_lang.values())
    assert all(v["b"] == 100.0 for v in by_lang.values())
    # the numbers equal those of the runs themselves
    for name, v in by_lang.items():
        lang = name.split()[0].split("=")[1]
        assert v["a"] == a.results["scores"]["groups"]["lang"][lang]["accuracy_macro_subjects"]["value"]


def test_benchmark_objects_hold_no_dataset_state():
    for name in benchmarks(hidden=True):
        bench = get_benchmark(name)
        before = dict(vars(bench)) if hasattr(bench, "__dict__") else {}
        bench.load()
        after = dict(vars(bench)) if hasattr(bench, "__dict__") else {}
        assert set(after) == set(before), name
        for attr in ("data_sha256", "data_source", "_gold", "_subjects"):
            assert not hasattr(bench, attr), (name, attr)


# -- the contract over the registry --------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(benchmarks(hidden=True)))
def test_registered_benchmark_contract(name):
    bench = get_benchmark(name)
    assert check_benchmark(bench, bench.load()) == []


def test_judge_benchmarks_contract():
    entries, source, digest = load_entries(None)
    answers = {e.sn: ["an answer", "a follow-up answer"] for e in entries}
    assert check_benchmark(AraGenJudging(), judging_dataset(entries, answers, source, digest)) == []
    prompts = ArenaPrompts().load()
    games = JudgeGames.build(prompts, {p.id: "a" for p in prompts}, {p.id: "b" for p in prompts})
    assert check_benchmark(JudgeGames(), games) == []


def test_contract_catches_a_failure_score_without_every_key():
    class Short(VietnameseDiacritics):
        def failure_score(self, failure, item):
            return ItemScore({"exact": 0.0, "texts": 1.0}, failure=failure)

    problems = check_benchmark(Short(), Short().load()[:1])
    assert any("failure score keys" in p for p in problems) and any("word_accuracy" in p for p in problems)


# -- runs return their samples; evaluate_async inside a loop; plugins ---------------------------

def test_evaluate_async_inside_a_running_loop(tmp_path):
    async def main() -> RunResult:
        with pytest.raises(Exception, match="evaluate_async"):
            evaluate("vi-diacritics", "python:helpers:async_echo", _opts(tmp_path, "x", limit=2))
        return await evaluate_async("vi-diacritics", "python:helpers:async_echo", _opts(tmp_path, limit=3))

    res = asyncio.run(main())
    assert [s.id for s in res.samples] == [it.id for it in VietnameseDiacritics().load()[:3]]
    assert all(isinstance(s, Sample) for s in res.samples) and isinstance(res.dataset, Dataset)


def test_run_a_benchmark_class_by_import_path(tmp_path):
    res = evaluate("glotbench.benchmarks.vi_diacritics:VietnameseDiacritics", "python:helpers:async_echo",
                   _opts(tmp_path, limit=2))
    assert res.results["benchmark"]["name"] == "vi-diacritics" and len(res.samples) == 2


def test_public_api():
    import glotbench

    for name in ("evaluate", "evaluate_async", "RunOptions", "Benchmark", "Dataset", "Item", "PublicItem",
                 "Prompt", "ItemScore", "RatioMetric", "MacroMetric", "CorpusMetric", "Model", "ModelBase",
                 "GenerateConfig", "Response", "register_benchmark", "register_model"):
        assert getattr(glotbench, name) is not None, name


def test_run_result_and_dataset_reprs_stay_short_at_any_size(tmp_path):
    """asyncio (3.11) formats the repr of a run's task result; a repr of every sample cost 35 MB at
    10,000 items. The repr names the run, not its content."""
    from glotbench.core import Dataset, RunResult, Sample
    from glotbench.items import Item
    from glotbench.metrics.ratio import ItemScore

    items = tuple(Item.create(f"q{i}", {"text": "x" * 100}, {"answer": "y"}) for i in range(5000))
    samples = tuple(Sample(id=it.id, repeat=0, meta={}, score=ItemScore({"c": 1.0})) for it in items)
    ds = Dataset(items, "data.jsonl", "ab" * 32)
    run = RunResult(tmp_path, {"scores": {}}, samples, ds)
    assert len(repr(ds)) < 200 and "5000 items" in repr(ds)
    assert len(repr(run)) < 200 and "samples=5000" in repr(run)
