"""A plugin benchmark gets every check a built-in gets: the checks, `rescore`, `compare` and the
run's units read declared facts of the Benchmark contract (benchmarks/base.py), never a benchmark's
name, its class or an attribute looked up by `getattr`.

Each built-in is mirrored by a benchmark registered from outside the package under another name: a
class of its own (not a subclass of the built-in) that declares the built-in's facts and answers
every method of the contract as the built-in does. Its checks, rescore plan and units must be the
built-in's, on the same replies."""

from __future__ import annotations

import ast
import dataclasses
import typing
from pathlib import Path
from typing import Any

import pytest

from glotbench.benchmarks.base import Benchmark
from glotbench.checks import RunChecks
from glotbench.registry import benchmarks, get_benchmark, register_benchmark
from glotbench.scoring import score_output

SRC = Path(__file__).resolve().parents[1] / "src" / "glotbench"

# The contract: Benchmark's declared facts (its annotated attributes) and its methods.
FACTS = [n for n in typing.get_type_hints(Benchmark) if not n.startswith("_")]
METHODS = [n for n, v in vars(Benchmark).items() if callable(v) and not n.startswith("_")]


def mirror(inner: Benchmark) -> Benchmark:
    """A plugin benchmark named `plugin-NAME` with `inner`'s facts and answers."""

    class Mirror(Benchmark):
        def __init__(self) -> None:
            for fact in FACTS:
                if hasattr(inner, fact):
                    setattr(self, fact, getattr(inner, fact))
            self.name = f"plugin-{inner.name}"

        # the abstract stations, then every other method of the contract: inner's
        def load(self, path: str | None = None) -> Any:
            return inner.load(path)

        def render(self, item: Any) -> Any:
            return inner.render(item)

        def extract(self, text: str, item: Any) -> Any:
            return inner.extract(text, item)

        def score(self, answer: Any, item: Any) -> Any:
            return inner.score(answer, item)

        def failure_score(self, failure: str, item: Any) -> Any:
            return inner.failure_score(failure, item)

    for m in METHODS:  # each method the built-in defines (one it inherits is the plugin's inherited too)
        if m not in vars(Mirror) and getattr(type(inner), m) is not getattr(Benchmark, m):
            setattr(Mirror, m, (lambda name: lambda self, *a, **k: getattr(inner, name)(*a, **k))(m))
    return Mirror()


# Replies of several shapes: letters, numbers in two scripts, tagged text, a wrong-language text,
# JSON, an empty reply.
REPLIES = ["<answer>B</answer>", "Answer: C", "The answer is 12", "<answer>໔໒</answer>",
           "<translation>xin chào thế giới</translation>", "<summary>ສະບາຍດີ</summary>", "",
           '{"restored_text": "Tôi đi học"}', "คำตอบคือ ข", "Hello there, this is English."]


def _checks(bench: Benchmark) -> tuple[dict[str, Any], list[Any]]:
    data = bench.load(None)[:24]
    units = bench.expand(data)
    samples = [score_output(bench, it, REPLIES[i % len(REPLIES)]) for i, it in enumerate(units)]
    checks = RunChecks(bench, units)
    checks.check_all(samples)
    return checks.summary(samples, bench.metrics_for(data)), samples


