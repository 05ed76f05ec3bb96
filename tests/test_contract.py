"""The Benchmark contract is declared and typed (issue 33, "A declared contract"): its facts are
typed attributes of `benchmarks/base.py`'s `Benchmark`, every signature that takes a benchmark names
it (below benchmarks/: `contract.ScoredBenchmark`), mypy holds a plugin to it, and a plugin that
lacks a station or a declared fact, or declares one of another type, is refused in one line when it
is registered, built or run, never a traceback or "a bug in glotbench" later in the run."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from conftest import cli
from glotbench.benchmarks.base import Benchmark, contract_fault
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import SpecError
from glotbench.metrics import RatioMetric
from glotbench.registry import benchmarks, get_benchmark, register_benchmark

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "glotbench"

# A plugin as docs/extending.md writes one, in a module of its own; each class lacks one thing.
PLUGIN = '''
from glotbench import Benchmark, Item, ItemScore, Prompt, RatioMetric
from glotbench.extract import free_text

METRICS = (RatioMetric("answered", "answered", "n", "answered"),)


class Whole(Benchmark):
    name, version, description, metrics = "whole", "1", "a plugin with every fact", METRICS

    def load(self, path=None):
        return self.dataset([Item.create("a", {"q": "ສະບາຍດີ"}, {}, {})], "plugin")

    def render(self, item):
        return Prompt(messages=({"role": "user", "content": item["q"]},), text=item["q"])

    def extract(self, text, item):
        return free_text(text)

    def score(self, answer, item):
        return ItemScore({"answered": 1.0, "n": 1.0})

    def failure_score(self, failure, item):
        return ItemScore({"answered": 0.0, "n": 1.0}, failure=failure)


class NoMetrics(Whole):
    metrics = None


class Letters(Whole):
    answer_kind = "letters"


class NoExtract(Benchmark):
    name, version, description, metrics = "no-extract", "1", "a station left abstract", METRICS
    load, render, score, failure_score = Whole.load, Whole.render, Whole.score, Whole.failure_score
'''


def _whole() -> type[Benchmark]:
    """PLUGIN's complete benchmark, a class of its own each call (a test may take a fact off it)."""
    namespace: dict[str, Any] = {}
    exec(compile(PLUGIN, "contract_plugin.py", "exec"), namespace)  # noqa: S102 - this file's own text
    return namespace["Whole"]


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugins registered by a test are gone after it."""
    from glotbench import plugins

    monkeypatch.setattr(plugins, "_BENCHMARKS", dict(plugins._BENCHMARKS))


def test_every_built_in_and_library_task_holds_the_contract() -> None:
    """Every registered benchmark (the hidden phases too), every shipped task file and each judged
    benchmark's judge task: no station abstract, every declared fact set and of its declared type."""
    from glotbench.tasks.files import task_names

    checked = []
    for name in [*benchmarks(hidden=True), *task_names()]:
        bench = get_benchmark(name, **({"baseline": "replay:b.jsonl"} if name == "laobench-arena" else {}))
        checked.append(bench)
        if (decl := bench.judged_declaration()) is not None:
            checked.append(decl.judge_games)
    faults = [f"{b.name}: {fault}" for b in checked if (fault := contract_fault(b)) is not None]
    assert faults == [] and len(checked) > 50


@pytest.mark.parametrize("fact", ["name", "version", "description", "metrics"])
def test_a_plugin_without_a_declared_fact_is_refused_when_built(fact: str, registry: None) -> None:
    """The facts without a default: unset, `get_benchmark` (a registered name, MODULE:CLASS, an entry
    point) refuses the benchmark in one line naming the fact; it was an AttributeError mid-run."""
    Whole = _whole()
    Lacking = type(f"No{fact.title()}", (Whole,), {})
    delattr(Whole, fact)
    if fact != "name":
        Lacking.name = "lacking"  # type: ignore[attr-defined]
    register_benchmark("lacking")(Lacking)
    with pytest.raises(SpecError) as e:
        get_benchmark("lacking")
    assert str(e.value).startswith(f"lacking: No{fact.title()} declares no {fact} (") and "\n" not in str(e.value)


