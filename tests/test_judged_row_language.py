"""AraGen's and the arena's rows in their language (issue #30, reading item 8): an entry or prompt whose
dominant script is not the benchmark's language is refused in one line by `glotbench aragen` and
`glotbench arena`, before any model call; stray letters of other scripts do not refuse a row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli

from glotbench.benchmarks.aragen import load_entries
from glotbench.benchmarks.arena import ArenaPrompts
from glotbench.errors import DataError

SAMPLE = Path(__file__).resolve().parents[1] / "src" / "glotbench" / "benchmarks" / "data" / "aragen_sample.json"
URL = "http://127.0.0.1:9/v1"  # nothing listens: a model call would fail the command otherwise


def _aragen(tmp_path: Path, q1: str, language: str | None = None) -> Path:
    entries = json.loads(SAMPLE.read_text(encoding="utf-8"))
    entries[3]["Test"]["Question 1"] = q1
    if language == "":
        del entries[3]["Meta"]["Language"]
    elif language is not None:
        entries[3]["Meta"]["Language"] = language
    path = tmp_path / "ag.json"
    path.write_text(json.dumps(entries, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize("q1,script", [("ភ្នំពេញជារាជធានីនៃប្រទេសកម្ពុជា ب", "Khmer"),
                                       ("ภาษาไทยเป็นภาษาราชการหรือไม่ ب ت", "Thai"),
                                       ("What is the capital of Egypt?", "Latin")])
def test_aragen_refuses_an_entry_in_another_script(tmp_path, q1, script):
    path = _aragen(tmp_path, q1)
    r = cli("run", "aragen", "--model", f"openai:m@{URL}", "--judge", f"openai:j@{URL}", "--data", str(path),
            "--out", str(tmp_path / "o"), env={"GLOTBENCH_CACHE_DIR": str(tmp_path)})
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"SN. 4: the questions are written in {script} script, but its Meta.Language is Arabic" in lines[0]


def test_aragen_judges_an_entry_by_its_declared_language(tmp_path):
    with pytest.raises(DataError, match="written in Arabic script, but its Meta.Language is English"):
        load_entries(str(_aragen(tmp_path, "ما هي عاصمة مصر؟", "English")))
    assert len(load_entries(str(_aragen(tmp_path, "What is the capital of Egypt?", "English")))[0]) == 12
    assert len(load_entries(str(_aragen(tmp_path, "ما هي عاصمة مصر؟ ก ກ ក Cairo", None)))[0]) == 12
    with pytest.raises(DataError, match=r"Khmer script, but AraGen's entries are in Arabic \(no Meta.Language\)"):
        load_entries(str(_aragen(tmp_path, "ភ្នំពេញជារាជធានីនៃប្រទេសកម្ពុជា", "")))


def _prompts(tmp_path: Path, *texts: str) -> Path:
    path = tmp_path / "prompts.jsonl"
    path.write_text("".join(json.dumps({"id": f"p{i}", "prompt": t}, ensure_ascii=False) + "\n"
                            for i, t in enumerate(texts)), encoding="utf-8")
    return path


@pytest.mark.parametrize("text,script", [("แนะนำสถานที่ท่องเที่ยวในเชียงใหม่ ກ", "Thai"),
                                         ("ណែនាំកន្លែងទេសចរណ៍នៅសៀមរាប ກ ກ", "Khmer"),
                                         ("အကောင်းဆုံး ခရီးသွားနေရာ ဘယ်မှာလဲ ກ", "Myanmar")])
def test_the_arena_refuses_a_prompt_in_another_script(tmp_path, text, script):
    path = _prompts(tmp_path, "ແນະນຳສະຖານທີ່ທ່ອງທ່ຽວໃນຫຼວງພະບາງ", text)
    r = cli("run", "laobench-arena", "--model", f"openai:m@{URL}", "--bench-opt", f"baseline=openai:b@{URL}", "--judge", f"openai:j@{URL}",
            "--data", str(path), "--out", str(tmp_path / "o"), env={"GLOTBENCH_CACHE_DIR": str(tmp_path)})
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"prompts.jsonl:2 (id p1): the prompt is written in {script} script, but the arena's prompts are in Lao" in lines[0]


def test_lao_prompts_with_stray_letters_and_english_terms_load(tmp_path):
    path = _prompts(tmp_path, "ອະທິບາຍ Python ແລະ JavaScript ເປັນພາສາລາວ", "ແນະນຳອາຫານລາວ ก ក")
    assert len(ArenaPrompts().load(str(path))) == 2
