"""Issue #34, the 15th Burmese family and `data.where` (branch my34).

- myanmar-news: Burmese news snippets, four topics, from MTEB's pinned copy: scored by hand on a fixture in
  the copy's schema, the same replies by MTEB's main score (sklearn's accuracy_score), read through the
  real hub-loading code at its pinned revision, and counted by `tasks list --language my`.
- `data.where` is one expression whose value is True or False: text ("False", "no", "") is refused where
  the task file says it, and a row's text spelling a truth value is never read as one.
- The rows `data.where` leaves out are recorded with the run's selection, shown in its notes (report,
  board) and by `tasks check`: n says what it is of."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli
from test_library_seahelm import FX, run, user_prompts, value
from test_tasks_review import SMALL  # a one-file task (lao-sums), here in Burmese, `data.where` at line 6

LIB = Path(__file__).resolve().parents[1] / "src" / "glotbench" / "tasks" / "library"
NEWS_SHA = "475b43ffbdb5138ad67a01a2c860bc7db502f3c5"


def rows(name: str) -> list[dict]:
    return [json.loads(x) for x in (FX / name).read_text(encoding="utf-8").splitlines() if x.strip()]


# -- myanmar-news --------------------------------------------------------------------------------------

NEWS = {"မြန်မာအသင်းသည်": "sport",  # gold 0 sport: right
        "လွှတ်တော်သည်": "Politics",  # gold 1 politics: right (case ignored)
        "ရွှေဈေးနှုန်း": "The topic is business.",  # gold 2 business: right (the one option named)
        "ရုပ်ရှင်မင်းသမီးသည်": "sport",  # gold 3 entertainment: wrong
        "ကုမ္ပဏီသည်": "business or politics"}  # gold 2: two options named, no answer: wrong


def test_myanmar_news_burmese_topics_by_hand(tmp_path, srv):
    s, samples = run(tmp_path, srv, "myanmar-news", "myanmar_news_test.jsonl", NEWS)
    # 3 of 5 right; the fifth names two topics: no answer
    assert value(s, "accuracy") == pytest.approx(3 / 5)
    assert [x["answer"]["topic"] if x["answer"] else None for x in samples] == ["A", "B", "C", "A", None]
    from glotbench.registry import get_benchmark

    items = get_benchmark("myanmar-news").load(str(FX / "myanmar_news_test.jsonl"))
    assert [x.gold["answer"] for x in items] == ["A", "B", "C", "D", "C"]
    prompt = user_prompts(srv)[0]
    assert prompt.startswith("Which topic is this Burmese news text about? Choose one of: sport, politics, "
                             "business, entertainment.")
    assert "Text: မြန်မာအသင်းသည် ဘောလုံးပွဲတွင် နှစ်ဂိုးဖြင့် နိုင်ခဲ့သည်။" in prompt


def test_myanmar_news_accuracy_is_mtebs_main_score():
    """MTEB's MyanmarNews.v2 main score is accuracy, sklearn's accuracy_score over the predicted labels."""
    from sklearn.metrics import accuracy_score

    golds = [0, 1, 2, 3, 2]
    preds = [0, 1, 2, 0, -1]  # -1: no topic read
    assert accuracy_score(golds, preds) == pytest.approx(3 / 5)
    assert [r["label"] for r in rows("myanmar_news_test.jsonl")] == golds


def test_myanmar_news_labels_refused_outside_its_four_topics(tmp_path):
    f = tmp_path / "rows.jsonl"
    f.write_text('{"text": "သတင်း", "label": 4}\n', encoding="utf-8")
    proc = cli("tasks", "check", "myanmar-news", "--data", str(f))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "rows.jsonl:1" in proc.stderr, proc.stderr


def test_burmese_reaches_fifteen_families():
    """`tasks list --language my`: families whose pinned data holds Burmese rows (`*` ones not counted)."""
    from glotbench.registry import families

    fam = {f.name: f for f in families("my")}
    assert "myanmar-news" in fam and not fam["myanmar-news"].datasheet.needs_data("my")
    assert sum(not f.datasheet.needs_data("my") for f in fam.values()) >= 15
    proc = cli("tasks", "list", "--language", "my")
    assert proc.returncode == 0 and "myanmar-news" in proc.stdout
    first = proc.stdout.splitlines()[0]
    total, starred = int(first.split()[0]), int(first.split("; ")[1].split()[0])
    assert total - starred >= 15, first


@pytest.fixture(scope="module")
def news_hub(tmp_path_factory):
    from test_tasks_hub import _repo, serve_hub

    from glotbench.tasks.files import read_task_file

    assert read_task_file(LIB / "myanmar-news.yaml")[0].data.revision == NEWS_SHA
    root = tmp_path_factory.mktemp("hub")
    card = "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n    path: data/test-*\n---\n# card\n"
    _repo(root, "mteb/myanmar_news", NEWS_SHA,
          {"README.md": card, "data/test-00000-of-00001.parquet": rows("myanmar_news_test.jsonl")})
    yield from serve_hub(root)


def test_myanmar_news_reads_the_pinned_layout(tmp_path, news_hub, srv):
    from test_tasks_hub import pinned_run

    pinned_run(tmp_path, news_hub, srv, "myanmar-news", (), NEWS, f"hub:mteb/myanmar_news@{NEWS_SHA} default/test",
               "accuracy", 3 / 5)


# -- data.where: one expression, its value True or False ---------------------------------------------

# Burmese sums; `flag` is a JSON boolean, `said` a flag written as text (as a CSV holds it)
ROWS = ('{"id": "r1", "q": "တစ် ပေါင်း တစ်", "a": "2", "flag": true, "said": "True"}\n'
        '{"id": "r2", "q": "နှစ် ပေါင်း တစ်", "a": "3", "flag": false, "said": "False"}\n'
        '{"id": "r3", "q": "တစ် ပေါင်း သုံး", "a": "4", "flag": true, "said": "no"}\n')


def task_file(tmp_path: Path, where: str, data: str = ROWS, name: str = "rows.jsonl") -> Path:
    (tmp_path / name).write_text(data, encoding="utf-8")
    p = tmp_path / "t.yaml"
    text = SMALL.replace("language: lo\n", "language: my\n").replace("  file: sums.jsonl\n", f"  file: {name}\n  where: {where}\n")
    p.write_text(text, encoding="utf-8")
    return p


def one_error(proc) -> str:
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


@pytest.mark.parametrize("where", ['"False"', '"false"', '"no"', "'False'", '"True"', '"0"', '""', '"  "',
                                   '"flag"', '"{% if flag %}True{% endif %}"', '"{{ flag }} and {{ said }}"'])
def test_data_where_as_text_is_refused_naming_the_file_and_key(tmp_path, where):
    """Text where a verdict per row is meant: before, "False" dropped every row, "" kept every row and
    "no" failed row by row; now refused where the task file says it."""
    line = one_error(cli("tasks", "check", str(task_file(tmp_path, where))))
    assert line.startswith(f"error: {tmp_path / 't.yaml'}:6: data.where: ") and "is not one template expression" in line


@pytest.mark.parametrize("where", ["false", "no", "0", "1.5"])
def test_data_where_as_a_yaml_scalar_is_refused(tmp_path, where):
    line = one_error(cli("tasks", "check", str(task_file(tmp_path, where))))
    assert line.startswith(f"error: {tmp_path / 't.yaml'}:6: data.where: must be a string"), line


@pytest.mark.parametrize("where,kept", [
    ('"{{ flag }}"', ["r1", "r3"]),
    ('"{{ not flag }}"', ["r2"]),
    ("\"{{ said == 'False' }}\"", ["r2"]),
    ("\"{{ said | lower in ['true', 'yes'] }}\"", ["r1"]),
    ("\"{{ flag and said != 'no' }}\"", ["r1"]),
])
def test_data_where_keeps_the_rows_its_value_says(tmp_path, where, kept):
    from glotbench.registry import get_benchmark

    items = get_benchmark(str(task_file(tmp_path, where))).load()
    assert [it.id for it in items] == kept
    assert items.rows_left_out == 3 - len(kept)


@pytest.mark.parametrize("where,message", [
    ('"{{ said }}"', "rows.jsonl:1: data.where: gave the text 'True', not True or False"),
    ('"{{ not said }}"', "rows.jsonl:1: data.where: column 'said' holds the text 'True', not true/false"),
    ('"{{ flag and said }}"', "rows.jsonl:1: data.where: gave the text 'True', not True or False"),
    ('"{{ q }}"', "rows.jsonl:1: data.where: gave the text 'တစ် ပေါင်း တစ်', not True or False"),
    ('"{{ 1 }}"', "rows.jsonl:1: data.where: gave int 1, not True or False"),
    ('"{{ none }}"', "rows.jsonl:1: data.where: gave NoneType None, not True or False"),
    ('"{{ missing }}"', "rows.jsonl:1: data.where: 'missing' is undefined"),
])
def test_data_where_that_is_not_a_verdict_is_one_line_naming_the_row(tmp_path, where, message):
    line = one_error(cli("tasks", "check", str(task_file(tmp_path, where))))
    assert message in line, line


def test_a_csv_flag_is_text_and_never_read_as_true_or_false(tmp_path):
    """A CSV's cells are text: `not keep` would call the text "False" true (any non-empty text is)."""
    csv = "id,q,a,keep\nr1,တစ် ပေါင်း တစ်,2,True\nr2,နှစ် ပေါင်း တစ်,3,False\n"
    line = one_error(cli("tasks", "check", str(task_file(tmp_path, '"{{ not keep }}"', csv, "rows.csv"))))
    assert "rows.csv:2: data.where: column 'keep' holds the text 'True', not true/false: compare it as text" in line
    from glotbench.registry import get_benchmark

    items = get_benchmark(str(task_file(tmp_path, "\"{{ keep == 'True' }}\"", csv, "rows.csv"))).load()
    assert [it.id for it in items] == ["r1"] and items.rows_left_out == 1


