"""`cli()` once torch is loaded in the test process (issue 32): the child is forked from the process's twin,
forked before torch was loaded (conftest `_ForkServer`), not started as a fresh interpreter. Under
`--dist loadgroup` xdist runs the embedded-model group first on one worker, which then spawned a fresh
interpreter for every `cli()` of its half of the suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import pytest

import conftest
from conftest import _cli_forked, _ForkServer, cli


def process_facts(messages):
    """A `python:` model that answers with facts about the process running it."""
    return json.dumps({"restored_text": json.dumps({
        "ppid": os.getppid(), "torch": "torch" in sys.modules, "cwd": os.getcwd(),
        "mark": os.environ.get("GLOTBENCH_TEST_MARK"), "path_mark": "/glotbench-test-path-mark" in sys.path})})


def sleepy(messages):
    import time

    time.sleep(120)
    return ""


@pytest.fixture
def twin(monkeypatch):
    """This process's twin, and torch taken as loaded here: `cli()` must go through the twin."""
    if conftest._FORK_SERVER:  # a worker that ran the model group first has one already
        server, own = conftest._FORK_SERVER[0], False
    else:
        assert conftest._fork_safe()
        server, own = _ForkServer(), True
    monkeypatch.setattr(conftest, "_FORK_SERVER", [server])
    if "torch" not in sys.modules:
        monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    yield server
    if own and conftest._FORK_SERVER:
        server.close()


def _facts(out_dir) -> dict:
    sample = json.loads((out_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()[0])
    return json.loads(json.loads(sample["output"])["restored_text"])


def test_the_child_is_forked_from_the_twin_with_this_processs_environment_folder_and_path(tmp_path, twin, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GLOTBENCH_TEST_MARK", "set-after-the-twin")
    monkeypatch.syspath_prepend("/glotbench-test-path-mark")
    r = cli("run", "vi-diacritics", "--model", "python:test_suite_fork_server:process_facts", "--limit", "1",
            "--no-cache", "--out", "o")
    assert r.returncode == 0, r.stderr
    facts = _facts(tmp_path / "o")  # `--out o` is relative: the run went into this test's folder
    assert facts == {"ppid": twin.pid, "torch": False, "cwd": str(tmp_path), "mark": "set-after-the-twin",
                     "path_mark": True}
    assert "torch" in sys.modules  # as taken: here it counts as loaded, in the child it is not


def test_exit_code_stdout_and_stderr_are_a_direct_forks(tmp_path, twin):
    for args in (("run", "no-such-benchmark", "--model", "replay:x.jsonl"), ("list",), ("score", "--help")):
        mine = twin.run(list(args), {"COLUMNS": "60"}, str(tmp_path), 60)
        direct = _cli_forked(args, {"COLUMNS": "60"}, str(tmp_path), 60)
        assert (mine.returncode, mine.stdout, mine.stderr) == (direct.returncode, direct.stdout, direct.stderr)
    assert mine.returncode == 0 and mine.stdout and max(map(len, mine.stdout.splitlines())) <= 60


def test_a_command_past_its_timeout_is_killed_and_the_twin_serves_the_next(tmp_path, twin):
    with pytest.raises(subprocess.TimeoutExpired):
        cli("run", "vi-diacritics", "--model", "python:test_suite_fork_server:sleepy", "--limit", "1", "--no-cache",
            "--out", str(tmp_path / "slow"), timeout=3)
    r = cli("list")
    assert r.returncode == 0 and "vi-diacritics" in r.stdout


def test_without_its_twin_cli_starts_a_fresh_interpreter(monkeypatch):
    """A twin that died: its socket's other end closed, its process ended."""
    import socket

    import threading

    dead = _ForkServer.__new__(_ForkServer)
    dead.lock = threading.Lock()
    dead.sock, theirs = socket.socketpair()
    theirs.close()
    dead.pid = os.fork()
    if dead.pid == 0:
        os._exit(0)
    monkeypatch.setattr(conftest, "_FORK_SERVER", [dead])
    if "torch" not in sys.modules:
        monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    r = cli("list")
    assert r.returncode == 0 and "vi-diacritics" in r.stdout
    assert conftest._FORK_SERVER == [] and dead.sock.fileno() == -1  # dropped, closed, reaped


def test_a_thread_left_running_here_does_not_make_cli_spawn(tmp_path, twin, monkeypatch):
    """The embedded model's scoring pool outlives its tests: a process with a thread running cannot fork
    itself, but its twin can."""
    import threading

    monkeypatch.delitem(sys.modules, "torch", raising=False)  # only the thread stands in the way here
    stop = threading.Event()
    waiter = threading.Thread(target=stop.wait)
    waiter.start()
    try:
        assert not conftest._fork_safe()
        r = cli("run", "vi-diacritics", "--model", "python:test_suite_fork_server:process_facts", "--limit", "1",
                "--no-cache", "--out", str(tmp_path / "o"))
    finally:
        stop.set()
        waiter.join()
    assert r.returncode == 0, r.stderr
    assert _facts(tmp_path / "o")["ppid"] == twin.pid


def test_a_benchmark_a_test_registers_is_gone_after_it(tmp_path):
    """A test's plugin outlived the test: `cli()` forked from this process then listed it, and a twin
    forked before it did not (CI failed on the two error lines)."""
    from conftest import registries_kept
    from glotbench.plugins import benchmarks, register_benchmark
    from glotbench.registry import get_benchmark

    with registries_kept():
        register_benchmark("kept-test-only")(lambda: get_benchmark("vi-diacritics"))
        assert "kept-test-only" in benchmarks()
    assert "kept-test-only" not in benchmarks()
    r = _cli_forked(("run", "kept-test-only", "--model", "replay:x.jsonl"), {}, str(tmp_path), 60)
    assert r.returncode == 2 and "unknown benchmark 'kept-test-only'" in r.stderr
