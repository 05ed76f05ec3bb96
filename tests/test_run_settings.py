"""The run settings (`permute=circular`, `wrong_language=fail|zero`, the pivot) are a declared, frozen
`RunSettings` on the benchmark, applied by the run's stations (benchmarks/settings.py), never a
class made at run time: the benchmark is of its own class under every setting, a run with a setting
makes no new class, the signature is the plain one with the setting's parts after it (the order the
old run-time subclasses gave, so old run directories compare with new ones), and the numbers are
those of the benchmark's own rules with the setting applied, worked out here by hand. A plugin
benchmark (a class of its own) gets each setting as a built-in does."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from checks_models import write_mcq
from glotbench.benchmarks.base import Benchmark, RunSettings
from glotbench.benchmarks.laobench import LaoBenchMCQ, LaoBenchTranslation
from glotbench.benchmarks.settings import replace
from glotbench.checks.language import verdict
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import SpecError
from glotbench.registry import get_benchmark, register_benchmark
from glotbench.scoring import score_output
from glotbench.signature import Signature
from glotbench.tasks.benchmark import TaskBenchmark

TASK = """\
name: settings-task
version: "1.0"
language: lo
data:
  file: items.jsonl
fields:
  id: id
  public: {question: q}
  gold: {answer: a}
prompt:
  user: "{{ question }}"
scorer: {kind: corpus, metrics: [chrf, chrf++]}
"""
LAO = ["ຂ້ອຍໄປໂຮງຮຽນທຸກມື້ກັບໝູ່ເພື່ອນ.", "ມື້ນີ້ອາກາດດີຫຼາຍ ພວກເຮົາໄປທ່ຽວກັນ.", "ນະຄອນຫຼວງວຽງຈັນຕັ້ງຢູ່ແຄມແມ່ນ້ຳຂອງ.",
       "ແມ່ນ້ຳຂອງໄຫຼຜ່ານຫຼາຍປະເທດ."]
ENGLISH = "I go to school every day with my friends and my teacher."
THAI = "ฉันไปโรงเรียนทุกวันกับเพื่อนและครู"


def _task(tmp: Path) -> str:
    (tmp / "settings.yaml").write_text(TASK, encoding="utf-8")
    (tmp / "items.jsonl").write_text("".join(json.dumps({"id": f"i{i}", "q": f"q{i}", "a": a}, ensure_ascii=False) + "\n"
                                             for i, a in enumerate(LAO)), encoding="utf-8")
    return str(tmp / "settings.yaml")


def _all_subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub, *_all_subclasses(sub)}
    return out


def _defined(cls: type) -> bool:
    """Whether `cls` is its module's attribute by its qualified name (a class statement's class)."""
    obj: Any = sys.modules.get(cls.__module__)
    for part in cls.__qualname__.split("."):
        obj = getattr(obj, part, None)
    return obj is cls


class _Plugin(Benchmark):
    """A plugin: a class of its own (not a built-in's subclass) whose stations are `inner`'s."""

    inner: Benchmark

    def load(self, path: str | None = None) -> Any:
        return self.inner.load(path)

    def render(self, item: Any) -> Any:
        return self.inner.render(item)

    def extract(self, text: str, item: Any) -> Any:
        return self.inner.extract(text, item)

    def score(self, answer: Any, item: Any) -> Any:
        return self.inner.score(answer, item)

    def failure_score(self, failure: str, item: Any) -> Any:
        return self.inner.failure_score(failure, item)


class PluginTranslation(_Plugin):
    """LaoBench's translation rules, its expected output language declared."""

    inner = LaoBenchTranslation()
    name, version, description = "plugin-settings-translation", "1.0", "a plugin benchmark"
    metrics = inner.metrics
    group_by = inner.group_by
    output_language_rule = inner.output_language_rule

    def output_language(self, item: Any) -> str | None:
        return self.inner.output_language(item)


class PluginMCQ(_Plugin):
    """LaoBench MCQ's rules."""

    inner = LaoBenchMCQ()
    name, version, description = "plugin-settings-mcq", "1.0", "a plugin benchmark"
    metrics = inner.metrics
    group_by = inner.group_by
    answer_kind = inner.answer_kind


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    from glotbench import plugins as registry

    monkeypatch.setattr(registry, "_BENCHMARKS", dict(registry._BENCHMARKS))
    register_benchmark("plugin-settings-translation")(PluginTranslation)
    register_benchmark("plugin-settings-mcq")(PluginMCQ)


SETTINGS = [("laobench-mcq", LaoBenchMCQ, {"permute": "circular"}),
            ("plugin-settings-mcq", PluginMCQ, {"permute": "circular"}),
            ("laobench-translation", LaoBenchTranslation, {"wrong_language": "fail"}),
            ("laobench-translation", LaoBenchTranslation, {"wrong_language": "zero"}),
            ("plugin-settings-translation", PluginTranslation, {"wrong_language": "fail"}),
            ("plugin-settings-translation", PluginTranslation, {"wrong_language": "zero"})]


@pytest.mark.parametrize(("name", "cls", "opts"), SETTINGS)
def test_the_benchmark_is_of_its_own_class_under_every_setting(name: str, cls: type, opts: dict[str, str],
                                                                plugins: None) -> None:
    plain = get_benchmark(name)
    bench = get_benchmark(name, **opts)
    assert type(bench) is cls and type(plain) is cls
    assert bench.settings == RunSettings(**opts) and plain.settings == RunSettings()  # type: ignore[arg-type]
    piv = replace(bench, pivot="en(python:m)")
    given = replace(piv, given={"x": "pivot_failed"})
    assert type(piv) is cls and type(given) is cls
    assert given.settings.given == {"x": "pivot_failed"} and piv.settings.given is None
    assert bench.settings == RunSettings(**opts)  # type: ignore[arg-type]  # a copy was changed, not bench


def test_a_task_file_is_a_task_benchmark_under_every_setting(tmp_path: Path) -> None:
    path = _task(tmp_path)
    for opts in ({}, {"wrong_language": "fail"}, {"wrong_language": "zero"}):
        bench = get_benchmark(path, **opts)
        assert type(bench) is TaskBenchmark and bench.wrong_language == opts.get("wrong_language", "flag")
        assert type(replace(bench, pivot="en(m)")) is TaskBenchmark


def test_settings_are_frozen_and_checked() -> None:
    s = RunSettings(permute="circular")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.permute = None  # type: ignore[misc]
    with pytest.raises(SpecError, match="wrong_language must be one of flag, fail, zero, got 'drop'"):
        RunSettings(wrong_language="drop")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="permute must be one of circular, got 'shuffle'"):
        get_benchmark("laobench-mcq", permute="shuffle")
    with pytest.raises(SpecError, match="laobench-mcq: wrong_language=zero needs a task whose answers have an expected"):
        get_benchmark("laobench-mcq", wrong_language="zero")
    given = RunSettings(given={"a": "pivot_failed"})
    with pytest.raises(TypeError):
        given.given["a"] = "x"  # type: ignore[index]  # read-only
    assert RunSettings().default and not given.default


