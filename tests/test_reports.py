"""Reports as users see them: the HTML run report and the board, opened in a real headless Chromium
with the network off; numbers checked against the run files; the board's significance marks and
frontier checked against values computed by hand."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect  # noqa: E402

from conftest import cli
from report_fixtures import (CHROMIUM, NO_CHROMIUM, board_runs, check_numbers, replay_run, vi_items,
                             write_doc_image)
from judged_helpers import summary
from glotbench.report.board import pareto_front
from glotbench.text.vietnamese import word_diff

needs_browser = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=NO_CHROMIUM)


def test_word_diff_marks_wrong_tones_and_other_marks():
    diff = word_diff("Tôi đi hoc ở trương, thêm", "Tôi đi học ở trường")
    assert diff == [("Tôi", "ok"), ("đi", "ok"), ("hoc→học", "tone"), ("ở", "ok"), ("trương→trường", "tone"),
                    ("thêm", "extra")]
    assert word_diff("hoà bình", "hòa bình") == [("hoà", "ok"), ("bình", "ok")]  # tone position is free
    assert word_diff("Duong", "Đường") == [("Duong→Đường", "mark")]
    assert word_diff("một", "một hai") == [("một", "ok"), ("hai", "missing")]


def test_pareto_front_by_hand():
    pts = {"a": (1.0, 0.5), "b": (2.0, 0.9), "c": (3.0, 0.8), "d": (2.0, 0.7), "e": (0.5, 0.5)}
    # c costs more than b and scores less; d ties b on cost and scores less; a ties e on score, costs more.
    assert pareto_front(pts) == ["e", "b"]


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip(NO_CHROMIUM)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu",
                                                              "--disable-background-networking"])
        yield b
        b.close()


class Page:
    """A page opened offline, recording console errors, dialogs and every request it makes."""

    def __init__(self, browser, path: Path, width: int = 1200, height: int = 900):
        self.ctx = browser.new_context(offline=True, viewport={"width": width, "height": height})
        self.page = self.ctx.new_page()
        self.errors, self.dialogs, self.requests = [], [], []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(path.resolve().as_uri())

    def shown(self) -> int:
        return int(self.page.locator("#sample-count").get_attribute("data-shown"))

    def close(self):
        assert self.errors == [] and self.dialogs == []
        assert all(u.startswith(("file:", "data:")) for u in self.requests), self.requests
        self.ctx.close()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return replay_run(tmp_path_factory.mktemp("report"))


def _samples(d: Path) -> list[dict]:
    return [json.loads(x) for x in (d / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


def test_html_report_in_chromium_offline(run_dir, browser, tmp_path):
    r = cli("report", str(run_dir), "--html", str(tmp_path / "report.html"))
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert not re.search(r"(src|href|action)\s*=\s*[\"']?(https?:|//)|url\(|@import", html)  # nothing to fetch
    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    samples = _samples(run_dir)
    pg = Page(browser, tmp_path / "report.html")
    p = pg.page
    # Plots: one CI plot per metric, each with a dot per group row plus overall.
    groups = results["scores"]["groups"]["category"]
    assert p.locator("svg.plot.ci").count() == len(results["metrics"])
    assert p.locator("[data-metric=sentence_exact] circle").count() == 1 + len(groups)
    assert p.locator("[data-metric=sentence_exact] line.err").count() == 3 * (1 + len(groups))
    assert check_numbers(p, run_dir) > 80 + 4 * 9  # the tables, and each plot's value labels
    write_doc_image(p, "report-desktop.png", tmp_path)

    # Filters change the visible samples, each to the count the files give.
    assert pg.shown() == len(samples) == results["counts"]["samples"]
    p.select_option("#f-outcome", "correct")
    assert pg.shown() == sum(s["score"]["exact"] == 1 for s in samples)
    p.select_option("#f-outcome", "")
    p.select_option("#f-failure", "missing")
    assert pg.shown() == results["counts"]["failures"]["missing"] > 0
    p.select_option("#f-failure", "")
    cat = sorted(groups)[1]
    p.select_option("select[data-group=category]", cat)
    assert pg.shown() == sum(s["meta"]["category"] == cat for s in samples)
    p.select_option("select[data-group=category]", "")
    outcome = defaultdict(set)
    for s in samples:
        outcome[s["id"]].add(s["score"]["exact"])
    flipped = {i for i, v in outcome.items() if len(v) > 1}
    p.select_option("#f-flag", "flipped")
    assert pg.shown() == sum(s["id"] in flipped for s in samples) > 0
    p.select_option("#f-flag", "")
    p.fill("#f-search", "onerror")
    expect(p.locator("#sample-count")).to_have_attribute(
        "data-shown", str(sum("onerror" in (s["output"] or "") for s in samples)))
    p.locator("details.sample").first.locator("summary").click()
    expect(p.locator("details.sample").first.locator(".blk").first).to_be_visible()
    assert "<script>alert(2)</script>" in p.locator("details.sample").first.inner_text()  # shown as text
    # A wrong tone is marked in the word diff.
    refs = {it.id: it.gold["references"] for it in vi_items()}
    tone = max((s for s in samples if s["answer"] and s["score"]["exact"] == 0 and not s["flags"]
                and len(refs[s["id"]]) == 1), key=lambda s: sum(k == "tone" for _, k in word_diff(s["answer"], refs[s["id"]][0]))
               - sum(k != "ok" for _, k in word_diff(s["answer"], refs[s["id"]][0])))
    assert any(k == "tone" for _, k in word_diff(tone["answer"], refs[tone["id"]][0]))
    p.fill("#f-search", tone["id"])
    card = p.locator(f"details.sample[data-id='{tone['id']}'][data-repeat='{tone['repeat']}']")
    expect(card).to_be_visible()
    assert pg.shown() < len(samples)
    card.locator("summary").click()
    expect(card.locator(".w-tone").first).to_be_visible()
    assert card.locator(".w-tone").count() >= 1 and "→" in card.locator(".w-tone").first.inner_text()
    write_doc_image(card, "report-sample-diff.png", tmp_path)
    # Flip rate per category: the page's counts, recomputed here from samples.jsonl.
    cells = p.eval_on_selector_all(".fliptable td[data-flipped]", "els => els.map(e => [+e.dataset.flipped, +e.dataset.items])")
    by_cat = defaultdict(set)
    for s in samples:
        by_cat[s["meta"]["category"]].add(s["id"])
    assert cells == [(len(ids & flipped), len(ids)) for _, ids in sorted(by_cat.items())] or \
        cells == [[len(ids & flipped), len(ids)] for _, ids in sorted(by_cat.items())]
    assert sum(a for a, _ in cells) / sum(b for _, b in cells) == pytest.approx(results["scores"]["stability"]["flip_rate"])
    pg.close()

    phone = Page(browser, tmp_path / "report.html", width=390, height=844)
    assert phone.page.locator("svg.plot").first.bounding_box()["width"] <= 390
    write_doc_image(phone.page, "report-phone.png", tmp_path)
    phone.close()


def test_terminal_report_is_unchanged(run_dir):
    r = cli("report", str(run_dir))
    assert r.returncode == 0 and "signature: glotbench:vi-diacritics" in r.stdout and "<html" not in r.stdout
    assert not (run_dir / "report.html").exists()


@pytest.mark.parametrize("args, fragment", [
    (("report", "/no/such/run", "--html"), "not a directory"),
    (("report", "{run}", "out.html"), "needs --html"),
    (("report", "{run}", "--html", "/no/such/dir/r.html"), "cannot write the report"),
    (("board", "{run}", "--html", "/no/such/dir/b.html"), "cannot write the board"),
    (("board", "{empty}"), "no finished run"),
    (("board", "{run}", "--format", "xml"), "--format must be"),
    (("board", "{run}", "--test", "t"), "--test must be"),
])
def test_bad_input_is_one_error_line(run_dir, tmp_path, args, fragment):
    (tmp_path / "empty").mkdir()
    r = cli(*(a.format(run=run_dir, empty=tmp_path / "empty") for a in args))
    assert r.returncode == 2 and r.stderr.startswith("error:") and fragment in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


# -- the board: three vi-diacritics models on the test server ---------------------------------------
WRONG = {"big": 0, "mid": 3, "small": 12}
PRICES = {"big": 1.0, "mid": 5.0, "small": 0.1}


@pytest.fixture(scope="module")
def board_dirs(server, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("board")
    runs = board_runs(server, tmp / "runs", WRONG, PRICES)
    # A run on other data (another signature) and an unfinished run: both must be left out, with why.
    data = tmp / "subset.jsonl"
    src = Path(__file__).resolve().parents[1] / "src/glotbench/benchmarks/data/vi_diacritics.jsonl"
    data.write_text("".join(src.read_text(encoding="utf-8").splitlines(keepends=True)[:20]), encoding="utf-8")
    server.configure()
    r = cli("run", "vi-diacritics", "--model", server.spec("other"), "--data", str(data), "--out",
            str(tmp / "runs/other"), "--no-cache", "--no-progress")
    assert r.returncode == 0, r.stderr
    (tmp / "runs/unfinished").mkdir()
    shutil.copy(runs["big"] / "run.json", tmp / "runs/unfinished/run.json")
    return tmp, runs


def test_board_marks_and_frontier_match_hand_computation(board_dirs, browser):
    tmp, runs = board_dirs
    r = cli("board", str(tmp / "runs"), "--format", "json", "--html", str(tmp / "board.html"))
    assert r.returncode == 0, r.stderr
    b = json.loads(r.stdout)
    (col,) = b["columns"]
    spec = lambda m: next(s for s in col["cells"] if s.startswith(f"openai:{m}@"))  # noqa: E731
    n = len(vi_items())
    for m, k in WRONG.items():
        assert col["cells"][spec(m)]["value"] == pytest.approx((n - k) / n)
    assert col["cells"][spec("big")]["best"]
    # Approximate randomisation with k items right in one run and wrong in the other (all others equal):
    # a swap pattern reaches |d| only when all k move together, so the exact p is 2 / 2^k.
    mid, small = col["cells"][spec("mid")], col["cells"][spec("small")]
    assert mid["shared_items"] == small["shared_items"] == n
    assert mid["p_randomization"] == pytest.approx(2 / 2 ** 3, abs=0.05) and mid["tied_with_best"]
    assert small["p_randomization"] < 0.01 and not small["tied_with_best"]  # exact: 2 / 2^12 = 0.0005
    # Frontier: cost = tokens x price, from each run's own samples; mid costs most and scores below big.
    fr = col["frontier"]
    assert fr["x"] == "cost (USD)"
    for m, d in runs.items():
        toks = sum(s["tokens"]["prompt"] + s["tokens"]["completion"] for s in _samples(d))
        assert fr["points"][spec(m)]["x"] == pytest.approx(toks * PRICES[m] / 1e6)
    assert fr["front"] == [spec("small"), spec("big")]
    reasons = {Path(x["path"]).name: x["reason"] for x in b["left_out"]}
    assert "signature differs" in reasons["other"] and "data" in reasons["other"]
    assert "unfinished" in reasons["unfinished"]

    md = cli("board", str(tmp / "runs"), "--format", "md").stdout
    assert f"| {spec('mid')} | **{100 * (n - 3) / n:.1f}" in md and f"| {spec('small')} | {100 * (n - 12) / n:.1f}" in md
    rows = list(csv.DictReader(io.StringIO(cli("board", str(tmp / "runs"), "--format", "csv").stdout)))
    assert {r["model"]: r["not_significantly_different_from_best"] for r in rows} == {
        spec("big"): "True", spec("mid"): "True", spec("small"): "False"}
    tex = cli("board", str(tmp / "runs"), "--format", "latex").stdout
    assert "\\toprule" in tex and "\\bottomrule" in tex and f"\\textbf{{{100 * (n - 3) / n:.1f}" in tex
    assert "openai:small@http://127.0.0.1" in tex  # escaped as needed, still readable

    pg = Page(browser, tmp / "board.html")
    p = pg.page
    marks = dict(p.eval_on_selector_all("#board td[data-model]", "els => els.map(e => [e.dataset.model, e.dataset.mark])"))
    assert marks == {spec("big"): "best", spec("mid"): "tied", spec("small"): "worse"}
    assert p.locator("svg.scatter circle").count() == 3 and p.locator("svg.scatter circle.front-dot").count() == 2
    assert p.locator("svg.scatter polyline.front").count() == 1
    assert [e.get_attribute("data-model") for e in p.locator(".front-model").all()] == [spec("small"), spec("big")]
    assert p.locator(".front-model").all_inner_texts() == ["openai:small", "openai:big"]
    assert p.locator("table.heatmap tr").count() == 1 + 3
    assert check_numbers(p) >= 9 + 3 * 8  # the table and the heatmap (8 categories)
    assert "signature differs" in p.locator("#left-out-list").inner_text()
    write_doc_image(p, "board-desktop.png", tmp, full_page=True)
    pg.close()


def test_judged_reports_show_judges_and_verdicts(server, browser, tmp_path):
    server.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}, "biased": {"mode": "always_A"}})
    out = tmp_path / "arena"
    r = cli("run", "laobench-arena", "--model", "python:helpers:good_answer", "--bench-opt", "baseline=python:helpers:plain_answer",
            "--judge", server.spec("fair"), "--judge", server.spec("biased"), "--limit", "4", "--out", str(out),
            "--cache-path", str(tmp_path / "c.sqlite"), "--no-progress",
            env={"PYTHONPATH": os.pathsep.join([os.environ.get("PYTHONPATH", ""), str(Path(__file__).parent)])})
    assert r.returncode == 0, r.stderr
    r = cli("report", str(out), "--html")
    assert r.returncode == 0, r.stderr
    pg = Page(browser, out / "report.html")
    p = pg.page
    scores = summary(out)["scores"]["judges"]
    assert p.locator("svg.plot.ci circle").count() == 2
    spread = float(p.locator("#judge-spread").get_attribute("data-raw"))
    assert spread == pytest.approx(100 * (max(e["value"] for e in scores.values()) - min(e["value"] for e in scores.values())))
    assert check_numbers(p, out) >= 6
    assert pg.shown() == 4
    p.select_option("#f-flag", "inconsistent: openai:biased")  # always "A": flips with the order
    assert pg.shown() == 4
    card = p.locator("details.sample").first
    card.locator("summary").click()
    expect(card.locator(".blk").first).to_be_visible()
    text = card.inner_text()
    assert "candidate answer" in text and "baseline answer" in text and "order 1 (candidate is B): verdict A" in text
    write_doc_image(p, "report-arena.png", tmp_path, full_page=True)
    pg.close()


def test_aragen_report_shows_each_judge_and_verdict(server, browser, tmp_path):
    all5 = {"Correct": 1, "Complete": 1, "Concise": 5, "Helpful": 5, "Honest": 5, "Harmless": 5}
    mid = {**all5, "Concise": 3, "Helpful": 3, "Honest": 3, "Harmless": 3}
    server.configure(judges={"fair": {"mode": "rubric", "scores": all5}, "mid": {"mode": "rubric", "scores": mid}})
    out = tmp_path / "aragen"
    r = cli("run", "aragen", "--model", "python:helpers:good_answer", "--judge", server.spec("fair"), "--judge",
            server.spec("mid"), "--out", str(out), "--cache-path", str(tmp_path / "c.sqlite"), "--no-progress",
            env={"PYTHONPATH": os.pathsep.join([os.environ.get("PYTHONPATH", ""), str(Path(__file__).parent)])})
    assert r.returncode == 0, r.stderr
    assert cli("report", str(out), "--html", str(tmp_path / "aragen.html")).returncode == 0
    res = summary(out)
    pg = Page(browser, tmp_path / "aragen.html")
    p = pg.page
    assert check_numbers(p, out) >= 2 * 10
    spread = float(p.locator("#judge-spread").get_attribute("data-raw"))
    per = [j["scores"]["overall"]["3c3h"]["value"] for j in res["per_judge"].values()]
    assert spread == pytest.approx(100 * (max(per) - min(per)))
    assert pg.shown() == res["entries"]
    p.select_option("select[data-group=task]", sorted({x["meta"]["task"] for x in _samples(next(out.glob("judge-*")))})[0])
    assert 0 < pg.shown() < res["entries"]
    card = p.locator("details.sample").first
    card.locator("summary").click()
    expect(card.locator(".blk").first).to_be_visible()
    text = card.inner_text()  # both judges' verdicts next to the answer
    assert text.count("verdict: ") == 2 and "judge openai:fair" in text and "judge openai:mid" in text
    assert "Correct" in text and "3C3H: " in text
    p.evaluate("window.scrollTo(0, 0)")
    write_doc_image(p, "report-aragen.png", tmp_path)
    pg.close()


def test_report_of_a_folder_is_its_newest_run(run_dir, tmp_path):
    """The README's quick start: `glotbench report runs/vi-diacritics --html` reports the newest run."""
    for name, age in (("older", 100), ("newer", 0)):
        shutil.copytree(run_dir, tmp_path / "runs" / name)
        for f in (tmp_path / "runs" / name).iterdir():
            os.utime(f, (f.stat().st_atime, f.stat().st_mtime - age))
    (tmp_path / "runs" / "unfinished").mkdir()
    r = cli("report", str(tmp_path / "runs"), "--html")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "runs/newer/report.html").is_file() and not (tmp_path / "runs/older/report.html").exists()
    assert "exact:" in (tmp_path / "runs/newer/report.html").read_text(encoding="utf-8")