def test_text_that_is_not_a_flag_column_keeps_its_plain_truth(tmp_path):
    """Pontoon's filter `(source_string or '') | trim != ''` over UI strings, "No" and "Yes" among them: a
    column of other text too is text, not flags, and "No" is a string to keep like any other."""
    from glotbench.registry import get_benchmark

    f = tmp_path / "en-lo.tsv"
    f.write_text("source_string\ttarget_string\nNo\tບໍ່\nYes\tແມ່ນ\nOpen a new tab\tເປີດແຖບໃໝ່\nFirefox\t\n",
                 encoding="utf-8")
    items = get_benchmark("pontoon", config="lo").load(str(f))
    assert [it.public["text"] for it in items] == ["No", "Yes", "Open a new tab"]
    assert items.rows_left_out == 1  # Firefox: no Lao text


def test_the_library_filters_are_one_expression_each():
    from glotbench.tasks.files import read_task_file
    from glotbench.tasks.template import one_expression

    wheres = {p.stem: read_task_file(p)[0].data.where for p in sorted(LIB.glob("*.yaml"))}
    wheres = {k: w for k, w in wheres.items() if w is not None}
    assert {"alt", "pontoon", "tydiqa-goldp", "wmt24pp"} <= set(wheres)
    assert all(one_expression(w) for w in wheres.values()), wheres


