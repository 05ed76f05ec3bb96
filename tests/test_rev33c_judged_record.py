"""Review rev33c: a judged run's record and its views, as a hostile user meets them. Each test's
docstring names what was wrong: the record's data label (SEA-MT-Bench), the judges a mean is of, an
empty board table, a phase exported as a run, a replayed candidate judging itself, --repeats, and a
subset not said beside the judged score."""

from __future__ import annotations

import json

import pytest

from conftest import cli
from test_sea_mt_bench import FIXTURE, _run, _script


def test_the_judged_record_names_the_data_the_run_read(srv, tmp_path):
    _script(srv)
    p = _run(srv, tmp_path, "--max-failure-rate", "0.9")
    assert p.returncode == 0, p.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert res["benchmark"]["data"] == FIXTURE
    assert res["benchmark"]["data_sha256"] == res["judged"]["summary"]["data_sha256"]
    p = cli("export", str(tmp_path / "out"), "--format", "eee", "--out", str(tmp_path / "eee"))
    assert p.returncode == 0, p.stderr
    (record,) = [json.loads(f.read_text(encoding="utf-8")) for f in (tmp_path / "eee").glob("*.json")]
    names = {r["source_data"]["dataset_name"] for r in record["evaluation_results"]}
    assert names == {FIXTURE}, names


def test_a_rubric_run_says_which_judges_its_mean_is_of(srv, tmp_path):
    """A rubric run whose second judge never gave a readable verdict (kept valid by
    --max-failure-rate 1) printed "mean of 2 judge(s)" beside the first judge's number alone."""
    import asyncio

    from test_tasks_rubric import files, opts, verdict

    from glotbench.engine.judged import run_judged

    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  model_answers={"judge1": {"[Answer]": verdict(1, 5)}, "judge2": {"[Answer]": "no verdict"}})
    res = asyncio.run(run_judged(files(tmp_path), srv.spec("cand"), [srv.spec("judge1"), srv.spec("judge2")],
                                 opts(tmp_path, max_failure_rate=1.0)))
    assert res["scores"]["judges"][srv.spec("judge2")]["value"] is None
    p = cli("report", res["out_dir"])
    assert p.returncode == 0, p.stderr
    text = " ".join(p.stdout.split())
    assert "mean of 1 of 2 judges (no valid verdict: openai:judge2)" in text, text
    assert "mean of 2 judge(s)" not in text


def test_a_board_of_arena_runs_prints_no_empty_table(srv, cache_path, tmp_path):
    """Arena runs are ranked in the board's Bradley–Terry section and left out of its table: a folder
    holding only arenas printed a broken table ("| model |  |" over "|---|") and its legend."""
    from test_arena import _arena

    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}})
    runs = tmp_path / "arenas"
    runs.mkdir()
    _arena(runs, cache_path, [srv.spec("fair")])
    p = cli("board", str(runs))
    assert p.returncode == 0, p.stderr
    assert not any(x.startswith("| model |") for x in p.stdout.splitlines()), p.stdout
    assert "percent or points" not in p.stdout, p.stdout
    assert "Arena ranking" in p.stdout and "python:helpers:good_answer" in p.stdout


def test_a_judged_runs_phases_are_never_exported_as_runs(srv, tmp_path):
    """`export RUN/judge-X` wrote an EEE record (and CSV rows) with the judge as the evaluated model and
    its verdicts' mean as its score; `export RUN/answers` the candidate's answered rate as its score on
    the task (the number issue #33 found on the board). Board and compare refuse a phase; export does
    too. Reported on its own, an answers phase says beside its number that it is not the run's score."""
    import asyncio

    from test_tasks_rubric import files, opts, verdict

    from glotbench.engine.judged import run_judged

    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]\n": [verdict(0, 1)]})
    res = asyncio.run(run_judged(files(tmp_path), srv.spec("cand"), [srv.spec("judge1")], opts(tmp_path)))
    top = tmp_path / "out"
    phases = [d for d in top.iterdir() if d.is_dir()]
    assert {d.name.split("-")[0] for d in phases} == {"answers", "judge"}
    for d in phases:
        for fmt in ("csv", "eee"):
            p = cli("export", str(d), "--format", fmt, "--out", str(tmp_path / f"x-{d.name}-{fmt}"))
            assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
            assert f"is a phase of the judged run {top.resolve()}: export that directory" in p.stderr, p.stderr
            assert not (tmp_path / f"x-{d.name}-{fmt}").exists()
    p = cli("export", str(top), "--format", "json")
    assert p.returncode == 0 and '"metric": "rubric"' in p.stdout and res["scores"]["final"]["value"] == 0.0
    p = cli("report", str(top / "answers"))
    assert p.returncode == 0, p.stderr
    assert "a phase of the run in the directory above (answers)" in " ".join(p.stdout.split()), p.stdout


