"""Issue #30: data in another language than the task's is refused naming both; a bad gold value is
named as the row wrote it; a language option that cannot be a config is refused before any download;
`tasks check` reads the task's own data file; `python:MODULE:FUNCTION` finds a module in the current
folder, as `python -m` does."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import cli
from test_tasks_review import SMALL, SUMS, write

from glotbench.errors import DataError, SpecError
from glotbench.languages import foreign_script, language_scripts
from glotbench.registry import get_benchmark

FX = Path(__file__).resolve().parent / "fixtures" / "tasks"


def load(task: str, data: Path, **opts: str):
    return get_benchmark(task, **opts).load(str(data))


# -- the row's language column, and the script of its text ------------------------------------------

def test_khmer_belebele_rows_under_the_default_lao_config_are_refused_naming_both():
    """Before: scored, signed lang:lo and put on the board as Lao, the prompt saying "in Lao"."""
    with pytest.raises(DataError) as e:
        load("belebele", FX / "belebele_khm_Khmr.jsonl")
    msg = str(e.value)
    assert msg.startswith(f"{FX / 'belebele_khm_Khmr.jsonl'}:1: data.language_by: the row's dialect is khm_Khmr (Khmer)")
    assert "the task's language is lao_Laoo (Lao)" in msg and "--bench-opt config=khm_Khmr" in msg


@pytest.mark.parametrize("data,config", [("belebele_khm_Khmr.jsonl", "khm_Khmr"), ("belebele_lao_Laoo.jsonl", "lao_Laoo"),
                                         ("belebele_mya_Mymr.jsonl", "mya_Mymr"), ("belebele_arb_Arab.jsonl", "arb_Arab")])
def test_rows_of_the_configured_language_load(data, config):
    assert len(load("belebele", FX / data, config=config)) == 3


def test_a_row_without_its_language_column_is_judged_by_its_script(tmp_path):
    rows = [json.loads(x) for x in (FX / "belebele_mya_Mymr.jsonl").read_text(encoding="utf-8").splitlines()]
    for r in rows:
        del r["dialect"]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(DataError, match=r"rows.jsonl:1: the row's text is written in Myanmar script, but the task's "
                                        r"language is tha_Thai \(Thai\); give the rows' language with --bench-opt config="):
        load("belebele", path, config="tha_Thai")
    assert len(load("belebele", path, config="mya_Mymr")) == 3


@pytest.mark.parametrize("task,data,opts,script,language", [
    ("sib200", "sib200_khm_Khmr.jsonl", {}, "Khmer", "lao_Laoo (Lao)"),  # the default config
    ("sib200", "sib200_tha_Thai.jsonl", {"config": "lao_Laoo"}, "Thai", "lao_Laoo (Lao)"),
    ("xnli", "xnli_vi.jsonl", {"config": "th"}, "Latin", "th (Thai)"),
    ("xnli", "xnli_ar.jsonl", {"config": "vi"}, "Arabic", "vi (Vietnamese)"),
    ("xcopa", "xcopa_th.jsonl", {"config": "vi"}, "Thai", "vi (Vietnamese)"),
    ("global-mmlu", "global_mmlu_ar.jsonl", {}, "Arabic", "vi (Vietnamese)"),
    ("global-mmlu", "global_mmlu_vi.jsonl", {"config": "ar"}, "Latin", "ar (Arabic)"),
])
def test_every_library_task_with_a_language_refuses_rows_in_another_script(task, data, opts, script, language):
    with pytest.raises(DataError) as e:
        load(task, FX / data, **opts)
    assert f":1: the row's text is written in {script} script, but the task's language is {language}" in str(e.value)


def test_flores_plus_picks_its_rows_by_their_declared_config():
    """A task of several roles reads each row's config (data.role_by): a file without the target's rows
    is refused naming the configuration."""
    with pytest.raises(DataError, match=r"no row of target \(vie_Latn\)"):
        load("flores-plus", FX / "flores_plus_devtest.jsonl", target="vie_Latn")
    assert len(load("flores-plus", FX / "flores_plus_devtest.jsonl", target="khm_Khmr")) == 3


def test_the_cli_says_it_in_one_error_line(tmp_path):
    proc = cli("run", "belebele", "--data", str(FX / "belebele_khm_Khmr.jsonl"), "--model", "python:nowhere:none",
               "--out", str(tmp_path / "r"), "--no-progress", "--no-cache")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "khm_Khmr (Khmer)" in proc.stderr and "lao_Laoo (Lao)" in proc.stderr


@pytest.mark.parametrize("text,code,found", [
    ("ភ្នំពេញជារាជធានី", "lao_Laoo", "Khmer"), ("ភ្នំពេញជារាជធានី", "km", None), ("ວຽງຈັນ", "lo", None),
    ("กรุงเทพมหานคร", "lo", "Thai"), ("Hà Nội là thủ đô", "th", "Latin"), ("Привет, мир", "vi", "another script"),
    ("ວຽງຈັນ is the capital", "lo", None),  # a letter of the language is enough: mixed rows stay
    ("2 + 2 = ?", "lo", None),  # too few letters to tell
    ("Anything at all", "xyz", None),  # a language of no known script: no check
    ("東京は日本の首都です", "jpn_Jpan", None),  # Jpan is no Unicode script: the profile's scripts (Han, kana)
])
def test_foreign_script(text, code, found):
    assert foreign_script(text, code) == found


def test_language_scripts_come_from_declared_facts():
    assert language_scripts("khm_Khmr") == ("Khmr",)  # the FLORES code's script subtag
    assert language_scripts("km") == ("Khmer",)  # the profile's
    assert language_scripts("lo-LA") == ("Lao",)  # a region is no script
    assert language_scripts("swh_Latn") == ("Latn",) and language_scripts("swh") == ()


# -- a bad value named as written; a config that cannot be one ---------------------------------------

def test_a_bad_gold_is_named_by_its_column_and_value(tmp_path):
    rows = [json.loads(x) for x in (FX / "belebele_khm_Khmr.jsonl").read_text(encoding="utf-8").splitlines()]
    rows[1]["correct_answer_num"] = "5"
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(DataError) as e:
        load("belebele", path, config="khm_Khmr")
    assert str(e.value) == (f"{path}:2: fields.gold.answer: correct_answer_num '5' (made 'E') is neither an option "
                            "label (A, B, C, D) nor one option's text")


@pytest.mark.parametrize("task,opts,message", [
    ("belebele", {"config": "khm"}, "config 'khm' does not match [a-z]{3}_[A-Z][a-z]{3}"),
    ("sib200", {"config": "Khmer"}, "config 'Khmer' does not match"),
    ("flores-plus", {"target": "lao"}, "target 'lao' does not match"),
    ("xnli", {"config": "tha"}, "config must be one of ar, bg"),
    ("xcopa", {"config": "khm_Khmr"}, "config must be one of et, ht"),
    ("global-mmlu", {"config": "vie"}, "config must be one of am, ar"),
])
def test_a_config_that_cannot_be_one_is_refused_before_any_download(task, opts, message):
    """Before: `config=khm` went to the hub for data/khm.jsonl and failed after a 27-second timeout.
    Now the task is not even built: nothing is fetched."""
    with pytest.raises(SpecError) as e:
        get_benchmark(task, **opts)
    assert message in str(e.value)


def test_an_option_pattern_that_does_not_compile_is_a_task_file_error(tmp_path):
    from glotbench.tasks.files import read_task_file

    (tmp_path / "t.yaml").write_text(
        'name: t\nversion: "1"\noptions:\n  config: {default: x, pattern: "[a-"}\ndata: {file: d.jsonl}\n'
        'fields: {public: {q: q}, gold: {answer: a}}\nprompt: {user: "{{ q }}"}\nextract: {n: [number]}\n'
        'scorer: numeric_match\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"t.yaml:4: options.config: pattern: not a valid regular expression"):
        read_task_file(tmp_path / "t.yaml")


# -- tasks check ------------------------------------------------------------------------------------

def test_tasks_check_reads_the_tasks_own_data_file(tmp_path):
    """Before: `ok`, then `run` failed on row 2."""
    task = write(tmp_path, SMALL, SUMS.replace('"a": "7"', '"a": "seven"'))
    rows = tmp_path / "sums.jsonl"
    proc = cli("tasks", "check", str(task))
    assert proc.returncode == 2 and "ok" not in proc.stdout, proc.stdout
    assert proc.stderr == f"error: {rows}:2: fields.gold.answer: 'seven' is not a number (the numeric_match scorer compares numbers)\n"
    rows.write_text('{"id": "s1", "q": "ໜຶ່ງບວກໜຶ່ງ", "a": "2"}\n', encoding="utf-8")
    proc = cli("tasks", "check", str(task))
    assert proc.returncode == 0 and proc.stdout.startswith("lao-sums v1.0: ok\n"), proc.stderr
    assert "1 items from" in proc.stdout and "ໜຶ່ງບວກໜຶ່ງ" in proc.stdout


# -- python:MODULE:FUNCTION --------------------------------------------------------------------------

def _without_cwd(monkeypatch, folder: Path) -> None:
    """sys.path as the `glotbench` console script has it: no current folder."""
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(folder))])


def test_a_python_model_in_the_current_folder_is_imported(tmp_path, monkeypatch):
    import asyncio

    from glotbench.models.base import GenerateConfig, Prompt
    from glotbench.models.python_fn import PythonModel

    (tmp_path / "words_mymodel.py").write_text(
        "SEEN = []\n\ndef answer(messages):\n    SEEN.append(messages)\n    return 'ຄຳຕອບ\\u200bແມ່ນ\\u200bB'\n\n"
        "def bad(messages):\n    return 42\n", encoding="utf-8")
    _without_cwd(monkeypatch, tmp_path)
    monkeypatch.delitem(sys.modules, "words_mymodel", raising=False)
    model = PythonModel("words_mymodel:answer")
    prompt = Prompt(messages=({"role": "system", "content": "s"}, {"role": "user", "content": "q"}))
    got = asyncio.run(model.generate(prompt, GenerateConfig()))
    assert got.text == "ຄຳຕອບ\u200bແມ່ນ\u200bB" and got.finish_reason == "stop"
    assert sys.modules["words_mymodel"].SEEN == [[{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]]
    from glotbench.models.base import BadResponse

    with pytest.raises(BadResponse, match="callable returned int, expected str"):  # the contract: a string
        asyncio.run(PythonModel("words_mymodel:bad").generate(prompt, GenerateConfig()))
    monkeypatch.delitem(sys.modules, "words_mymodel", raising=False)


def test_a_python_model_nowhere_names_where_it_looked(tmp_path, monkeypatch):
    from glotbench.models.python_fn import PythonModel

    _without_cwd(monkeypatch, tmp_path)
    with pytest.raises(SpecError, match=rf"cannot import module 'words_nowhere'.*current folder, {tmp_path}"):
        PythonModel("words_nowhere:answer")
    # a module that exists but fails inside (its own missing import) is its error, not a search of folders
    (tmp_path / "words_broken.py").write_text("import words_missing_dependency\n", encoding="utf-8")
    with pytest.raises(SpecError, match="No module named 'words_missing_dependency'"):
        PythonModel("words_broken:answer")


# -- built-ins with a language ---------------------------------------------------------------------

def _bundled(name: str) -> Path:
    from importlib import resources

    return Path(str(resources.files("glotbench.benchmarks").joinpath(f"data/{name}")))


def test_laobench_rows_whose_lang_or_target_the_text_is_not_in_are_refused(tmp_path):
    rows = [json.loads(x) for x in _bundled("laobench_sample.jsonl").read_text(encoding="utf-8").splitlines() if x]
    mcq = next(r for r in rows if r.get("lang") == "lo")
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({**mcq, "lang": "km"}, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"rows.jsonl:1 \(id sample-001\): lang 'km' is not one of LaoBench's languages \(lo, en, zh\)"):
        get_benchmark("laobench-mcq").load(str(path))
    path.write_text(json.dumps({**mcq, "lang": "en"}, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"rows.jsonl:1 \(id sample-001\): lang is 'en', but the question is written in Lao"):
        get_benchmark("laobench-mcq").load(str(path))
    # no lang column: a Thai or Khmer question is no English row (it was sent the English prompt)
    for question, script in (("ข้อใดคือเมืองหลวงของประเทศลาว", "Thai"), ("តើរដ្ឋធានីរបស់ប្រទេសឡាវគឺអ្វី", "Khmer")):
        row = {k: v for k, v in mcq.items() if k != "lang"}
        path.write_text(json.dumps({**row, "question": question}, ensure_ascii=False) + "\n", encoding="utf-8")
        with pytest.raises(DataError, match=rf"id sample-001\): the question is written in {script} script; LaoBench's rows are in lo, en, zh"):
            get_benchmark("laobench-mcq").load(str(path))
    row = {"id": "t1", "data_type": "Bilingual Translation", "question": "Translate into Lao: good morning",
           "answer": "ສະບາຍດີຕອນເຊົ້າ", "direction": "en-zh"}
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"direction en-zh translates into 'zh', but the reference is written in Lao script"):
        get_benchmark("laobench-translation").load(str(path))


def test_deepsea_examples_listed_under_another_language_are_refused(tmp_path):
    doc = json.loads(_bundled("deepsea_mgsm.json").read_text(encoding="utf-8"))
    doc["languages"]["th"] = doc["languages"]["vi"][:1]  # Vietnamese questions listed as Thai
    path = tmp_path / "mgsm.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(DataError, match=r"th example 0.question: written in Latin script, but listed under 'th' \(Thai\)"):
        get_benchmark("deepsea-mgsm").load(str(path))


@pytest.mark.parametrize("bench,row", [
    ("vi-diacritics", {"id": "x", "references": ["สวัสดีตอนเช้า"]}),
    ("vi-tone-errors", {"id": "x", "input": "สวัสดีตอนเช้า", "references": ["สวัสดีตอนเช้า"]}),
])
def test_vietnamese_benchmarks_refuse_text_in_another_script(tmp_path, bench, row):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"rows.jsonl:1: the text is written in Thai script, not in Vietnamese"):
        get_benchmark(bench).load(str(path))


@pytest.mark.parametrize("role,iso,text,says", [
    ("khm", "Khmr", "แม่น้ำไหลผ่านเมืองหลวงของประเทศ", "target.text: written in Thai script, but the target's config is khm_Khmr (Khmer)"),
    ("khm", "Khmr", "ແມ່ນ້ຳໄຫຼຜ່ານນະຄອນຫຼວງ", "target.text: written in Lao script, but the target's config is khm_Khmr (Khmer)"),
    ("eng", "Latn", "ទន្លេហូរកាត់រាជធានី។", "source.text: written in Khmer script, but the source's config is eng_Latn (English)"),
])
def test_flores_plus_rows_whose_text_is_not_their_configs_script_are_refused(tmp_path, role, iso, text, says):
    """A row labelled khm/Khmr whose text is Thai was translated into and scored as Khmer: each role's
    text read by the fields is held to its role's config, as a one-language task's rows are."""
    rows = [json.loads(x) for x in (FX / "flores_plus_devtest.jsonl").read_text(encoding="utf-8").splitlines()]
    bad = next(i for i, r in enumerate(rows) if r["iso_639_3"] == role and r["iso_15924"] == iso)
    rows[bad] = {**rows[bad], "text": text}
    data = tmp_path / "flores.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(DataError) as e:
        load("flores-plus", data, target="khm_Khmr")
    assert says in str(e.value)


def test_seahelm_translation_checks_its_source_and_its_reference_each_against_its_own_language(tmp_path):
    """A translation with both an input language and an input-unchanged floor checked its reference
    (Thai) against the source's language (English): every correct en-xx and xx-en row was refused."""
    assert len(load("seahelm-translation", FX / "seahelm_mt_en_th.jsonl", config="th")) == 2
    assert len(load("seahelm-translation", FX / "seahelm_mt_km_en.jsonl", config="km", direction="xx-en")) == 2
    rows = [json.loads(x) for x in (FX / "seahelm_mt_en_th.jsonl").read_text(encoding="utf-8").splitlines()]
    data = tmp_path / "en_th.jsonl"
    data.write_text(json.dumps({**rows[0], "label": "ແມວກິນປາຢູ່ຕະຫຼາດ"}, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"written in Lao script, but the task's language is th \(Thai\)"):
        load("seahelm-translation", data, config="th")
    data.write_text(json.dumps({**rows[0], "prompts": [{"text": "ឆ្មាស៊ីត្រីនៅផ្សារ។"}]}, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    with pytest.raises(DataError, match=r"written in Khmer script, but the task's input language is en \(English\)"):
        load("seahelm-translation", data, config="th")
