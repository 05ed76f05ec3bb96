"""Rows judged by their dominant script (issue #30, reading item 2): one stray letter of the configured
language's script no longer lets rows of another script pass when there is no language column; rows
of the language keep passing with stray letters of other scripts (languages.SCRIPT_SHARE)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli

from glotbench.languages import SCRIPT_SHARE, foreign_script

FX = Path(__file__).resolve().parent / "fixtures" / "tasks"
STRAY = {"lao_Laoo": "ກ", "khm_Khmr": "ក", "tha_Thai": "ก", "mya_Mymr": "က", "arb_Arab": "ب"}
NAME = {"lao_Laoo": "Lao", "khm_Khmr": "Khmer", "tha_Thai": "Thai", "mya_Mymr": "Myanmar", "arb_Arab": "Arabic"}
# (the rows' language, the configured one)
PAIRS = [("khm_Khmr", "lao_Laoo"), ("mya_Mymr", "tha_Thai"), ("tha_Thai", "lao_Laoo"), ("lao_Laoo", "khm_Khmr"),
         ("arb_Arab", "mya_Mymr"), ("khm_Khmr", "tha_Thai")]


def _rows(tmp_path: Path, rows_of: str, stray: str) -> Path:
    """The fixture's rows of `rows_of` without their language column, a stray letter in every text."""
    out = []
    for line in (FX / f"belebele_{rows_of}.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        row.pop("dialect")
        for k in ("flores_passage", "question", "mc_answer1"):
            row[k] = f"{stray} {row[k]}"
        out.append(json.dumps(row, ensure_ascii=False))
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("rows_of,config", PAIRS, ids=[f"{a}-as-{b}" for a, b in PAIRS])
def test_rows_of_another_script_with_a_stray_letter_are_refused(tmp_path, rows_of, config):
    data = _rows(tmp_path, rows_of, STRAY[config])
    r = cli("tasks", "check", "belebele", "--data", str(data), "--bench-opt", f"config={config}")
    assert r.returncode == 2, r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert f"rows.jsonl:1: the row's text is written in {NAME[rows_of]} script" in lines[0], lines[0]


@pytest.mark.parametrize("rows_of", list(STRAY))
def test_rows_of_the_language_with_stray_letters_of_others_pass(tmp_path, rows_of):
    others = "".join(v for k, v in STRAY.items() if k != rows_of)
    data = _rows(tmp_path, rows_of, others)
    r = cli("tasks", "check", "belebele", "--data", str(data), "--bench-opt", f"config={rows_of}")
    assert r.returncode == 0, r.stderr


def test_a_thai_laobench_row_with_a_lao_letter_is_refused(tmp_path):
    row = {"id": "t1", "data_type": "Knowledge Application", "question": "ກ เมืองหลวงของประเทศไทยคือเมืองใด?",
           "A": "กรุงเทพ", "B": "เชียงใหม่", "C": "ภูเก็ต", "D": "ขอนแก่น", "answer": "A"}
    data = tmp_path / "lb.jsonl"
    data.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    r = cli("tasks", "check", "laobench-mcq", "--data", str(data))
    assert r.returncode == 2 and "the question is written in Thai script" in r.stderr, r.stderr


@pytest.mark.parametrize("text,code,expected", [
    ("ភ្នំពេញជារាជធានីនៃប្រទេសកម្ពុជា ກ", "lo", "Khmer"),
    ("ရန်ကုန်မြို့သည် အကြီးဆုံးမြို့ ก ก", "th", "Myanmar"),
    ("القاهرة هي عاصمة مصر ក", "km", "Arabic"),
    ("ຄຳວ່າ \"Water\" ໃນພາສາລາວແມ່ນຫຍັງ?", "lo", None),  # an English word in a Lao question
    ("เมืองหลวงของประเทศไทย ក ກ က", "th", None),
    ("Hà Nội là thủ đô của Việt Nam ກ", "vi", None),
    ("ພາສາ Python ໃຊ້ function ໃດ in programming languages", "lo", None),  # Latin set aside: the rest is Lao
    ("Vientiane is the capital of Laos", "lo", "Latin"),  # nothing but Latin: not Lao
    ("ภาษา Python ใช้ function ใด ក", "km", "Thai"),
    ("Phnom Penh ជា រាជធានី ກ", "lo", "Khmer"),
])
def test_foreign_script_judges_the_dominant_script(text, code, expected):
    assert foreign_script(text, code) == expected
    assert 0 < SCRIPT_SHARE <= 0.5
