"""`glotbench board --pivot language`: runs of many tasks and languages as one table per language,
models x tasks ("how good is this model in Lao" is one table), from real runs against the loopback
server: task runs in Lao, Khmer and Thai, a DeepSEA run reported by language (its Thai items make
its Thai cell), a prompt variant as its own column, a one-language built-in (laobench-mcq) in its
language's table, and a run over several languages with no `lang` group left out, saying so."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from conftest import cli
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.report.board import build_board, export, write_board_html

FX = Path(__file__).resolve().parent / "fixtures" / "tasks"

# Each model's replies, by a substring of the prompt.
REPLIES = {
    "alpha": {"ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ": "ຄຳຕອບ: ກ", "ວຽງຈັນຕັ້ງຢູ່ແຄມແມ່ນ້ຳໃດ": "ຄຳຕອບ: ຄ", "ລາວຢູ່ໃນທະວີບໃດ": "C",
              "តើរាជធានីនៃកម្ពុជាគឺជាអ្វី": "B", "ฝนตกหนัก": "A", "Sentence:": "travel",
              "Nam": "<answer>7</answer>", "สมชาย": "<answer>12</answer>"},
    "beta": {"ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ": "ຄຳຕອບ: ຂ", "ລາວຢູ່ໃນທະວີບໃດ": "ອາຊີ", "ฝนตกหนัก": "C",
             "Sentence:": "sports"},
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory, server):
    root = tmp_path_factory.mktemp("pivot")
    plan = [("belebele", "belebele_lao_Laoo.jsonl", {"config": "lao_Laoo"}),
            ("belebele", "belebele_khm_Khmr.jsonl", {"config": "khm_Khmr"}),
            ("belebele", "belebele_lao_Laoo.jsonl", {"config": "lao_Laoo", "prompt": "lm-eval", "method": "generate"}),
            ("sib200", "sib200_lao_Laoo.jsonl", {"config": "lao_Laoo"}),
            ("xnli", "xnli_th.jsonl", {"config": "th"}),
            ("deepsea-mgsm", None, {}), ("laobench-mcq", None, {}), ("laobench-translation", None, {})]
    for model, answers in REPLIES.items():
        server.configure(answers=answers)
        for i, (task, data, opts) in enumerate(plan):
            evaluate(task, server.spec(model), RunOptions(
                data=str(FX / data) if data else None, bench_options=tuple(opts.items()), progress=False,
                out=str(root / model / f"{i}-{task}"), cache_path=str(root / "calls.sqlite")))
    server.configure(answers={})
    return root


def results(root: Path, model: str, i: int, task: str) -> dict:
    return json.loads((root / model / f"{i}-{task}" / "results.json").read_text())


def test_one_table_per_language_with_the_tasks_as_columns(runs):
    b = build_board([str(runs)], pivot="language", resamples=200)
    langs = [t["language"] for t in b["tables"]]
    assert {"lo", "km", "th"} <= set(langs) and langs == sorted(langs)
    lao = next(t for t in b["tables"] if t["language"] == "lo")
    assert lao["name"] == "Lao"
    # laobench-mcq declares one language (its datasheet's): results.json `benchmark.language`
    assert [c["benchmark"] for c in lao["columns"]] == ["belebele", "belebele [prompt=lm-eval]", "laobench-mcq", "sib200"]
    assert results(runs, "alpha", 6, "laobench-mcq")["benchmark"]["language"] == "lo"
    for c in lao["columns"]:
        assert set(c["cells"]) == {m for m in b["models"]} and len(b["models"]) == 2
    # each cell is its run's headline, with the run's signature
    bele = lao["columns"][0]
    for model in REPLIES:
        res = results(runs, model, 0, "belebele")
        cell = bele["cells"][next(m for m in bele["cells"] if f":{model}@" in m)]
        assert cell["value"] == res["scores"]["overall"]["accuracy"]["value"] and cell["n"] == 3
        assert cell["json_path"] == "/scores/overall/accuracy"
        assert bele["signature"] == res["signature"] or res["signature"] in (bele["signature"],)
    khmer = next(t for t in b["tables"] if t["language"] == "km")
    assert [c["benchmark"] for c in khmer["columns"]] == ["belebele"]


def test_a_run_reported_by_language_gives_each_language_its_own_cell(runs):
    """DeepSEA MGSM runs four languages in one run: its Thai cell is the Thai group's estimate, with
    the Thai items' n, and the significance test pairs the Thai items only."""
    b = build_board([str(runs)], pivot="language", languages=["tha_Thai"], resamples=200)
    assert [t["language"] for t in b["tables"]] == ["th"]
    thai = b["tables"][0]
    assert [c["benchmark"] for c in thai["columns"]] == ["deepsea-mgsm", "xnli"]
    mgsm = thai["columns"][0]
    th_items = {json.loads(x)["id"] for x in (runs / "alpha" / "5-deepsea-mgsm" / "samples.jsonl").read_text().splitlines()
                if json.loads(x)["meta"]["lang"] == "th"}
    for model in REPLIES:
        group = results(runs, model, 5, "deepsea-mgsm")["scores"]["groups"]["lang"]["th"]["numeric_em"]
        cell = next(c for m, c in mgsm["cells"].items() if f":{model}@" in m)
        assert (cell["value"], cell["n"]) == (group["value"], group["n"]) and cell["n"] == len(th_items)
        assert cell["json_path"] == "/scores/groups/lang/th/numeric_em"
        if not cell["best"]:
            assert cell["shared_items"] == len(th_items)
    assert mgsm["groups"] == {} and mgsm["frontier"] is None  # a whole run's groups and cost are not Thai's


