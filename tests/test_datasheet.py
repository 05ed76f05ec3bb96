"""Datasheets (glotbench/datasheet.py): validated facts of a benchmark family, read by
`tasks list --language` from task files and built-ins alike."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from conftest import cli
from glotbench.datasheet import Datasheet

CITE = "@article{k2024, title={A Set}, author={A, B}, year={2024}}"
SHEET = {"licence": "CC-BY-4.0", "commercial": True, "origin": "translated", "source": "https://example.org/card",
         "citation": CITE, "languages": {"lo": {"config": "lao_Laoo"}, "km": {"config": "khm_Khmr"}},
         "origin_by_language": {"km": "native"}}


def test_a_sheet_reads_its_languages_in_any_spelling():
    ds = Datasheet.model_validate(SHEET)
    assert ds.options_for("lao_Laoo") == {"config": "lao_Laoo"}
    assert ds.options_for("khm") == {"config": "khm_Khmr"}
    assert ds.options_for("my") is None
    assert (ds.origin_of("lo"), ds.origin_of("km")) == ("translated", "native")
    assert ds.licence_line == "CC-BY-4.0"


@pytest.mark.parametrize("change, says", [
    ({"citation": "Ponti et al. 2020"}, "not BibTeX"),
    ({"citation": "@article{k, author={A}}"}, "lacks title, year"),
    ({"languages": {"lao": {}}}, "'lao' is not a language code"),
    ({"languages": {}}, "at least 1"),
    ({"commercial": None}, "licence_note"),
    ({"reference_commit": "main", "reference": "x/y"}, "40 lower-case hex"),
    ({"origin": "crowd"}, "origin"),
    ({"origin_by_language": {"th": "native"}}, "th not among languages"),
])
def test_a_wrong_sheet_is_refused(change, says):
    with pytest.raises(ValidationError, match=says):
        Datasheet.model_validate({**SHEET, **change})


def test_non_commercial_shows_in_the_licence_line():
    ds = Datasheet.model_validate({**SHEET, "commercial": None, "licence_note": "card says MIT, README CC-BY-NC"})
    assert ds.licence_line == "CC-BY-4.0, commercial use unclear"
    assert Datasheet.model_validate({**SHEET, "commercial": False}).licence_line == "CC-BY-4.0, non-commercial"


TASK = """\
name: {name}
version: "1.0"
description: a tiny family
options:
  config: {{default: lao_Laoo, choices: [lao_Laoo, khm_Khmr]}}
language: "{{{{ config }}}}"
data: {{file: rows.jsonl}}
fields: {{id: id, public: [question], gold: {{answer: answer}}}}
prompt: {{user: "{{{{ question }}}}"}}
scorer: exact_match
datasheet:
  licence: CC-BY-4.0
  commercial: true
  origin: native
  source: https://example.org/card
  citation: "@misc{{x2024, title={{X}}, year={{2024}}}}"
  languages: {{lo: {{config: lao_Laoo}}, km: {{config: {km}}}}}
"""


def test_tasks_list_language_reads_task_file_datasheets(tmp_path: Path):
    (tmp_path / "fam.yaml").write_text(TASK.format(name="fam-one", km="khm_Khmr"), encoding="utf-8")
    r = cli("tasks", "list", "--include-path", str(tmp_path), "--language", "khm_Khmr")
    assert r.returncode == 0, (r.stdout + r.stderr)
    assert "benchmark families cover Khmer (km)" in (r.stdout + r.stderr)
    lines = r.stdout.splitlines()
    i = next(i for i, ln in enumerate(lines) if "fam-one" in ln)
    assert "native" in lines[i] and "commercial use: yes" in lines[i] and "config=khm_Khmr" in lines[i]
    assert "a tiny family" in lines[i + 1]
    assert "licence: CC-BY-4.0; source: https://example.org/card" in lines[i + 2]
    r = cli("tasks", "list", "--include-path", str(tmp_path), "--language", "my")
    assert "fam-one" not in (r.stdout + r.stderr)


def test_a_language_option_outside_the_choices_is_a_task_error(tmp_path: Path):
    (tmp_path / "fam.yaml").write_text(TASK.format(name="fam-two", km="khm_Laoo"), encoding="utf-8")
    r = cli("tasks", "check", str(tmp_path / "fam.yaml"))
    assert r.returncode == 2
    assert "datasheet" in (r.stdout + r.stderr) and "khm_Laoo" in (r.stdout + r.stderr) and "Traceback" not in (r.stdout + r.stderr)


def test_the_datasheet_is_not_in_the_signature(tmp_path: Path):
    from glotbench.registry import get_benchmark

    sigs = []
    for i, km in enumerate(("khm_Khmr", "khm_Khmr")):
        text = TASK.format(name="fam-three", km=km).replace("title={{X}}", "title={{X}}")
        if i:
            text = text.replace("licence: CC-BY-4.0", "licence: MIT")
        f = tmp_path / f"t{i}.yaml"
        f.write_text(text, encoding="utf-8")
        sigs.append(get_benchmark(str(f)).signature_parts())
    assert sigs[0] == sigs[1]


def test_deepsea_bundled_languages_are_the_samples_and_the_rest_need_data():
    from collections import Counter

    from glotbench.benchmarks import deepsea
    from glotbench.registry import get_benchmark

    for name, upstream in (("deepsea-mgsm", "MGSM"), ("deepsea-indommlu", "IndoMMLU"), ("deepsea-xquad", "XQuAD"),
                           ("deepsea-crosssum", "CrossSum"), ("deepsea-wmt24pp", "WMT24pp")):
        bench = get_benchmark(name)
        langs = set(Counter(it.meta["lang"] for it in bench.load()))
        assert langs == set(deepsea.BUNDLED_LANGUAGES[upstream]), name
        assert set(bench.datasheet.data_only) == set(deepsea.LANGUAGES) - langs


def test_data_only_languages_are_marked_and_counted(tmp_path: Path):
    ds = Datasheet.model_validate({**SHEET, "data_only": ["km"]})
    assert ds.needs_data("khm_Khmr") and not ds.needs_data("lo")
    with pytest.raises(ValidationError, match="data_only: my not among languages"):
        Datasheet.model_validate({**SHEET, "data_only": ["my"]})
    text = TASK.format(name="fam-four", km="khm_Khmr").replace("  languages:", "  data_only: [km]\n  languages:")
    (tmp_path / "fam.yaml").write_text(text, encoding="utf-8")
    out = cli("tasks", "list", "--include-path", str(tmp_path), "--language", "km").stdout
    assert "of them only with --data FILE" in out
    assert any(ln.startswith(" *fam-four") for ln in out.splitlines()), out
