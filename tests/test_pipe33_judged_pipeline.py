"""One judged pipeline (issue #33): every judged benchmark declares the parts of its run that are its own
(judges/pipeline.py `JudgedDeclaration`) and engine/judged.py runs them; no engine module per kind,
no dispatch on a kind's name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from glotbench.benchmarks.arena import ArenaPrompts, LaoBenchArena
from glotbench.core import Dataset, RunResult, Sample
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import GlotbenchError
from glotbench.judges.pipeline import AnswerPhase
from glotbench.metrics import ItemScore
from glotbench.plugins import benchmarks
from glotbench.registry import get_benchmark

SRC = Path(__file__).resolve().parents[1] / "src" / "glotbench"
BASELINE = {"laobench-arena": {"baseline": "python:helpers:plain_answer"}}


def judged_builtins() -> list[str]:
    names = [n for n in benchmarks(hidden=True) if get_benchmark(n, **BASELINE.get(n, {})).judged]
    assert {"laobench-arena", "aragen", "sea-mt-bench"} <= set(names)  # the list is not empty by accident
    return names


def test_every_judged_builtin_declares_its_run():
    for name in judged_builtins():
        bench = get_benchmark(name, **BASELINE.get(name, {}))
        decl = bench.judged_declaration()
        assert decl is not None, name
        assert decl.answer_dirs and decl.judge_games.judge_task, name  # its judges' task counts unreadable verdicts


def test_no_engine_module_per_kind_and_no_dispatch_on_a_kind():
    engine = {p.name for p in (SRC / "engine").glob("*.py")}
    assert {"judged.py"} <= engine and not {"judged_task.py", "mt_bench.py", "panel.py"} & engine
    for name in ("evaluate.py", "judged.py"):  # the dispatch and the pipeline name no kind
        code = (SRC / "engine" / name).read_text(encoding="utf-8")
        assert "judge_pipeline ==" not in code, name
        assert not re.search(r"""["'](rubric|arena|aragen|mt-bench)["']""", code), name


def test_a_judged_benchmark_without_a_declaration_is_one_clear_error(tmp_path):
    class Undeclared(ArenaPrompts):
        name, judged = "undeclared-judged", True

    with pytest.raises(GlotbenchError, match="declares no judged run"):
        evaluate(Undeclared(), "python:helpers:good_answer",
                 RunOptions(out=str(tmp_path / "r"), judges=("python:helpers:plain_answer",)))


def test_the_arena_without_a_baseline_says_so_before_any_call(tmp_path):
    with pytest.raises(GlotbenchError, match="needs a baseline"):
        evaluate(LaoBenchArena(), "python:helpers:good_answer",
                 RunOptions(out=str(tmp_path / "r"), judges=("python:helpers:plain_answer",)))
    assert not (tmp_path / "r").exists()


def test_phases_follow_each_other_as_declared():
    """SEA-MT-Bench's turn 2 is built from turn 1's answers, the baseline's turns only with a baseline model."""
    bench = get_benchmark("sea-mt-bench")
    items = bench.load(None)
    first = bench.next_phase("m", items, {})
    assert isinstance(first, AnswerPhase) and first.name == "candidate turn 1" and first.directory == "candidate-turn1"
    assert len(first.items) == len(items)
    with_base = get_benchmark("sea-mt-bench", baseline="python:helpers:plain_answer")
    names = []
    done: dict = {}
    while (step := with_base.next_phase("m", items, done)) is not None:
        names.append(step.name)
        done[step.name] = _answered(step.items)
    assert names == ["candidate turn 1", "candidate turn 2", "baseline turn 1", "baseline turn 2"]
    # turn 2 carries the side's own turn-1 answer
    turn2 = with_base.next_phase("m", items, {"candidate turn 1": done["candidate turn 1"]})
    assert turn2 is not None and all(list(it.public["answers"]) == ["ok"] for it in turn2.items)


def _answered(items: Dataset) -> RunResult:
    """A phase whose every item was answered ("ok")."""
    return RunResult(Path("."), {}, tuple(Sample(it.id, 0, it.meta, ItemScore({}), answer="ok") for it in items), items)


def test_a_benchmark_from_outside_declares_its_judges_sampling(tmp_path):
    """A plugin's judged benchmark changes one declared part (the judges' sampling); the one pipeline
    runs the rest unchanged and the judges' phase records the declared settings."""
    import json

    from glotbench.judges.pipeline import JudgeSampling

    class WarmArena(LaoBenchArena):
        name = "warm-arena"
        sampling = JudgeSampling(temperature=0.7, seed=11)

    judge = "python:helpers:judge_fails_swapped_odd"
    res = evaluate(WarmArena(baseline="python:helpers:plain_answer", single_order="accept"),
                   "python:helpers:good_answer", RunOptions(out=str(tmp_path / "r"), judges=(judge,), use_cache=False))
    phases = res.results["judged"]["phases"]
    assert list(phases) == ["candidate", "baseline", f"judge {judge}"]
    cfg = json.loads((res.out_dir / phases[f"judge {judge}"] / "run.json").read_text(encoding="utf-8"))["config"]
    assert (cfg["temperature"], cfg["seed"]) == (0.7, 11)
    answers_cfg = json.loads((res.out_dir / "candidate" / "run.json").read_text(encoding="utf-8"))["config"]
    assert answers_cfg["temperature"] == 0.0  # the answers keep their own (ArenaPrompts' default)
    assert res.results["model"]["spec"] == "python:helpers:good_answer"
    # every answer GOOD beats PLAIN in both orders (single order accepted where the other is malformed)
    assert res.results["judged"]["summary"]["scores"]["final"]["value"] == 1.0