@pytest.mark.parametrize(("fact", "value", "declared"), [
    ("answer_kind", "letters", "'letter' | 'number' | 'text' | None"),
    ("metrics", [RatioMetric("answered", "answered", "n", "answered")], "tuple[Metric, ...]"),
    ("version", 1, "str"),
    ("judged", "yes", "bool"),
    ("group_by", "lang", "tuple[str, ...]"),
    ("lang", ("th",), "str | None"),
])
def test_a_fact_of_another_type_than_declared_is_refused(fact: str, value: Any, declared: str, registry: None) -> None:
    """A typo in a declared fact would silently drop a check (`answer_kind = "letters"`: no extraction
    check) or fail later: refused with the value and the declared type."""
    bad = type("Bad", (_whole(),), {fact: value})
    register_benchmark("bad")(bad)
    with pytest.raises(SpecError, match=r"^bad: ") as e:
        get_benchmark("bad")
    assert str(e.value) == f"bad: Bad.{fact} is {value!r}, not of its declared type {declared}"


def test_no_metric_at_all_is_refused(registry: None) -> None:
    register_benchmark("none")(type("Empty", (_whole(),), {"metrics": ()}))
    with pytest.raises(SpecError, match=r"Empty.metrics is empty: a Benchmark declares at least one metric"):
        get_benchmark("none")


def test_a_station_left_abstract_is_refused_at_registration(registry: None) -> None:
    """It could never be built: `register_benchmark` says so at once (it said "bad option" later)."""
    Whole = _whole()

    class NoScore(Benchmark):
        name, version, description, metrics = "no-score", "1", "two stations left abstract", Whole.metrics
        load, render, failure_score = Whole.load, Whole.render, Whole.failure_score

    with pytest.raises(SpecError, match=r"^register_benchmark\('no-score'\): NoScore does not implement extract, score$"):
        register_benchmark("no-score")(NoScore)
    assert "no-score" not in benchmarks()


def test_evaluate_refuses_an_object_without_a_declared_fact(tmp_path: Path) -> None:
    """The Python API given an object: refused before any model is built or a directory written."""
    bench = _whole()()
    bench.version = None  # type: ignore[assignment]  # a plugin that set it from a config that had none
    with pytest.raises(SpecError, match=r"^Whole.version is None, not of its declared type str$"):
        evaluate(bench, "python:no_such_module:f", RunOptions(out=str(tmp_path / "r"), progress=False))
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("cls", "words"), [
    ("NoMetrics", "NoMetrics.metrics is None, not of its declared type tuple[Metric, ...]"),
    ("Letters", "Letters.answer_kind is 'letters', not of its declared type 'letter' | 'number' | 'text' | None"),
    ("NoExtract", "NoExtract does not implement extract (every Benchmark implements load, render, extract, score, "
                  "failure_score)"),
])
def test_the_console_refuses_a_plugin_class_in_one_line(tmp_path: Path, cls: str, words: str) -> None:
    """`glotbench run MODULE:CLASS` as a user types it: one `error:` line, exit 2, no run directory."""
    (tmp_path / "contract_plugin.py").write_text(PLUGIN, encoding="utf-8")
    (tmp_path / "answer.py").write_text("def f(messages):\n    return 'ສະບາຍດີ'\n", encoding="utf-8")
    proc = cli("run", f"contract_plugin:{cls}", "--model", "python:answer:f", "--out", str(tmp_path / "r"),
               "--no-progress", "--no-cache", cwd=str(tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == f"error: contract_plugin:{cls}: {words}\n"
    assert not (tmp_path / "r").exists()
    ok = cli("run", "contract_plugin:Whole", "--model", "python:answer:f", "--out", str(tmp_path / "ok"),
             "--no-progress", "--no-cache", cwd=str(tmp_path))
    assert ok.returncode == 0, ok.stderr  # the same module, every fact declared: it runs


BAD_PLUGIN = '''
from glotbench import Benchmark
from glotbench.benchmarks.base import Benchmark as Base


class Typo(Benchmark):
    answer_kind = "letters"
    version = 1


class Typo2(Base):
    judged = "yes"
    metrics = ["accuracy"]
'''


def _mypy(folder: Path, *files: str) -> subprocess.CompletedProcess[str]:
    """mypy with the project's settings over `files`, glotbench read from this checkout's src/ (its
    `py.typed`, its `__init__.pyi`). The project's cache is shared: warm after `mypy src/glotbench`
    (.ci/run runs it before the tests) this takes about a second; cold, under a minute."""
    env = {**os.environ, "MYPYPATH": os.pathsep.join([str(ROOT / "src"), str(folder)])}
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                           "--cache-dir", str(ROOT / ".mypy_cache"), "--no-error-summary",
                           *[str(folder / f) for f in files]], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)


