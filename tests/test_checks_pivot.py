"""`--pivot en --pivot-model SPEC`: the input translated, answered in English, text answers
translated back; native against pivot with the paired test. Figures by hand (checks_models)."""

from __future__ import annotations

import json

import pytest

from checks_models import MGSM_TH, XQUAD_TH, write_json
from conftest import cli
from glotbench.engine.evaluate import RunOptions
from glotbench.engine.pivot import pivot_cli


def test_numbers_through_the_english_pivot(tmp_path, cache_path):
    """Natively the solver reads no Thai: 0 of 4. Through the pivot: three questions translated and
    solved, the fourth left in Thai (untranslated) and missed: 3 of 4 (75 points)."""
    data = write_json(tmp_path / "mgsm.json", MGSM_TH)
    res = pivot_cli("deepsea-mgsm", "python:checks_models:english_solver", "en", "python:checks_models:translator",
                    RunOptions(data=data, out=str(tmp_path / "p"), cache_path=cache_path, progress=False))
    r = res.results
    assert r["scores"]["groups"]["lang"]["th"]["numeric_em"]["value"] == 75.0
    assert "|pivot:en(python:checks_models:translator)" in r["signature"]
    p = r["checks"]["pivot"]
    assert p["texts"] == 4 and p["texts_translated"] == 3
    assert p["untranslated"] == {"items": 1, "texts": 1, "ids": ["th/00003"]}
    cmp = p["native_vs_pivot"]["groups"]["lang"]["th"]
    assert (cmp["a"], cmp["b"], cmp["delta"], cmp["items"]) == (0.0, 75.0, 75.0, 4)
    assert 0 < cmp["p_randomization"] <= 1
    # the phases are ordinary runs: the translations are logged in their own run directory
    rows = [json.loads(x) for x in (tmp_path / "p" / "pivot" / "translate-in" / "samples.jsonl").read_text().splitlines()]
    assert [r["answer"] for r in rows][:1] == ["Tom has 3 boxes of 6 apples. How many apples?"]
    native = json.loads((tmp_path / "p" / "pivot" / "native" / "results.json").read_text())
    assert native["scores"]["groups"]["lang"]["th"]["numeric_em"]["value"] == 0.0
    assert "pivot" not in native["signature"]


def test_text_answers_are_translated_back(tmp_path, cache_path):
    data = write_json(tmp_path / "xquad.json", XQUAD_TH)
    res = pivot_cli("deepsea-xquad", "python:checks_models:english_solver", "en", "python:checks_models:translator",
                    RunOptions(data=data, out=str(tmp_path / "x"), cache_path=cache_path, progress=False)).results
    rows = [json.loads(x) for x in (tmp_path / "x" / "samples.jsonl").read_text().splitlines()]
    assert rows[0]["answer"] == "กรุงเทพ" and rows[0]["score"]["f1"] == 1.0
    assert res["checks"]["pivot"]["answer"] == "translated back"
    assert res["checks"]["pivot"]["native_vs_pivot"]["groups"]["lang"]["th"]["delta"] == 100.0
    # the final phase replays the translations back (no model answers twice); it names the answering model
    assert res["model"]["spec"] == "python:checks_models:english_solver" and res["tokens"]["completion"] == 0


def test_pivot_options_go_together_and_need_a_non_english_input(tmp_path):
    r = cli("run", "deepsea-mgsm", "--model", "python:checks_models:english_solver", "--pivot", "en",
            "--out", str(tmp_path / "a"))
    assert r.returncode == 2 and "--pivot and --pivot-model go together" in r.stderr
    r = cli("run", "deepsea-wmt24pp", "--model", "python:checks_models:english_solver", "--pivot", "en",
            "--pivot-model", "python:checks_models:translator", "--out", str(tmp_path / "b"))
    assert r.returncode == 2 and "--pivot is for tasks" in r.stderr


def test_a_pivot_whose_translations_failed_is_invalid_and_exits_3(tmp_path, cache_path):
    data = write_json(tmp_path / "mgsm.json", MGSM_TH)
    r = cli("run", "deepsea-mgsm", "--model", "python:checks_models:english_solver", "--data", data, "--pivot", "en",
            "--pivot-model", "python:helpers:broken_model", "--out", str(tmp_path / "p"), "--no-progress",
            "--cache-path", cache_path, "--max-retries", "0")
    assert r.returncode == 3, r.stderr
    res = json.loads((tmp_path / "p" / "results.json").read_text())
    assert res["validity"]["valid"] is False and res["validity"]["phase"] == "translate_in"
    assert res["checks"]["pivot"]["texts_translated"] == 0 and res["checks"]["pivot"]["untranslated"]["items"] == 4
