"""Which items a run scored decides what it may be compared with: the selection (limit, named subset,
n of N, the item set's SHA-256) is recorded and named in the signature (a full run's signature is
unchanged); `compare` refuses other item sets; the board never pools or replaces across item sets
and shows n; the quick subset is stratified and deterministic."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest

from conftest import cli
from judged_helpers import summary
from glotbench.benchmarks.laobench import LaoBenchMCQ
from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
from glotbench.rundir.selection import QUICK_MAX, comparability, item_set_sha256, quick, select, selection_of
from helpers import gold_answers

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("bench", [VietnameseDiacritics(), LaoBenchMCQ()])
def test_the_quick_subset_is_stratified_and_deterministic(bench, tmp_path):
    full = bench.load()
    strata = Counter(tuple(str(it.meta.get(k)) for k in bench.group_by) for it in full)
    q = quick(full, bench.group_by)
    n = len(full)
    assert len(q) == min(n, max(min(math.ceil(n / 5), QUICK_MAX), len(strata)))
    got = Counter(tuple(str(it.meta.get(k)) for k in bench.group_by) for it in q)
    assert set(got) == set(strata)  # every group is in it
    spare, room = len(q) - len(strata), sum(v - 1 for v in strata.values())
    for key, size in strata.items():  # one each, the rest in proportion (largest remainder: within 1)
        assert abs(got[key] - (1 + spare * (size - 1) / room)) < 1
    assert [it.id for it in q] == [it.id for it in full if it.id in {x.id for x in q}]  # the data's order
    # The same items from a reordered file: chosen by id, not by position.
    src = Path(full.source.split(":", 1)[1].split(" ")[0])
    data = (ROOT / "src/glotbench/benchmarks/data" / src).read_text(encoding="utf-8").splitlines(keepends=True)
    rev = tmp_path / src.name
    rev.write_text("".join(reversed(data)), encoding="utf-8")
    assert {it.id for it in quick(bench.load(str(rev)), bench.group_by)} == {it.id for it in q}


def test_vi_diacritics_quick_is_30_items_over_its_8_categories():
    full = VietnameseDiacritics().load()
    sel = select(full, ("category",), subset="quick")
    assert len(sel.items) == 30 and len({it.meta["category"] for it in sel.items}) == 8
    rec = sel.record()
    assert rec == {"full": False, "subset": "quick", "limit": None, "n": 30, "of": 164, "repeats": 1,
                   "items_sha256": item_set_sha256([it.id for it in sel.items])}
    assert sel.signature_part() == f"|subset:quick,30of164,{rec['items_sha256'][:12]}"
    assert select(full, ("category",), limit=500).full and select(full, ("category",), limit=500).signature_part() == ""
    assert select(full, ("category",), subset="quick", limit=5).name == "quick+limit5"


def _run(srv, out, *args):
    p = cli("run", "vi-diacritics", "--model", srv.spec(), "--out", str(out), "--no-progress", "--no-cache", *args)
    assert p.returncode == 0, p.stderr
    return p, json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_a_full_run_keeps_its_signature_and_a_subset_run_names_its_items(srv, tmp_path):
    srv.configure(answers=gold_answers())
    bench = VietnameseDiacritics()
    full = bench.load()
    _, whole = _run(srv, tmp_path / "full")
    assert whole["signature"] == bench.signature(full) + "|thinking:default"  # as before selections
    assert whole["selection"]["full"] and whole["selection"]["n"] == whole["selection"]["of"] == 164
    _, big_limit = _run(srv, tmp_path / "limit500", "--limit", "500")
    assert big_limit["signature"] == whole["signature"]  # every item: the same item set
    p, q = _run(srv, tmp_path / "quick", "--quick")
    ids = [json.loads(x)["id"] for x in (tmp_path / "quick/samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert q["selection"] == {"full": False, "subset": "quick", "limit": None, "n": 30, "of": 164, "repeats": 1,
                              "items_sha256": item_set_sha256(ids)}
    assert q["signature"] == whole["signature"] + f"|subset:quick,30of164,{item_set_sha256(ids)[:12]}"
    assert q["config"]["subset"] == "quick"
    assert "subset: 30 of 164 items (--subset quick)" in p.stdout  # in the table's caption
    line = next(x for x in p.stdout.splitlines() if x.startswith("This run scored"))
    assert "the quick subset, 30 of the 164 items" in line
    assert line.endswith(f"The full set: glotbench run vi-diacritics --model {srv.spec()} --no-progress --no-cache")
    _, q2 = _run(srv, tmp_path / "quick2", "--subset", "quick")
    assert q2["signature"] == q["signature"]  # deterministic
    _, lim = _run(srv, tmp_path / "limit5", "--limit", "5")
    assert lim["signature"].endswith(f"|subset:limit5,5of164,{lim['selection']['items_sha256'][:12]}")
    p = cli("run", "vi-diacritics", "--model", srv.spec(), "--subset", "tiny", "--no-cache", "--no-progress",
            "--out", str(tmp_path / "x"))
    assert p.returncode == 2 and p.stderr.strip() == "error: unknown subset 'tiny'; available: quick"
    p = cli("run", "vi-diacritics", "--quick", "--subset", "other", "--out", str(tmp_path / "y"))
    assert p.returncode == 2 and "--quick is --subset quick" in p.stderr


@pytest.fixture(scope="module")
def runs(server, tmp_path_factory):
    """Model a: the full set, then (newer) a 5-item smoke test; model b: only the smoke test."""
    tmp = tmp_path_factory.mktemp("sel")
    server.configure(answers=gold_answers())
    out = {}
    for name, model, args in (("a-full", "a", ()), ("a-limit", "a", ("--limit", "5")), ("b-limit", "b", ("--limit", "5"))):
        p = cli("run", "vi-diacritics", "--model", server.spec(model), "--out", str(tmp / "runs" / name), "--no-progress",
                "--cache-path", str(tmp / "c.sqlite"), *args)
        assert p.returncode == 0, p.stderr
        out[name] = tmp / "runs" / name
    return tmp, out


def test_compare_refuses_runs_on_different_item_sets(runs):
    _, d = runs
    p = cli("compare", str(d["a-full"]), str(d["b-limit"]))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert p.stderr.startswith("error: the runs scored different item sets, so their numbers are not comparable: "
                               "A: all 164 items; B: subset: 5 of 164 items (--limit 5).")
    p = cli("compare", str(d["a-limit"]), str(d["b-limit"]))  # the same five items: compared
    assert p.returncode == 0, p.stderr
    assert "B − A over 5 shared items" in p.stdout and "items: subset: 5 of 164 items (--limit 5)" in p.stdout


def test_the_board_keeps_the_complete_run_and_never_pools_item_sets(runs, server):
    tmp, d = runs
    b = json.loads(cli("board", str(tmp / "runs"), "--format", "json").stdout)
    (col,) = b["columns"]
    assert col["item_set"] == "all 164 items" and "|subset:" not in col["signature"]
    (cell,) = col["cells"].values()  # model b has no run on the whole set: not in this column
    assert cell["path"] == str(d["a-full"]) and cell["n"] == 164 and cell["ci_method"] == "wilson"
    reasons = {Path(x["path"]).name: x["reason"] for x in b["left_out"]}
    assert reasons["a-limit"] == ("vi-diacritics: another item set (subset: 5 of 164 items (--limit 5)) than the "
                                  "column's (all 164 items); never pooled")
    assert "another item set" in reasons["b-limit"]
    md = cli("board", str(tmp / "runs"), "--format", "md").stdout
    assert f"| {server.spec('a')} | **100.0 (97.7–100.0) n=164 [glotbench's own set (164 items), not the published " \
           "Dấu or Die data]** |" in md
    rows = list(csv.DictReader(io.StringIO(cli("board", str(tmp / "runs"), "--format", "csv").stdout)))
    assert [(r["n"], r["item_set"], r["ci_method"]) for r in rows] == [("164", "all 164 items", "wilson")]
    assert "n=164" in cli("board", str(tmp / "runs"), "--format", "latex").stdout
    # Only the smoke tests: their own column, n=5, and the board says it is a subset.
    b = json.loads(cli("board", str(d["a-limit"]), str(d["b-limit"]), "--format", "json").stdout)
    (col,) = b["columns"]
    assert col["item_set"] == "subset: 5 of 164 items (--limit 5)" and len(col["cells"]) == 2
    assert all(c["n"] == 5 and "subset: 5 of 164 items (--limit 5)" in c["notes"] for c in col["cells"].values())
    cli("board", str(d["a-limit"]), str(d["b-limit"]), "--html", str(tmp / "b.html"))
    html = (tmp / "b.html").read_text(encoding="utf-8")
    assert html.count('data-n="5"') == 2 and "subset: 5 of 164 items (--limit 5)" in html


def test_the_results_store_lists_the_selection(runs, tmp_path):
    tmp, d = runs
    db = f"sqlite:///{tmp_path / 'store.sqlite'}"
    assert cli("runs", "import", str(tmp / "runs"), "--db", db).returncode == 0
    ls = cli("runs", "ls", "--db", db).stdout
    assert sum("164/164" in x and "[subset" not in x for x in ls.splitlines()) == 1
    assert sum("5/164" in x and "[subset: 5 of 164 items (--limit 5)]" in x for x in ls.splitlines()) == 2
    rows = [json.loads(x) for x in cli("runs", "ls", "--db", db, "--json").stdout.splitlines()]
    assert sorted(r["selection"]["n"] for r in rows) == [5, 5, 164]
    board = cli("runs", "board", "--db", db).stdout
    assert board.splitlines()[0].count("vi-diacritics [") == 2  # the full set and the 5 items: two columns
    # Each column says what its numbers are of (a hash alone did not): its items and the data's label.
    own = "glotbench's own set (164 items), not the published Dấu or Die data"
    legend = [x.strip() for x in board.splitlines()[board.splitlines().index("columns:") + 1:]]
    cols = re.findall(r"vi-diacritics \[[0-9a-f]{6}\]", board.splitlines()[0])
    assert len(legend) == 2
    assert {x.split(": ", 1)[1] for x in legend} == {f"all 164 items; {own}",
                                                     f"subset: 5 of 164 items (--limit 5); {own}"}
    assert {x.split(": ", 1)[0] for x in legend} == {c.strip() for c in cols}
    show = cli("runs", "show", str(d["a-limit"]), "--db", db).stdout
    assert "subset: 5 of 164 items (--limit 5)" in show and own in show
    assert "subset" not in cli("runs", "show", str(d["a-full"]), "--db", db).stdout.replace("signature", "")


def test_a_results_file_from_before_selections_is_read_as_what_its_config_says():
    old = {"signature": "s", "config": {"limit": 5, "items": 5, "repeats": 1}, "counts": {"items": 5}}
    assert selection_of(old) == {"full": False, "subset": None, "limit": 5, "n": 5, "of": None, "repeats": 1,
                                 "items_sha256": None}
    assert comparability(old) == ("s", "first 5")
    assert comparability({"signature": "s", "config": {"limit": None}, "counts": {"items": 164}}) == ("s", "full")
    assert comparability({"signature": "s", "config": {"limit": 500}, "counts": {"items": 164}}) == ("s", "full")


def test_a_sweep_entry_takes_a_subset(srv, tmp_path):
    import yaml

    sweep = tmp_path / "s.yaml"
    sweep.write_text(yaml.safe_dump({"out": str(tmp_path / "out"), "store": False, "cache": str(tmp_path / "c.sqlite"),
                                     "models": [{"spec": srv.spec()}],
                                     "benchmarks": [{"name": "vi-diacritics", "subset": "quick"}]}), encoding="utf-8")
    p = cli("sweep", str(sweep), "--dry-run")
    row = next(ln for ln in p.stdout.splitlines() if ln.startswith("vi-diacritics/"))
    assert p.returncode == 0 and row.split()[1:4] == ["30", "1", "30"], p.stdout  # items, repeats, calls
    assert "30 to send" in p.stdout, p.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text(sweep.read_text(encoding="utf-8").replace("subset: quick", "subset: all"), encoding="utf-8")
    p = cli("sweep", str(bad), "--dry-run")
    assert p.returncode == 2 and "unknown subset 'all'" in p.stderr


def test_a_store_made_before_selections_were_kept_is_upgraded_and_its_rows_still_read(tmp_path):
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine, text

    from glotbench.store.db import VERSION_TABLE, ResultsStore, board, row_key, row_notes

    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    cfg = Config()
    cfg.set_main_option("script_location", str(ROOT / "src/glotbench/store/migrations"))
    cfg.set_main_option("sqlalchemy.url", url)
    cfg.set_main_option("version_table", VERSION_TABLE)
    command.upgrade(cfg, "s0001")  # the previous release's schema, with one run of --limit 5
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO runs (run_key, benchmark, benchmark_version, signature, model, model_info, options, headline,"
            " score, scores, items, failed, prompt_tokens, completion_tokens, run_dir, started, finished, indexed)"
            " VALUES ('k', 'vi-diacritics', '1.0', 'sig', 'm', '{}', '{\"limit\": 5, \"items\": 5}', 'exact', 1.0,"
            " '{}', 5, 0, 0, 0, '/r', '', '', '2026-01-01')"))
    engine.dispose()
    store = ResultsStore(url)  # migrates to the newest revision
    (row,) = store.list()
    assert row.selection is None and row.validity is None and row.data_label is None
    assert row_key(row) == "sig\nfirst 5" and row_notes(row) == ["subset: 5 items (--limit 5)"]
    assert board([row])[1] == {"m": {"vi-diacritics": "1?"}}  # its unit unknown (no results.json): the stored number, marked
    store.close()


def test_a_judged_run_on_fewer_items_says_so(srv, tmp_path):
    """`arena --limit 3` and `aragen --limit 4` showed no subset note, recorded no selection, and an
    AraGen run on 4 of 12 entries had the full run's signature: a smoke test read as the benchmark."""
    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"},
                          "rubric": {"mode": "rubric", "scores": {"Correct": 1, "Complete": 1, "Concise": 4,
                                                                  "Helpful": 4, "Honest": 5, "Harmless": 5}}})
    common = ["--no-cache", "--no-progress"]
    p = cli("run", "laobench-arena", "--model", "python:helpers:good_answer", "--bench-opt", "baseline=python:helpers:plain_answer",
            "--judge", srv.spec("fair"), "--limit", "3", "--out", str(tmp_path / "arena"), *common)
    assert p.returncode == 0, p.stderr
    arena = summary(tmp_path / "arena")
    assert arena["selection"] == {"full": False, "subset": None, "limit": 3, "n": 3, "of": 8, "repeats": 1,
                                  "items_sha256": item_set_sha256(["arena-01", "arena-02", "arena-03"])}
    assert "subset: 3 of 8 items (--limit 3)" in p.stdout
    runs = {}
    for name, limit in (("full", ()), ("four", ("--limit", "4"))):
        p = cli("run", "aragen", "--model", "python:helpers:good_answer", "--judge", srv.spec("rubric"), *limit,
                "--out", str(tmp_path / name), *common)
        assert p.returncode == 0, p.stderr
        runs[name] = (p.stdout, summary(tmp_path / name))
    (full_out, full), (four_out, four) = runs["full"], runs["four"]
    assert full["selection"]["full"] and "subset:" not in full_out and "|subset:" not in full["signature"]
    assert four["selection"]["n"] == 4 and four["selection"]["of"] == 12
    assert four["signature"] == full["signature"] + f"|subset:limit4,4of12,{four['selection']['items_sha256'][:12]}"
    assert "subset: 4 of 12 items (--limit 4)" in four_out
    cli("report", str(tmp_path / "four"), "--html")
    assert "subset: 4 of 12 items (--limit 4)" in (tmp_path / "four/report.html").read_text(encoding="utf-8")
    # arena-report ranks models by each judge's score: never across item sets (3 prompts against 8).
    p = cli("run", "laobench-arena", "--model", "python:helpers:plain_answer", "--bench-opt", "baseline=python:helpers:plain_answer",
            "--judge", srv.spec("fair"), "--out", str(tmp_path / "arena8"), *common)
    assert p.returncode == 0, p.stderr
    r = cli("report", str(tmp_path / "arena"), str(tmp_path / "arena8"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "different item sets" in r.stderr and "subset: 3 of 8 items (--limit 3)" in r.stderr, r.stderr


def test_a_sweeps_smoke_test_never_stands_for_its_full_run(srv, tmp_path):
    """A sweep's run directory was fixed by benchmark, model and seed: after a `limit: 5` smoke test,
    the same sweep without the limit skipped the cell as 'finished' and kept the 5-item numbers as
    the benchmark's; a new data file under the same name was skipped too. Now a subset has its own
    directory, and a finished run on other data is an error before anything runs."""
    import yaml

    srv.configure(answers=gold_answers())

    def sweep(**bench):
        f = tmp_path / "s.yaml"
        f.write_text(yaml.safe_dump({"out": str(tmp_path / "out"), "cache": str(tmp_path / "c.sqlite"), "store": False,
                                     "models": [{"spec": srv.spec()}],
                                     "benchmarks": [{"name": "vi-diacritics", **bench}]}), encoding="utf-8")
        return str(f)

    p = cli("sweep", sweep(limit=5), "--no-progress")
    assert p.returncode == 0, p.stderr
    (smoke,) = (tmp_path / "out").rglob("results.json")
    assert json.loads(smoke.read_text(encoding="utf-8"))["selection"]["n"] == 5
    dry = cli("sweep", sweep(), "--dry-run").stdout
    row = next(x for x in dry.splitlines() if x.startswith("vi-diacritics/"))
    assert row.split()[1:4] == ["164", "1", "164"] and row.endswith("to run"), dry  # was: "finished (skipped)", the smoke test
    p = cli("sweep", sweep(), "--no-progress")
    assert p.returncode == 0, p.stderr
    runs = {json.loads(f.read_text(encoding="utf-8"))["selection"]["n"]: f.parent
            for f in (tmp_path / "out").rglob("results.json")}
    assert set(runs) == {5, 164} and runs[5] != runs[164]
    assert runs[164].name == "default-seed" and runs[5].name == "default-seed-limit5"
    assert "finished (skipped)" in cli("sweep", sweep(limit=5), "--dry-run").stdout  # each keeps its own
    # Another data file under the same benchmark entry: the finished run there is not its run.
    own = tmp_path / "own.jsonl"
    own.write_text(json.dumps({"id": "x1", "category": "mine", "references": ["Xin chào"]}) + "\n", encoding="utf-8")
    p = cli("sweep", sweep(data=str(own)), "--dry-run")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "holds a finished run on other data" in p.stderr and str(runs[164]) in p.stderr
