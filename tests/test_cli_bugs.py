"""A bug is not an input error: an exception no input explains (a KeyError, TypeError, IndexError,
AttributeError ...) is one line saying it is a bug in glotbench, with how to see the traceback, and
exit code 1, never the `error:` line and exit 2 of a bad input."""

from __future__ import annotations

from conftest import cli

BUGGY = '''
from glotbench.benchmarks.base import Benchmark


class Buggy(Benchmark):
    name = "buggy"
    version = "1"

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
        assert r.stderr.startswith("error: this is a bug in glotbench, not a problem with the input (" + what)
        assert "buggy_bench.py:" in r.stderr and "GLOTBENCH_DEBUG=1" in r.stderr


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
