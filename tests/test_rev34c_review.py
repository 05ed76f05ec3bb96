"""Review of issue #34's new families (rev34): each test is a defect found by a hostile user, fixed.

- `tasks list --language` left out the datasheet's licence note (why commercial use is unclear, what
  disagrees) and the reference commit, which the issue asks `tasks list` to show.
- An NER row with fewer (or more) gold tags than tokens loaded: the model is asked for one tag per
  token, so every right reply was scored as no answer.
- massive-intent's gold outside the 60 intents (an index, a spelled-out name) loaded: an item no reply
  could match, in a run that looked valid; an integer gold crashed exact_match.
- sea-mt-bench: an empty baseline answer in the data was judged as an answer, where a baseline
  model's empty reply is an unanswered turn.
- The report card's intervals were `nan–nan` where a resample of a task's items left its metric 0/0
  (an entity F1 of sentences with no entity).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import cli

LIBRARY = Path(__file__).parents[1] / "src" / "glotbench" / "tasks" / "library"
FIXTURES = Path(__file__).parent / "fixtures" / "tasks"


# -- tasks list shows every datasheet claim ----------------------------------------------------------

@pytest.mark.parametrize("lang", ["my", "tl"])
def test_tasks_list_shows_each_familys_licence_note_and_reference_commit(lang):
    from glotbench.registry import families

    p = cli("tasks", "list", "--language", lang)
    assert p.returncode == 0, p.stderr
    blocks = re.split(r"\n(?= [ *]\S)", p.stdout)  # one block per family: its first line starts at column 1
    shown = {b.split()[0].lstrip("*"): b for b in blocks[1:]}
    fams = [f for f in families(lang) if f.datasheet is not None]
    assert fams and set(shown) == {f.name for f in fams}
    notes = refs = 0
    for f in fams:
        ds, block = f.datasheet, " ".join(shown[f.name].split())  # the lines joined, wrapping undone
        assert f"licence: {' '.join(ds.licence.split())}" in block
        if ds.licence_note:
            notes += 1
            assert f"licence note: {' '.join(ds.licence_note.split())}" in block, f.name
        if ds.reference:
            refs += 1
            at = f"@ {ds.reference_commit}" if ds.reference_commit else "(no commit pinned)"
            assert f"reference: {' '.join(ds.reference.split())} {at}" in block, f.name
    assert notes and refs  # the listing has both kinds of line to show


def test_a_licence_conflict_is_named_in_tasks_list():
    p = cli("tasks", "list", "--language", "my")
    block = p.stdout.split("myxnli", 1)[1].split("\n  ntrex", 1)[0]
    assert "commercial use: no" in block
    assert "licence note: non-commercial in every statement" in block
    assert "reference: SEACrowd/seacrowd-experiments evaluation/main_nlu_prompt_batch.py @ 06a3bf28f95c" in block


# -- NER: one gold tag per token ----------------------------------------------------------------------

def _rows(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("task,opts,idcol", [("tlunified-ner", [], "id"), ("universal-ner", ["config=tl_trg"], "idx"),
                                             ("wikiann", ["config=km"], None)])
@pytest.mark.parametrize("tags", [[0], [0, 1, 0]])
def test_ner_gold_with_a_tag_count_other_than_the_tokens_is_one_error_line(tmp_path, task, opts, idcol, tags):
    def row(i: int, t: list[int]) -> dict:
        return {**({idcol: f"r{i}"} if idcol else {}), "tokens": ["ស្ពាន", "Maria"], "ner_tags": t,
                **({"langs": ["km", "km"], "spans": []} if task == "wikiann" else {})}

    data = _rows(tmp_path / "d.jsonl", [row(1, [0, 1]), row(2, tags)])
    p = cli("tasks", "check", task, "--data", data, *[a for o in opts for a in ("--bench-opt", o)])
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.strip().splitlines() == [
        f"error: {data}:2: fields.gold.tags: {len(tags)} tags for 2 tokens (one tag per token; a reply tagging "
        "every token would be scored as no answer)"], p.stderr
    ok = cli("tasks", "check", task, "--data", _rows(tmp_path / "ok.jsonl", [row(1, [0, 1]), row(2, [1, 2])]),
             *[a for o in opts for a in ("--bench-opt", o)])
    assert ok.returncode == 0, ok.stderr


# -- massive-intent: the gold is one of the 60 intents ---------------------------------------------------

@pytest.mark.parametrize("label,shown", [(5, "5"), ("Alarm Set", "'Alarm Set'"), ("alarm", "'alarm'")])
def test_massive_intent_gold_outside_the_intents_is_one_error_line(tmp_path, label, shown):
    data = _rows(tmp_path / "mi.jsonl", [{"id": "1", "label": "alarm_set", "text": "နှိုးပေးပါ"},
                                         {"id": "2", "label": label, "text": "x"}])
    p = cli("tasks", "check", "massive-intent", "--data", data)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        f"error: {data}:2: fields.gold: {shown} is not one of the scorer's 60 labels (alarm_query, alarm_remove, "
        "alarm_set, ...): no reply could match it"]


def test_massive_intent_case_and_spaces_of_a_gold_are_the_scorers_and_load():
    from glotbench.registry import get_benchmark

    bench = get_benchmark("massive-intent")
    data = bench.load(str(FIXTURES / "massive_intent_my.jsonl"))
    assert len(data) >= 4


def test_massive_intents_prompt_regex_and_labels_name_the_same_60():
    spec = yaml.safe_load((LIBRARY / "massive-intent.yaml").read_text(encoding="utf-8"))
    prompt = spec["prompt"]["vars"]["intents"]
    labels = spec["scorer"]["labels"]
    pattern = spec["extract"]["named"][1]["regex"]["pattern"]
    alternation = re.search(r"\(([a-z_|]+)\)", pattern).group(1).split("|")
    assert len(prompt) == 60 and sorted(prompt) == sorted(labels) == sorted(alternation)


def test_exact_match_reads_a_number_gold_as_its_text():
    from glotbench.items import Item
    from glotbench.tasks.scorers import ExactMatch
    from glotbench.tasks.spec import ExactMatch as Spec

    sc = ExactMatch(Spec(kind="exact_match"), "th")
    item = Item.create("1", {"q": "?"}, {"answer": 5}, {})
    assert sc.check_gold(item) is None
    assert sc.correct("5", item) and not sc.correct("6", item)  # was a TypeError: 'int' object is not iterable


def test_exact_match_labels_leave_the_task_hash_as_it_was():
    from glotbench.tasks.benchmark import spec_hash
    from glotbench.tasks.spec import TaskSpec

    raw = yaml.safe_load((LIBRARY / "massive-intent.yaml").read_text(encoding="utf-8"))
    with_labels = TaskSpec.model_validate(raw)
    raw["scorer"] = {k: v for k, v in raw["scorer"].items() if k != "labels"}
    without = TaskSpec.model_validate(raw)
    assert spec_hash(with_labels, {}) == spec_hash(without, {})  # a check of the gold, not a setting


# -- sea-mt-bench: an empty baseline answer in the data ------------------------------------------------

def test_an_empty_baseline_answer_in_the_data_is_an_unanswered_baseline_turn(srv, tmp_path):
    rows = [json.loads(x) for x in (FIXTURES / "sea_mt_bench_th.jsonl").read_text(encoding="utf-8").splitlines()]
    rows[0]["baselines"]["gpt-4.1-2025-04-14"] = ["", "B1-2"]  # turn 1 empty: turn 2 follows nothing
    rows[1]["baselines"]["gpt-4.1-2025-04-14"] = ["B2-1", "  \n"]  # turn 2 blank
    data = _rows(tmp_path / "mt.jsonl", rows)
    srv.configure(model_answers={"j": {"Assistant A": "[[C]]"}})  # every judged turn a tie: 0.5
    args = ["run", "sea-mt-bench", "--model", srv.spec("cand"), "--judge", srv.spec("j"), "--bench-opt", "config=th",
            "--data", data, "--out", str(tmp_path / "out"), "--cache-path", str(tmp_path / "c.sqlite"), "--no-progress"]
    p = cli(*args)
    assert p.returncode == 0, p.stdout + p.stderr
    games = [r for r in srv.requests() if r["model"] == "j"]
    assert len(games) == 2 * (2 * len(rows) - 3)  # no game for q1's two turns nor q2's turn 2
    assert not any("[The Start of Assistant A's Answer]\n\n[The End" in g["messages"][-1]["content"] for g in games)
    summary = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["judged"]["summary"]
    assert summary["unanswered"]["turns"] == ["1_turn1", "1_turn2", "2_turn2"]
    judge = next(iter(summary["turn_values"].values()))
    assert judge["1"] == [1.0, 1.0] and judge["2"] == [0.5, 1.0]  # the candidate answered: the forfeit is the baseline's
    assert judge["3"] == [0.5, 0.5]


# -- the report card: a resample where a task's metric is 0/0 -------------------------------------------

def test_card_intervals_leave_out_resamples_where_a_tasks_metric_is_undefined():
    from glotbench.stats.card import TaskUnits, language_scores

    def f1(sums: np.ndarray) -> np.ndarray:  # entity F1 from (2·correct, predicted + true): 0/0 undefined
        num, den = sums[..., 0], sums[..., 1]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)

    # 4 sentences, 3 with no entity in gold or reply: a quarter of one-sentence draws are 0/0, and
    # (3/4)^4 ≈ 32% of 4-sentence resamples draw none of the one with entities
    ner = {"a": np.array([[2.0, 2.0], [0, 0], [0, 0], [0, 0]]), "b": np.array([[0.0, 2.0], [0, 0], [0, 0], [0, 0]])}
    acc = {"a": np.array([[1.0, 1.0]] * 6 + [[0.0, 1.0]] * 4), "b": np.array([[1.0, 1.0]] * 3 + [[0.0, 1.0]] * 7)}
    ratio = lambda s: np.where(s[..., 1] > 0, s[..., 0] / np.where(s[..., 1] > 0, s[..., 1], 1.0), 0.0)  # noqa: E731
    tasks = [TaskUnits("ner", ner, f1, 0.0, 1.0), TaskUnits("mcq", acc, ratio, 0.5, 1.0)]
    sc = language_scores(tasks, ["a", "b"], resamples=400, seed=3)
    for m in ("a", "b"):
        for iv in (sc.normalised_mean[m], sc.rank_score[m]):
            assert np.isfinite([iv.ci_low, iv.ci_high]).all() and iv.ci_low <= iv.value <= iv.ci_high
        lo, hi = sc.task_normalised_ci[m]["ner"]
        assert np.isfinite([lo, hi]).all() and lo <= sc.task_normalised[m]["ner"] <= hi
    assert sc.task_normalised_ci["a"]["ner"] == (1.0, 1.0)  # every defined resample of a's sentences: F1 1
    assert sc.normalised_mean["a"].value == pytest.approx((1.0 + 0.2) / 2)


# -- a --data file is read in the format its name says -------------------------------------------------

def _as_jsonl(src: Path, dest: Path, delimiter: str) -> str:
    import csv

    with src.open(encoding="utf-8-sig", newline="") as f:
        return _rows(dest, list(csv.DictReader(f, delimiter=delimiter)))


@pytest.mark.parametrize("task,opts,fixture,delim", [
    ("pontoon", ["config=lo"], "pontoon_en_lo.tsv", "\t"),
    ("tico-19", ["config=my"], "tico19_test_en_my.tsv", "\t"),
    ("indommlu", [], "indommlu.csv", ","),
    ("shopee-reviews-tl", [], "shopee_reviews_tl_test.csv", ","),
])
def test_a_task_whose_hub_files_are_tsv_or_csv_reads_a_jsonl_data_file_as_json_lines(tmp_path, task, opts, fixture, delim):
    from glotbench.registry import get_benchmark

    bench = get_benchmark(task, **dict(o.split("=", 1) for o in opts))
    as_hub = bench.load(str(FIXTURES / fixture))
    as_jsonl = bench.load(_as_jsonl(FIXTURES / fixture, tmp_path / f"{task}.jsonl", delim))
    assert len(as_jsonl) == len(as_hub) > 0
    assert [(i.public, i.gold) for i in as_jsonl] == [(i.public, i.gold) for i in as_hub]


def test_the_lao_suite_offline_runs_pontoon_from_its_jsonl(tmp_path):
    from glotbench.engine.sweep import language_suite

    _as_jsonl(FIXTURES / "pontoon_en_lo.tsv", tmp_path / "pontoon.jsonl", "\t")
    suite = language_suite("lo", str(tmp_path))
    assert [e.name for e in suite.benchmarks] == ["pontoon"], suite.skipped  # was skipped: "data.where: ... undefined"
    assert not suite.unread


def test_a_data_file_whose_name_says_no_format_is_read_in_the_tasks(tmp_path):
    from glotbench.registry import get_benchmark

    txt = tmp_path / "rows.txt"
    txt.write_bytes((FIXTURES / "pontoon_en_lo.tsv").read_bytes())
    assert len(get_benchmark("pontoon", config="lo").load(str(txt))) == 3


# -- sea-mt-bench: rows a run of one language cannot use ------------------------------------------------

@pytest.mark.parametrize("change,says", [
    ({"prompts": [{"text": "เขียนจดหมาย"}, {"text": "  "}]}, "prompts[1].text: empty (the question the candidate is asked)"),
    ({"prompts": [{"text": ""}, {"text": "แปล"}]}, "prompts[0].text: empty (the question the candidate is asked)"),
    ({"metadata": {"language": "vi", "category": "writing"}},
     "metadata.language: 'vi', but the run's config is th (one language per run: give that language's rows)"),
])
def test_sea_mt_bench_rows_with_an_empty_question_or_another_language_are_one_error_line(tmp_path, change, says):
    rows = [json.loads(x) for x in (FIXTURES / "sea_mt_bench_th.jsonl").read_text(encoding="utf-8").splitlines()]
    rows[1] = {**rows[1], **change}
    data = _rows(tmp_path / "mt.jsonl", rows)
    p = cli("tasks", "check", "sea-mt-bench", "--bench-opt", "config=th", "--data", data)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [f"error: {data}:2: {says}"]


@pytest.mark.parametrize("language", ["th", "tha", "th-TH", "Thai", "", "not a language 42"])
def test_sea_mt_bench_rows_naming_the_runs_language_or_none_glotbench_reads_load(tmp_path, language):
    rows = [json.loads(x) for x in (FIXTURES / "sea_mt_bench_th.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [{**r, "metadata": {**r["metadata"], "language": language}} for r in rows]
    from glotbench.registry import get_benchmark

    assert len(get_benchmark("sea-mt-bench", config="th").load(_rows(tmp_path / "mt.jsonl", rows))) == len(rows)


# -- tasks check renders every item, as a run does ------------------------------------------------------

def test_tasks_check_fails_on_a_row_the_run_cannot_render_not_only_the_first(tmp_path):
    rows = [{"text": f"tweet {i} maganda", "label": i % 2} for i in range(60)]
    rows[7]["text"] = None  # a null rendered into the prompt: the run refuses it before any call
    data = _rows(tmp_path / "hs.jsonl", rows)
    p = cli("tasks", "check", "filipino-hatespeech", "--data", data)
    assert p.returncode == 2, p.stdout  # was "ok": only the first item was rendered
    assert p.stderr.strip().splitlines() == [
        f"error: {LIBRARY / 'filipino-hatespeech.yaml'}:34: item 7: prompt.user: a value is null (None); write "
        "{{ x or '' }} to render a null as empty"]
    rows[7]["text"] = "tweet 7"
    ok = cli("tasks", "check", "filipino-hatespeech", "--data", _rows(tmp_path / "ok.jsonl", rows))
    assert ok.returncode == 0 and "  prompt: " in ok.stdout