def test_a_run_that_names_no_language_is_left_out_saying_so(runs):
    b = build_board([str(runs)], pivot="language", resamples=200)
    """laobench-translation covers Lao, English and Chinese (its directions): one language per run
    would be wrong, and it reports no `lang` group."""
    reasons = [x["reason"] for x in b["left_out"] if "laobench" in x["path"]]
    assert len(reasons) == 2 and all("laobench-translation: names no language" in r for r in reasons)
    assert "language" not in results(runs, "alpha", 7, "laobench-translation")["benchmark"]


def test_every_export_of_the_pivot(runs, tmp_path):
    b = build_board([str(runs)], pivot="language", languages=["lo", "th"], resamples=200)
    md = export(b, "md")
    assert md.index("### Lao (lo)") < md.index("### Thai (th)") and "Khmer" not in md
    assert "| belebele [prompt=lm-eval] Accuracy" in md or "belebele [prompt=lm-eval]" in md.split("### Thai")[0]
    rows = [r for r in csv.DictReader(io.StringIO(export(b, "csv"))) if r["benchmark"] != "report card"]  # the card: test_card_suite.py
    assert {r["language"] for r in rows} == {"lo", "th"} and len(rows) == 2 * (4 + 2)
    mgsm = [r for r in rows if r["benchmark"] == "deepsea-mgsm"]
    assert all(r["language"] == "th" for r in mgsm)
    tex = export(b, "latex")
    assert tex.count(r"\begin{tabular}") - tex.count("Report card, ") == 2 and tex.count(r"\caption{lo: ") == 1
    js = json.loads(export(b, "json"))
    assert js["pivot"] == "language" and [t["language"] for t in js["tables"]] == ["lo", "th"]
    page = write_board_html(b, tmp_path / "b.html").read_text(encoding="utf-8")
    assert 'id="board-lo"' in page and 'id="board-th"' in page and "Lao (lo)" in page
    assert "/scores/groups/lang/th/numeric_em/value" in page  # the Thai cell's number traces to its group
    import html
    import re

    checked = 0
    for src, raw in re.findall(r'data-src="([^"]+)" data-raw="([^"]+)"', page):
        path, _, pointer = html.unescape(src).partition("#")
        node = json.loads(Path(path).read_text())
        for part in pointer.strip("/").split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        assert node == float(raw), src
        checked += 1
    assert checked >= 2 * (4 + 2)  # every cell's value (and its CI bounds) is the number in its results.json


def test_the_command(runs):
    r = cli("board", str(runs), "--pivot", "language", "--language", "lao", "--resamples", "100")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("### Lao (lo)") and "### Thai" not in r.stdout
    assert "left out:" in r.stderr and "names no language" in r.stderr
    r = cli("board", str(runs), "--pivot", "language", "--language", "my")
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1].startswith("error: no run in my")
    r = cli("board", str(runs), "--language", "lo", "--resamples", "100")  # --language implies the pivot
    assert r.returncode == 0 and r.stdout.startswith("### Lao (lo)") and "### Thai" not in r.stdout


def test_the_plain_board_keeps_each_task_language_a_column(runs):
    """Without the pivot, a task's languages and variants are columns of their own (belebele · lo,
    belebele · km), never one column that leaves the other languages out."""
    b = build_board([str(runs)], resamples=200)
    names = [c["benchmark"] for c in b["columns"]]
    assert {"belebele · lo", "belebele · km", "belebele [prompt=lm-eval] · lo", "sib200 · lo", "xnli · th"} <= set(names)
    assert not any("belebele" in x["path"] for x in b["left_out"])
