"""A run whose model calls mostly failed is invalid: it says so in results.json, the table, the report
and the board, exits 3 after writing everything, and the same command finishes it once the endpoint
works (successful replies from the call cache, never asked twice). Through the console script,
against real servers on loopback: one that 404s everything (a base URL without /v1), one killed
mid-run, and the test server's fault injection."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import conftest
from conftest import cli, start_server
from helpers import gold_answers
from judged_helpers import summary

INVALID = 3


def console_script() -> str:
    exe = shutil.which("glotbench", path=str(Path(sys.executable).parent)) or shutil.which("glotbench")
    if exe is None:
        pytest.skip("the glotbench console script is not installed (pip install -e .)")
    return exe


def script(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    """`glotbench ARGS` through the installed console script (PYTHONPATH reaches it, as the tests' `cli`)."""
    return subprocess.run([console_script(), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(
                              [str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])})


def results(out: Path) -> dict:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_a_base_url_without_v1_is_an_invalid_run(srv, tmp_path):
    """Every request 404s: before, status complete, headline 0.0, exit 0."""
    out = tmp_path / "r"
    p = script("run", "vi-diacritics", "--model", f"openai:m@{srv.base}", "--limit", "12", "--out", str(out),
               "--cache-path", str(tmp_path / "c.sqlite"), "--no-progress")
    assert p.returncode == INVALID, p.stderr
    assert p.stderr.splitlines()[-1].startswith(
        "error: invalid: 12 of 12 items failed (client_error; HTTP 404), above --max-failure-rate 0.05")
    assert "Traceback" not in p.stderr
    v = results(out)["validity"]  # written first: nothing is lost
    assert v == {"valid": False, "failed": 12, "of": 12, "unit": "items", "failure_share": 1.0,
                 "kinds": {"client_error": 12}, "http_status": {"404": 12}, "max_failure_rate": 0.05,
                 "counts": "model calls that returned no reply after the retries, and samples whose scoring raised"}
    assert "invalid: 12 of 12 items failed (client_error; HTTP 404)" in p.stdout  # the table's caption
    assert results(out)["status"] == "complete" and (out / "samples.jsonl").read_text().count("\n") == 12
    # The report (table and page) and the board say it too; reading an invalid run is no error.
    again = cli("report", str(out))
    assert again.returncode == 0 and "invalid: 12 of 12 items failed" in again.stdout
    assert cli("report", str(out), "--html").returncode == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    assert '<p class="warn" data-note="0">invalid: 12 of 12 items failed (client_error; HTTP 404)</p>' in page
    board = cli("board", str(out), "--format", "json")
    cell = json.loads(board.stdout)["columns"][0]["cells"][f"openai:m@{srv.base}"]
    assert cell["valid"] is False and not cell["best"] and cell["notes"][0].startswith("invalid: 12 of 12")
    assert "invalid: 12 of 12 items failed" in cli("board", str(out), "--format", "md").stdout
    # The results store (glotbench run indexed it): `runs show` said nothing of it.
    show = cli("runs", "show", str(out))
    assert show.returncode == 0 and "invalid: 12 of 12 items failed (client_error; HTTP 404)" in show.stdout


def test_model_output_failures_never_make_a_run_invalid(srv, tmp_path):
    """Replies with no JSON at all are the model's failures: scored 0, counted, and the run is valid."""
    srv.configure(answers={"Text": "I cannot do that."})
    out = tmp_path / "r"
    p = script("run", "vi-diacritics", "--model", srv.spec(), "--limit", "10", "--out", str(out), "--no-cache",
               "--no-progress")
    assert p.returncode == 0, p.stderr
    res = results(out)
    assert res["counts"]["failures"] == {"format": 10}
    assert res["validity"]["valid"] is True and res["validity"]["failed"] == 0 and "invalid" not in p.stdout


def test_the_threshold_is_an_option_and_checked(srv, tmp_path):
    # 2 of 10 calls fail (a 400 for two prompts): 20% is above 0.05, at or below 0.2.
    items = list(gold_answers(10))
    srv.configure(answers=gold_answers(10), faults=[{"match": items[0][-30:], "status": 400, "times": 99},
                                                    {"match": items[1][-30:], "status": 400, "times": 99}])
    args = ["run", "vi-diacritics", "--model", srv.spec(), "--limit", "10", "--no-cache", "--no-progress"]
    p = script(*args, "--out", str(tmp_path / "a"))
    assert p.returncode == INVALID and results(tmp_path / "a")["validity"]["failure_share"] == 0.2
    p = script(*args, "--out", str(tmp_path / "b"), "--max-failure-rate", "0.2")
    assert p.returncode == 0, p.stderr
    v = results(tmp_path / "b")["validity"]
    assert v["valid"] is True and v["failed"] == 2 and v["max_failure_rate"] == 0.2
    for bad in ("1.5", "-0.1", "nan"):
        p = script(*args, "--out", str(tmp_path / "c"), "--max-failure-rate", bad)
        assert p.returncode == 2 and p.stderr.startswith("error:") and "--max-failure-rate" in p.stderr, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1


def _wait_for_requests(server: conftest.TestServer, n: int, timeout: float = 30.0) -> None:
    t0 = time.time()
    while time.time() - t0 < timeout:
        with urllib.request.urlopen(server.base + "/_stats", timeout=5) as r:
            if json.loads(r.read())["requests"] >= n:
                return
        time.sleep(0.02)
    raise AssertionError(f"the server did not get {n} requests")


def test_an_endpoint_that_dies_mid_run_gives_an_invalid_run_the_same_command_finishes(tmp_path):
    server = start_server(latency=0.25)
    port = server.port
    answers = gold_answers(40)
    out, cache = tmp_path / "r", tmp_path / "calls.sqlite"
    args = [console_script(), "run", "vi-diacritics", "--model", server.spec(), "--limit", "40", "--concurrency", "2",
            "--max-retries", "0", "--out", str(out), "--cache-path", str(cache), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    revived = None
    try:
        server.configure(latency=0.25, answers=answers)  # 40 items, 2 at a time: 5 s
        run = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        _wait_for_requests(server, 6)
        server.proc.kill()  # the endpoint dies mid-run
        server.proc.wait(10)
        stdout, stderr = run.communicate(timeout=120)
        assert run.returncode == INVALID, stderr
        first = results(out)
        v = first["validity"]
        assert not v["valid"] and v["kinds"] == {"connection": v["failed"]} and 2 < v["failed"] < 40
        assert f"invalid: {v['failed']} of 40 items failed (connection)" in stdout
        assert stderr.splitlines()[-1].startswith(f"error: invalid: {v['failed']} of 40 items failed (connection)")
        rows = [json.loads(x) for x in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
        failed = {r["input"]["text"] for r in rows if r["failure"] == "connection"}
        assert len(failed) == v["failed"] and len(rows) == 40

        # The endpoint is back (same address): the same command finishes the run in the same --out.
        revived = subprocess.Popen([sys.executable, "-m", "glotbench.testing.server", "--port", str(port)],
                                   stdout=subprocess.PIPE, text=True)
        assert revived.stdout.readline().startswith("PORT ")
        again = conftest.TestServer(revived, port)
        again.configure(answers=answers)
        p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
        assert p.returncode == 0, p.stderr
        res = results(out)
        assert res["validity"]["valid"] and res["validity"]["failed"] == 0
        assert res["scores"]["overall"]["sentence_exact"]["value"] == 1.0
        # Only the failed items were asked again: no successful call is repeated.
        asked = [r["messages"][-1]["content"] for r in again.requests()]
        assert len(asked) == len(failed) == res["counts"]["model_calls"]
        assert {a.rsplit("Text: ", 1)[-1] for a in asked} == failed
        assert res["counts"]["cache_hits"] == 40 - len(failed)
        assert "invalid" not in p.stdout
    finally:
        for proc in (server.proc, revived):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)


def test_a_valid_finished_run_is_still_never_overwritten(srv, tmp_path):
    srv.configure(answers=gold_answers(3))
    args = ["run", "vi-diacritics", "--model", srv.spec(), "--limit", "3", "--out", str(tmp_path / "r"), "--no-progress",
            "--no-cache"]
    assert script(*args).returncode == 0
    p = script(*args)
    assert p.returncode == 2 and "already holds a finished run" in p.stderr


def test_a_sweep_reports_invalid_runs_exits_3_and_finishes_them_when_run_again(srv, tmp_path):
    """Fault injection: every prompt gets one 500; with no retries the first sweep's run is invalid."""
    import yaml

    srv.configure(answers=gold_answers(6), faults=[{"match": "*", "status": 500, "times": 1}])
    sweep = tmp_path / "s.yaml"
    sweep.write_text(yaml.safe_dump({
        "out": str(tmp_path / "out"), "cache": str(tmp_path / "c.sqlite"), "store": False,
        "models": [{"spec": srv.spec("a"), "max_retries": 0}],
        "benchmarks": [{"name": "vi-diacritics", "limit": 6}]}), encoding="utf-8")
    p = script("sweep", str(sweep), "--no-progress")
    assert p.returncode == INVALID, p.stderr
    assert "invalid: 6 of 6 items failed (server_error; HTTP 500)" in p.stdout
    assert "0 runs finished, 0 failed, 1 invalid" in p.stdout and "run the same sweep again" in p.stderr
    p = script("sweep", str(sweep), "--no-progress")  # the faults have fired: the endpoint works now
    assert p.returncode == 0, p.stderr
    assert "1 runs finished, 0 failed;" in p.stdout
    run_dir = next((tmp_path / "out").rglob("results.json")).parent
    assert results(run_dir)["validity"]["valid"] and results(run_dir)["scores"]["overall"]["sentence_exact"]["value"] == 1.0
    p = script("sweep", str(sweep), "--no-progress", "--max-failure-rate", "0")  # finished and valid: skipped
    assert p.returncode == 0 and "skipped" in p.stdout


def test_a_judged_run_with_failing_judge_calls_is_invalid_and_the_same_command_runs_it_again(srv, tmp_path):
    """Arena: the judge's calls fail (503) for two of the three prompts, in both orders: 4 of 6."""
    judges = {"fair": {"mode": "prefer", "prefer": "GOOD"}}
    srv.configure(judges=judges, faults=[{"match": "ຫຼວງພະບາງ", "status": 503, "times": 99},
                                         {"match": "ລາບໄກ່", "status": 503, "times": 99}])
    out = tmp_path / "arena"
    args = ["run", "laobench-arena", "--model", "python:helpers:good_answer", "--bench-opt", "baseline=python:helpers:plain_answer",
            "--judge", srv.spec("fair"), "--limit", "3", "--out", str(out), "--no-progress",
            "--cache-path", str(tmp_path / "c.sqlite"), "--max-retries", "0"]
    p = script(*args)
    assert p.returncode == INVALID, p.stderr
    arena = summary(out)
    judge = arena["validity"]["phases"][f"judge {srv.spec('fair')}"]
    assert not arena["validity"]["valid"] and judge["failed"] == 4 and judge["of"] == 6
    assert arena["validity"]["phases"]["candidate answers"]["valid"]
    line = f"invalid: judge {srv.spec('fair')}: 4 of 6 items failed (server_error; HTTP 503)"
    assert line in p.stdout and p.stderr.startswith(f"error: {line}")
    assert arena["data_label"]["label"] == "sample data (8 items written for glotbench, not the published benchmark)"
    assert arena["data_label"]["label"] in p.stdout
    lenient = [*args[:args.index("--out") + 1], str(tmp_path / "lenient"), *args[args.index("--out") + 2:]]
    p = script(*lenient, "--max-failure-rate", "0.7")  # 4 of 6 is within 70%
    assert p.returncode == 0, p.stderr
    assert summary(tmp_path / "lenient")["validity"]["valid"]
    srv.configure(judges=judges)  # the judge's endpoint works again
    p = script(*args)
    assert p.returncode == 0, p.stderr
    assert summary(out)["validity"]["valid"]
    (aside,) = tmp_path.glob("arena.invalid-*")  # the invalid run is kept beside it, not deleted
    assert not summary(aside)["validity"]["valid"]


def test_an_invalid_run_is_never_on_the_boards_frontier(srv, tmp_path):
    """The score-cost front is of valid runs: an invalid run (its calls failed, so it spent almost
    nothing) was the front's only point, the cheapest 'efficient' model."""
    srv.configure(answers=gold_answers(6))
    for name, model, code in (("a", srv.spec("a"), 0), ("b", srv.spec("b"), 0),
                              ("broken", "python:helpers:broken_model", INVALID)):
        p = cli("run", "vi-diacritics", "--model", model, "--limit", "6", "--no-cache", "--no-progress",
                "--out", str(tmp_path / "runs" / name))
        assert p.returncode == code, p.stderr
        if name == "a":
            srv.configure()  # b: echoes, scores lower than a
        if name == "broken":  # a python: model raised: the fix named is its code, not an endpoint
            assert "fix the model's code (it raised an exception" in p.stderr and "endpoint" not in p.stderr
    board = json.loads(cli("board", str(tmp_path / "runs"), "--format", "json").stdout)
    (col,) = board["columns"]
    assert col["cells"]["python:helpers:broken_model"]["valid"] is False
    front = col["frontier"]
    assert front is not None and set(front["points"]) == {srv.spec("a"), srv.spec("b")}, front
    assert "python:helpers:broken_model" not in front["front"]
    assert front["x"] == "tokens (prompt + completion)"  # the axis is chosen from the valid runs


@pytest.mark.parametrize("who", ["candidate", "judge"])
def test_an_arena_whose_every_call_of_one_phase_failed_is_invalid_and_says_which(srv, tmp_path, who):
    """The candidate's endpoint 404s every prompt (or the judge's 503s every game): no prompt can be
    judged. It said 'no judge produced a valid verdict (... failures: {...: {}})', exit 2, blaming the
    judge; now the invalid phase, exit 3, and the same command finishes it once the endpoint works."""
    judges = {"fair": {"mode": "prefer", "prefer": "GOOD"}}
    if who == "candidate":
        srv.configure(judges=judges)
        model, judge = f"openai:m@{srv.base}", srv.spec("fair")  # no /v1: every call 404s
        line = f"invalid: candidate answers: 8 of 8 items failed (client_error; HTTP 404)"
    else:
        srv.configure(judges=judges, faults=[{"match": "*", "status": 503, "times": 99}])
        model, judge = "python:helpers:good_answer", srv.spec("fair")
        line = f"invalid: judge {srv.spec('fair')}: 16 of 16 items failed (server_error; HTTP 503)"
    out = tmp_path / "arena"
    args = ["run", "laobench-arena", "--model", model, "--bench-opt", "baseline=python:helpers:plain_answer", "--judge", judge,
            "--out", str(out), "--no-progress", "--cache-path", str(tmp_path / "c.sqlite"), "--max-retries", "0"]
    p = script(*args)
    assert p.returncode == INVALID, p.stderr
    (err,) = p.stderr.strip().splitlines()
    assert err.startswith(f"error: {line}") and "no item has a judged score" in err, err
    assert (out / "results.json").is_file()  # written, invalid, so that every view shows it (rev33)
    assert "Traceback" not in p.stderr
    if who == "candidate":
        return
    srv.configure(judges=judges)  # the judge works again: the same command finishes the arena
    p = script(*args)
    assert p.returncode == 0, p.stderr
    assert summary(out)["validity"]["valid"]


def test_an_aragen_run_interrupted_while_judging_resumes_with_the_same_command(srv, tmp_path):
    """Ctrl-C during the judge phase left answers-1/ finished and no results.json: the same command
    stopped at 'answers-1 already holds a finished run; choose another --out' (the arena too). Now
    the unfinished directory is kept aside (DIR.unfinished-TIME) and the run resumes from the cache."""
    import signal

    rubric = {"rubric": {"mode": "rubric", "scores": {"Correct": 1, "Complete": 1, "Concise": 4, "Helpful": 4,
                                                      "Honest": 5, "Harmless": 5}}}
    srv.configure(judges=rubric, latency=30)  # the judge hangs: the run is interrupted while judging
    out = tmp_path / "aragen"
    args = ["run", "aragen", "--model", "python:helpers:good_answer", "--judge", srv.spec("rubric"), "--limit", "3",
            "--out", str(out), "--no-progress", "--cache-path", str(tmp_path / "c.sqlite")]
    run = subprocess.Popen([console_script(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join(
                               [str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])})
    _wait_for_requests(srv, 1)
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=60)
    assert run.returncode == 130 and "resume from the call cache" in stderr, stderr
    assert (out / "answers-1" / "results.json").exists() and not (out / "results.json").exists()
    srv.configure(judges=rubric)
    p = script(*args)
    assert p.returncode == 0, p.stderr
    res = summary(out)
    assert res["validity"]["valid"] and res["mean_of_judges"]["3c3h"]["value"] is not None
    (aside,) = tmp_path.glob("aragen.unfinished-*")  # kept, not deleted
    assert (aside / "answers-1" / "results.json").exists()
    again = json.loads((out / "answers-1" / "results.json").read_text(encoding="utf-8"))
    assert again["counts"]["cache_hits"] == 3 and again["counts"]["model_calls"] == 0  # answers from the cache


def _candidates(tmp_path, rows) -> str:
    f = tmp_path / "cands.jsonl"
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(f)


def test_build_check_whose_judge_calls_failed_is_invalid_and_the_same_command_finishes_it(srv, tmp_path):
    """Every judge call 503s: '6 items flagged ... without a valid verdict', exit 0, and checks.json
    written, so the same command then refused ('already holds finished checks') once the judge worked."""
    rows = [{"id": f"q{i}", "question": f"ຄຳຖາມ {i}?", "options": ["ກ", "ຂ"], "answer": "A"} for i in range(3)]
    verdict = json.dumps({"answer": "A", "several_defensible": False, "self_contained": True, "sensitive": False,
                          "categories": [], "reason": "ok"})
    srv.configure(answers={"ຄຳຖາມ": verdict}, faults=[{"match": "*", "status": 503, "times": 99}])
    out = tmp_path / "checks"
    args = ["build", "check", _candidates(tmp_path, rows), "--judge", srv.spec("j"), "--check", "answerability",
            "--check", "context", "--out", str(out), "--cache-path", str(tmp_path / "c.sqlite"), "--no-progress",
            "--max-retries", "0"]
    p = script(*args)
    assert p.returncode == INVALID, p.stdout + p.stderr
    line = f"invalid: judge {srv.spec('j')}: 6 of 6 items failed (server_error; HTTP 503)"
    assert p.stderr.startswith(f"error: {line}") and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not json.loads((out / "checks.json").read_text(encoding="utf-8"))["validity"]["valid"]
    srv.configure(answers={"ຄຳຖາມ": verdict})  # the judge works again
    p = script(*args)
    assert p.returncode == 0, p.stderr
    summary = json.loads((out / "checks.json").read_text(encoding="utf-8"))
    assert summary["validity"]["valid"] and summary["per_check"] == {} and summary["flagged_items"] == 0


def test_build_select_whose_judge_calls_failed_is_invalid_and_the_same_command_finishes_it(srv, tmp_path):
    """The judge's failed run was reused as finished: 'only 0 prompts have a valid verdict', exit 2,
    for ever after, the endpoint fixed or not."""
    names = ["specificity", "domain_knowledge", "complexity", "problem_solving", "creativity",
             "technical_accuracy", "real_world"]
    rows = [{"id": f"p{i}", "prompt": f"ສອນເຮັດອາຫານລາວ ສູດທີ {i}"} for i in range(6)]
    met = json.dumps({n: True for n in names})
    srv.configure(answers={"ສອນເຮັດ": met}, faults=[{"match": "*", "status": 500, "times": 99}])
    out = tmp_path / "sel"
    args = ["build", "select", _candidates(tmp_path, rows), "--n", "3", "--judge", srv.spec("annot"),
            "--embedder", "tfidf", "--clusters", "2", "--out", str(out), "--cache-path", str(tmp_path / "c.sqlite"),
            "--no-progress", "--max-retries", "0"]
    p = script(*args)
    assert p.returncode == INVALID, p.stdout + p.stderr
    assert p.stderr.startswith(f"error: invalid: judge {srv.spec('annot')}: 6 of 6 items failed (server_error; "
                               "HTTP 500)"), p.stderr
    srv.configure(answers={"ສອນເຮັດ": met})
    p = script(*args)
    assert p.returncode == 0, p.stderr
    rep = json.loads((out / "select.json").read_text(encoding="utf-8"))
    assert rep["validity"]["valid"] and len((out / "selected.jsonl").read_text(encoding="utf-8").splitlines()) == 3


def test_an_aragen_answer_file_missing_most_entries_is_invalid(srv, tmp_path):
    """`aragen --model replay:FILE` with answers for 1 of 12 entries: 3C3H 100.0 over n = 1, exit 0
    (policy drop leaves the 11 out). A replay run's missing outputs make `glotbench run` invalid; now
    AraGen's too, with the replay's own fix (add them), and the same command finishes it."""
    srv.configure(judges={"fair": {"mode": "rubric", "scores": {"Correct": 1, "Complete": 1, "Concise": 5,
                                                                "Helpful": 5, "Honest": 5, "Harmless": 5}}})
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"id": "1", "output": "الرباط"}, ensure_ascii=False) + "\n", encoding="utf-8")
    out = tmp_path / "aragen"
    args = ["run", "aragen", "--model", f"replay:{answers}", "--judge", srv.spec("fair"), "--out", str(out),
            "--cache-path", str(tmp_path / "c.sqlite"), "--no-progress"]
    p = script(*args)
    assert p.returncode == INVALID, p.stdout + p.stderr
    line = "invalid: answers: 11 of 12 items failed (missing)"
    assert line in p.stdout and p.stderr.startswith(f"error: {line}") and "add them" in p.stderr, p.stderr
    res = summary(out)
    assert res["validity"]["phases"]["answers"]["failed"] == 11
    from glotbench.benchmarks.aragen import load_entries

    entries, _, _ = load_entries(None)
    with answers.open("a", encoding="utf-8") as f:  # every answer (follow-ups' second turns too)
        for e in entries[1:]:
            for turn in range(1, e.answers_needed + 1):
                f.write(json.dumps({"id": e.sn, "output": "جواب", "turn": turn}, ensure_ascii=False) + "\n")
    p = script(*args)
    assert p.returncode == 0, p.stderr
    assert summary(out)["validity"]["valid"]