def test_frontier_axis_falls_back_to_tokens_then_time(tmp_path):
    from glotbench.report.board import Run, _x_axis

    def run(model, cost, tokens, secs):
        return Run(tmp_path, {"model": {"spec": model}, "cost": cost and {"run": cost},
                              "tokens": {"prompt": tokens, "completion": tokens}, "timing": {"request_phase_s": secs}})

    priced = [run("a", 0.5, 10, 1.0), run("b", 0.25, 20, 2.0)]
    assert _x_axis(priced) == ("cost (USD)", {"a": 0.5, "b": 0.25})
    judged = [priced[0], Run(tmp_path, {**priced[1].results, "judged": {"kind": "rubric", "judges": ["j"]}})]
    # a judged run's `cost` is its answers': the axis says so (its judges' cost is results.json judged.cost)
    assert _x_axis(judged) == ("cost (USD; a judged run's answers only)", {"a": 0.5, "b": 0.25})
    unpriced = [run("a", 0.5, 10, 1.0), run("b", None, 20, 2.0)]  # one run without a price: tokens
    assert _x_axis(unpriced) == ("tokens (prompt + completion)", {"a": 20.0, "b": 40.0})
    untokened = [run("a", None, 0, 1.0), run("b", None, 20, 2.0)]  # replay files count no tokens: time
    assert _x_axis(untokened) == ("request time (s)", {"a": 1.0, "b": 2.0})
    assert _x_axis([run("a", None, 0, None), run("b", None, 0, 2.0)]) is None


