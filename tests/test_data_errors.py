"""Data and coverage errors that used to pass silently (issue 12): each is one `error:` line and exit
2 from the real command, or an explicit entry in the results."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any, Callable

import pytest

from conftest import cli
from glotbench.benchmarks.deepsea import DeepSEATask, load_official_json
from glotbench.benchmarks.deepsea_tools import check_predictions
from glotbench.benchmarks.laobench import LaoBenchMCQ, LaoBenchTranslation, infer_direction
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import DataError, GlotbenchError
from test_cli_inputs import _one_error_line


def _bundled(task: str) -> dict[str, Any]:
    ref = resources.files("glotbench.benchmarks").joinpath(f"data/deepsea_{task}.json")
    return json.loads(ref.read_text(encoding="utf-8"))


def _corrupt(tmp_path: Path, task: str, lang: str, index: int, change: Callable[[dict], None]) -> Path:
    data = _bundled(task)
    change(data["languages"][lang][index])
    p = tmp_path / f"{task}.json"
    p.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return p


BAD_ROWS = [
    ("xquad", "vi", 1, lambda r: r.update(answers="Hà Nội"), "answers must be a list"),
    ("indommlu", "id", 0, lambda r: r.update(answer="b"), "gold letters are upper-case"),
    ("indommlu", "th", 1, lambda r: r.update(answer="E"), "answer 'E' is not one of the options"),
    ("indommlu", "vi", 0, lambda r: r.update(options=["x", "y"]), "options must map option letters"),
    ("mgsm", "th", 2, lambda r: r.update(answer_number="สิบสอง"), "is not a number"),
    ("mgsm", "en", 0, lambda r: r.update(answer_number=[31]), "answer_number must be a number"),
    ("wmt24pp", "th", 0, lambda r: r.update(lp="thai"), "lp 'thai' is not a language pair"),
    ("crosssum", "vi", 0, lambda r: r.update(summary=["a", "b"]), "summary must be text"),
]


@pytest.mark.parametrize("task, lang, index, change, message", BAD_ROWS)
def test_malformed_deepsea_rows_are_rejected_with_their_position(tmp_path, task, lang, index, change, message):
    p = _corrupt(tmp_path, task, lang, index, change)
    with pytest.raises(DataError, match=message) as e:
        load_official_json(p, task)
    assert f"{lang} example {index}" in str(e.value) and str(p) in str(e.value)


def test_malformed_deepsea_row_is_one_cli_error(tmp_path):
    p = _corrupt(tmp_path, "xquad", "th", 0, lambda r: r.update(answers="กรุงเทพ"))
    line = _one_error_line(cli("run", "deepsea-xquad", "--data", str(p), "--model", "python:helpers:async_echo",
                               "--out", str(tmp_path / "run"), "--no-progress"))
    assert "th example 0" in line and "answers must be a list" in line


def test_native_digit_and_comma_golds_are_numbers(tmp_path):
    p = _corrupt(tmp_path, "mgsm", "th", 0, lambda r: r.update(answer_number="๓๑"))
    assert load_official_json(p, "mgsm")["th"][0]["answer_number"] == "๓๑"
    p = _corrupt(tmp_path, "mgsm", "en", 0, lambda r: r.update(answer_number="1,200"))
    assert load_official_json(p, "mgsm")["en"][0]["answer_number"] == "1,200"


def test_extra_indommlu_subject_is_an_error():
    data = {"id": [{"subject": "Biologi"}, {"subject": "Sejarah"}]}
    ok = {"id": {"Biologi": ["A"], "Sejarah": ["B"]}}
    assert check_predictions("indommlu", data, ok) == {"id": ["A", "B"]}
    with pytest.raises(GlotbenchError, match="subjects not in the data: 'Fisika'"):
        check_predictions("indommlu", data, {"id": {**ok["id"], "Fisika": ["C"]}})


@pytest.mark.parametrize("option, message", [
    ("metric=bleu", "deepsea-mgsm has no metric 'bleu'; its metric: numeric_em"),
    ("native_digits=maybe", "native_digits must be true or false"),
    ("letter_case=lower", "letter_case must be upper_first or upper_only"),
])
def test_options_that_do_not_parse(tmp_path, option, message):
    task = "indommlu" if option.startswith("letter_case") else "mgsm"
    line = _one_error_line(cli("run", f"deepsea-{task}", "--bench-opt", option, "--model", "python:helpers:async_echo",
                               "--out", str(tmp_path / "run"), "--no-progress"))
    assert message in line
    assert DeepSEATask("mgsm", metric="numeric_em").metrics[0].name == "numeric_em"  # its own name is accepted


@pytest.mark.parametrize("groups, message", [
    ({"high": "th"}, "group 'high' must be a non-empty list of language codes"),
    ({"high": []}, "group 'high' must be a non-empty list"),
    (["th"], "expected {"),
])
def test_groups_file_must_map_groups_to_lists(tmp_path, groups, message):
    g = tmp_path / "groups.json"
    g.write_text(json.dumps(groups))
    line = _one_error_line(cli("run", "deepsea-mgsm", "--bench-opt", f"groups={g}", "--model",
                               "python:helpers:async_echo", "--out", str(tmp_path / "run"), "--no-progress"))
    assert message in line


@pytest.mark.parametrize("flag, value", [("--char-n", "0"), ("--word-n", "-3"), ("--char-n", "-1")])
def test_contamination_ngram_sizes_must_be_positive(tmp_path, flag, value):
    corpus = tmp_path / "c.txt"
    corpus.write_text("some text\n")
    line = _one_error_line(cli("build", "contamination", "laobench-mcq", str(corpus), f"{flag}={value}"))
    assert flag in line and "positive" in line


# -- replay coverage ----------------------------------------------------------------------------

def _replay(tmp_path: Path, lines: list[dict[str, Any]]) -> str:
    f = tmp_path / "replay.jsonl"
    f.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return f"replay:{f}"


def _mgsm_ids() -> list[str]:
    return [it.id for it in DeepSEATask("mgsm").load()]


@pytest.mark.parametrize("make, message", [
    (lambda ids: [{"id": ids[0], "output": "<answer>1</answer>"}, {"id": ids[0], "output": "<answer>2</answer>"}],
     "replay.jsonl:2: duplicate id"),
    (lambda ids: [{"id": ids[0], "output": "x"}, {"id": "xx/00042", "output": "x"}],
     "1 id(s) not in the benchmark's data: 'xx/00042'"),
    (lambda ids: [], "no output for any of the run's"),
])
def test_replay_duplicates_unknown_ids_and_no_coverage_are_errors(tmp_path, make, message):
    spec = _replay(tmp_path, make(_mgsm_ids()))
    line = _one_error_line(cli("run", "deepsea-mgsm", "--model", spec, "--out", str(tmp_path / "run"),
                               "--no-progress"))
    assert message in line


def test_partial_replay_coverage_is_reported(tmp_path):
    ids = _mgsm_ids()
    spec = _replay(tmp_path, [{"id": i, "output": "<answer>31</answer>"} for i in ids[:3]])
    proc = cli("run", "deepsea-mgsm", "--model", spec, "--out", str(tmp_path / "run"), "--no-progress")
    # 9 of 12 outputs missing: written and reported, and invalid (above the 5% failure threshold): exit 3
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.startswith(f"error: invalid: {len(ids) - 3} of {len(ids)} items failed (missing)")
    assert "the replay file has no output for them" in proc.stderr
    assert f"PARTIAL COVERAGE: 3 of {len(ids)} items" in proc.stdout
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["coverage"]["with_output"] == 3 and res["coverage"]["missing"] == len(ids) - 3
    assert res["counts"]["failures"]["missing"] == len(ids) - 3


# -- LaoBench --------------------------------------------------------------------------------------

def _laobench_file(tmp_path: Path, rows: list[dict[str, Any]]) -> str:
    p = tmp_path / "lb.jsonl"
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(p)


def test_translation_direction_is_inferred_from_the_scripts_and_said(tmp_path):
    t = "Bilingual Translation"
    rows = [{"id": "1", "data_type": t, "question": "Translate into English: 你好", "answer": "Hello"},
            {"id": "2", "data_type": t, "question": "ແປເປັນພາສາຈີນ: ສະບາຍດີ", "answer": "你好"},
            {"id": "3", "data_type": t, "question": "Translate into Lao: Good morning", "answer": "ສະບາຍດີຕອນເຊົ້າ"},
            {"id": "4", "data_type": t, "question": "Translate: hello", "answer": "hi", "direction": "en-lo"}]
    bench = LaoBenchTranslation()
    ds = bench.load(_laobench_file(tmp_path, rows))
    assert [it.meta["direction"] for it in ds] == ["zh-en", "lo-zh", "en-lo", "en-lo"]
    said = bench.extra_results(ds)["directions_inferred"]
    assert said["items"] == 3 and said["ids"] == ["1", "2", "3"]
    with pytest.raises(DataError, match="cannot infer the translation direction"):
        infer_direction("Translate into French: hello", "bonjour", "row 1")
    with pytest.raises(DataError, match="cannot infer"):
        infer_direction("ແປ 你好 ເປັນພາສາອັງກິດ", "hello", "row 1")
    bad = _laobench_file(tmp_path, [{"id": "1", "data_type": t, "question": "Translate: hi", "answer": "hello"}])
    line = _one_error_line(cli("run", "laobench-translation", "--data", bad, "--model", "python:helpers:async_echo",
                               "--out", str(tmp_path / "run"), "--no-progress"))
    assert "lb.jsonl:1" in line and "give the row a `direction`" in line


def test_subdomains_are_keyed_by_dimension(tmp_path):
    rows = []
    for n, dim in enumerate(("K12 Foundational Education", "Knowledge Application")):
        rows.append({"id": str(n), "data_type": dim, "subdomain": "mathematics", "question": "1 + 1 = ?",
                     "A": "1", "B": "2", "C": "3", "D": "4", "answer": "B"})
    data = _laobench_file(tmp_path, rows)
    res = evaluate("laobench-mcq", "python:helpers:deepsea_letter_b",
                   RunOptions(data=data, out=str(tmp_path / "run"), progress=False, use_cache=False)).results
    groups = res["scores"]["groups"]["dimension_subdomain"]
    assert set(groups) == {"K12 Foundational Education/mathematics", "Knowledge Application/mathematics"}
    assert all(g["accuracy"]["n"] == 1 for g in groups.values())


def test_option_text_fallback_in_a_laobench_run(tmp_path):
    rows = [{"id": "1", "data_type": "Knowledge Application", "subdomain": "geography", "lang": "en",
             "question": "Which city is in the south of Laos?", "A": "Vientiane", "B": "Pakse",
             "C": "Luang Prabang", "D": "Phonsavan", "answer": "B"}]
    out = tmp_path / "replay.jsonl"
    out.write_text(json.dumps({"id": "1", "output": "I think it's Pakse"}) + "\n")
    res = evaluate(LaoBenchMCQ(), f"replay:{out}", RunOptions(data=_laobench_file(tmp_path, rows), progress=False,
                                                             out=str(tmp_path / "run"), use_cache=False)).results
    assert res["scores"]["overall"]["accuracy"]["value"] == 1.0 and res["counts"]["failures"] == {}


def test_thinking_mode_is_in_the_signature_and_compare_refuses_mixing(tmp_path):
    from glotbench.report.compare import compare_runs

    runs = {}
    for mode in (True, False):
        runs[mode] = evaluate("deepsea-mgsm", "python:helpers:mgsm_twelve",
                              RunOptions(thinking=mode, out=str(tmp_path / f"t{mode}"), progress=False,
                                         use_cache=False)).results
    assert runs[True]["signature"].endswith("|thinking:on") and runs[False]["signature"].endswith("|thinking:off")
    with pytest.raises(GlotbenchError, match="different signatures"):
        compare_runs(str(tmp_path / "tTrue"), str(tmp_path / "tFalse"))


def test_extra_indommlu_subject_is_one_cli_error(tmp_path):
    preds: dict[str, dict[str, list[str]]] = {}
    for lang, rows in _bundled("indommlu")["languages"].items():
        for r in rows:
            preds.setdefault(lang, {}).setdefault(r["subject"], []).append("<answer>A</answer>")
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps(preds), encoding="utf-8")
    assert cli("deepsea", "score", "indommlu", str(ok)).returncode == 0
    lang = next(iter(preds))
    preds[lang]["Astronomi"] = ["<answer>B</answer>"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(preds), encoding="utf-8")
    line = _one_error_line(cli("deepsea", "score", "indommlu", str(bad)))
    assert f"predictions[{lang!r}]: subjects not in the data: 'Astronomi'" in line


def test_a_lone_surrogate_in_a_users_file_is_refused_naming_the_line(tmp_path):
    """JSON allows `"\\ud800"`, no UTF-8 text can carry it: the run stopped with "'utf-8' codec can't
    encode character" naming nothing. It is a FILE:LINE error now (JSONL and JSON lists, in an id, a
    value or a key); an escaped surrogate pair is the character it spells; glotbench's own run files
    (read with allow_nan) keep theirs, as the writers escape them."""
    from glotbench.data import raw_rows

    lone = tmp_path / "lone.jsonl"
    lone.write_text('{"id": "b", "category": "x", "references": ["Xin chao"]}\n'
                    '{"id": "a", "category": "x", "references": ["T\\ud800i"]}\n', encoding="utf-8")
    r = cli("run", "vi-diacritics", "--data", str(lone), "--model", "python:os.path:basename", "--no-progress",
            "--out", str(tmp_path / "r"))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert f"{lone}:2: a lone surrogate (\\ud800) is not a character: invalid Unicode" in r.stderr, r.stderr
    listed = tmp_path / "lone.json"
    listed.write_text('[\n{"id": "a"},\n{"id": "b", "k\\udfff": 1}\n]\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"lone\.json:3: a lone surrogate \(\\udfff\)"):
        list(raw_rows(listed, "json"))
    pair = tmp_path / "pair.jsonl"
    pair.write_text('{"id": "e", "text": "\\ud83d\\ude00 \\uD83D\\uDE00"}\n', encoding="utf-8")
    assert list(raw_rows(pair)) == [("1", {"id": "e", "text": "\U0001F600 \U0001F600"})]
    assert list(raw_rows(lone, allow_nan=True))[1][1]["references"] == ["T\ud800i"]
