"""rev34d: `tasks check --data FILE --eval-yaml` names where the derived rows came from: the user's
file (and the rows data.where left out), not the task's pinned hub repository they were not read from."""

from __future__ import annotations

from conftest import cli
from test_library_my34 import FX


def test_a_derived_dataset_from_a_file_names_the_file_not_the_pinned_hub_data(tmp_path):
    out = tmp_path / "ey" / "eval.yaml"
    proc = cli("tasks", "check", "alt", "--bench-opt", "config=my", "--data", str(FX / "alt_parallel_test.jsonl"),
               "--eval-yaml", str(out))
    assert proc.returncode == 0, proc.stderr
    head = out.read_text(encoding="utf-8").splitlines()[1]
    card = (out.parent / "README.md").read_text(encoding="utf-8")
    # before: "holds the 2 items of mutiyama/alt@2cd2406f..." for rows read from the user's file
    assert head == ("# next to this file holds the 2 items of the file alt_parallel_test.jsonl "
                    "(data.where left out 1 of 3 rows) as glotbench renders them"), head
    assert "mutiyama/alt" not in head and "and the file alt_parallel_test.jsonl (data.where left out 1 of 3 rows)" in card
