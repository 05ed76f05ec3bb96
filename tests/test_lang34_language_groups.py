"""Issue #34's leftovers: a language tag's script and region group its runs (zh-TW apart from zh,
sr-Latn apart from sr, a Lao task tagged lo-Laoo with the Lao ones) in `board --pivot language` and
`tasks list --language`; a run whose samples.jsonl is cut mid-line is left out by name while the
board goes on; `board DIR --language lo` implies the pivot. Real runs against the loopback server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import cli
from glotbench.datasheet import Datasheet
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.languages import language_group, language_label
from glotbench.report.board import build_board, export

FX = Path(__file__).resolve().parent / "fixtures" / "tasks"

# One multiple-choice task file per language tag; the rows are written in the tag's script.
TASK = """\
name: {name}
version: "1.0"
description: a question in {tag}
language: {tag}
data:
  file: {name}.jsonl
fields:
  id: id
  public: {{question: q}}
  choices: [a, b]
  gold: {{answer: gold}}
prompt:
  user: "{{{{ question }}}}\\n{{{{ options }}}}"
extract:
  letter: [option_letter]
scorer: option_accuracy
datasheet:
  licence: Apache-2.0
  commercial: true
  origin: native
  source: glotbench's tests
  citation: "@misc{{t, title={{T}}, year={{2026}}}}"
  languages: {{{group}: {{}}}}
"""
ROWS = {  # tag -> (question, right option, wrong option), two items each
    "zh-Hans": [("中国的首都是哪里？", "北京", "上海"), ("一年有几个月？", "十二", "十")],
    "zh-TW": [("臺灣最高的山是哪一座？", "玉山", "雪山"), ("一週有幾天？", "七天", "五天")],
    "sr-Latn": [("Koji je glavni grad Srbije?", "Beograd", "Novi Sad"), ("Koliko dana ima nedelja?", "sedam", "pet")],
    "sr-Cyrl": [("Који је главни град Србије?", "Београд", "Нови Сад"), ("Колико дана има недеља?", "седам", "пет")],
    "lo-Laoo": [("ນະຄອນຫຼວງຂອງປະເທດລາວແມ່ນບ່ອນໃດ?", "ວຽງຈັນ", "ຫຼວງພະບາງ"), ("ໜຶ່ງອາທິດມີຈັກມື້?", "ເຈັດມື້", "ຫ້າມື້")],
}


def test_a_tag_groups_by_its_script_and_its_region_where_they_are_not_the_usual_ones():
    cases = {"lo": "lo", "lao_Laoo": "lo", "lo-Laoo": "lo", "lo-LA": "lo", "lo-TH": "lo-TH",
             "zh": "zh", "zh-CN": "zh", "zho_Hans": "zh", "zh-Hans": "zh",
             "zh-TW": "zh-Hant", "zh-Hant": "zh-Hant", "zho_Hant": "zh-Hant", "zh-HK": "zh-Hant-HK",
             "sr": "sr", "sr-Cyrl": "sr", "sr-Latn": "sr-Latn", "sr-ME": "sr-Latn-ME",
             "arb_Arab": "ar", "arb_Latn": "ar-Latn", "ace_Arab": "ace-Arab", "ace_Latn": "ace",
             "pt-BR": "pt", "pt-PT": "pt-PT", "srp_latn_torl": "sr-Latn", "por_latn_braz": "pt", "tam_latn": "ta-Latn", "en-GB": "en-GB", "fil_Latn": "tl", "bur": "my", "khm_Khmr": "km"}
    assert {t: language_group(t) for t in cases} == cases
    assert all(language_group(g) == g for g in cases.values())  # a group is its own group
    assert language_label("zh-Hant") == "Chinese (Hant script)" and language_label("lo") == "Lao"
    assert language_label("zh-Hant-HK") == "Chinese (Hant script, HK)" and language_label("pt-PT") == "pt (PT)"


def test_a_datasheet_names_a_group_and_a_run_in_another_is_refused(tmp_path):
    base = dict(licence="MIT", commercial=True, origin="native", source="s", citation="@misc{a, title={A}, year={2020}}")
    assert Datasheet(languages={"zh-Hant": {}, "sr-Latn": {}}, **base).options_for("zh-TW") == {}
    assert Datasheet(languages={"zh": {}}, **base).options_for("zh-TW") is None  # Simplified is not Traditional
    for bad in ("zh-TW", "lo-Laoo", "zh-hant"):  # written as its group, so one spelling per group
        with pytest.raises(ValueError, match="not a language code as glotbench names them"):
            Datasheet(languages={bad: {}}, **base)
    (tmp_path / "t.yaml").write_text(TASK.format(name="t", tag="zh-TW", group="zh"), encoding="utf-8")
    r = cli("tasks", "check", str(tmp_path / "t.yaml"))
    assert r.returncode == 2 and "datasheet.languages.zh: with the defaults the task runs in zh-Hant, not zh" in r.stderr


@pytest.fixture(scope="module")
def tagged(tmp_path_factory, server):
    """Two models' runs of a task per tag, and of Belebele in Lao (config lao_Laoo)."""
    root = tmp_path_factory.mktemp("tags")
    tasks = root / "tasks"
    tasks.mkdir()
    answers: dict[str, dict[str, str]] = {"good": {}, "bad": {}}
    for tag, rows in ROWS.items():
        name = "q-" + tag.lower()
        (tasks / f"{name}.yaml").write_text(TASK.format(name=name, tag=tag, group=language_group(tag)), encoding="utf-8")
        with open(tasks / f"{name}.jsonl", "w", encoding="utf-8") as f:
            for i, (q, right, wrong) in enumerate(rows):
                f.write(json.dumps({"id": f"{tag}-{i}", "q": q, "a": right, "b": wrong, "gold": "A"}, ensure_ascii=False) + "\n")
                answers["good"][q] = "A"
                answers["bad"][q] = "B" if i == 0 else "A"
    answers["good"]["ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ"] = "ຄຳຕອບ: ກ"
    for model, replies in answers.items():
        server.configure(answers=replies)
        for tag in ROWS:
            name = "q-" + tag.lower()
            evaluate(str(tasks / f"{name}.yaml"), server.spec(model), RunOptions(
                progress=False, out=str(root / "runs" / model / name), cache_path=str(root / "calls.sqlite")))
        evaluate("belebele", server.spec(model), RunOptions(
            data=str(FX / "belebele_lao_Laoo.jsonl"), bench_options=(("config", "lao_Laoo"),), progress=False,
            out=str(root / "runs" / model / "belebele-lo"), cache_path=str(root / "calls.sqlite")))
    server.configure(answers={})
    return root


