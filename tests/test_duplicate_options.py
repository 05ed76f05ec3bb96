"""Options of one text (issue #30, reading item 4): reported by `glotbench tasks check` and `run`
whatever the gold's form (a label, an index template, the option's text), after the normalisation
replies are matched to options with (case, format characters, spacing)."""

from __future__ import annotations

import json

import pytest
from conftest import cli
from test_tasks_files import SMALL

TASK = (SMALL.replace("name: lao-sums", "name: mc").replace("  gold: {answer: a}", "  choices: [c1, c2, c3, c4]\n  gold: {answer: ans}")
        .replace('"{{ question }}"', '"{{ question }}\\n{{ options }}"').replace("number: [number]", "letter: [option_letter]")
        .replace("  first_line: [first_line, number]\n", "").replace("numeric_match", "option_accuracy"))

# (script, options, gold as the row gives it, the two labels reported)
CASES = [
    ("Lao label", ["ວຽງຈັນ", "ຫຼວງພະບາງ", "ວຽງຈັນ", "ປາກເຊ"], "A", "A and C"),
    ("Khmer ZWSP", ["ភ្នំពេញ", "សៀមរាប", "កំពត", "ភ្នំ\u200bពេញ"], "B", "A and D"),
    ("Burmese ZWNJ", ["ရန်ကုန်", "မန္တလေး\u200c", "မန္တလေး", "ပုဂံ"], "D", "B and C"),
    ("Thai spacing", ["กรุงเทพ มหานคร", "เชียงใหม่", "กรุงเทพ  มหานคร ", "ภูเก็ต"], "C", "A and C"),
    ("Arabic RLM", ["القاهرة", "الرياض\u200f", "بغداد", "الرياض"], "A", "B and D"),
    ("Latin case", ["Hanoi", "Hue", "HANOI", "Da Nang"], "B", "A and C"),
    ("text gold", ["ວຽງຈັນ", "ປາກເຊ", "ວຽງຈັນ", "ຫຼວງພະບາງ"], "ປາກເຊ", "A and C"),
]


def _write(tmp_path, options, gold):
    (tmp_path / "t.yaml").write_text(TASK, encoding="utf-8")
    rows = [{"id": "ok", "q": "ຄຳຖາມ", "c1": "ກ", "c2": "ຂ", "c3": "ຄ", "c4": "ງ", "ans": "A"},
            {"id": "dup", "q": "ຄຳຖາມ", **{f"c{i + 1}": o for i, o in enumerate(options)}, "ans": gold}]
    (tmp_path / "sums.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return tmp_path / "t.yaml"


@pytest.mark.parametrize("name,options,gold,labels", CASES, ids=[c[0] for c in CASES])
def test_duplicate_options_are_reported_whatever_the_gold(tmp_path, name, options, gold, labels):
    path = _write(tmp_path, options, gold)
    for args in (("tasks", "check", str(path)),
                 ("run", str(path), "--model", "python:nowhere:none", "--out", str(tmp_path / "r"), "--no-cache")):
        r = cli(*args)
        assert r.returncode == 2, r.stdout + r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in r.stderr
        assert "sums.jsonl:2: fields.choices: options " + labels in lines[0], lines[0]
    assert not (tmp_path / "r").exists()


def test_distinct_options_pass(tmp_path):
    path = _write(tmp_path, ["ວຽງຈັນ", "ວຽງ", "ຈັນ", "ວຽງຈັນໃໝ່"], "A")
    r = cli("tasks", "check", str(path))
    assert r.returncode == 0, r.stderr
