"""rev33d (issue #33 review): the views of a judged run's cost and of its stop by `--max-cost`.

- `report` (and `run`'s own lines) of a finished judged run showed no cost at all: the whole run's
  `judged.cost` (answers and every judge, each at its own prices) was in results.json only, while the
  answers phase's report showed its $0.0060 alone.
- A judged run stopped by `--max-cost` was reported as "run the same command again to finish it"
  (`report`) and as "unfinished or damaged: run the same command again" (`board`), its stop unsaid.
  Both now name the phase the cap stopped and say to raise it, as the run's own error line does.
Loopback models (tests/conftest.py `srv`)."""

from __future__ import annotations

import json

from conftest import cli
from test_judged33c_budget import _args, _configure


def test_report_of_a_judged_run_shows_the_whole_runs_cost_per_phase(srv, tmp_path):
    _configure(srv)
    p = cli(*_args(srv, tmp_path), "--max-cost", "100", "--price-of", f"{srv.spec('judge2')}=3000,6000")
    assert p.returncode == 0, p.stderr
    out = tmp_path / "out"
    cost = json.loads((out / "results.json").read_text(encoding="utf-8"))["judged"]["cost"]
    assert cost["run"] > 0.5 and set(cost["phases"]) == {"answers", f"judge {srv.spec('judge1')}",
                                                         f"judge {srv.spec('judge2')}"}
    for text in (p.stdout, cli("report", str(out)).stdout):
        flat = " ".join(text.split())
        assert f"cost ${cost['run']:.4f} for the whole judged run" in flat, flat
        for name, phase in cost["phases"].items():
            assert f"{name} ${phase['run']:.4f}" in flat, flat
        assert "--max-cost $100" in flat, flat


def test_a_run_without_prices_prints_no_cost_line(srv, tmp_path):
    _configure(srv)
    args = [a for a in _args(srv, tmp_path) if a not in ("--price-in", "--price-out", "1000")]
    p = cli(*args)
    assert p.returncode == 0, p.stderr
    assert "for the whole judged run" not in p.stdout
    assert "for the whole judged run" not in cli("report", str(tmp_path / "out")).stdout


def test_a_stop_by_the_cap_is_named_in_report_and_board(srv, tmp_path):
    _configure(srv)
    out = tmp_path / "out"
    p = cli(*_args(srv, tmp_path), "--max-cost", "1.5")
    assert p.returncode == 2, p.stderr
    for view in (cli("report", str(out)), cli("board", str(out))):
        assert view.returncode == 2 and "Traceback" not in view.stderr, view.stderr
        (line,) = [x for x in view.stderr.splitlines() if x.startswith("error:")]
        assert "phase was stopped by --max-cost: raise --max-cost" in line, line
        assert "its judge-openai_judge2_" in line and "judge-openai_judge1_http_127.0.0.1_" in line, line


def test_an_unfinished_phase_that_no_cap_stopped_is_not_blamed_on_the_cap(srv, tmp_path):
    _configure(srv)
    out = tmp_path / "out"
    assert cli(*_args(srv, tmp_path), "--max-cost", "1.5").returncode == 2
    for d in out.iterdir():  # no phase stopped: a run killed before it wrote its record
        if (d / "results.json").is_file():
            rec = json.loads((d / "results.json").read_text(encoding="utf-8"))
            if rec.get("status") == "stopped":
                (d / "results.json").unlink()
    (line,) = [x for x in cli("report", str(out)).stderr.splitlines() if x.startswith("error:")]
    assert "--max-cost" not in line and "run the same command again to finish it" in line, line


def test_a_hand_edited_cost_block_is_said_not_a_traceback():
    from glotbench.report.judged import cost_text

    text = cost_text({"run": "lots", "max_cost_usd": None, "phases": {"answers": {"run": 0.006}, "judge j": {"run": None}}})
    assert text == "cost (not a number: 'lots') for the whole judged run (answers $0.0060, judge j (not a number: None))"
    assert cost_text({"run": 1.0}) == "" and cost_text(None) == "" and cost_text([1]) == ""
