"""laobench-translation's input-unchanged floor (issue #30, reading item 7): its `question` holds the
instruction with the source, so the floor scores the source text (`source_text`) as the reply, per
direction (it has no pooled number), shown beside the score in the table and the HTML report."""

from __future__ import annotations

import json

import pytest
import sacrebleu
from conftest import cli

from glotbench.benchmarks.laobench import LaoBenchTranslation, source_text


@pytest.mark.parametrize("question,source", [
    ("ແປເປັນພາສາອັງກິດ: ຂ້ອຍໄປໂຮງຮຽນທຸກມື້.", "ຂ້ອຍໄປໂຮງຮຽນທຸກມື້."),
    ("翻译成老挝语：谢谢你。", "谢谢你。"),
    ("Translate into Lao:\n  Time: 10:30 today.", "Time: 10:30 today."),  # the first colon ends the instruction
    ("ແປຄຳວ່າ «ສະບາຍດີ» ເປັນພາສາອັງກິດ", "ສະບາຍດີ"),
    ("Translate “good morning” into Lao", "good morning"),
    ("ຂ້ອຍຮັກປະເທດລາວ", "ຂ້ອຍຮັກປະເທດລາວ"),  # no instruction to take off: the question itself
])
def test_the_source_of_a_question(question, source):
    assert source_text(question) == source


def test_the_floor_is_the_copied_sources_metrics_per_direction():
    bench = LaoBenchTranslation()
    ds = bench.load()
    floor = bench.input_floor(ds)
    assert floor["field"] == "source" and floor["overall"] == {}
    lo_en = [it for it in ds if it.public["direction"] == "lo-en"]
    ref = sacrebleu.corpus_chrf([it.public["source"] for it in lo_en], [[it.gold["reference"] for it in lo_en]],
                                word_order=2).score
    assert floor["groups"]["direction"]["lo-en"]["chrf++"] == pytest.approx(ref)


def test_a_model_that_copies_the_source_scores_the_floor_and_the_table_says_so(tmp_path, srv):
    bench = LaoBenchTranslation()
    srv.configure(answers={it.public["question"]: it.public["source"] for it in bench.load()})
    r = cli("run", "laobench-translation", "--model", srv.spec(), "--no-cache", "--no-progress",
            "--out", str(tmp_path / "run"))
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    floor, scores = res["input_floor"]["groups"]["direction"], res["scores"]["groups"]["direction"]
    assert set(floor) == set(scores) == {"lo-en", "en-lo", "lo-zh", "zh-lo"}
    for d in floor:
        for m in ("bleu", "chrf++"):
            assert floor[d][m] == pytest.approx(scores[d][m]["value"])
    line = next(x for x in r.stdout.splitlines() if x.startswith("input unchanged"))
    assert line.startswith("input unchanged (the source as every answer), the do-nothing floor: ")
    assert all(f"{d}: BLEU" in line for d in floor) and "at or below it: " in line
    html = cli("report", str(tmp_path / "run"), "--html")
    assert html.returncode == 0
    assert "input unchanged (the source as every answer)" in (tmp_path / "run" / "report.html").read_text(encoding="utf-8")


def test_the_board_shows_each_directions_floor(tmp_path, srv):
    """laobench-translation pools no overall number, so its board column has no floor of its own: each
    direction's floor stands in the by-direction table's header (markdown and HTML)."""
    bench = LaoBenchTranslation()
    ds = bench.load()
    floor = bench.input_floor(ds)["groups"]["direction"]
    srv.configure(answers={it.public["question"]: it.public["source"] for it in ds})
    run = tmp_path / "run"
    assert cli("run", "laobench-translation", "--model", srv.spec(), "--no-cache", "--no-progress",
               "--out", str(run)).returncode == 0
    md = cli("board", str(run), "--format", "md")
    assert md.returncode == 0, md.stderr
    header = next(x for x in md.stdout.splitlines() if x.startswith("| model | ") and "lo-en" in x)
    for d, f in floor.items():
        assert f"{d} · input unchanged {f['bleu']:.1f}" in header
    page = tmp_path / "board.html"
    assert cli("board", str(run), "--html", str(page)).returncode == 0
    assert f"<th>lo-en · input unchanged {floor['lo-en']['bleu']:.1f}</th>" in page.read_text(encoding="utf-8")
