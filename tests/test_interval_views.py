"""Every view of an interval carries its n (with ‡ clusters where clustered) and the † of an interval
resting on too few units, through the console script against a scripted model on loopback: the run's
table, `report` (terminal and HTML), the board (markdown cells and group tables, LaTeX, JSON, the HTML
page's table, plots and heatmap tooltips), `runs ls`, `runs show`, `runs board`, `compare` and `export`.

Two data sets: Lao Belebele, 6 questions on 2 passages, every answer right (the issue's "Belebele on 2
passages at 100%"), and vi-diacritics --limit 10 answered with the stripped input (exact 0.0 on 10
independent items: Wilson, marked; word accuracy 0.0: Wilson on the items with t at 9 df, unmarked)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from scipy.stats import t as student_t

from conftest import cli
from test_judged_views import rubric_run  # noqa: F401 - a fixture: a task scored by a rubric on loopback

PASSAGES = ["ນະຄອນຫຼວງວຽງຈັນແມ່ນນະຄອນຫຼວງຂອງລາວ ແລະ ຕັ້ງຢູ່ແຄມແມ່ນ້ຳຂອງ.",
            "ພູສີແມ່ນພູທີ່ຢູ່ໃຈກາງເມືອງຫຼວງພະບາງ ແລະ ມີວັດຢູ່ເທິງຍອດພູ."]
QUESTIONS = ["ຂໍ້ໃດຖືກຕ້ອງ?", "ແມ່ນຫຍັງ?", "ຢູ່ໃສ?"]
# t(0.975, 1) on 2 passages at 100%: Wilson's lower bound 2 / (2 + t²)
LOW = 2 / (2 + student_t.ppf(0.975, 1) ** 2)


def _belebele(path):
    rows = [{"link": f"https://example.org/p{p}", "question_number": q + 1, "flores_passage": PASSAGES[p],
             "question": QUESTIONS[q], "mc_answer1": "ວຽງຈັນ", "mc_answer2": "ປາກເຊ", "mc_answer3": "ຫຼວງພະບາງ",
             "mc_answer4": "ສະຫວັນນະເຂດ", "correct_answer_num": "1", "dialect": "lao_Laoo", "ds": "2023-05-03"}
            for p in range(2) for q in range(3)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def runs(server, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("views")
    data = _belebele(tmp / "belebele_lao.jsonl")
    out = {}
    # model a: every answer A (right); model b: A on the first passage, B on the second
    for model, replies in (("a", ["ຄຳຕອບ\u200bແມ່ນ ກ", "ຄຳຕອບ\u200bແມ່ນ ກ"]), ("b", ["ຄຳຕອບ: ກ", "ຄຳຕອບ: ຂ"])):
        server.configure(answers=dict(zip(PASSAGES, replies)))
        d = tmp / "runs" / f"bele-{model}"
        p = cli("run", "belebele", "--data", data, "--bench-opt", "config=lao_Laoo", "--model", server.spec(model),
                "--out", str(d), "--no-progress", "--no-cache")
        assert p.returncode == 0, p.stderr
        out[f"bele-{model}"] = (d, p.stdout)
    server.configure()  # echo: the prompt back, no diacritics restored
    for model in ("a", "b"):
        d = tmp / "runs" / f"vi-{model}"
        p = cli("run", "vi-diacritics", "--limit", "10", "--model", server.spec(model), "--out", str(d),
                "--no-progress", "--no-cache")
        assert p.returncode == 0, p.stderr
        out[f"vi-{model}"] = (d, p.stdout)
    return tmp, out


def _results(d):
    return json.loads((d / "results.json").read_text(encoding="utf-8"))


def test_the_runs_record_the_t_interval_and_the_marks(runs):
    _, out = runs
    acc = _results(out["bele-a"][0])["scores"]["overall"]["accuracy"]
    assert (acc["value"], acc["n"], acc["clusters"], acc["ci_method"]) == (1.0, 6, 2, "wilson_effective")
    assert acc["ci_low"] == pytest.approx(LOW, abs=1e-12) and "too_few_units" not in acc
    vi = _results(out["vi-a"][0])["scores"]["overall"]
    assert vi["sentence_exact"]["too_few_units"] is True and "too_few_units" not in vi["word_accuracy"]
    q2 = student_t.ppf(0.975, 9) ** 2
    assert vi["word_accuracy"]["ci_high"] == pytest.approx(q2 / (10 + q2), abs=1e-12)


def test_the_run_table_and_report(runs):
    _, out = runs
    d, stdout = out["bele-a"]
    for text in (stdout, cli("report", str(d)).stdout):
        assert "100.0 (1.2–100.0)" in text and "6‡2" in text
    assert "0.0 (0.0–27.8)†" in out["vi-a"][1] and "0.0 (0.0–33.9)" in out["vi-a"][1]
    assert "0.0 (0.0–33.9)†" not in out["vi-a"][1]
    assert cli("report", str(d), "--html").returncode == 0
    html = (d / "report.html").read_text(encoding="utf-8")
    assert "n=6‡2" in html and "100.0 (1.2–100.0) n=6‡2" in html  # the headline and the plot's text


def test_the_board_in_every_format(runs):
    tmp, out = runs
    root = str(tmp / "runs")
    md = cli("board", root, "--format", "md").stdout
    assert "100.0 (1.2–100.0) n=6‡2" in md
    # the per-group table of vi-diacritics' headline: interval, † and n in every cell
    group_rows = [x for x in md.split("by category:")[1].splitlines() if x.startswith("| openai:")]
    assert group_rows and all("(0.0–" in x and "† n=" in x for x in group_rows)
    latex = cli("board", root, "--format", "latex").stdout
    assert "n=6‡2" in latex and "† n=10" in latex
    board = json.loads(cli("board", root, "--format", "json").stdout)
    vi = next(c for c in board["columns"] if c["benchmark"] == "vi-diacritics")
    groups = next(iter(vi["groups"].values()))
    assert all(e["too_few_units"] is True and e["n"] for per in groups.values() for e in per.values())
    rows = list(csv.DictReader(io.StringIO(cli("board", root, "--format", "csv").stdout)))
    assert {(r["benchmark"], r["n"], r["clusters"], r["too_few_units"]) for r in rows} == {
        ("belebele · lo", "6", "2", "False"), ("vi-diacritics", "10", "", "True")}
    assert cli("board", root, "--html", str(tmp / "board.html")).returncode == 0
    page = (tmp / "board.html").read_text(encoding="utf-8")
    assert "100.0 (1.2–100.0) n=6‡2" in page  # the CI plot's text
    tips = [t for x in page.split('class="heatmap"')[1].split('title="')[1:] if "95% CI" in (t := x.split('"')[0])]
    assert len(tips) == 2 and all(t == "0.0 (0.0–27.8)† n=10 (95% CI)" for t in tips)


def test_the_results_store_views(runs, tmp_path):
    tmp, out = runs
    db = f"sqlite:///{tmp_path / 'store.sqlite'}"
    assert cli("runs", "import", str(tmp / "runs"), "--db", db).returncode == 0
    ls = cli("runs", "ls", "--db", db).stdout.splitlines()
    bele = [x for x in ls if "belebele" in x]
    assert len(bele) == 2 and all("6‡2" in x for x in bele) and any("(1.2–100.0)" in x for x in bele)
    vi = [x for x in ls if "vi-diacritics" in x]
    assert len(vi) == 2 and all("†" in x and " 10 " in x for x in vi)
    assert "† = too few units" in ls[-1]
    rows = [json.loads(x) for x in cli("runs", "ls", "--db", db, "--json").stdout.splitlines()]
    assert {(r["benchmark"], r["n"], r["clusters"], r["too_few_units"]) for r in rows} == {
        ("belebele", 6, 2, False), ("vi-diacritics", 10, None, True)}
    ident = str(next(r["id"] for r in rows if r["benchmark"] == "belebele" and r["score"] == 1.0))
    show = cli("runs", "show", ident, "--db", db).stdout
    assert "accuracy: 100.0 (1.2–100.0) n=6‡2" in show and "clusters" in show
    vident = str(next(r["id"] for r in rows if r["benchmark"] == "vi-diacritics"))
    show = cli("runs", "show", vident, "--db", db).stdout
    assert "0.0 (0.0–27.8)† n=10" in show and "too few units" in show
    board = cli("runs", "board", "--db", db).stdout
    assert "100.0 (1.2–100.0) n=6‡2" in board and "0.0 (0.0–27.8)† n=10" in board and "too few units" in board


def test_compare_and_export(runs):
    _, out = runs
    p = cli("compare", str(out["bele-a"][0]), str(out["bele-b"][0]))
    assert p.returncode == 0, p.stderr
    assert "† n=6‡2" in p.stdout  # the paired bootstrap over 2 clusters: marked, with its units
    rows = list(csv.DictReader(io.StringIO(cli("export", str(out["vi-a"][0])).stdout)))
    marks = {r["metric"]: r["too_few_units"] for r in rows if not r["group_by"]}
    assert marks["sentence_exact"] == "True" and marks["word_accuracy"] == "False"


def test_judged_scores_follow_the_same_rule():
    """The judge panel's percentile bootstrap over prompts (arena, AraGen's mean of judges, a rubric
    task's score) is marked below 100 prompts, as every other bootstrap; Wilson where it collapsed
    below 30."""
    from glotbench.judges.stats import JudgedMetrics, JudgedStats, judged_metrics

    def final(n, value=lambda i: float(i % 2)):
        ids = [f"p{i}" for i in range(n)]
        stats = JudgedStats.of({"j": {p: [value(i)] for i, p in enumerate(ids)}}, ids)
        return judged_metrics(stats, JudgedMetrics(), resamples=200)["final"]

    assert final(40)["ci_method"] == "bootstrap" and final(40)["too_few_units"] is True
    assert "too_few_units" not in final(120)
    won = final(40, lambda i: 1.0)
    assert won["ci_method"] == "wilson_fallback" and "too_few_units" not in won  # Wilson from 30
    assert final(12, lambda i: 1.0)["too_few_units"] is True


def test_a_rubric_run_prints_its_mark_and_n(rubric_run):  # noqa: F811 - the imported fixture
    out, _ = rubric_run
    text = cli("report", str(out)).stdout
    assert "† n=3" in text and "too few units" in text
    md = cli("board", str(out.parent)).stdout
    assert "† n=3" in md


def test_the_pivot_comparison_is_marked_as_compare_is():
    """`run --pivot`'s native-against-pivot paired CI: † under 100 items (stats.paired_too_few), shown
    on the run page's pivot table."""
    from types import SimpleNamespace as NS

    from glotbench.checks.pivot import paired
    from glotbench.metrics import ItemScore, RatioMetric
    from glotbench.report.checks_html import pivot_section

    def samples(n, right):
        return [NS(id=f"i{i}", meta={"category": "c"}, score=ItemScore({"correct": float(right(i)), "n": 1.0}))
                for i in range(n)]

    acc = RatioMetric("accuracy", "correct", "n")
    bench = NS(group_by=("category",), pooled_overall=True)
    few = paired(bench, [acc], samples(20, lambda i: i % 2), samples(20, lambda i: i % 3 == 0), resamples=200)
    assert few["overall"]["too_few_units"] is True and few["groups"]["category"]["c"]["too_few_units"] is True
    many = paired(bench, [acc], samples(120, lambda i: i % 2), samples(120, lambda i: i % 3 == 0), resamples=200)
    assert "too_few_units" not in many["overall"]
    page = pivot_section({"pivot": {"native_vs_pivot": few, "language": "en", "pivot_model": "m", "answer": "x",
                                    "texts_translated": 1, "texts": 1, "untranslated": {"items": 0}, "phases": {}}})
    assert page.count("†</td>") == 2
