"""A sweep entry's relative data path is kept absolute (found next to the sweep file, else in the
working directory): the run records it, and `compare`, `rescore` and `checks` run from another folder
read the data again from there (before: `error: data file not found: rows.jsonl`)."""

from __future__ import annotations

import os
from pathlib import Path

from glotbench.engine.sweep import load_sweep

SWEEP = """out: {out}
models:
  - spec: openai:m@http://127.0.0.1:1/v1
benchmarks:
  - name: laobench-mcq
    data: {data}
"""


def test_a_data_path_next_to_the_sweep_file_is_absolute(tmp_path, monkeypatch):
    (tmp_path / "rows.jsonl").write_text("{}\n", encoding="utf-8")
    f = tmp_path / "s.yaml"
    f.write_text(SWEEP.format(out=tmp_path / "o", data="rows.jsonl"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # `glotbench sweep s.yaml`: the sweep file's folder is "."
    assert load_sweep("s.yaml").benchmarks[0].data == str((tmp_path / "rows.jsonl").resolve())


def test_a_data_path_in_the_working_directory_is_absolute(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    (work / "ຂໍ້ມູນ.jsonl").write_text("{}\n", encoding="utf-8")
    (tmp_path / "sweeps").mkdir()
    f = tmp_path / "sweeps" / "s.yaml"
    f.write_text(SWEEP.format(out=tmp_path / "o", data="ຂໍ້ມູນ.jsonl"), encoding="utf-8")
    monkeypatch.chdir(work)
    got = load_sweep(Path(os.path.relpath(f, work))).benchmarks[0].data
    assert got == str((work / "ຂໍ້ມູນ.jsonl").resolve())


def test_a_missing_data_path_is_left_as_written(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text(SWEEP.format(out=tmp_path / "o", data="nowhere.jsonl"), encoding="utf-8")
    assert load_sweep(f).benchmarks[0].data == "nowhere.jsonl"
