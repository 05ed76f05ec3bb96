"""A FLORES-200 code whose script is not its language's (issue #30, reading item 3): `config=khm_Laoo`
is refused at once, in one line, before any download, for every library task that takes such a code."""

from __future__ import annotations

import pytest
from conftest import cli

from glotbench.languages import script_mismatch

WRONG = [("belebele", "config", "khm_Laoo", "Khmer", "Lao (Laoo)"),
         ("belebele", "config", "lao_Thai", "Lao", "Thai"),
         ("sib200", "config", "mya_Khmr", "Burmese", "Khmer (Khmr)"),
         ("sib200", "config", "tha_Laoo", "Thai", "Lao (Laoo)"),
         ("flores-plus", "target", "arb_Thai", "Arabic", "Thai"),
         ("flores-plus", "source", "vie_Arab", "Vietnamese", "Arabic (Arab)")]


@pytest.mark.parametrize("task,option,code,language,script", WRONG, ids=[w[2] for w in WRONG])
def test_a_code_in_another_script_is_refused_in_one_line(tmp_path, task, option, code, language, script):
    r = cli("run", task, "--bench-opt", f"{option}={code}", "--model", "openai:m@http://127.0.0.1:9/v1",
            "--out", str(tmp_path / "r"), env={"GLOTBENCH_CACHE_DIR": str(tmp_path), "HF_HUB_OFFLINE": "1"})
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in r.stderr
    assert f"{option} {code}" in lines[0] and f"is {language}" in lines[0] and f"not {script}" in lines[0]
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("code", ["khm_Khmr", "lao_Laoo", "mya_Mymr", "tha_Thai", "arb_Arab", "vie_Latn",
                                  "arb_Latn", "zho_Hans", "jpn_Jpan", "swh_Latn", "lo", "km-KH", "ar-Arab"])
def test_codes_that_fit_or_cannot_be_judged_pass(code):
    assert script_mismatch(code) is None


def test_tasks_check_refuses_it_too():
    r = cli("tasks", "check", "belebele", "--bench-opt", "config=khm_Laoo")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "Khmer" in r.stderr
