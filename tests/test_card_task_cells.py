"""The report card's per-task cells print their units and the † where the task's bootstrap rests on
too few of them (issue #30: n beside every CI, † where coverage is under 93%): a task of one Thai
item printed `100.0 (100.0–100.0)` with no mark, beside a headline that carried one."""

from __future__ import annotations

from glotbench.report.card import card_html, card_lines

TASKS = [{"task": "deepsea-mgsm", "metric": "numeric_em", "n": 1, "clusters": None, "origin": "native", "floor": 0.0,
          "floor_kind": "none (0)", "top": 100.0},
         {"task": "belebele", "metric": "accuracy", "n": 12, "clusters": 4, "origin": "translated", "floor": 0.25,
          "floor_kind": "random", "top": 1.0},
         {"task": "big", "metric": "accuracy", "n": 900, "clusters": None, "origin": "native", "floor": 0.25,
          "floor_kind": "random", "top": 1.0}]
CELL = {"normalised": 1.0, "normalised_ci": [1.0, 1.0], "rank_score": 1.0}
CARD = {"language": "th", "tasks": TASKS, "left_out": [], "alpha": 0.05, "correction": "holm", "min_tasks": 5,
        "too_few_tasks": True, "models": [{"model": "m", "tier": 1,
                                            "normalised_mean": {"value": 1.0, "ci_low": 1.0, "ci_high": 1.0},
                                            "rank_score": {"value": 1.0, "ci_low": 1.0, "ci_high": 1.0},
                                            "tasks": {t["task"]: CELL for t in TASKS}}]}


def test_each_task_cell_has_its_n_and_its_mark():
    row = next(x for x in card_lines(CARD) if x.startswith("| 1 | m |"))
    assert "100.0 (100.0–100.0)† n=1 |" in row
    assert "100.0 (100.0–100.0)† n=12‡4 |" in row
    assert row.endswith("100.0 (100.0–100.0) n=900 |")  # 900 independent items: the bootstrap's coverage holds
    assert any("† on a task's cell" in x for x in card_lines(CARD))
    html = card_html(CARD)
    assert "<td>100.0 (100.0–100.0)† n=12‡4</td>" in html and "<td>100.0 (100.0–100.0) n=900</td>" in html
