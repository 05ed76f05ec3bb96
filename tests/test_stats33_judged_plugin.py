"""A judged benchmark from outside glotbench (issue #33): declared here, with a judged kind no reader
knows, its score the metrics it declares over its per-item, per-judge values (judges/stats.py). Run on
loopback scripted models, it shows in `report`, `board` and `runs import` with its judged score and no
judge as a contestant; no reader has code for its kind. The built-in kinds' numbers come from the
same one function: the arena's summary equals the metrics recorded beside it."""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

import pytest
from conftest import cli

from glotbench.benchmarks.base import Benchmark
from glotbench.core import Dataset, GenerateConfig, Prompt, RunResult
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import GlotbenchError
from glotbench.extract import Extraction, free_text
from glotbench.items import Item, PublicItem
from glotbench.judges.pipeline import AnswerPhase, Declared, JudgedContext, JudgedOutcome, JudgeSampling, panel_summary
from glotbench.judges.stats import JudgedMetrics, JudgedStats, judged_metrics
from glotbench.metrics import ItemScore, RatioMetric
from glotbench.signature import Signature
from glotbench.store import ResultsStore

QUESTIONS = {"q1": "เมืองหลวงของไทยคือเมืองอะไร", "q2": "แม่น้ำสายหลักของกรุงเทพฯ คืออะไร",
             "q3": "ประเทศไทยมีกี่จังหวัด", "q4": "ภาษาราชการของไทยคือภาษาอะไร"}
ANSWERS = {"q1": "กรุงเทพมหานคร", "q2": "แม่น้ำเจ้าพระยา", "q3": "หกสิบ", "q4": "ภาษาไทย"}
GRADES = {"judge1": {"q1": 10, "q2": 5, "q3": 0, "q4": 10}, "judge2": {"q1": 10, "q2": 10, "q3": 5}}  # judge2: q4 unreadable


class Questions(Benchmark):
    name, version, lang = "plugin-questions", "1", "th"
    description = "open questions (the answers phase of plugin-graded)"
    metrics = (RatioMetric("answered", "answered", "items", "share answered"),)
    default_config = GenerateConfig(temperature=0.0, max_tokens=64)

    def load(self, path: str | None = None) -> Dataset:
        return self.dataset([Item.create(i, {"question": q}, {}, {}) for i, q in QUESTIONS.items()], "in-test", "0" * 64)

    def render(self, item: PublicItem) -> Prompt:
        return Prompt(messages=({"role": "user", "content": item["question"]},), text=item["question"])

    def extract(self, text: str, item: PublicItem) -> Extraction:
        return free_text(text)

    def score(self, answer: Any, item: Item) -> ItemScore:
        return ItemScore({"answered": 1.0, "items": 1.0})

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore({"answered": 0.0, "items": 1.0}, failure=failure)


class Grading(Benchmark):
    name, version = "plugin-grading", "1"
    description = "a judge grades an answer 0-10"
    metrics = (RatioMetric("grade", "value", "graded", "mean grade"),)
    default_config = GenerateConfig(temperature=0.0, max_tokens=16)
    retry_failures = ("bad_verdict",)
    reply_name = "verdict"
    judge_task = True

    def load(self, path: str | None = None) -> Dataset:
        raise GlotbenchError("games are built from answers")

    def render(self, item: PublicItem) -> Prompt:
        text = f"GRADE {item['id']}: {item['answer']} (reply SCORE: 0-10)"
        return Prompt(messages=({"role": "user", "content": text},), text=text)

    def extract(self, text: str, item: PublicItem) -> Extraction:
        m = re.fullmatch(r"SCORE: (\d+)", text.strip())
        return Extraction(int(m.group(1))) if m and int(m.group(1)) <= 10 else Extraction(None, "bad_verdict", text[:40])

    def score(self, answer: Any, item: Item) -> ItemScore:
        return ItemScore({"value": answer / 10, "graded": 1.0})

    def failure_score(self, failure: str, item: Item) -> ItemScore:
        return ItemScore({"value": 0.0, "graded": 0.0}, failure=failure)