def test_a_registered_instance_is_never_changed(plugins: None) -> None:
    shared = PluginTranslation()
    register_benchmark("plugin-settings-instance")(shared)
    bench = get_benchmark("plugin-settings-instance", wrong_language="zero")
    assert bench is not shared and type(bench) is PluginTranslation
    assert shared.settings == RunSettings() and bench.settings.wrong_language == "zero"
    assert get_benchmark("plugin-settings-instance") is shared


@pytest.mark.parametrize(("name", "opts", "suffix"), [
    ("laobench-mcq", {"permute": "circular"}, ["permute"]),
    ("plugin-settings-mcq", {"permute": "circular"}, ["permute"]),
    ("laobench-translation", {"wrong_language": "fail"}, ["wrong_language"]),
    ("laobench-translation", {"wrong_language": "zero"}, ["wrong_language"]),
    ("plugin-settings-translation", {"wrong_language": "zero"}, ["wrong_language"])])
def test_the_signature_is_the_plain_one_with_the_settings_parts_after_it(name: str, opts: dict[str, str],
                                                                        suffix: list[str], plugins: None) -> None:
    """The old run-time subclass put each setting's part after the benchmark's own (its mixin came
    first in the MRO), then the pivot's: the same signature, byte for byte, for the same settings."""
    plain = get_benchmark(name)
    ds = plain.load(None)
    bench = get_benchmark(name, **opts)
    want = plain.signature(ds)
    got = bench.signature(ds)
    assert got.startswith(want + "|") and Signature.parse(got).keys()[-len(suffix):] == suffix
    pivot = replace(bench, pivot="en(python:m)")
    assert pivot.signature(ds) == got + "|pivot:en(python:m)"
    assert replace(pivot, given={}).signature(ds) == pivot.signature(ds)  # the last phase: the same run
    if "wrong_language" in opts:
        assert f"|wrong_language:{opts['wrong_language']}(py3langid-" in got


