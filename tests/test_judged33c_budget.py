"""Issue #33 (judged33c): `--max-cost` is one budget for the whole judged run. It applied to each phase
on its own (a run with two judges could spend 3 × the cap) and priced the judges at the candidate's
prices. Now each phase is given what the earlier ones left (answers, then each judge), at its own
model's prices where known (`--price-of SPEC=IN,OUT`, a sweep's model entries); a phase the budget
stops stops the run with one error line naming it, its phases kept; the same command with a higher
cap finishes it. Loopback models; prices chosen so that one request costs cents."""

from __future__ import annotations

import json

import pytest

from conftest import cli
from test_tasks_rubric import files, verdict


def _configure(srv):
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]\n": [verdict(1, 5)]})


def _args(srv, tmp_path, *more):
    return ["run", files(tmp_path), "--model", srv.spec("cand"), "--judge", srv.spec("judge1"), "--judge",
            srv.spec("judge2"), "--out", str(tmp_path / "out"), "--no-progress", "--concurrency", "1",
            "--cache-path", str(tmp_path / "c.sqlite"), "--price-in", "1000", "--price-out", "1000", *more]


def _phases(out):
    return {d.name: json.loads((d / "results.json").read_text(encoding="utf-8"))
            for d in sorted(out.iterdir()) if (d / "results.json").is_file()}


def test_one_budget_stops_the_run_in_a_judge_phase_and_a_higher_cap_finishes_it(srv, tmp_path):
    """$1.50: each phase alone fits under it (the answers spend $0.006, a judge about $0.28 with a
    worst case of $1.30 a request), all three do not. Each phase was given the whole cap; now a judge
    phase gets what is left, and the one the budget stops is named."""
    _configure(srv)
    out = tmp_path / "out"
    p = cli(*_args(srv, tmp_path), "--max-cost", "1.5")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    (line,) = [x for x in p.stderr.splitlines() if x.startswith("error:")]
    assert "phase was stopped by --max-cost" in line and "its judge openai:judge" in line, line
    assert "--max-cost $1.5 is one budget for every phase: spent answers $0.0060" in line, line
    assert not (out / "results.json").exists()
    phases = _phases(out)
    # each phase was given the cap less what the earlier phases spent, and all of them spent under it
    given, spent = [], 0.0
    for name in ("answers", *sorted(n for n in phases if n.startswith("judge-"))):
        res = phases[name]
        given.append(res["config"]["max_cost_usd"])
        assert res["config"]["max_cost_usd"] == pytest.approx(1.5 - spent, abs=1e-6), (name, res["config"])
        spent += res["cost"]["spent_usd"]
    assert spent <= 1.5
    assert any(r.get("status") == "stopped" for r in phases.values())
    p = cli(*_args(srv, tmp_path), "--max-cost", "100")
    assert p.returncode == 0, p.stderr
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert res["status"] == "complete" and res["scores"]["overall"]["rubric"]["value"] == 1.0
    whole = res["judged"]["cost"]
    assert whole["max_cost_usd"] == 100 and whole["spent_usd"] <= 100
    assert set(whole["phases"]) == {"answers", f"judge {srv.spec('judge1')}", f"judge {srv.spec('judge2')}"}


def test_the_budget_stops_the_answers_phase_before_any_judge(srv, tmp_path):
    _configure(srv)
    p = cli(*_args(srv, tmp_path), "--max-cost", "0.2")  # an answer's worst case is over $0.2
    assert p.returncode == 2, p.stderr
    (line,) = [x for x in p.stderr.splitlines() if x.startswith("error:")]
    assert "its answers phase was stopped by --max-cost (3 requests not sent)" in line, line
    assert not any(r["model"].startswith("judge") for r in srv.requests())
    p = cli(*_args(srv, tmp_path), "--max-cost", "100")
    assert p.returncode == 0, p.stderr


def test_each_judge_is_priced_at_its_own_prices_where_given(srv, tmp_path):
    _configure(srv)
    p = cli(*_args(srv, tmp_path), "--price-of", f"{srv.spec('judge2')}=3000,6000")
    assert p.returncode == 0, p.stderr
    phases = _phases(tmp_path / "out")
    j1, j2 = (next(r for n, r in phases.items() if n.startswith(f"judge-openai_{j}")) for j in ("judge1", "judge2"))
    assert (j1["cost"]["price_in_per_mtok"], j1["cost"]["price_out_per_mtok"]) == (1000, 1000)
    assert (j2["cost"]["price_in_per_mtok"], j2["cost"]["price_out_per_mtok"]) == (3000, 6000)
    res = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    whole = res["judged"]["cost"]
    assert whole["phases"][f"judge {srv.spec('judge2')}"]["prices"] == "own"
    assert whole["phases"][f"judge {srv.spec('judge1')}"]["prices"].startswith("the run's")
    assert whole["run"] == pytest.approx(sum(r["cost"]["run"] for r in phases.values()))
    assert res["cost"]["run"] == phases["answers"]["cost"]["run"]  # the candidate's own cost: the board's


