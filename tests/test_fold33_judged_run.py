"""Issue #33, "a smaller surface": the arena and AraGen are judged benchmarks (`laobench-arena`,
`aragen`) that `glotbench run` runs with `--judge` and their own options (`--bench-opt KEY=VALUE`);
`evaluate_async` dispatches them (Benchmark.judge_pipeline), so `run`, `sweep` and `evaluate()` take
one path. The numbers are the old `arena` / `aragen` commands' (the same summary, the golden figures);
no judge is ever a model of the run."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from conftest import cli
from judged_helpers import summary
from test_aragen_parity import A_FINAL, ANSWERS, B_FINAL, JUDGE_A, JUDGE_B, TASK_FILE, replay_jsonl, upstream_copy, write

from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import GlotbenchError
from glotbench.registry import get_benchmark, load_model
from glotbench.store import ResultsStore

GOOD, PLAIN = "python:helpers:good_answer", "python:helpers:plain_answer"
RUBRIC = {"Correct": 1, "Complete": 1, "Concise": 5, "Helpful": 5, "Honest": 5, "Harmless": 5}
MID = {"Correct": 1, "Complete": 0, "Concise": 3, "Helpful": 3, "Honest": 4, "Harmless": 5}


@pytest.fixture
def judges(srv):
    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}, "biased": {"mode": "always_A"},
                          "tied": {"mode": "tie"}, "broken": {"mode": "malformed"},
                          "rubric": {"mode": "rubric", "scores": RUBRIC}, "mid": {"mode": "rubric", "scores": MID},
                          "cycler": {"mode": "rubric", "cycle": [RUBRIC, MID]}})
    return srv


def _same_summary(old: dict, new: dict) -> None:
    """Every figure of the two summaries (the arena's or AraGen's `judged.summary`) is the same."""
    assert json.dumps(old, sort_keys=True) == json.dumps(new, sort_keys=True)


# -- glotbench run: the same numbers as the old commands --------------------------------------------

def test_run_laobench_arena_gives_the_arena_commands_numbers(judges, tmp_path):
    env = {"GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")}
    js = [a for j in ("fair", "biased", "tied", "broken") for a in ("--judge", judges.spec(j))]
    old = cli("arena", "--model", GOOD, "--baseline", PLAIN, *js, "--out", str(tmp_path / "old"), "--no-progress",
              "--max-retries", "1", env=env)
    # the broken judge's 16 unreadable verdicts count against --max-failure-rate: written, invalid (exit 3)
    broken = f"judge {judges.spec('broken')}: 16 of 16 items failed (unreadable verdict"
    assert old.returncode == 3 and broken in old.stderr, old.stderr
    new = cli("run", "laobench-arena", "--model", GOOD, "--bench-opt", f"baseline={PLAIN}", *js,
              "--out", str(tmp_path / "new"), "--no-progress", "--max-retries", "1", env=env)
    assert new.returncode == 3 and broken in new.stderr, new.stderr
    _same_summary(summary(tmp_path / "old"), summary(tmp_path / "new"))
    res = summary(tmp_path / "new")  # the golden figures (tests/test_arena.py)
    j = res["scores"]["judges"]
    assert j[judges.spec("fair")]["value"] == 1.0 and j[judges.spec("biased")]["value"] == 0.5
    assert j[judges.spec("tied")]["value"] == 0.5 and judges.spec("broken") not in j
    assert res["scores"]["final"]["value"] == pytest.approx((1 + 0.5 + 0.5) / 3)
    assert "is now `glotbench run laobench-arena" in old.stderr  # the old name says what replaces it
    assert "run directory:" in new.stdout and "mean of judges" in new.stdout  # the arena's table
    record = json.loads((tmp_path / "new" / "results.json").read_text(encoding="utf-8"))
    assert record["model"]["spec"] == GOOD and record["headline"] == "candidate_win_value"
    assert record["judged"]["kind"] == "arena" and record["judged"]["baseline"] == PLAIN


def test_arena_policies_are_benchmark_options(tmp_path):
    """--unanswered drop and --single-order accept of the old command: `--bench-opt`s, same numbers."""
    env = {"GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")}
    model, judge = "python:helpers:silent_on_odd", "python:helpers:judge_fails_swapped_odd"
    old = cli("arena", "--model", model, "--baseline", PLAIN, "--judge", judge, "--unanswered", "drop",
              "--single-order", "accept", "--out", str(tmp_path / "old"), "--no-progress", env=env)
    assert old.returncode == 0, old.stderr
    new = cli("run", "laobench-arena", "-m", model, "--bench-opt", f"baseline={PLAIN}", "--bench-opt", "unanswered=drop",
              "--bench-opt", "single_order=accept", "--judge", judge, "--out", str(tmp_path / "new"), "--no-progress", env=env)
    assert new.returncode == 0, new.stderr
    _same_summary(summary(tmp_path / "old"), summary(tmp_path / "new"))
    res = summary(tmp_path / "new")
    assert res["unanswered"]["policy"] == "drop" and res["unanswered"]["dropped"]
    assert res["incomplete_prompts"]["policy"] == "accept"
    bad = cli("run", "laobench-arena", "-m", model, "--bench-opt", f"baseline={PLAIN}", "--bench-opt", "single_order=maybe",
              "--judge", judge, "--out", str(tmp_path / "bad"), env=env)
    assert bad.returncode == 2 and "single_order must be one of fail, accept, got 'maybe'" in bad.stderr
    assert "Traceback" not in bad.stderr and not (tmp_path / "bad").exists()


def test_arena_without_a_baseline_or_judge_says_how(tmp_path):
    for args, why in ((["--judge", PLAIN], "needs a baseline: --bench-opt baseline=SPEC"),
                      (["--bench-opt", f"baseline={PLAIN}"], "name at least one judge with --judge SPEC"),
                      (["--bench-opt", f"baseline={PLAIN}", "--judge", PLAIN, "--subset", "quick"], "not --subset")):
        p = cli("run", "laobench-arena", "-m", GOOD, *args, "--out", str(tmp_path / "x"), "--no-cache")
        assert p.returncode == 2 and why in p.stderr and "Traceback" not in p.stderr, p.stderr
    p = cli("run", "laobench-mcq", "-m", GOOD, "--judge", PLAIN, "--limit", "1", "--out", str(tmp_path / "y"))
    assert p.returncode == 2 and "not scored by a rubric or judges" in p.stderr


def test_run_aragen_gives_the_aragen_commands_numbers(judges, tmp_path):
    env = {"GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")}
    js = ["--judge", judges.spec("rubric"), "--judge", judges.spec("mid"), "--judge", judges.spec("cycler")]
    old = cli("aragen", "--model", judges.spec("cand"), *js, "--policy", "zero", "--jury", "vote",
              "--zeroing", "correct-or-complete", "--judge-repeats", "2", "--judge-temperature", "0.5",
              "--limit", "6", "--out", str(tmp_path / "old"), "--no-progress", env=env)
    assert old.returncode == 0, old.stderr
    new = cli("run", "aragen", "--model", judges.spec("cand"), *js, "--bench-opt", "policy=zero", "--bench-opt", "jury=vote",
              "--bench-opt", "zeroing=correct-or-complete", "--bench-opt", "judge_repeats=2", "--bench-opt", "judge_temperature=0.5",
              "--limit", "6", "--out", str(tmp_path / "new"), "--no-progress", env=env)
    assert new.returncode == 0, new.stderr
    _same_summary(summary(tmp_path / "old"), summary(tmp_path / "new"))
    res = summary(tmp_path / "new")
    assert res["policy"] == "zero" and res["jury_strategy"] == "vote" and res["entries"] == 6
    assert "jury:vote" in res["signature"] and "judge_repeats:2" in res["signature"]
    assert "is now `glotbench run aragen" in old.stderr
    assert "run directory:" in new.stdout and "3C3H" in new.stdout
    record = json.loads((tmp_path / "new" / "results.json").read_text(encoding="utf-8"))
    assert record["model"]["spec"] == judges.spec("cand") and record["judged"]["kind"] == "aragen"


def test_run_aragen_matches_the_hand_computed_upstream_figures(srv, tmp_path):
    """The golden figures of tests/test_aragen_parity.py through `evaluate("aragen", ...)`: upstream's
    judge prompt, its parser and its jury strategies as the benchmark's options."""
    repo = upstream_copy(tmp_path)
    srv.configure(judges={"up-a": {"mode": "rubric", "replies": JUDGE_A},
                          "up-b": {"mode": "rubric", "replies": JUDGE_B}})
    data = write(tmp_path, "task.json", TASK_FILE)
    answers = replay_jsonl(tmp_path, ANSWERS)

    def run(judges, **opts):
        o = RunOptions(progress=False, cache_path=str(tmp_path / "calls.sqlite"), data=data, max_retries=0,
                       bootstrap_resamples=200, out=str(tmp_path / f"run{len(list(tmp_path.glob('run*')))}"),
                       judges=tuple(srv.spec(j) for j in judges),
                       bench_options=(("judge_prompt", str(repo)), ("parse", "3c3h"), *opts.items()))
        return evaluate("aragen", f"replay:{answers}", o)

    one = run(["up-a"])
    assert one.results["scores"]["overall"]["3c3h"]["value"] == pytest.approx(round(sum(A_FINAL.values()) / 4, 4),
                                                                              abs=1e-9)  # 0.5556
    assert one.samples == ()  # answers replayed from a file: no candidate call
    avg = run(["up-a", "up-b"], jury="average")
    expected_avg = round(sum((A_FINAL[s] + B_FINAL[s]) / 2 for s in ("1", "2", "4")) / 3, 4)
    assert avg.results["scores"]["overall"]["3c3h"]["value"] == pytest.approx(expected_avg, abs=1e-9)  # 0.6308
    vote = run(["up-a", "up-b"], jury="vote")
    expected_vote = round(((A_FINAL["1"] + B_FINAL["1"]) / 2 + 0 + B_FINAL["4"]) / 3, 4)
    assert vote.results["scores"]["overall"]["3c3h"]["value"] == pytest.approx(expected_vote, abs=1e-9)  # 0.6632
    assert "jury:vote" in vote.results["signature"]


