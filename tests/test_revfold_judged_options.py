"""Review of `glotbench run laobench-arena` / `aragen` as a hostile user (revfold): an option given twice
is refused (never the last kept silently), and the judge is never a contestant (the arena's baseline
included: a judge that is the baseline's model is skipped, before any call)."""

from __future__ import annotations

import json

import pytest
from conftest import cli

from glotbench.engine.options import RunOptions
from glotbench.errors import GlotbenchError

GOOD, PLAIN = "python:helpers:good_answer", "python:helpers:plain_answer"


@pytest.mark.parametrize("bench, opts", [
    ("laobench-arena", [f"baseline={PLAIN}", f"baseline={GOOD}"]),
    ("aragen", ["policy=zero", "policy=drop"]),
    ("aragen", ["jury=mean", "jury=mean"]),  # even the same value twice: one key, one value
])
def test_a_bench_option_given_twice_is_one_error_line(bench, opts, tmp_path, srv):
    args = [a for o in opts for a in ("--bench-opt", o)]
    r = cli("run", bench, "--model", GOOD, "--judge", srv.spec("j"), *args, "--limit", "1",
            "--out", str(tmp_path / "r"), "--no-progress", env={"GLOTBENCH_CACHE_DIR": str(tmp_path / "c")})
    assert r.returncode == 2, r.stderr
    key = opts[0].partition("=")[0]
    assert f"error: --bench-opt {key} is given twice" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "r").exists() and not srv.requests()


def test_other_pair_options_refuse_a_key_twice_too(tmp_path):
    """The same rule for every KEY=VALUE option read by split_pairs (here `prompt --bench-opt`)."""
    r = cli("prompt", "lao-mcq", "--bench-opt", "shots=0", "--bench-opt", "shots=1")
    assert r.returncode == 2 and "error: --bench-opt shots is given twice" in r.stderr, r.stderr


def test_python_run_options_refuse_a_key_twice():
    with pytest.raises(GlotbenchError, match="policy is given twice"):
        RunOptions(bench_options=(("policy", "zero"), ("policy", "drop")))
    assert RunOptions(bench_options=(("policy", "zero"), ("jury", "mean"))).bench_options == (("policy", "zero"), ("jury", "mean"))


def test_a_judge_that_is_the_baseline_is_skipped(tmp_path, srv):
    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}, "other": {"mode": "prefer", "prefer": "GOOD"}})
    env = {"GLOTBENCH_CACHE_DIR": str(tmp_path / "c")}
    # the only judge is the baseline: refused before any judge call
    r = cli("run", "laobench-arena", "--model", GOOD, "--bench-opt", f"baseline={srv.spec('fair')}",
            "--judge", srv.spec("fair"), "--limit", "2", "--out", str(tmp_path / "a"), "--no-progress", env=env)
    assert r.returncode == 2 and "skipped as the candidate or the baseline" in r.stderr, r.stderr
    assert not srv.requests()
    # with another judge, the baseline's own model judges nothing and is listed as skipped
    r = cli("run", "laobench-arena", "--model", GOOD, "--bench-opt", f"baseline={srv.spec('fair')}",
            "--judge", srv.spec("fair"), "--judge", srv.spec("other"), "--limit", "2",
            "--out", str(tmp_path / "b"), "--no-progress", env=env)
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "b" / "results.json").read_text(encoding="utf-8"))["judged"]["summary"]
    assert res["skipped_judges"] == [srv.spec("fair")] and list(res["scores"]["judges"]) == [srv.spec("other")]
    # 'fair' answered the 2 prompts as the baseline and judged none of the 4 games
    assert len([q for q in srv.requests() if q.get("model") == "fair"]) == 2


def test_python_run_options_read_one_string_as_one_entry_and_a_mapping_as_pairs():
    """`RunOptions(judges="openai:j@...")` is one judge (it was its characters: 'judge o is named twice'),
    `stop="\\n\\n"` one stop string, `bench_options={...}` its pairs; anything else one error."""
    o = RunOptions(judges="openai:j@http://127.0.0.1:1/v1", stop="\n\n", bench_options={"policy": "zero", "jury": "vote"})
    assert o.judges == ("openai:j@http://127.0.0.1:1/v1",) and o.stop == ("\n\n",)
    assert o.bench_options == (("policy", "zero"), ("jury", "vote"))
    assert RunOptions(judges=["a:b", "c:d"]).judges == ("a:b", "c:d")
    with pytest.raises(GlotbenchError, match="bench_options must be"):
        RunOptions(bench_options=["policy=zero"])


def test_evaluate_with_one_judge_string_runs_that_judge(tmp_path):
    from glotbench.engine.evaluate import evaluate

    res = evaluate("laobench-arena", GOOD, RunOptions(limit=2, judges="python:helpers:judge_fails_swapped_odd",
                                                      bench_options={"baseline": PLAIN, "single_order": "accept"},
                                                      out=str(tmp_path / "r"), cache_path=str(tmp_path / "c"),
                                                      progress=False))
    assert res.results["validity"]["valid"] is True
    assert res.results["judged"]["summary"]["judges"] == ["python:helpers:judge_fails_swapped_odd"]


@pytest.mark.parametrize("bench, opts", [("aragen", []), ("laobench-arena", [f"baseline={PLAIN}"])])
def test_one_judge_model_under_two_endpoint_spellings_is_refused(bench, opts, tmp_path, srv):
    """`openai:j@http://127.0.0.1:P/v1` and `openai:j@http://localhost:P/v1` are one judge (same_model):
    its verdicts counted twice in the mean of judges (they were) is refused before any call."""
    srv.configure(judges={"j": {"mode": "prefer", "prefer": "GOOD"}})
    other = srv.spec("j").replace("127.0.0.1", "localhost")
    args = [a for o in opts for a in ("--bench-opt", o)]
    r = cli("run", bench, "--model", GOOD, *args, "--judge", srv.spec("j"), "--judge", other, "--limit", "1",
            "--out", str(tmp_path / "r"), "--no-progress", env={"GLOTBENCH_CACHE_DIR": str(tmp_path / "c")})
    assert r.returncode == 2 and "are the same model (j): name each judge once" in r.stderr, r.stderr
    assert not srv.requests()


def test_aragen_system_prompt_from_an_empty_file_is_one_error_line(tmp_path, srv):
    """`system_prompt=@FILE` of an empty (or blank) file sent no system message and said
    `cand_system:none`: a file named and empty is a mistake, one line before any call."""
    empty = tmp_path / "system.txt"
    empty.write_text(" \n", encoding="utf-8")
    r = cli("run", "aragen", "--model", GOOD, "--judge", srv.spec("j"), "--bench-opt", f"system_prompt=@{empty}",
            "--limit", "1", "--out", str(tmp_path / "r"), "--no-progress", env={"GLOTBENCH_CACHE_DIR": str(tmp_path / "c")})
    assert r.returncode == 2 and f"system_prompt=@{empty}: the file is empty" in r.stderr, r.stderr
    assert not srv.requests()