@pytest.mark.parametrize("value", ["openai:x", "=1,2", "openai:x=1", "openai:x=a,b", "openai:x=-1,2"])
def test_a_bad_price_of_is_one_error_line(srv, tmp_path, value):
    _configure(srv)
    p = cli(*_args(srv, tmp_path), "--price-of", value)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    (line,) = [x for x in p.stderr.splitlines() if x.startswith("error:")]
    assert "--price-of" in line, line


def test_the_dry_run_puts_a_judged_run_against_its_one_cap(srv, tmp_path):
    _configure(srv)
    p = cli(*_args(srv, tmp_path), "--max-cost", "0.5", "--dry-run")
    assert p.returncode == 0, p.stderr
    text = " ".join(p.stdout.split())
    assert "--max-cost $0.5: one budget for the whole judged run (answers, baseline, every judge" in text, text
    assert "these answers take at most $" in text and "more than the cap" in text, text
    assert srv.requests() == []


def test_a_sweep_prices_a_judge_that_is_one_of_its_models(tmp_path):
    """A judge that is one of the sweep's models is priced at that entry's prices; a model that is no
    judge of the cell is not passed on (a plain benchmark's cell has none)."""
    from glotbench.engine.sweep import expand, load_sweep

    task = files(tmp_path)
    (tmp_path / "s.yaml").write_text(
        "out: o\njudges: ['openai:judge@http://127.0.0.1:9/v1']\nmodels:\n"
        "  - {spec: 'openai:cand@http://127.0.0.1:9/v1', price_in: 1, price_out: 2}\n"
        "  - {spec: 'openai:judge@http://127.0.0.1:9/v1', price_in: 5, price_out: 15}\n"
        "  - {spec: 'openai:other@http://127.0.0.1:9/v1', price_in: 7, price_out: 7}\n"
        f"benchmarks:\n  - {{name: '{task}'}}\n  - {{name: vi-diacritics}}\n", encoding="utf-8")
    runs = expand(load_sweep(str(tmp_path / "s.yaml")))
    judged = [r for r in runs if r.model.spec.startswith("openai:cand") and r.options.judges]
    assert [r.options.model_prices for r in judged] == [(("openai:judge@http://127.0.0.1:9/v1", 5.0, 15.0),)]
    assert all(not r.options.model_prices for r in runs if not r.options.judges)


def test_price_of_a_model_the_run_does_not_call_is_one_error_line(srv, tmp_path):
    """A typo in --price-of's spec left the judge priced at the candidate's prices, silently."""
    _configure(srv)
    for value, says in ((f"{srv.spec('judge3')}=1,1", "no judge or baseline of this run"),
                        (f"{srv.spec('cand')}=1,1", "that is the candidate")):
        p = cli(*_args(srv, tmp_path), "--price-of", value)
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        (line,) = [x for x in p.stderr.splitlines() if x.startswith("error:")]
        assert says in line, line
    p = cli("run", "vi-diacritics", "--model", srv.spec("cand"), "--price-of", f"{srv.spec('judge1')}=1,1",
            "--out", str(tmp_path / "plain"), "--no-progress")
    assert p.returncode == 2 and "vi-diacritics is not judged" in p.stderr, p.stderr
    assert srv.requests() == []


def test_a_judge_and_a_baseline_priced_where_the_candidate_is_not(srv, tmp_path):
    """The candidate without prices (a python: model), the judge and the arena's baseline with theirs:
    the candidate's cost stays none (the board's cost of the model), the whole run's is in
    `judged.cost`, and every view reads the run."""
    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}})
    base, out = "python:helpers:plain_answer", tmp_path / "arena"
    p = cli("run", "laobench-arena", "--model", "python:helpers:good_answer", "--bench-opt", f"baseline={base}",
            "--judge", srv.spec("fair"), "--limit", "4", "--price-of", f"{srv.spec('fair')}=1000,2000",
            "--price-of", f"{base}=10,10", "--out", str(out), "--no-progress", "--cache-path", str(tmp_path / "c.sqlite"))
    assert p.returncode == 0, p.stderr
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert res["cost"] is None
    phases = res["judged"]["cost"]["phases"]
    judge = phases[f"judge {srv.spec('fair')}"]
    assert (judge["price_in_per_mtok"], judge["price_out_per_mtok"], judge["prices"]) == (1000, 2000, "own")
    assert judge["run"] > 0 and res["judged"]["cost"]["run"] == pytest.approx(sum(x["run"] for x in phases.values()))
    for cmd in (("report", str(out)), ("report", str(out), "--html", str(tmp_path / "r.html")), ("board", str(out)),
                ("export", str(out), "--format", "csv")):
        p = cli(*cmd)
        assert p.returncode == 0 and "Traceback" not in p.stderr, (cmd, p.stderr)


@pytest.mark.parametrize("prices, says", [([("openai:j", 1)], "triples"), ([("", 1, 2)], "triples"),
                                          ([("openai:j", 1, float("nan"))], "finite"), ([("openai:j", -1, 2)], "finite")])
def test_model_prices_from_python_are_checked(prices, says):
    from glotbench.engine.options import RunOptions
    from glotbench.errors import GlotbenchError

    with pytest.raises(GlotbenchError, match=says):
        RunOptions(model_prices=prices)
    assert RunOptions(model_prices=[["openai:j", 1, 2]]).model_prices == (("openai:j", 1, 2),)