# -- the numbers: the benchmark's own rules, the setting applied by hand -------------------------------

def _wrong(bench: Any, text: str, item: Any) -> bool:
    lang = bench.output_language(item.to_public())
    return verdict(bench, text, lang, item.public)["verdict"] in ("wrong_script", "wrong_language")


@pytest.mark.parametrize("name", ["laobench-translation", "plugin-settings-translation"])
def test_fail_is_the_own_score_with_wrong_language_answers_failed(name: str, plugins: None) -> None:
    plain, bench = get_benchmark(name), get_benchmark(name, wrong_language="fail")
    en_lo = [it for it in plain.load(None) if it.public["direction"] == "en-lo"]  # a Lao answer expected
    items = [en_lo[i % len(en_lo)] for i in range(4)]
    replies = [items[0].gold["reference"], ENGLISH, THAI, ""]
    for it, r in zip(items, replies):
        own, got = score_output(plain, it, r), score_output(bench, it, r)
        if own.answer is not None and _wrong(plain, own.answer, it):
            assert got.failure == "wrong_language" and got.answer is None
            assert dict(got.score.stats) == dict(plain.failure_score("wrong_language", it).stats)
        else:
            assert got.to_record() == own.to_record()
    assert [score_output(bench, it, r).failure for it, r in zip(items, replies)] == [None, "wrong_language",
                                                                                     "wrong_language", "empty"]


def test_zero_takes_the_credit_of_a_wrong_language_answer_only(tmp_path: Path) -> None:
    """chrF as EuroEval scores it: the mean over replies of the sentence score, 0 for a reply in the
    wrong language (sacrebleu's sentence_score, computed here)."""
    from sacrebleu.metrics import CHRF

    path = _task(tmp_path)
    plain, bench = get_benchmark(path), get_benchmark(path, wrong_language="zero")
    ds = plain.load(None)
    replies = [LAO[0], ENGLISH, LAO[1][:12] + " " + LAO[3], THAI]
    samples = [score_output(bench, it, r) for it, r in zip(ds, replies)]
    assert [("wrong_language" in s.flags) for s in samples] == [False, True, False, True]
    agg = bench.run_aggregate(samples, ds, resamples=0)
    sentence = CHRF(char_order=6, word_order=0, beta=2)
    want = sum(sentence.sentence_score(r, [it.gold["answer"]]).score * (not w)
               for it, r, w in zip(ds, replies, [False, True, False, True])) / len(replies)
    assert agg["overall"]["chrf"]["value"] == pytest.approx(want, abs=1e-9)
    # the plain run scores the same replies as a corpus: another number, another signature
    plain_agg = plain.run_aggregate([score_output(plain, it, r) for it, r in zip(ds, replies)], ds, resamples=0)
    assert plain_agg["overall"]["chrf"]["value"] != pytest.approx(want)