def test_the_fix_named_for_a_python_models_bad_replies_is_its_code(capsys):
    """A `python:` model that returns no text (an int, None) fails its items as bad_response: the
    error line names the model's code, not an endpoint (it said "fix the endpoint")."""
    import typer

    from glotbench.cli.options import exit_if_invalid

    validity = {"valid": False, "failed": 2, "n": 2, "kinds": {"bad_response": 2}, "max_failure_rate": 0.05}
    for model, want, not_want in (({"spec": "python:m:f", "backend": "python"}, "fix the model's code", "endpoint"),
                                  ({"spec": "openai:x@http://h", "backend": "openai"}, "fix the endpoint", "model's code")):
        with pytest.raises(typer.Exit) as e:
            exit_if_invalid({"model": model, "validity": validity, "config": {"cache": True}})
        err = capsys.readouterr().err
        assert e.value.exit_code == INVALID and want in err and not_want not in err, err


def test_build_check_takes_the_failure_threshold_as_run_does(srv, tmp_path):
    """`build check` and `build select` mark their judge runs invalid above --max-failure-rate (5%) like
    `run`, `arena` and `aragen`, and now take the option too: 1 of 3 items failing (33%) is invalid
    by default and valid under --max-failure-rate 0.5, with the threshold recorded in checks.json."""
    rows = [{"id": f"q{i}", "question": f"ຄຳຖາມ {i}?", "options": ["ກ", "ຂ"], "answer": "A"} for i in range(3)]
    verdict = json.dumps({"answer": "A", "several_defensible": False, "self_contained": True, "sensitive": False,
                          "categories": [], "reason": "ok"})
    srv.configure(answers={"ຄຳຖາມ": verdict}, faults=[{"match": "ຄຳຖາມ 1?", "status": 503, "times": 99}])
    for rate, code in ((None, INVALID), ("0.5", 0)):
        out = tmp_path / f"checks-{rate}"
        p = script("build", "check", _candidates(tmp_path, rows), "--judge", srv.spec("j"), "--check", "answerability",
                   "--out", str(out), "--cache-path", str(tmp_path / "c.sqlite"), "--no-progress", "--max-retries", "0",
                   *(["--max-failure-rate", rate] if rate else []))
        assert p.returncode == code, p.stdout + p.stderr
        (phase,) = json.loads((out / "checks.json").read_text(encoding="utf-8"))["validity"]["phases"].values()
        assert phase["max_failure_rate"] == float(rate or 0.05) and phase["valid"] is (code == 0)
    assert "--max-failure-rate" in script("build", "select", "--help").stdout