def test_mypy_holds_a_plugin_to_the_declared_facts(tmp_path: Path) -> None:
    """docs/extending.md's metric and benchmark pass; a plugin whose facts are of another type fails
    at each of them, whether it imports `Benchmark` from `glotbench` (lazily, at run time) or from
    `glotbench.benchmarks.base`."""
    import re

    doc = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    for body in re.findall(r"^```python\n(.*?)^```", doc, re.DOTALL | re.MULTILINE):
        name = body.splitlines()[0][2:]
        if name in ("my_metric.py", "my_bench.py"):
            (tmp_path / name).write_text(body, encoding="utf-8")
    (tmp_path / "typo_plugin.py").write_text(textwrap.dedent(BAD_PLUGIN), encoding="utf-8")
    good = _mypy(tmp_path, "my_metric.py", "my_bench.py")
    assert good.returncode == 0, good.stdout + good.stderr
    bad = _mypy(tmp_path, "typo_plugin.py")
    found = sorted((int(m[0]), m[1]) for m in re.findall(r"typo_plugin\.py:(\d+): error: .*?\"(\w+)\" defined the type",
                                                     bad.stdout))
    assert bad.returncode == 1 and found == [(7, "Benchmark"), (8, "Benchmark"), (12, "Benchmark"), (13, "Benchmark")], bad.stdout


def test_the_type_stub_names_what_the_package_imports_lazily() -> None:
    """`__init__.pyi` (what a type checker reads for `glotbench`) imports each of `__init__.py`'s
    names from the module `_LAZY` names for it: the two cannot drift apart."""
    import glotbench

    stub = ast.parse((SRC / "__init__.pyi").read_text(encoding="utf-8"))
    typed = {a.asname or a.name: node.module for node in stub.body if isinstance(node, ast.ImportFrom) for a in node.names}
    eager = {"DataError": "glotbench.errors", "GlotbenchError": "glotbench.errors", "SpecError": "glotbench.errors",
             "Item": "glotbench.items", "PublicItem": "glotbench.items"}
    assert typed == {**glotbench._LAZY, **eager}
    assert sorted([*typed, "__version__"]) == sorted(glotbench.__all__)
    assert (SRC / "py.typed").is_file()


# Left `Any` in the judged pipeline's files, which another change reworks (judges/pipeline.py,
# engine/judged.py): each typed with `contract.ScoredBenchmark` or `Benchmark` there, then removed here.
LEFT_ANY: set[tuple[str, str, str]] = set()  # none left


def test_no_signature_types_a_benchmark_as_any() -> None:
    """A parameter or field named `bench`/`benchmark` (`task` in judges/), or a function that returns
    a benchmark (`get_benchmark`, `bench_of`...), annotated `Any`: none outside LEFT_ANY."""
    returns = {"get_benchmark", "task_copy", "_build", "_with_settings", "bench_of", "_bench", "judge_games"}
    found = set()
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
                    if a.arg in ("bench", "benchmark") and a.annotation is not None and "Any" in ast.unparse(a.annotation).split(" | "):
                        found.add((rel, node.name, a.arg))
                if node.name in returns and node.returns is not None and ast.unparse(node.returns) == "Any":
                    found.add((rel, node.name, "return"))
            if isinstance(node, ast.ClassDef):
                for st in node.body:
                    if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and rel.startswith("judges/") \
                            and st.target.id in ("bench", "benchmark", "task") and "Any" in ast.unparse(st.annotation):
                        found.add((rel, node.name, st.target.id))
    assert found - LEFT_ANY == set()
    assert LEFT_ANY - found == set(), "typed now: remove it from LEFT_ANY"