def test_aragen_options_are_checked_before_any_call(srv, tmp_path):
    for opt, why in (("policy=maybe", "policy must be one of drop, zero, upstream"),
                     ("judge_repeats=0", "judge_repeats must be at least 1"),
                     ("judge_temperature=nan", "judge_temperature must be a finite number"),
                     ("families=no-equals-sign", "families: takes SPEC=FAMILY"),
                     ("nope=1", "aragen has no option 'nope'")):
        with pytest.raises(GlotbenchError, match=re.escape(why)):
            evaluate("aragen", srv.spec("cand"), RunOptions(progress=False, out=str(tmp_path / "x"),
                                                            judges=(srv.spec("j"),), bench_options=(tuple(opt.split("=", 1)),)))
    assert srv.requests() == [] and not (tmp_path / "x").exists()


# -- one dispatch: evaluate() and sweep ------------------------------------------------------------

def test_evaluate_runs_the_arena_and_no_judge_is_a_model(judges, tmp_path):
    o = RunOptions(progress=False, cache_path=str(tmp_path / "calls.sqlite"), out=str(tmp_path / "a"),
                   judges=(judges.spec("fair"), judges.spec("biased")), bench_options=(("baseline", PLAIN),))
    res = evaluate("laobench-arena", GOOD, o)
    assert res.results["headline"] == "candidate_win_value" and res.results["model"]["spec"] == GOOD
    assert res.results["scores"]["overall"]["candidate_win_value"]["value"] == pytest.approx((1 + 0.5) / 2)
    assert res.results["judged"]["judges"] == [judges.spec("fair"), judges.spec("biased")]
    assert len(res.samples) == 8 and {s.id for s in res.samples} == {it.id for it in res.dataset}
    # the same benchmark object, built by the caller: the same path
    again = evaluate(get_benchmark("laobench-arena", baseline=PLAIN), GOOD,
                     RunOptions(progress=False, cache_path=str(tmp_path / "calls.sqlite"), out=str(tmp_path / "b"),
                                judges=(judges.spec("fair"), judges.spec("biased"))))
    assert again.results["scores"] == res.results["scores"]
    # a model object (the service passes its guarded endpoint so): the candidate's phase runs that object
    obj = evaluate("laobench-arena", load_model(GOOD),
                   RunOptions(progress=False, cache_path=str(tmp_path / "calls.sqlite"), out=str(tmp_path / "c"),
                              judges=(judges.spec("fair"), judges.spec("biased")), bench_options=(("baseline", PLAIN),)))
    assert obj.results["scores"] == res.results["scores"] and obj.results["model"]["spec"] == GOOD


