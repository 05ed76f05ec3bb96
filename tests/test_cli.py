"""The command line: bad input gives one readable line and a non-zero exit, never a traceback."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import cli, start_server
from helpers import gold_answers

from glotbench.cli.options import ALIASES


def assert_one_line_error(proc, fragment):
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], proc.stderr


def test_help_and_list():
    out = cli("--help")
    assert out.returncode == 0 and "run" in out.stdout and "report" in out.stdout
    out = cli("list")
    assert "vi-diacritics" in out.stdout and "openai:MODEL@BASE_URL" in out.stdout and "replay:" in out.stdout


@pytest.mark.parametrize("args, fragment", [
    (["run", "nope"], "unknown benchmark 'nope'"),
    (["run", "vi-diacritics", "--model", "gpt4"], "unknown model spec 'gpt4'"),
    (["run", "vi-diacritics", "--model", "openai:x@http://127.0.0.1:9/v1"], "cannot reach the endpoint"),
    (["run", "vi-diacritics", "--model", "openai:gpt-4o"], "set the environment variable OPENAI_API_KEY"),
    (["run", "vi-diacritics", "--model", "python:no.such.module:fn"], "cannot import module"),
    (["run", "vi-diacritics", "--model", "replay:/no/such/file.jsonl"], "replay file not found"),
    (["report", "/no/such/dir"], "not a run directory"),
])
def test_bad_input_is_one_line(tmp_path, args, fragment):
    env = {"OPENAI_API_KEY": "", "GLOTBENCH_CACHE_DIR": str(tmp_path)}
    assert_one_line_error(cli(*args, env=env, cwd=str(tmp_path)), fragment)


def test_malformed_data_file_names_the_line(tmp_path, srv):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "references": ["Xin chào"]}\n{"id": "b"}\n', encoding="utf-8")
    proc = cli("run", "vi-diacritics", "--model", srv.spec(), "--data", str(bad),
               env={"GLOTBENCH_CACHE_DIR": str(tmp_path)}, cwd=str(tmp_path))
    assert_one_line_error(proc, f"{bad}:2: references: missing")
    assert not (tmp_path / "runs").exists()  # nothing half-written


def test_run_and_report(tmp_path, srv):
    srv.configure(answers=gold_answers(10))
    out = tmp_path / "r"
    proc = cli("run", "vi-diacritics", "--model", srv.spec(), "--limit", "10", "--out", str(out),
               "--price-in", "1.0", "--price-out", "2.0", env={"GLOTBENCH_CACHE_DIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    # 10 of 10 exact: the Wilson interval (72.2–100.0), not the collapsed bootstrap's (100.0–100.0)
    assert "exact ★" in proc.stdout and "100.0 (72.2–100.0)" in proc.stdout and "cost $" in proc.stdout
    assert "10/10 done" in proc.stderr  # the progress line (plain on a pipe)
    results = json.loads((out / "results.json").read_text())
    tok = results["tokens"]
    assert results["cost"]["run"] == pytest.approx((tok["prompt"] * 1.0 + tok["completion"] * 2.0) / 1e6)
    again = cli("report", str(out))
    assert again.returncode == 0 and "exact ★" in again.stdout and "signature: glotbench:vi-diacritics|v:1.0" in again.stdout
    # The same --out twice would overwrite a finished run: refused.
    proc = cli("run", "vi-diacritics", "--model", srv.spec(), "--limit", "10", "--out", str(out),
               env={"GLOTBENCH_CACHE_DIR": str(tmp_path)})
    assert_one_line_error(proc, "already holds a finished run")


def test_resume_after_sigkill(tmp_path):
    server = start_server(latency=0.25)
    try:
        server.configure(latency=0.25, answers=gold_answers(40))
        cache = tmp_path / "calls.sqlite"
        args = ["run", "vi-diacritics", "--model", server.spec(), "--limit", "40", "--concurrency", "4",
                "--cache-path", str(cache)]
        env = {**os.environ, "GLOTBENCH_CACHE_DIR": str(tmp_path)}
        proc = subprocess.Popen([sys.executable, "-m", "glotbench", *args, "--out", str(tmp_path / "a")],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples = tmp_path / "a" / "samples.jsonl"
        deadline = time.time() + 60
        while time.time() < deadline:
            if samples.exists() and len(samples.read_text().splitlines()) >= 12:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert not (tmp_path / "a" / "results.json").exists()  # not marked complete
        with sqlite3.connect(cache) as db:
            done = db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
        assert 6 <= done < 40  # replies are committed every 50 ms
        sent_before = len(server.requests())
        assert proc.returncode == -signal.SIGKILL
        # A report on the unfinished run says so, in one line.
        assert_one_line_error(cli("report", str(tmp_path / "a")), "unfinished run")
        proc2 = cli(*args, "--out", str(tmp_path / "b"), env={"GLOTBENCH_CACHE_DIR": str(tmp_path)})
        assert proc2.returncode == 0, proc2.stderr
        results = json.loads((tmp_path / "b" / "results.json").read_text())
        assert results["counts"]["cache_hits"] == done
        assert results["counts"]["model_calls"] == 40 - done  # only unfinished items are redone
        assert len(server.requests()) - sent_before == 40 - done
        assert results["scores"]["overall"]["sentence_exact"]["value"] == 1.0
    finally:
        server.proc.terminate()
        server.proc.wait(10)


def test_the_command_table_matches_what_each_module_registers():
    """`main()` loads only the module of the command being run: its table must name exactly the
    commands each module registers, or a command would be missing from its own run."""
    import importlib

    import typer

    from glotbench.cli.app import COMMANDS, modules_for

    seen = []
    for module, names in COMMANDS.items():
        app = typer.Typer()
        importlib.import_module(f"glotbench.cli.{module}").register(app)
        registered = [c.name or c.callback.__name__.replace("_", "-") for c in app.registered_commands]
        registered += [g.name for g in app.registered_groups]
        assert sorted(registered) == sorted(names), module
        seen += registered
    assert len(seen) == len(set(seen))  # no command in two modules
    assert modules_for(["run", "vi-diacritics", "--data", "x"]) == ["run"]
    assert modules_for(["--help"]) == list(COMMANDS) and modules_for([]) == list(COMMANDS)
    assert modules_for(["no-such-command"]) == list(COMMANDS)


def test_the_console_script_runs_a_command_and_lists_every_command_in_help():
    out = cli("--help")
    assert out.returncode == 0
    listed = {line.split()[0] for line in out.stdout.split("Commands:")[1].splitlines() if line.startswith("  ") and line[2] != " "}
    for names in __import__("glotbench.cli.app", fromlist=["COMMANDS"]).COMMANDS.values():
        for name in names:  # every command but the hidden aliases of folded ones (tests/test_fold.py)
            assert (name in listed) != (name in ALIASES), name
    out = cli("list")
    assert out.returncode == 0 and "vi-diacritics" in out.stdout
    bad = cli("no-such-command")
    assert bad.returncode == 2 and "no-such-command" in bad.stderr
