"""rev36b: a finished run whose samples.jsonl was emptied or cut at a line's end (no half line for the
JSON reader to trip on) was shown as whole: the board tabled it with its results.json's n, compare
said "the runs share no items". Every reader of samples now checks the rows against results.json's
`counts.samples`: the board leaves the run out by name, compare and the HTML report stop with one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import cli, start_server


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("rev36b_counts")
    server = start_server()
    try:
        for name in ("a", "b"):
            r = cli("run", "laobench-mcq", "--model", server.spec(f"m{name}"), "--out", str(tmp / "runs" / name),
                    "--limit", "3", "--no-progress", "--cache-path", str(tmp / f"{name}.sqlite"), timeout=300)
            assert r.returncode == 0, r.stderr
    finally:
        server.proc.terminate()
        server.proc.wait(10)
    return tmp


@pytest.mark.parametrize("keep", [0, 1, 2])
def test_a_short_samples_file_is_named_by_every_view(runs, tmp_path, keep) -> None:
    base = tmp_path / "runs"
    shutil.copytree(runs / "runs", base)
    cut = base / "b" / "samples.jsonl"
    lines = cut.read_text(encoding="utf-8").splitlines(keepends=True)
    assert json.loads((base / "b" / "results.json").read_text(encoding="utf-8"))["counts"]["samples"] == len(lines) == 3
    cut.write_text("".join(lines[:keep]), encoding="utf-8")
    want = f"{cut}: {keep} samples, results.json counts 3"
    board = cli("board", str(base))
    assert board.returncode == 0 and f"left out: {base / 'b'}: {want}" in board.stderr, board.stderr
    assert "ma@" in board.stdout and "mb@" not in board.stdout
    for r in (cli("compare", str(base / "a"), str(base / "b")),
              cli("report", str(base / "b"), "--html", str(tmp_path / "r.html"))):
        assert r.returncode == 2 and r.stderr.strip().startswith(f"error: {want}"), r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


def test_whole_runs_still_read(runs, tmp_path) -> None:
    base = runs / "runs"
    assert cli("compare", str(base / "a"), str(base / "b")).returncode == 0
    r = cli("report", str(base / "b"), "--html", str(tmp_path / "r.html"))
    assert r.returncode == 0 and (tmp_path / "r.html").is_file(), r.stderr
