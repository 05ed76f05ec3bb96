"""`sweep --language L --data DIR` names what in DIR its suite does not read (issue #34 review): one
warning line, each entry with the reason, never a silently ignored file."""

from __future__ import annotations

import shutil

from conftest import cli
from test_card_suite import FIX

MODEL = "openai:m@http://127.0.0.1:9/v1"


def _sweep(data, tmp_path):
    return cli("sweep", "--language", "lo", "--model", MODEL, "--include-path", str(FIX / "tasks"), "--data", str(data),
               "--out", str(tmp_path / "o"), "--dry-run", env={"GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")})


def test_stray_entries_of_the_data_folder_are_named_with_their_reason(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(FIX / "data", data)
    shutil.copy(FIX / "data" / "card-lo-sum.jsonl", data / "card-lo-sum.json")  # .jsonl is read first
    shutil.copy(FIX / "data" / "card-lo-diff.jsonl", data / "card-lo-diif.jsonl")  # a misspelt family
    (data / "card-lo-bigger.csv").write_text("id,question\n", encoding="utf-8")  # a format the suite does not read
    (data / "README.txt").write_text("notes", encoding="utf-8")
    (data / "old").mkdir()
    (data / "old" / "card-lo-sum.jsonl").write_text("", encoding="utf-8")
    r = _sweep(data, tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert "lo: 3 benchmark families in the suite" in r.stdout  # the three families still run
    warnings = [ln for ln in r.stderr.splitlines() if ln.startswith("warning: --data")]
    assert len(warnings) == 1, r.stderr
    line = warnings[0]
    assert f"--data {data}: 5 not read by the lo suite" in line
    for entry, why in [("README.txt", "not .jsonl, .json or .parquet"),
                       ("card-lo-bigger.csv", "not .jsonl, .json or .parquet"),
                       ("card-lo-diif.jsonl", "no family covering lo is named card-lo-diif"),
                       ("card-lo-sum.json", "card-lo-sum.jsonl is read for card-lo-sum instead"),
                       ("old", "a folder")]:
        assert f"{entry} ({why}" in line, line
    for read in ("card-lo-sum.jsonl (", "card-lo-diff.jsonl (", "card-lo-bigger.jsonl ("):
        assert read not in line


def test_a_family_skipped_for_its_data_names_its_file(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(FIX / "data", data)
    (data / "card-lo-diff.jsonl").write_text("{not json\n", encoding="utf-8")  # cannot be loaded: skipped
    r = _sweep(data, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "skipped card-lo-diff: its data cannot be loaded" in r.stdout
    assert "card-lo-diff.jsonl (card-lo-diff is skipped)" in r.stderr


def test_a_folder_the_suite_reads_whole_gives_no_warning(tmp_path):
    r = _sweep(FIX / "data", tmp_path)
    assert r.returncode == 0 and "warning: --data" not in r.stderr, r.stdout + r.stderr
