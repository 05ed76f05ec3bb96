"""A language a user names (`tasks list --language`, `sweep --language`, `board --pivot language
--language`, `score --lang`, a datasheet's languages) is checked against IANA's language subtag registry (langcodes' copy of ISO 639-1/-3):
a code that names no language is one `error:` line with the nearest known codes, never an empty
listing or an empty card (issue #34 review)."""

from __future__ import annotations

import pytest

from conftest import cli
from glotbench.languages import LanguageProfile, language_code, register_language

MODEL = "openai:m@http://127.0.0.1:9/v1"


@pytest.mark.parametrize("given,code", [
    ("lo", "lo"), ("lao", "lo"), ("lao_Laoo", "lo"), ("lo-LA", "lo"), ("LO", "lo"),
    ("khm_Khmr", "km"), ("mya", "my"), ("fil", "tl"), ("zsm_Latn", "ms"),
    ("swh", "swh"), ("kmr", "kmr"), ("nv", "nv"), ("shn", "shn"),  # registered, no profile: themselves
])
def test_real_languages_in_every_spelling_pass(given, code):
    assert language_code(given) == code


@pytest.mark.parametrize("given,says,suggests", [
    ("zz", "not a language tag in the IANA registry", "did you mean"),
    ("xx", "not a language tag", "languages with a profile: en (English)"),
    ("xyz", "not a language tag", "lo (Lao)"),
    ("xx1", "not a language tag", "lo (Lao)"),
    ("thai", "not a language tag", "th (Thai)"),  # a name: the profile it names
    ("lo-ZZZZZ", "not a language tag", "did you mean lo (Lao)"),  # a bad script subtag on a real language
    ("und", "code for undetermined, not a language", ""),
    ("zxx", "no linguistic content", ""),
    ("qab", "private use", ""),
    ("", "not a language tag", ""),
])
def test_codes_that_name_no_language_are_refused_with_suggestions(given, says, suggests):
    with pytest.raises(ValueError) as e:
        language_code(given)
    assert says in str(e.value) and suggests in str(e.value) and "\n" not in str(e.value)


def test_a_registered_private_use_profile_is_a_language(monkeypatch):
    from glotbench.languages import PROFILES

    monkeypatch.setattr("glotbench.languages.PROFILES", dict(PROFILES))  # the registration ends with the test
    register_language(LanguageProfile("qtx", "Test private language"), replace=True)
    assert language_code("qtx") == "qtx"


def _one_error_line(r, says: str) -> str:
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert len(lines) == 1 and lines[0].startswith(("error: --language", "error: --lang")) and says in lines[0], r.stderr
    return lines[0]


@pytest.mark.parametrize("args", [
    ("tasks", "list", "--language", "zz"),
    ("sweep", "--language", "xx", "--model", MODEL, "--dry-run"),
    ("sweep", "--language", "und", "--model", MODEL, "--dry-run"),
    ("board", ".", "--pivot", "language", "--language", "zz"),
    ("score", "h.txt", "h.txt", "--lang", "zz"),
])
def test_every_language_option_refuses_a_non_language_in_one_line(args, tmp_path):
    says = "undetermined" if "und" in args else "not a language tag"
    (tmp_path / "h.txt").write_text("ສະບາຍດີ\n", encoding="utf-8")
    line = _one_error_line(cli(*args, cwd=str(tmp_path)), says)
    assert "(" in line  # a suggestion with its name: `lo (Lao)`, `zh (Chinese)`


def test_a_real_language_without_tasks_still_lists_nothing_not_an_error():
    r = cli("tasks", "list", "--language", "nv")  # Navajo: a language, no family covers it
    assert r.returncode == 0 and "no benchmark family covers nv (nv)" in r.stdout, r.stdout + r.stderr


def test_a_datasheet_covering_a_non_language_is_refused_where_it_says_so(tmp_path):
    from test_card_suite import FIX

    text = (FIX / "tasks" / "card-lo-sum.yaml").read_text(encoding="utf-8")
    assert "languages: {lo: {}}" in text
    bad = tmp_path / "card-zz.yaml"
    bad.write_text(text.replace("languages: {lo: {}}", "languages: {zz: {}}"), encoding="utf-8")
    r = cli("tasks", "check", str(bad))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert "'zz' is not a language tag in the IANA registry" in r.stderr and "card-zz.yaml:" in r.stderr