@pytest.mark.parametrize("name", ["laobench-mcq", "plugin-settings-mcq"])
def test_circular_counts_an_item_right_only_in_every_rotation(name: str, tmp_path: Path, plugins: None) -> None:
    """Each item asked in its 4 rotations; the reply names the gold's text in rotation 0 and 1 only
    for q1, in every rotation for q2: circular accuracy 1/4 by hand, plain accuracy (rotation 0)
    as the plain run's."""
    data = write_mcq(tmp_path / "mcq.jsonl")
    plain, bench = get_benchmark(name), get_benchmark(name, permute="circular")
    ds = bench.load(data)
    units = bench.expand(ds)
    assert len(units) == 16 and [it.id for it in units[:4]] == ["q1", "q1#rot1", "q1#rot2", "q1#rot3"]

    def reply(it: Any) -> str:
        orig, r = it.meta["circular_item"], it.meta["rotation"]
        right = it.gold["answer"]
        if orig == "q2" or (orig == "q1" and r < 2):
            return f"Answer: {right}"
        return "Answer: A" if right != "A" else "Answer: B"

    samples = [score_output(bench, it, reply(it)) for it in units]
    agg = bench.run_aggregate(samples, ds, resamples=0)
    assert agg["overall"]["accuracy"]["value"] == pytest.approx(0.25)
    assert agg["circular"]["items"] == 4 and agg["circular"]["rotations"] == {"4": 4}
    plain_samples = [score_output(plain, it, reply(it)) for it in units if it.meta["rotation"] == 0]
    plain_agg = plain.run_aggregate(plain_samples, ds, resamples=0)
    assert agg["overall"]["plain_accuracy"]["value"] == pytest.approx(plain_agg["overall"]["accuracy"]["value"])
    assert [m.label for m in bench.run_metrics(ds)][0] == f"circular {plain.metrics[0].label or plain.metrics[0].name}"
    assert plain.run_metrics(ds) == plain.metrics_for(ds)  # no setting: the benchmark's own


def test_the_pivots_last_phase_scores_the_given_answer(tmp_path: Path) -> None:
    """The reply is the answer as it is (every pipeline's, for a task file); an item whose English
    answer or translation back failed fails as that kind."""
    path = _task(tmp_path)
    bench = replace(get_benchmark(path), pivot="en(m)", given={"i1": "answer_timeout", "i2": "pivot_failed"})
    ds = bench.load(None)
    got = [score_output(bench, it, r) for it, r in zip(ds, [LAO[0], LAO[1], LAO[2], "  "])]
    assert [s.failure for s in got] == [None, "answer_timeout", "pivot_failed", "empty"]
    assert got[0].answer == {"answer": LAO[0]} and got[0].score.stats["answer:chrf.0"] > 0


def test_a_run_with_each_setting_makes_no_class(tmp_path: Path, cache_path: str, plugins: None) -> None:
    """evaluate() with circular and with zero (a built-in, a plugin, a task file): no class is made,
    and results.json's signature is the plain run's with the setting's part after it."""
    data = write_mcq(tmp_path / "mcq.jsonl")
    path = _task(tmp_path)
    before = _all_subclasses(Benchmark)
    runs = [("laobench-mcq", data, "python:checks_models:always_a", ("permute", "circular")),
            ("plugin-settings-mcq", data, "python:checks_models:always_a", ("permute", "circular")),
            (path, None, "python:test_run_settings:english", ("wrong_language", "zero")),
            ("plugin-settings-translation", None, "python:test_run_settings:english", ("wrong_language", "fail"))]
    for i, (name, d, model, opt) in enumerate(runs):
        common = dict(data=d, cache_path=cache_path, progress=False, limit=None)
        plain = evaluate(name, model, RunOptions(out=str(tmp_path / f"plain{i}"), **common)).results  # type: ignore[arg-type]
        res = evaluate(name, model, RunOptions(out=str(tmp_path / f"set{i}"), bench_options=(opt,), **common)).results  # type: ignore[arg-type]
        want = Signature.parse(plain["signature"]).without("thinking").format()
        assert res["signature"].startswith(want + f"|{opt[0]}:{opt[1]}")
        assert Signature.parse(res["signature"]).keys()[-1] == "thinking"
    # a class made at run time is no module's attribute (a module imported lazily by the run adds its own)
    assert [c for c in _all_subclasses(Benchmark) - before if not _defined(c)] == []


def english(messages: Any) -> str:
    """A model that answers every prompt in English."""
    return ENGLISH


def test_tasks_check_refuses_a_setting_the_tasks_items_cannot_take(tmp_path: Path) -> None:
    """`tasks check` asks the run's units of the task's own data: circular on items without options
    is the run's one `error:` line, before any run; the settings' parts are listed with the task's."""
    from conftest import cli

    path = _task(tmp_path)
    r = cli("tasks", "check", path, "--bench-opt", "permute=circular")
    assert r.returncode == 2 and r.stderr.strip() == "error: item 'i0' has no options to rotate (permute=circular is for option tasks)"
    r = cli("tasks", "check", path, "--bench-opt", "wrong_language=zero")
    assert r.returncode == 0 and "  wrong_language: zero(py3langid-" in r.stdout
