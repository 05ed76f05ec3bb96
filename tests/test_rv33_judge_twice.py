"""Review of issue #33: a judge named twice (or two specs whose phase directories would be one) is
one error line before any call, for a rubric task, an arena and AraGen alike; it was "judge-... already
holds a finished run" after the candidate's answers were made (and its verdicts would count twice)."""

from __future__ import annotations

import pytest
from conftest import cli
from test_tasks_rubric import files


@pytest.mark.parametrize("twice", ["same", "slash"])
def test_a_judge_named_twice_is_refused_before_any_call(tmp_path, srv, twice):
    judge = srv.spec("judge1")
    other = judge if twice == "same" else judge + "/"
    task = files(tmp_path)
    runs = [("run", task, "--model", srv.spec("cand")),
            ("run", "aragen", "--model", srv.spec("cand")),
            ("run", "laobench-arena", "--model", srv.spec("cand"), "--bench-opt", f"baseline={srv.spec('base')}")]
    for n, args in enumerate(runs):
        proc = cli(*args, "--judge", judge, "--judge", other, "--out", str(tmp_path / f"o{n}"), "--no-progress")
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        (line,) = proc.stderr.strip().splitlines()
        assert line.startswith("error: judge") and ("named twice" in line or "share one phase directory" in line)
        assert not (tmp_path / f"o{n}").exists()
    assert srv.requests() == []