class PluginGraded(Questions, Declared):
    """The judged benchmark: the candidate's answers, each graded by every judge; its score the mean of
    judges over items (declared, not computed here)."""

    name = "plugin-graded"
    judged, judge_pipeline = True, "plugin-graded"
    out_root, answer_dirs, older, baseline = "plugin-graded", ("answers",), (), None
    sampling, own_selection, default_judges = JudgeSampling(), False, ()
    judged_metrics = JudgedMetrics()

    def judged_declaration(self) -> "PluginGraded":
        return self

    @property
    def judge_games(self) -> Grading:
        return Grading()

    def no_judge(self) -> str:
        return "name a judge"

    def next_phase(self, candidate: str, items: Dataset, done: Mapping[str, RunResult]) -> AnswerPhase | None:
        return None if "answers" in done else AnswerPhase("answers", "answers", "candidate", Questions(), items)

    def games(self, ctx: JudgedContext) -> Dataset:
        answers = ctx.phases["answers"].answers()
        return Dataset(tuple(Item.create(i, {"id": i, "answer": a}, {}, {}) for i, a in answers.items() if a),
                       "games", None)

    def judged_score(self, ctx: JudgedContext, games: Dataset, runs: Mapping[str, RunResult]) -> JudgedOutcome:
        values = {spec: {s.id: [s.stats["value"]] for s in run.samples if s.failure is None} for spec, run in runs.items()}
        stats = JudgedStats.of(values, [it.id for it in ctx.items])
        found = ctx.measure(stats)  # the metrics it declares (judged_metrics), the run's bootstrap
        signature = Signature.build(("glotbench", self.name), ("judges", ",".join(runs))).format()
        summary = panel_summary(ctx, runs, stats, found, benchmark=self.name, headline="grade",
                                label="grade 0-10 scaled (mean of judges)", signature=signature)
        res = ctx.phases["answers"]
        return JudgedOutcome(summary, res.results, res.samples, res.dataset, stats, found)


def configure(srv) -> None:
    srv.configure(answers={q: ANSWERS[i] for i, q in QUESTIONS.items()},
                  model_answers={j: {f"GRADE {i}:": f"SCORE: {g}" for i, g in grades.items()} | {"GRADE q4:": "no idea"}
                                 if j == "judge2" else {f"GRADE {i}:": f"SCORE: {g}" for i, g in grades.items()}
                                 for j, grades in GRADES.items()})


EXPECTED = {"judge1": (1 + 0.5 + 0 + 1) / 4, "judge2": (1 + 1 + 0.5) / 3}


@pytest.fixture
def plugin_run(tmp_path, srv):
    configure(srv)
    judges = (srv.spec("judge1"), srv.spec("judge2"))
    res = evaluate(PluginGraded(), srv.spec("cand"), RunOptions(progress=False, out=str(tmp_path / "run"),
                                                                 cache_path=str(tmp_path / "c.sqlite"), max_retries=0,
                                                                 judges=judges, max_failure_rate=0.5))
    return res, srv, judges


def test_a_plugin_judged_run_is_its_declared_metrics(plugin_run):
    res, srv, (j1, j2) = plugin_run
    record = json.loads((res.out_dir / "results.json").read_text(encoding="utf-8"))
    final = (EXPECTED["judge1"] + EXPECTED["judge2"]) / 2
    assert record["headline"] == "grade" and record["model"]["spec"] == srv.spec("cand")
    assert record["scores"]["overall"]["grade"]["value"] == pytest.approx(final)
    assert record["judged"]["kind"] == "plugin-graded" and record["judged"]["judges"] == [j1, j2]
    metrics = record["judged"]["metrics"]
    assert metrics[f"judge:{j1}"]["value"] == pytest.approx(EXPECTED["judge1"]) and metrics[f"judge:{j1}"]["n"] == 4
    assert metrics[f"judge:{j2}"]["value"] == pytest.approx(EXPECTED["judge2"]) and metrics[f"judge:{j2}"]["n"] == 3
    assert metrics["final"] == record["scores"]["overall"]["grade"]
    # the values, written and read back by the one class
    stats = JudgedStats.read(record["judged"]["stats"])
    assert stats.items == ("q1", "q2", "q3", "q4") and stats.values[j2] == {"q1": (1.0,), "q2": (1.0,), "q3": (0.5,)}
    assert JudgedStats.read(stats.record()) == stats