# -- the rows data.where left out: recorded, and said --------------------------------------------------

ALT_MY = {"The bridge was opened": "တံတားကို တနင်္လာနေ့တွင် ဖွင့်လှစ်ခဲ့သည်။", "The team won": "အသင်း"}
NOTE = "data.where left out 1 of 3 rows (n counts the 2 kept)"


def test_a_run_records_and_says_the_rows_data_where_left_out(tmp_path, srv):
    """ALT's second fixture row has no Burmese text: data.where leaves it out, 2 items of 3 rows."""
    from glotbench.rundir.validity import notes

    run(tmp_path, srv, "alt", "alt_parallel_test.jsonl", ALT_MY, config="my")
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    sel = res["selection"]
    assert (sel["n"], sel["of"], sel["where_left_out"], sel["rows_read"], sel["full"]) == (2, 2, 1, 3, True)
    assert res["counts"]["items"] == 2
    assert NOTE in notes(res)
    proc = cli("report", str(tmp_path / "r"))
    assert proc.returncode == 0 and NOTE in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    html = tmp_path / "report.html"
    assert cli("report", str(tmp_path / "r"), "--html", str(html)).returncode == 0
    assert NOTE in html.read_text(encoding="utf-8")


def limited_alt_run(tmp_path, srv):
    """`run alt` on Burmese with --limit 1: the process, and its results.json."""
    srv.configure(answers=ALT_MY)
    proc = cli("run", "alt", "--bench-opt", "config=my", "--data", str(FX / "alt_parallel_test.jsonl"),
               "--model", srv.spec(), "--limit", "1", "--out", str(tmp_path / "r"), "--no-progress",
               "--cache-path", str(tmp_path / "c.sqlite"))
    assert proc.returncode == 0, proc.stderr
    return proc, json.loads((tmp_path / "r" / "results.json").read_text())


def test_a_limited_run_keeps_the_count_of_the_rows_read(tmp_path, srv):
    sel = limited_alt_run(tmp_path, srv)[1]["selection"]
    assert (sel["n"], sel["of"], sel["where_left_out"], sel["rows_read"], sel["full"]) == (1, 2, 1, 3, False)


def test_no_filter_no_count_and_a_filter_that_keeps_all_says_zero(tmp_path, srv):
    from glotbench.rundir.validity import notes

    run(tmp_path / "a", srv, "myanmar-news", "myanmar_news_test.jsonl", NEWS)
    res = json.loads((tmp_path / "a" / "r" / "results.json").read_text())
    assert "where_left_out" not in res["selection"] and not any("data.where" in t for t in notes(res))
    run(tmp_path / "b", srv, "alt", "alt_parallel_test.jsonl", {"ស្ពាន": "x", "ភ្លៀង": "y", "ក្រុម": "z"},
        config="khm", direction="xx-en")
    res = json.loads((tmp_path / "b" / "r" / "results.json").read_text())
    assert res["selection"]["where_left_out"] == 0 and res["selection"]["rows_read"] == 3
    assert not any("data.where" in t for t in notes(res))


def test_tasks_check_says_the_rows_data_where_left_out(tmp_path):
    proc = cli("tasks", "check", "alt", "--bench-opt", "config=my", "--data", str(FX / "alt_parallel_test.jsonl"))
    assert proc.returncode == 0, proc.stderr
    assert "2 items from " in proc.stdout and "(data.where left out 1 of 3 rows)" in proc.stdout
    proc = cli("tasks", "check", "myanmar-news", "--data", str(FX / "myanmar_news_test.jsonl"))
    assert proc.returncode == 0 and "data.where" not in proc.stdout
