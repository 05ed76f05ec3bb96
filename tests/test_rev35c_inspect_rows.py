"""glotbench/score (glotbench/inspect_ext.py) scores a derived row only by the task and options it was
derived with (issue #35 review). The row's `glotbench` column held the task's version alone, so rows of
flores-plus into Thai scored with `-S task=flores-plus` (Lao, the default) or with `-S task=ntrex-128`
(also v1.0, the same gold shape) gave a number by another task's rules, silently."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("inspect_ai")


def _derived_row(task: str, **options) -> dict:
    from glotbench.items import Item
    from glotbench.registry import get_benchmark
    from glotbench.tasks.inspect_yaml import GLOTBENCH_COLUMN, export_derived

    bench = get_benchmark(task, **options)
    item = Item.create("x1", {"text": "The river flows.", "source_language": "English", "target_language": "Thai"},
                       {"reference": "แม่น้ำไหล"}, {})
    _, rows, _, _, _ = export_derived(bench, [item])
    return {GLOTBENCH_COLUMN: rows[0][GLOTBENCH_COLUMN]}


def _score(metadata: dict, task: str, options: dict | None = None):
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Target
    from inspect_ai.solver import TaskState

    from glotbench.inspect_ext import score

    st = TaskState(model="m", sample_id=1, epoch=1, input="q", messages=[], metadata=metadata)
    st.output = ModelOutput.from_content("m", "แม่น้ำไหล")
    return asyncio.run(score(task, options)(st, Target("")))


def test_the_derived_row_names_its_task_and_options():
    row = json.loads(_derived_row("flores-plus", target="tha_Thai")["glotbench"])
    assert row["task"] == "flores-plus"
    assert row["options"] == {"source": "eng_Latn", "target": "tha_Thai", "split": "devtest"}


@pytest.mark.parametrize(("task", "options", "named"), [
    ("flores-plus", None, "lao_Laoo"),                        # the default direction, not the rows'
    ("flores-plus", {"target": "khm_Khmr"}, "khm_Khmr"),      # another direction
    ("ntrex-128", {"target": "tha_Thai"}, "task ntrex-128"),  # another task of the same version and gold
])
def test_rows_of_another_task_or_options_are_refused_naming_both(task, options, named):
    with pytest.raises(ValueError, match="derived from task flores-plus") as e:
        _score(_derived_row("flores-plus", target="tha_Thai"), task, options)
    assert named in str(e.value) and "tha_Thai" in str(e.value)


def test_the_rows_own_task_and_options_score():
    got = _score(_derived_row("flores-plus", target="tha_Thai"), "flores-plus", {"target": "tha_Thai"})
    assert got.metadata["task"] == "flores-plus" and got.value == pytest.approx(100.0)


def test_a_row_that_is_not_an_object_is_one_error():
    with pytest.raises(ValueError, match="not a derived row's item"):
        _score({"glotbench": "[1, 2]"}, "flores-plus")