def test_a_replayed_candidate_named_as_a_judge_is_skipped(srv, cache_path, tmp_path):
    """AraGen on replayed answers (`--model replay:FILE`) has no candidate model to compare judges
    with, so a judge named exactly as the candidate (the same replay file) was asked, and judged its
    own answers; it is skipped as the candidate, as an HTTP model named twice is."""
    from test_aragen_parity import ANSWERS, replay_jsonl, run

    from glotbench.errors import GlotbenchError

    answers = f"replay:{replay_jsonl(tmp_path, {k: v for k, v in ANSWERS.items() if len(v) == 1})}"  # one turn each
    srv.configure(judges={"j": {"mode": "rubric", "scores": {"Correct": 1, "Complete": 1, "Concise": 5, "Helpful": 5,
                                                             "Honest": 5, "Harmless": 5}}})
    res = run(tmp_path, cache_path, answers, [answers, srv.spec("j")], limit=2)
    assert res["skipped_judges"] == [answers] and list(res["per_judge"]) == [srv.spec("j")]
    with pytest.raises(GlotbenchError, match="skipped"):
        run(tmp_path, cache_path, answers, [answers], limit=2)


def test_a_rubric_task_refuses_repeats(srv, tmp_path):
    """`run TASK --judge J --repeats 2` ran both repeats' answers and judged the last one only, under the
    signature of a repeats-1 run (the board put the two in one column); it is refused before any call,
    as the arena and AraGen refuse it. --subset stays a rubric task's own (its answers select their items)."""
    from test_tasks_rubric import files, verdict

    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]\n": [verdict(1, 5)]})
    task = files(tmp_path)
    p = cli("run", task, "--model", srv.spec("cand"), "--judge", srv.spec("judge1"), "--repeats", "2",
            "--out", str(tmp_path / "rep"), "--no-progress", "--no-cache")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "error: lao-open-qa judges one answer per item: --repeats must be 1, got 2" in p.stderr
    assert srv.requests() == [] and not (tmp_path / "rep").exists()
    p = cli("run", task, "--model", srv.spec("cand"), "--judge", srv.spec("judge1"), "--subset", "quick",
            "--out", str(tmp_path / "quick"), "--no-progress", "--no-cache")
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("select", [("--limit", "2"), ("--subset", "quick")])
def test_a_rubric_run_on_a_subset_says_so_beside_its_score(srv, tmp_path, select):
    """`run TASK --judge J --limit 2` (and `report` of it) printed the judged score with no "subset"
    line: the rubric's summary holds no selection, its record does (the board and export said it)."""
    from test_tasks_rubric import files, verdict

    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]\n": [verdict(1, 5)]})
    out = tmp_path / "out"
    p = cli("run", files(tmp_path), "--model", srv.spec("cand"), "--judge", srv.spec("judge1"), *select,
            "--out", str(out), "--no-progress", "--no-cache")
    assert p.returncode == 0, p.stderr
    for text in (p.stdout, cli("report", str(out)).stdout):
        lines = [x for x in text.splitlines() if x.startswith("subset: ")]
        assert len(lines) == 1 and f"({' '.join(select)})" in lines[0], text


def test_rescore_of_judged_runs_names_each_once(srv, tmp_path):
    """`rescore` of judged runs listed each as "PATH: PATH: a judged run; ..."."""
    import asyncio

    from test_tasks_rubric import files, opts, verdict

    from glotbench.engine.judged import run_judged

    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ"}, sequences={"[Answer]\n": [verdict(1, 5)]})
    asyncio.run(run_judged(files(tmp_path), srv.spec("cand"), [srv.spec("judge1")], opts(tmp_path)))
    out = str(tmp_path / "out")
    p = cli("rescore", out)
    assert p.returncode == 2, p.stderr
    (line,) = [x for x in p.stderr.splitlines() if x.startswith("error:")]
    assert line == f"error: no run could be re-scored: {out}: a judged run (rubric); rescore reads ordinary runs", line


