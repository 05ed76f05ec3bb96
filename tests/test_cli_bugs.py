"""A bug is not an input error: an exception no input explains (a KeyError, TypeError, IndexError,
AttributeError ...) is one line saying it is a bug (glotbench's, or, raised in code glotbench called, that
code's), with how to see the traceback, and exit code 1, never the `error:` line and exit 2 of a bad input."""

from __future__ import annotations

from conftest import cli

BUGGY = '''
from glotbench.benchmarks.base import Benchmark
from glotbench.metrics import RatioMetric


class Buggy(Benchmark):
    name = "buggy"
    version = "1"
    description = "a plugin whose load has a bug"  # every declared fact: the contract is held, the bug is not
    metrics = (RatioMetric("answered", "answered", "n", "answered"),)

    def load(self, path=None):
        return {}["{kind}"] if "{kind}" == "KeyError" else len(None)

    def render(self, item):
        raise NotImplementedError

    extract = score = failure_score = render
'''


def _run(tmp_path, kind: str, env: dict | None = None):
    (tmp_path / "buggy_bench.py").write_text(BUGGY.replace("{kind}", kind), encoding="utf-8")
    return cli("run", "buggy_bench:Buggy", "--model", "python:helpers:plain_answer", "--no-progress", "--no-cache",
               "--out", str(tmp_path / "run"), env=env, cwd=str(tmp_path))


def test_a_keyerror_from_code_is_a_bug_report_not_an_input_error(tmp_path):
    for kind, what in (("KeyError", "KeyError: 'KeyError'"), ("TypeError", "TypeError: object of type 'NoneType'")):
        r = _run(tmp_path, kind)
        assert r.returncode == 1, r.stderr
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
        # raised in the plugin's own code: that code is named, with the glotbench line that called it
        assert r.stderr.startswith("error: this is a bug in code glotbench called, not a problem with the input ("
                                   + what), r.stderr
        assert "at buggy_bench.py:13, called from glotbench/" in r.stderr and "GLOTBENCH_DEBUG=1" in r.stderr


def test_glotbench_debug_shows_the_traceback(tmp_path):
    r = _run(tmp_path, "KeyError", env={"GLOTBENCH_DEBUG": "1"})
    assert r.returncode == 1 and "Traceback (most recent call last)" in r.stderr and "KeyError" in r.stderr


def test_a_bad_input_is_still_one_error_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": 1}\n', encoding="utf-8")
    r = cli("run", "vi-diacritics", "--data", str(bad), "--model", "python:helpers:plain_answer", "--no-progress",
            "--no-cache", "--out", str(tmp_path / "run"))
    assert r.returncode == 2 and r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "this is a bug" not in r.stderr


def test_a_bug_raised_in_glotbenchs_own_code_is_called_glotbenchs():
    """The same exception raised in a file of the package is glotbench's bug, named by its path there;
    raised in a function glotbench's code called, the callee's file and the calling line are named."""
    import os

    from glotbench.cli.options import PACKAGE_DIR, bug_report

    ns: dict = {}
    exec(compile("def inside(d):\n    return d['gone']\n", os.path.join(PACKAGE_DIR, "engine", "fake.py"), "exec"), ns)
    try:
        ns["inside"]({})
    except KeyError as e:
        msg = bug_report(e)
    assert msg.startswith("this is a bug in glotbench, not a problem with the input (KeyError: 'gone' at "
                          "glotbench/engine/fake.py:2); run the command again with GLOTBENCH_DEBUG=1"), msg

    def user(d):
        return d["gone"]

    exec(compile("def caller(f):\n    return f({})\n", os.path.join(PACKAGE_DIR, "engine", "fake.py"), "exec"), ns)
    try:
        ns["caller"](user)
    except KeyError as e:
        msg = bug_report(e)
    assert msg.startswith("this is a bug in code glotbench called, not a problem with the input (KeyError: 'gone' "
                          "at test_cli_bugs.py:"), msg
    assert "called from glotbench/engine/fake.py:2)" in msg and msg.endswith("where that code is kept")
