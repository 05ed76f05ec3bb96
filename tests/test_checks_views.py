"""The checks in the run page, the board (a parser range that overlaps the next model's score is
noted in every export) and `glotbench checks` recomputing a run's block from its stored files."""

from __future__ import annotations

import json
import re

from checks_models import write_mcq
from conftest import cli
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.report.board import build_board, to_markdown
from glotbench.report.board_html import board_html
from glotbench.report.html import run_report


def _runs(tmp_path, cache_path):
    data = write_mcq(tmp_path / "m.jsonl")
    for name in ("mixed_replies", "half_right"):
        evaluate("laobench-mcq", f"python:checks_models:{name}",
                 RunOptions(data=data, out=str(tmp_path / "runs" / name), cache_path=cache_path, progress=False))
    return tmp_path / "runs"


def test_the_run_page_shows_the_checks_with_their_sources(tmp_path, cache_path):
    html = run_report(_runs(tmp_path, cache_path) / "mixed_replies")
    for anchor in ("checks-extraction", "checks-errors", "checks-tokens"):
        assert f'<section id="{anchor}">' in html
    assert 'data-src="results.json#/checks/extraction/upper" data-raw="0.75"' in html
    assert 'data-src="results.json#/checks/extraction/lenient" data-raw="0.5"' in html
    assert 'data-src="results.json#/checks/errors/overall/errors/position" data-raw="1"' in html


def test_the_board_notes_a_parser_range_that_holds_the_next_models_score(tmp_path, cache_path):
    """mixed_replies: 25% strict, 25-75% if its two unread replies were right; half_right: 50%,
    nothing unread. 50 lies in 25-75: the parser alone could swap them."""
    board = build_board([str(_runs(tmp_path, cache_path))], resamples=50)
    col = board["columns"][0]
    mixed, half = "python:checks_models:mixed_replies", "python:checks_models:half_right"
    assert col["checks"]["models"][mixed]["parser_range"] == [0.25, 0.75]
    assert col["checks"]["models"][mixed]["parser_overlaps"] == [half]
    assert "parser_overlaps" not in col["checks"]["models"][half]
    assert col["cells"][mixed]["notes"][-1] == f"parser range overlaps {half}"
    md = to_markdown(board)
    assert f"parser range overlaps {half}" in md
    page = board_html(board)
    assert '<section id="checks">' in page and re.search(r'<tr data-model="[^"]*mixed_replies" class=overlap>', page)


def test_checks_recomputed_from_the_stored_files(tmp_path, cache_path):
    run = _runs(tmp_path, cache_path) / "mixed_replies"
    stored = json.loads((run / "results.json").read_text())["checks"]
    r = cli("rescore", "--checks", str(run))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == stored


def test_the_terminal_names_the_checks_and_checks_write_restores_the_block(tmp_path):
    data = write_mcq(tmp_path / "m.jsonl")
    out = tmp_path / "r"
    r = cli("run", "laobench-mcq", "--model", "python:checks_models:mixed_replies", "--data", data, "--out", str(out),
            "--no-progress", "--no-cache")
    assert r.returncode == 0, r.stderr
    assert "checks: 2 of 4 replies unread by the accuracy rule; range 25.0–75.0% if they were all wrong/right; " \
           "lenient 50.0%" in r.stdout
    results = json.loads((out / "results.json").read_text())
    block = results.pop("checks")
    (out / "results.json").write_text(json.dumps(results), encoding="utf-8")
    r = cli("rescore", "--checks", str(out), "--write")
    assert r.returncode == 0, r.stderr
    assert json.loads((out / "results.json").read_text())["checks"] == block
    (out / "results.json").write_text(json.dumps(results), encoding="utf-8")
    r = cli("checks", str(out), "--write")  # the hidden alias of `rescore --checks`
    assert r.returncode == 0 and r.stderr.startswith("note: `glotbench checks` is now `glotbench rescore --checks RUN`")
    assert json.loads((out / "results.json").read_text())["checks"] == block