def test_a_long_judge_name_never_cuts_the_interval(srv, tmp_path):
    """SEA-MT-Bench's table kept a long judge name whole and cut its number on an 80-column pipe:
    "62.5 (25…" (the interval lost, "weighted win rate" read "wei…"). The name folds instead."""
    from test_sea_mt_bench import FIXTURE, _script

    from glotbench.report.terminal import interval_text

    _script(srv)
    p = _run(srv, tmp_path, "--max-failure-rate", "0.9", judges=("j1",), out="first")
    assert p.returncode == 0, p.stderr
    folder = tmp_path / ("a-rather-long-folder-name-for-judgements-" * 2)
    folder.mkdir()
    verdicts = folder / "judgements.jsonl"
    (judge,) = [d for d in (tmp_path / "first").iterdir() if d.name.startswith("judge-")]
    verdicts.write_text("".join(json.dumps({"id": r["id"], "output": r.get("output") or ""}, ensure_ascii=False) + "\n"
                                for r in map(json.loads, (judge / "samples.jsonl").read_text(encoding="utf-8").splitlines())),
                        encoding="utf-8")
    out = tmp_path / "replayed"
    p = cli("run", "sea-mt-bench", "--model", srv.spec("cand"), "--bench-opt", "config=th", "--data", FIXTURE,
            "--judge", f"replay:{verdicts}", "--out", str(out), "--max-failure-rate", "0.9", "--no-progress",
            "--cache-path", str(tmp_path / "cache.sqlite"))
    assert p.returncode == 0, p.stderr
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    (est,) = res["judged"]["summary"]["scores"]["judges"].values()
    for text in (p.stdout, cli("report", str(out)).stdout):
        assert interval_text(est, none="n/a") in text and "weighted win rate" in text, text


def test_the_commands_a_rubric_runs_html_error_gives_run_as_given(srv, tmp_path):
    """`report --html` of a rubric run (no page of its own yet) names the commands to use instead; in a
    folder with a space they split the path in two: `glotbench report /tmp/my runs/out`."""
    import asyncio
    import shlex

    from test_tasks_rubric import files, opts, verdict

    from glotbench.engine.judged import run_judged

    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ"}, sequences={"[Answer]\n": [verdict(1, 5)]})
    folder = tmp_path / "my runs ລາວ"
    folder.mkdir()
    asyncio.run(run_judged(files(folder), srv.spec("cand"), [srv.spec("judge1")], opts(folder)))
    p = cli("report", "--html", str(folder / "out"))
    assert p.returncode == 2, p.stderr
    commands = [c for c in p.stderr.split("`")[1::2] if c.startswith("glotbench ")]
    assert len(commands) == 2, p.stderr
    for c in commands:
        argv = shlex.split(c)[1:]
        assert cli(*argv).returncode == 0, c


def test_board_bt_reads_a_folder_of_arenas_as_board_does(srv, cache_path, tmp_path):
    """`board FOLDER` ranks the arenas under FOLDER in its Bradley–Terry section; `board --bt FOLDER`
    (the folded `arena-rank`) said "FOLDER is not a finished arena"."""
    from test_arena import _arena

    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}})
    runs = tmp_path / "arenas"
    runs.mkdir()
    _arena(runs, cache_path, [srv.spec("fair")])
    _arena(runs, cache_path, [srv.spec("fair")], candidate="python:helpers:mixed_answer")
    p = cli("board", "--bt", str(runs), "--format", "json")
    assert p.returncode == 0, p.stderr
    ranked = json.loads(p.stdout)
    assert len(ranked["arenas"]) == 2, ranked
    p = cli("board", "--bt", str(runs / "nothing-here"))
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_the_judges_report_reads_a_folder_of_arenas(srv, cache_path, tmp_path):
    """`report --judges FOLDER` said "these are: run (several plain runs ...)" of a folder holding
    arenas; it reads the judged runs under it, as `board` does, never their phases."""
    from test_arena import _arena

    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}, "biased": {"mode": "always_A"}})
    runs = tmp_path / "arenas"
    runs.mkdir()
    _arena(runs, cache_path, [srv.spec("fair"), srv.spec("biased")])
    _arena(runs, cache_path, [srv.spec("fair"), srv.spec("biased")], candidate="python:helpers:mixed_answer")
    p = cli("report", "--judges", str(runs))
    assert p.returncode == 0, p.stderr
    scores = json.loads(p.stdout)["scores"]
    assert sorted(scores) == ["python:helpers:good_answer", "python:helpers:mixed_answer"], scores
    assert all(sorted(s) == sorted([srv.spec("fair"), srv.spec("biased")]) for s in scores.values())