def test_runs_are_tabled_by_their_tag_s_group(tagged):
    res = json.loads((tagged / "runs" / "good" / "q-zh-tw" / "results.json").read_text())
    assert res["task"]["language"] == "zh-Hant"
    b = build_board([str(tagged / "runs")], pivot="language", resamples=100)
    tables = {t["language"]: t for t in b["tables"]}
    assert sorted(tables) == ["lo", "sr", "sr-Latn", "zh", "zh-Hant"]
    assert [c["benchmark"] for c in tables["lo"]["columns"]] == ["belebele", "q-lo-laoo"]  # lo-Laoo is Lao
    assert [c["benchmark"] for c in tables["zh-Hant"]["columns"]] == ["q-zh-tw"]
    assert [c["benchmark"] for c in tables["zh"]["columns"]] == ["q-zh-hans"]
    assert [c["benchmark"] for c in tables["sr-Latn"]["columns"]] == ["q-sr-latn"]
    assert [c["benchmark"] for c in tables["sr"]["columns"]] == ["q-sr-cyrl"]
    assert tables["zh-Hant"]["name"] == "Chinese (Hant script)" and tables["sr-Latn"]["name"] == "sr (Latn script)"
    assert tables["zh-Hant"]["card"]["language"] == "zh-Hant"
    md = export(b, "md")
    assert "### Chinese (Hant script) (zh-Hant)" in md and "### Chinese (zh)" in md
    for spelling, want in (("zh-TW", "zh-Hant"), ("zho_Hant", "zh-Hant"), ("zh", "zh"), ("sr-Latn", "sr-Latn"),
                           ("lo-Laoo", "lo"), ("lao_Laoo", "lo")):
        b = build_board([str(tagged / "runs")], pivot="language", languages=[spelling], resamples=100)
        assert [t["language"] for t in b["tables"]] == [want], spelling
    r = cli("board", str(tagged / "runs"), "--language", "zh-HK", "--resamples", "50")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == "error: no run in zh-Hant-HK; the runs' languages: lo, sr, sr-Latn, zh, zh-Hant"