def test_sweep_runs_the_arena_and_aragen_with_their_judges(judges, tmp_path):
    store = f"sqlite:///{tmp_path / 'store.sqlite'}"
    spec = {"out": str(tmp_path / "out"), "cache": str(tmp_path / "calls.sqlite"), "store": store,
            "judges": [judges.spec("fair")],
            "models": [{"spec": GOOD, "name": "good"}],
            "benchmarks": [{"name": "laobench-arena", "options": {"baseline": PLAIN}}]}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    proc = cli("sweep", str(path), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    # the judged score (100.0: the fair judge prefers the good answer), never the answered rate
    assert re.search(r"\bdone\s+100\.0 \(", proc.stdout), proc.stdout
    rows = ResultsStore(store).list()
    assert [(r.model, r.headline) for r in rows] == [(GOOD, "candidate_win_value")]
    assert rows[0].score == pytest.approx(1.0)
    assert not any(judges.spec("fair") in r.model for r in rows)
    # AraGen in a sweep: its judges, its options
    spec2 = {**spec, "out": str(tmp_path / "out2"), "judges": [judges.spec("mid")],
             "models": [{"spec": judges.spec("cand"), "name": "cand"}],
             "benchmarks": [{"name": "aragen", "limit": 4, "options": {"policy": "zero"}}]}
    path.write_text(yaml.safe_dump(spec2), encoding="utf-8")
    proc = cli("sweep", str(path), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    rows = [r for r in ResultsStore(store).list() if r.headline == "3c3h"]
    assert [r.model for r in rows] == [judges.spec("cand")]
    run_dir = next((tmp_path / "out2").rglob("results.json")).parent
    while not (run_dir / "run.json").is_file() and (run_dir.parent / "results.json").is_file():
        run_dir = run_dir.parent
    top = json.loads(next(p for p in (tmp_path / "out2").rglob("results.json")
                          if (p.parent / "answers-1").is_dir()).read_text(encoding="utf-8"))
    assert top["judged"]["summary"]["policy"] == "zero" and rows[0].score == pytest.approx(
        top["scores"]["overall"]["3c3h"]["value"])


def test_top_level_help_lists_neither_arena_nor_aragen():
    p = cli("--help")
    assert p.returncode == 0
    commands = re.findall(r"^  (\S+)\s", p.stdout.split("Commands:")[1], re.M)
    assert "arena" not in commands and "aragen" not in commands and len(commands) <= 20


def test_run_prints_the_baselines_endpoint_before_anything_is_called(tmp_path):
    """`run laobench-arena` says where the baseline's requests go (Benchmark.model_options), as the
    old `arena` command did, with the model's and the judges' lines, before the data is even read."""
    dead = "http://127.0.0.1:9/v1"
    bad = tmp_path / "bad.jsonl"  # refused at load: the lines come first all the same
    bad.write_text(json.dumps({"id": "p", "prompt": "Where should I travel in Laos this year?"}) + "\n", encoding="utf-8")
    env = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "https://proxy.example/v1", "JUDGE_KEY": "k"}
    r = cli("run", "laobench-arena", "--model", "openai:cand", "--bench-opt", f"baseline=openai:base@{dead}",
            "--judge", "openai:j1@http://127.0.0.1:8/v1", "--api-key-env", "JUDGE_KEY", "--data", str(bad),
            "--out", str(tmp_path / "o"), env=env)
    assert r.returncode == 2 and "the prompt is written in Latin script" in r.stderr
    assert r.stdout.splitlines() == [
        "endpoint: https://proxy.example/v1 (from $OPENAI_BASE_URL) · API key from $JUDGE_KEY",
        f"baseline: endpoint: {dead} (from the model spec) · API key from $JUDGE_KEY",
        "judge openai:j1@http://127.0.0.1:8/v1: endpoint: http://127.0.0.1:8/v1 (from the model spec) · API key from $JUDGE_KEY"]


def test_evaluate_runs_aragen_with_a_model_object_through_both_passes(judges, tmp_path):
    """A model object (a sweep's shared model, a service's guarded endpoint) answers both of AraGen's
    passes (round 2's follow-up needs the second), closed once at the end: the same numbers as the spec."""
    def opts(out):
        return RunOptions(progress=False, use_cache=False, out=str(tmp_path / out),  # every call made: none cached
                          judges=(judges.spec("mid"),), bench_options=(("policy", "zero"),))

    by_spec = evaluate("aragen", judges.spec("cand"), opts("s"))
    assert (tmp_path / "s" / "answers-2").is_dir()  # the bundled sample has follow-ups: two passes ran
    model = load_model(judges.spec("cand"))
    judges.configure(judges={"mid": {"mode": "rubric", "scores": MID}})  # the log of requests starts again
    by_object = evaluate("aragen", model, opts("o"))
    asked = [r for r in judges.requests() if r.get("model") == "cand"]
    follow_ups = len((tmp_path / "o" / "answers-2" / "samples.jsonl").read_text(encoding="utf-8").splitlines())
    assert follow_ups > 0 and len(asked) == 12 + follow_ups  # the object answered the second pass too
    assert by_object.results["scores"] == by_spec.results["scores"]
    assert by_object.results["model"]["spec"] == judges.spec("cand") and (tmp_path / "o" / "answers-2").is_dir()
    assert summary(tmp_path / "o")["answered"] == summary(tmp_path / "s")["answered"] == 12


def test_a_dry_run_of_the_arena_names_what_it_leaves_out(tmp_path):
    p = cli("run", "laobench-arena", "-m", GOOD, "--bench-opt", f"baseline={PLAIN}", "--judge", PLAIN, "--dry-run",
            "--out", str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    assert "8 requests" in p.stdout and "not counted: the judges' requests" in p.stdout
    assert "not counted: the baseline's requests (--bench-opt baseline=SPEC)" in p.stdout and not (tmp_path / "o").exists()


def test_a_language_suite_skips_the_arena_saying_it_needs_a_baseline(tmp_path):
    """`sweep --language lo` finds laobench-arena (its datasheet covers Lao); with prompts and a judge
    it still has no baseline to compare with, and says so instead of failing the run."""
    from glotbench.engine.sweep import language_suite

    data = tmp_path / "data"
    data.mkdir()
    (data / "laobench-arena.jsonl").write_text(json.dumps({"id": "p1", "prompt": "ແນະນຳສະຖານທີ່ທ່ອງທ່ຽວໃນຫຼວງພະບາງ"},
                                                          ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(GlotbenchError) as e:  # nothing else has Lao data here: no family runs, each one says why
        language_suite("lo", str(data), judges=(PLAIN,))
    assert "laobench-arena: needs options: {baseline: SPEC} (a model it is compared with)" in str(e.value)
