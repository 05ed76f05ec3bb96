"""glotbench's scorer as an Inspect extension (glotbench/inspect_ext.py, issue #35): the entry point in
pyproject.toml names the module that registers `glotbench/score` and `glotbench/task_metrics`; glotbench
itself never imports it; the scorer refuses rows it cannot read, by name. The round trip of every
glotbench-scored library task (Inspect's eval, then this scorer) is in tests/test_tasks_inspect_derived.py."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("inspect_ai")


def test_the_entry_point_names_the_module_that_registers_the_scorer_and_its_metric():
    import importlib

    from inspect_ai._util.registry import registry_lookup

    eps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]["inspect_ai"]
    assert eps == {"glotbench": "glotbench.inspect_ext"}  # Inspect loads it for a `glotbench/...` name
    module = importlib.import_module(eps["glotbench"])
    assert registry_lookup("scorer", "glotbench/score") is not None
    assert registry_lookup("metric", "glotbench/task_metrics") is not None
    from glotbench.tasks.inspect_yaml import GLOTBENCH_SCORER

    assert GLOTBENCH_SCORER == "glotbench/" + module.score.__name__  # the name the eval.yaml declares


def test_the_names_are_glotbench_s_when_glotbench_is_found_outside_an_install(tmp_path):
    """Run from a source tree on PYTHONPATH beside a distribution Inspect cannot read as editable (CI
    found a stale `src/glotbench.egg-info` first), Inspect would register a bare `score`; the eval.yaml's
    `glotbench/score` must still be found."""
    (tmp_path / "glotbench").symlink_to(ROOT / "src" / "glotbench")
    dist = tmp_path / "glotbench-0.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: glotbench\nVersion: 0.0\n", encoding="utf-8")
    code = ("import glotbench.inspect_ext; from inspect_ai._util.registry import registry_lookup as r; "
            "print(r('scorer', 'glotbench/score') is not None, r('metric', 'glotbench/task_metrics') is not None, "
            "r('scorer', 'score') is None, glotbench.__file__.startswith(%r))" % str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path,
                         env={**__import__("os").environ, "PYTHONPATH": str(tmp_path)})
    assert out.stdout.split() == ["True", "True", "True", "True"]


def test_glotbench_runs_without_importing_inspect_ai():
    """The export and the CLI never import the extension (nor inspect_ai): it is not a dependency."""
    code = ("import sys, glotbench.cli.app, glotbench.tasks.inspect_yaml, glotbench.registry; "
            "print(sorted(m for m in sys.modules if m.startswith('inspect_ai') or m == 'glotbench.inspect_ext'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _state(metadata: dict, reply: str, sample_id: int = 1):
    from inspect_ai.model import ModelOutput
    from inspect_ai.solver import TaskState

    st = TaskState(model="m", sample_id=sample_id, epoch=1, input="q", messages=[], metadata=metadata)
    st.output = ModelOutput.from_content("m", reply)
    return st


def _row(version: str = "1.0", **gold) -> dict:
    return {"glotbench": json.dumps({"id": "x1", "version": version, "public": {"text": "The river."},
                                     "gold": gold or {"reference": "ແມ່ນ້ຳ."}, "meta": {}}, ensure_ascii=False)}


def test_the_scorer_scores_as_the_task_and_the_metric_sums_the_statistics():
    """Two Lao replies: each sample's statistics are glotbench's own for that item, and the metric is
    chrF++ of the summed statistics (sacrebleu's corpus chrF++ with the task's segmenter), not the
    mean of the two sentence scores."""
    from inspect_ai.scorer import SampleScore, Target

    from glotbench.inspect_ext import score, task_metrics
    from glotbench.items import Item
    from glotbench.registry import get_benchmark
    from glotbench.scoring import score_output

    bench = get_benchmark("flores-plus")
    rule = score("flores-plus", {"target": "lao_Laoo"})
    replies = ["ແມ່ນ້ຳໄຫຼ.", "ບໍ່ຮູ້"]
    got = [asyncio.run(rule(_state(_row(), r), Target(""))) for r in replies]
    item = Item.create("x1", {"text": "The river."}, {"reference": "ແມ່ນ້ຳ."}, {})
    mine = [score_output(bench, item, r) for r in replies]
    assert [g.metadata["stats"] for g in got] == [dict(m.score.stats) for m in mine]
    values = task_metrics()([SampleScore(score=g, sample_id=i) for i, g in enumerate(got)])
    corpus = bench.aggregate(mine, None, resamples=0)["overall"]
    assert values["chrf++"] == pytest.approx(corpus["chrf++"]["value"], abs=1e-9)
    assert values["chrf++"] != pytest.approx(sum(g.value for g in got) / len(got))  # a corpus figure, not a mean


@pytest.mark.parametrize("metadata, options, why", [
    ({}, None, "no 'glotbench' metadata"),
    (_row(version="0.9"), None, "derived from flores-plus v0.9; the installed task is v1.0"),
])
def test_rows_the_scorer_cannot_read_are_refused_by_name(metadata, options, why):
    from inspect_ai.scorer import Target

    from glotbench.inspect_ext import score

    with pytest.raises(ValueError) as e:
        asyncio.run(score("flores-plus", options)(_state(metadata, "x", 7), Target("")))
    assert why in str(e.value) and "sample 7" in str(e.value)


def test_options_not_a_mapping_are_refused():
    from glotbench.inspect_ext import score

    with pytest.raises(ValueError, match="options is a mapping"):
        score("flores-plus", "target=lao_Laoo")  # type: ignore[arg-type]


def test_the_metric_refuses_scores_without_the_statistics():
    from inspect_ai.scorer import SampleScore, Score

    from glotbench.inspect_ext import task_metrics

    with pytest.raises(ValueError, match="without glotbench/score's statistics"):
        task_metrics()([SampleScore(score=Score(value=1.0, metadata={"task": "flores-plus", "options": "{}"}), sample_id=1)])
    assert task_metrics()([]) == {}