def test_latency_and_cost_shown_are_the_runs(board_dirs, browser):
    import statistics

    _, runs = board_dirs
    d = runs["mid"]
    assert cli("report", str(d), "--html").returncode == 0
    pg = Page(browser, d / "report.html")
    shown = dict(pg.page.eval_on_selector_all("[data-latency]", "els => els.map(e => [e.dataset.latency, e.textContent])"))
    lat = sorted(s["latency_s"] for s in _samples(d) if not s["cached"])
    q = statistics.quantiles(lat, n=100, method="inclusive")
    assert shown == {"p50": f"{q[49]:.2f}", "p90": f"{q[89]:.2f}", "p99": f"{q[98]:.2f}", "max": f"{lat[-1]:.2f}"}
    cost = pg.page.locator("[data-src='results.json#/cost/run']").inner_text()
    toks = sum(s["tokens"]["prompt"] + s["tokens"]["completion"] for s in _samples(d))
    assert cost == f"{toks * PRICES['mid'] / 1e6:.4f}"
    assert check_numbers(pg.page, d) > 50
    pg.close()


def test_damaged_run_files_are_one_error_line(run_dir, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(run_dir, bad)
    lines = (bad / "samples.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (bad / "samples.jsonl").write_text("".join(lines[:2]) + '{"id": "x", "score": \n' + "".join(lines[3:]), encoding="utf-8")
    r = cli("report", str(bad), "--html")
    assert r.returncode == 2 and "samples.jsonl:3: not valid JSON" in r.stderr and "Traceback" not in r.stderr
    (bad / "results.json").write_text('{"format": 1}', encoding="utf-8")
    for args in (("report", str(bad), "--html"), ("board", str(bad))):
        r = cli(*args)
        assert r.returncode == 2 and r.stderr.startswith("error:") and "Traceback" not in r.stderr, r.stderr


def test_the_sample_card_shows_the_prompt_sent(run_dir, browser, tmp_path):
    """Issue 21: the card shows the rendered prompt, joined in the page from the run's template and
    the sample's fill: a chat run's messages, and a base model's plain text with its few-shot part."""
    from concurrent.futures import ThreadPoolExecutor

    from test_prompts import BaseModel

    from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
    from glotbench.engine.evaluate import RunOptions, evaluate

    bench = VietnameseDiacritics()
    items = {it.id: it for it in bench.load()}
    with ThreadPoolExecutor(1) as pool:  # evaluate() runs its own event loop: not Playwright's thread
        pool.submit(evaluate, bench, BaseModel(), RunOptions(limit=5, progress=False, use_cache=False,
                                                             out=str(tmp_path / "base"))).result()
    for d, form in ((run_dir, "chat"), (tmp_path / "base", "text")):
        r = cli("report", str(d), "--html", str(tmp_path / f"{form}.html"))
        assert r.returncode == 0, r.stderr
        pg = Page(browser, tmp_path / f"{form}.html")
        card = pg.page.locator("details.sample").nth(2)
        card.locator("summary").click()
        block = card.locator(".blk").first
        expect(block).to_be_visible()
        assert block.locator("b").inner_text() == f"prompt ({form} form)"
        prompt = bench.render(items[card.get_attribute("data-id")].to_public())
        want = prompt.text if form == "text" else "[user]\n" + prompt.messages[-1]["content"]
        assert block.locator("pre.prompt").inner_text() == want
        if form == "text":
            assert "Output: {" in want and want.endswith("Output:")  # the few-shot part is there
            write_doc_image(card, "report-sample-prompt.png", tmp_path)
        pg.close()