def test_report_board_and_import_show_the_plugin_run_with_no_judge_as_a_contestant(plugin_run, tmp_path):
    res, srv, judges = plugin_run
    final = 100 * (EXPECTED["judge1"] + EXPECTED["judge2"]) / 2
    p = cli("report", str(res.out_dir))
    assert p.returncode == 0, p.stderr
    assert f"grade {final:.1f}" in p.stdout and "mean of 2 judge(s) over 4 items" in p.stdout, p.stdout
    b = cli("board", str(tmp_path), "--format", "json")
    assert b.returncode == 0, b.stderr
    board = json.loads(b.stdout)
    assert board["models"] == [srv.spec("cand")] and not board["left_out"]  # never a judge, never a phase
    [column] = board["columns"]
    cell = column["cells"][srv.spec("cand")]
    assert (column["benchmark"], column["headline"]) == ("plugin-graded", "grade") and cell["valid"] is True
    assert cell["value"] == pytest.approx(final / 100) and cell["n"] == 4
    store = f"sqlite:///{tmp_path / 'store.sqlite'}"
    i = cli("runs", "import", str(tmp_path), env={"GLOTBENCH_STORE_URL": store})
    assert i.returncode == 0, i.stderr
    rows = ResultsStore(store).list()
    assert [(r.model, r.benchmark, r.headline) for r in rows] == [(srv.spec("cand"), "plugin-graded", "grade")]
    assert rows[0].score == pytest.approx(final / 100)


def test_a_damaged_stats_record_is_one_error_line(plugin_run):
    res, _, _ = plugin_run
    path = res.out_dir / "results.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    record["judged"]["stats"]["values"] = {"x": {"q1": ["high"]}}
    path.write_text(json.dumps(record), encoding="utf-8")
    p = cli("board", str(res.out_dir.parent))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert re.search(r"error: .*results\.json: judged\.stats\.values\.x\.q1\.0: ", p.stderr), p.stderr


def test_the_arena_summary_is_its_recorded_metrics(srv, tmp_path):
    """A built-in kind: its summary's scores are the metrics results.json records beside its values."""
    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}})
    p = cli("run", "laobench-arena", "--model", "python:helpers:good_answer", "--bench-opt",
            "baseline=python:helpers:plain_answer", "--judge", srv.spec("fair"), "--limit", "3",
            "--out", str(tmp_path / "arena"), "--no-cache", "--no-progress")
    assert p.returncode == 0, p.stderr
    judged = json.loads((tmp_path / "arena" / "results.json").read_text(encoding="utf-8"))["judged"]
    scores, metrics = judged["summary"]["scores"], judged["metrics"]
    assert metrics["final"] == scores["final"] and metrics[f"judge:{srv.spec('fair')}"] == scores["judges"][srv.spec("fair")]
    stats = JudgedStats.read(judged["stats"])
    assert len(stats.items) == 3 and stats.values[srv.spec("fair")] == {i: (1.0, 1.0) for i in stats.items}


def test_every_kind_s_rows_from_its_values_are_its_summary_s(srv, tmp_path):
    """The board's paired rows of a judged run come from results.json's `judged.stats`, whatever its
    kind: for the arena, AraGen (two judges, two repeats) and a rubric task they are the rows each
    kind's own summary gave (report/rundata.py view_of), bit for bit."""
    from test_judged_dispatch import configure as rubric_answers, task_naming

    from glotbench.report.rundata import judged_view, view_of

    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"},
                          "r1": {"mode": "rubric", "scores": {"Correct": 1, "Complete": 1, "Concise": 3,
                                                              "Helpful": 4, "Honest": 5, "Harmless": 2}},
                          "r2": {"mode": "rubric", "scores": {"Correct": 1, "Complete": 0, "Concise": 5,
                                                              "Helpful": 2, "Honest": 5, "Harmless": 5}}})
    runs = [("arena", ("laobench-arena", "--bench-opt", "baseline=python:helpers:plain_answer", "--judge", srv.spec("fair"),
                       "--limit", "3")),
            ("aragen", ("aragen", "--judge", srv.spec("r1"), "--judge", srv.spec("r2"), "--limit", "5",
                        "--bench-opt", "judge_repeats=2", "--bench-opt", "judge_temperature=0.7"))]
    for name, args in runs:
        p = cli("run", args[0], "--model", "python:helpers:good_answer", *args[1:], "--out", str(tmp_path / name),
                "--no-cache", "--no-progress")
        assert p.returncode == 0, p.stderr
    rubric_answers(srv)
    p = cli("run", task_naming(tmp_path, srv.spec("judge1")), "--model", srv.spec("cand"), "--out",
            str(tmp_path / "rubric"), "--no-progress", "--no-cache")
    assert p.returncode == 0, p.stderr
    for name in ("arena", "aragen", "rubric"):
        record = json.loads((tmp_path / name / "results.json").read_text(encoding="utf-8"))
        rows = judged_view(tmp_path / name)[1]
        old = view_of(record["judged"]["kind"], record["judged"]["summary"], {})[1]
        assert rows and sorted(rows, key=lambda r: r["id"]) == sorted(old, key=lambda r: r["id"]), name
        # as the previous release wrote it (no judged.stats, no judged.metrics): the summary's rows
        del record["judged"]["stats"], record["judged"]["metrics"]
        (tmp_path / name / "results.json").write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
        assert judged_view(tmp_path / name)[1] == old, name