CASES = [(name, opts) for name in sorted(benchmarks(hidden=False))
         for opts in ({}, {"wrong_language": "zero"}, {"permute": "circular"})]


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugins registered by a test are gone after it."""
    from glotbench import plugins

    monkeypatch.setattr(plugins, "_BENCHMARKS", dict(plugins._BENCHMARKS))


def _outcome(fn: Any) -> tuple[Any, str | None]:
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - a setting or a reply the benchmark refuses: compared below
        return None, f"{type(e).__name__}: {e}"


@pytest.mark.parametrize(("name", "opts"), CASES)
def test_a_plugin_benchmark_gets_every_check_a_built_in_gets(name: str, opts: dict[str, str], registry: None) -> None:
    register_benchmark(f"plugin-{name}")(lambda: mirror(get_benchmark(name)))
    builtin, refused = _outcome(lambda: get_benchmark(name, **opts))
    plugin, plugin_refused = _outcome(lambda: get_benchmark(f"plugin-{name}", **opts))
    # a setting the built-in refuses (wrong_language on letters), the plugin refuses in the same words
    assert (plugin_refused or "").replace(f"plugin-{name}", name) == (refused or "")
    if refused:
        return
    assert not isinstance(plugin, type(get_benchmark(name))) and plugin.name == f"plugin-{name}"
    # the same replies scored and checked (circular on items without options: refused alike)
    want_run, refused = _outcome(lambda: _checks(builtin))
    got_run, plugin_refused = _outcome(lambda: _checks(plugin))
    assert (plugin_refused or "").replace(f"plugin-{name}", name) == (refused or "")
    if refused:
        return
    (want, want_samples), (got, got_samples) = want_run, got_run
    assert got == want
    assert [s.to_record() for s in got_samples] == [s.to_record() for s in want_samples]
    assert plugin.rescore_plan() == builtin.rescore_plan()
    assert (plugin.wrong_language, plugin.permute) == (builtin.wrong_language, builtin.permute)
    data = builtin.load(None)[:24]
    assert [it.id for it in plugin.expand(data)] == [it.id for it in builtin.expand(data)]
    assert [plugin.translation_pair(it) for it in data] == [builtin.translation_pair(it) for it in data]
    answers = [s.answer for s in want_samples]
    assert [plugin.word_diff(a, it.gold) for a, it in zip(answers, data) if isinstance(a, str)] == \
        [builtin.word_diff(a, it.gold) for a, it in zip(answers, data) if isinstance(a, str)]
    # what the checks read is there: the language expectation, the extraction reading, the error table
    assert set(got) >= {"version"} and (builtin.answer_kind is None or "extraction" in got)


def test_no_probe_of_an_undeclared_attribute_is_left() -> None:
    """The issue's grep, made a test: no `getattr(bench, ...)` / `hasattr(bench, ...)` (nor of
    `self.bench`) in src/. One function is not a probe and is left out: `benchmarks/base.py`
    `contract_fault`, the contract's own check that each DECLARED fact (named by Benchmark's
    annotations) is set and of its type."""
    found = []
    for p in sorted(SRC.rglob("*.py")):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        skip = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "contract_fault"
                and p.relative_to(SRC).as_posix() == "benchmarks/base.py" for n in ast.walk(f)}
        for node in ast.walk(tree):
            if id(node) not in skip and isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
                    and node.args and (isinstance(node.args[0], ast.Name) and node.args[0].id in ("bench", "benchmark")
                                       or isinstance(node.args[0], ast.Attribute) and node.args[0].attr in ("bench", "benchmark")):
                found.append(f"{p.relative_to(SRC)}:{node.lineno}")
    assert not found, found


def test_no_table_of_built_in_benchmark_names_outside_the_benchmarks() -> None:
    """No module but the built-ins' own and the registry's lists names a built-in benchmark: the
    checks, rescore, the views and the service decide by declared facts."""
    from glotbench.rundir.schema import BUILTIN_JUDGED_KINDS

    # `aragen` is also a judged run's kind (the record's vocabulary, rundir.schema.BUILTIN_JUDGED_KINDS,
    # whose summaries have schemas of their own), which the views read: a declared fact, not a table of
    # benchmark names
    names = set(benchmarks(hidden=True)) - set(BUILTIN_JUDGED_KINDS)
    found = []
    for p in sorted(SRC.rglob("*.py")):
        rel = p.relative_to(SRC).as_posix()
        if rel.startswith("benchmarks/") or rel == "plugins.py":
            continue
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in names:
                found.append(f"{rel}:{node.lineno}: {node.value}")
    assert not found, found


def test_rescore_names_no_benchmark(registry: None) -> None:
    """rescore's plans are the benchmarks' declared `rescore_plan`, not a table of names."""
    tree = ast.parse((SRC / "checks" / "rescore.py").read_text(encoding="utf-8"))
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert not strings & set(benchmarks(hidden=True))
    plans = {n: get_benchmark(n).rescore_plan() for n in benchmarks()}
    assert {n for n, p in plans.items() if p is not None} == {
        "deepsea-crosssum", "deepsea-wmt24pp", "deepsea-xquad", "laobench-translation", "vi-diacritics"}
    assert dataclasses.is_dataclass(plans["vi-diacritics"]) and plans["vi-diacritics"].per_item_language is False
