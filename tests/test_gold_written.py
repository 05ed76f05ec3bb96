"""A gold template's error names the row's column and value as written (issue #30: "name the column
and the value"): Belebele's `{{ correct_answer_num | letter(1) }}` on 0, a Khmer digit, null or text."""

from __future__ import annotations

import json

import pytest
from conftest import cli

ROW = {"link": "https://x/0", "question_number": 1, "flores_passage": "ភ្នំពេញជារាជធានីនៃប្រទេសកម្ពុជា។",
       "question": "តើរាជធានីនៃកម្ពុជាគឺជាអ្វី?", "mc_answer1": "សៀមរាប", "mc_answer2": "ភ្នំពេញ",
       "mc_answer3": "បាត់ដំបង", "mc_answer4": "កំពត", "correct_answer_num": "2", "dialect": "khm_Khmr"}


@pytest.mark.parametrize("value,says", [
    ("0", "correct_answer_num '0': letter: '0' is out of range"),
    ("០", "correct_answer_num '០': letter: '០' is out of range"),
    (None, "correct_answer_num None: letter: None is not a whole number"),
    ("ពីរ", "correct_answer_num 'ពីរ': letter: 'ពីរ' is not a whole number"),
])
def test_a_bad_gold_is_named_as_written(tmp_path, value, says):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n"
                            for r in (ROW, {**ROW, "question_number": 2, "correct_answer_num": value})), encoding="utf-8")
    r = cli("tasks", "check", "belebele", "--bench-opt", "config=khm_Khmr", "--data", str(data))
    assert r.returncode != 0
    line = (r.stderr + r.stdout).strip().splitlines()[-1]
    assert line.startswith("error: ") and f"rows.jsonl:2: fields.gold.answer: {says}" in line, line
    assert "Traceback" not in r.stderr