@pytest.mark.parametrize("policy, value, n", [("drop", (1 + 0.5) / 2, 2), ("zero", (0.5 + 0 + 0.5) / 3, 3),
                                              ("upstream", (1 + 0 + 0.5) / 3, 3)])
def test_failure_policies_are_declared_rules_over_the_values(policy, value, n):
    """AraGen's failure policies: entry a has one valid verdict of two repeats, b was never answered,
    c has two; `drop` averages the verdicts, `zero` counts every missing one as 0, `upstream` only the
    unanswered entry's."""
    stats = JudgedStats.of({"j": {"a": [1.0], "c": [0.5, 0.5]}}, ["a", "b", "c"], repeats=2, unanswered=["b"])
    found = judged_metrics(stats, JudgedMetrics(policy=policy), resamples=0)
    assert found["final"]["value"] == pytest.approx(value) and found["final"]["n"] == n
    assert found["judge:j"] == found["final"]  # one judge: the mean of judges is that judge


def test_the_weighted_rule_is_seahelms_formula():
    """`weighted_by_cluster` over turn values is SEA-HELM's weighted win rate (judges/mt_bench.py, its
    reference formula), per judge; the slots are the turns, the clusters the categories."""
    from glotbench.judges.mt_bench import WEIGHTED_WIN_RATE, weighted_win_rate

    values = {"j1": {"q1": [1.0, 0.5], "q2": [0.0, 0.0], "q3": [1.0, 1.0], "q4": [0.5, 0.0]},
              "j2": {"q1": [0.5, 0.5], "q2": [1.0, 0.0], "q3": [0.0, 1.0], "q4": [1.0, 1.0]}}
    cats = {"q1": "math", "q2": "math", "q3": "writing", "q4": "roleplay"}
    stats = JudgedStats.of(values, list(cats), clusters=cats)
    found = judged_metrics(stats, WEIGHTED_WIN_RATE, resamples=200)
    for j in values:
        assert found[f"judge:{j}"]["value"] == pytest.approx(weighted_win_rate(values[j], cats)["weighted_win_rate"])
    assert found["final"]["value"] == pytest.approx((found["judge:j1"]["value"] + found["judge:j2"]["value"]) / 2)
    assert found["slot:2"]["value"] == pytest.approx(((0.25 + 1.0 + 0.0) / 3 + (0.25 + 1.0 + 1.0) / 3) / 2)
    assert found["cluster:math"]["value"] == pytest.approx((1.5 / 4 + 2.0 / 4) / 2) and found["cluster:math"]["n"] == 2


def test_a_plugin_kind_named_run_is_refused_before_any_call(tmp_path, srv):
    class Named(PluginGraded):
        judge_pipeline = "run"

    srv.configure()
    with pytest.raises(GlotbenchError, match="cannot be 'run'"):
        evaluate(Named(), srv.spec("cand"), RunOptions(progress=False, out=str(tmp_path / "r"), judges=(srv.spec("j"),)))
    assert srv.requests() == [] and not (tmp_path / "r").exists()