def test_tasks_list_reads_the_group(tagged):
    inc = ("--include-path", str(tagged / "tasks"))
    tw = cli("tasks", "list", "--language", "zh-TW", *inc)
    assert tw.returncode == 0, tw.stderr
    assert tw.stdout.startswith("2 benchmark families cover Chinese (Hant script) (zh-Hant) "
                                "(other groups of this language, each its own --language: zh):")
    assert "q-zh-tw" in tw.stdout and "q-zh-hans" not in tw.stdout
    assert any(x.startswith("  global-piqa ") and x.endswith("config=cmn_hant") for x in tw.stdout.splitlines())
    zh = cli("tasks", "list", "--language", "zho_Hans", *inc)
    assert "q-zh-hans" in zh.stdout and "q-zh-tw" not in zh.stdout and "each its own --language: zh-Hant" in zh.stdout
    assert any(x.startswith("  global-piqa ") and x.endswith("config=cmn_hans") for x in zh.stdout.splitlines())
    srl = cli("tasks", "list", "--language", "sr-Latn")  # Global PIQA's srp_latn, not its srp_cyrl
    assert any(x.startswith("  global-piqa ") and x.endswith("config=srp_latn") for x in srl.stdout.splitlines())
    lo = cli("tasks", "list", "--language", "lo-Laoo", *inc)
    assert " q-lo-laoo " in lo.stdout and " belebele " in lo.stdout
    plain = cli("tasks", "list", "--language", "lo")
    assert int(lo.stdout.split()[0]) == int(plain.stdout.split()[0]) + 1  # the same group, one task file more
    none = cli("tasks", "list", "--language", "sr-ME", *inc)
    assert none.returncode == 0 and none.stdout.startswith("no benchmark family covers sr (Latn script, ME) (sr-Latn-ME) "
                                                           "(other groups of this language, each its own --language: sr, sr-Latn)")


def test_a_run_with_samples_cut_mid_line_is_left_out_by_name_and_the_board_goes_on(tagged, tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(tagged / "runs", runs)
    cut = runs / "bad" / "belebele-lo" / "samples.jsonl"
    text = cut.read_text(encoding="utf-8")
    cut.write_text(text[: len(text) - 40], encoding="utf-8")  # the last line cut in its middle
    empty = runs / "good" / "q-zh-tw" / "samples.jsonl"
    empty.write_text(empty.read_text(encoding="utf-8").splitlines()[0][:25] + "\n", encoding="utf-8")
    b = build_board([str(runs)], pivot="language", resamples=100)
    out = {x["path"]: x["reason"] for x in b["left_out"]}
    assert set(out) == {str(cut.parent), str(empty.parent)}
    last = len(text.splitlines())  # the line cut off is named
    assert f"samples.jsonl:{last}: not valid JSON" in out[str(cut.parent)]
    assert "samples.jsonl:1: not valid JSON" in out[str(empty.parent)]
    tables = {t["language"]: t for t in b["tables"]}
    lo = {c["benchmark"]: c for c in tables["lo"]["columns"]}
    assert len(lo["belebele"]["cells"]) == 1 and len(lo["q-lo-laoo"]["cells"]) == 2  # the others still there
    assert len(tables["zh-Hant"]["columns"][0]["cells"]) == 1
    on_card = {t: {x["path"] for x in tables[t]["card"]["left_out"]} for t in tables}  # each card names its own
    assert str(cut.parent) in on_card["lo"] and str(empty.parent) in on_card["zh-Hant"]
    assert str(cut.parent) not in on_card["zh-Hant"] | on_card["zh"] and str(empty.parent) not in on_card["lo"]
    lao_card = export(b, "md").split("### Lao (lo)")[1].split("\n### ")[0]
    assert f"- {cut.parent}: {cut}:{last}: not valid JSON" in lao_card
    r = cli("board", str(runs), "--pivot", "language", "--resamples", "50")
    assert r.returncode == 0, r.stderr
    assert f"left out: {cut.parent}: {cut}:{last}: not valid JSON" in r.stderr
    assert "### Lao (lo)" in r.stdout and "Traceback" not in r.stderr
    flat = build_board([str(runs)], resamples=100)  # the board without the pivot too
    assert {x["path"] for x in flat["left_out"]} == {str(cut.parent), str(empty.parent)}


def test_language_without_pivot_implies_it(tagged):
    r = cli("board", str(tagged / "runs"), "--language", "lo", "--resamples", "50")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("### Lao (lo)") and "zh-Hant" not in r.stdout
    r = cli("board", str(tagged / "runs"), "--language", "lo", "--pivot", "model")
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1] == "error: --pivot must be language, got 'model'"
