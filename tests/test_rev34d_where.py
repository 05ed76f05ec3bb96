"""rev34d: data.where's flags written as text inside a column (nested mappings, lists) and compared
with a boolean; the left-out rows said with an honest n under --limit and on the language card."""

from __future__ import annotations

import json

import pytest

from conftest import cli
from test_library_my34 import ALT_MY, FX, limited_alt_run, one_error, task_file
from test_library_seahelm import run

# Burmese sums; `meta.ok` and `tags` hold flags written as text inside a column, `meta.name` other text
NESTED = ('{"id": "r1", "q": "တစ် ပေါင်း တစ်", "a": "2", "flag": true, "said": "True", '
          '"meta": {"lang": "my", "ok": "False", "name": "No"}, "tags": ["yes"]}\n'
          '{"id": "r2", "q": "နှစ် ပေါင်း တစ်", "a": "3", "flag": false, "said": "False", '
          '"meta": {"lang": "th", "ok": "True", "name": ""}, "tags": ["no", "yes"]}\n'
          '{"id": "r3", "q": "တစ် ပေါင်း သုံး", "a": "4", "flag": true, "said": "no", '
          '"meta": {"lang": "my", "ok": "True", "name": "Open a tab"}, "tags": []}\n')


@pytest.mark.parametrize("where,message", [
    # before: "False" inside a mapping was plain text, true in `not`/`and`: every row dropped, or kept
    ('"{{ not meta.ok }}"', "rows.jsonl:1: data.where: column 'meta.ok' holds the text 'False', not true/false: "
                            "compare it as text ({{ meta.ok == 'False' }})"),
    ('"{{ meta.ok and flag }}"', "rows.jsonl:1: data.where: column 'meta.ok' holds the text 'False'"),
    ('"{{ tags | select | list | length > 0 }}"', "rows.jsonl:1: data.where: column 'tags[]' holds the text 'yes'"),
    # before: a text never equals a boolean, so these dropped every row (or kept the others') silently
    ('"{{ said == true }}"', "rows.jsonl:1: data.where: column 'said' holds the text 'True', not true/false"),
    ('"{{ said != false or flag }}"', "rows.jsonl:1: data.where: column 'said' holds the text 'True'"),
    ('"{{ said is true }}"', "rows.jsonl:1: data.where: column 'said' holds the text 'True'"),
    ('"{{ meta.ok is false }}"', "rows.jsonl:1: data.where: column 'meta.ok' holds the text 'False'"),
    ('"{{ said in [true, false] }}"', "rows.jsonl:1: data.where: column 'said' holds the text 'True'"),
])
def test_a_flag_written_as_text_is_refused_inside_a_column_and_against_a_boolean(tmp_path, where, message):
    line = one_error(cli("tasks", "check", str(task_file(tmp_path, where, NESTED))))
    assert message in line, line


@pytest.mark.parametrize("where,kept", [
    ("\"{{ meta.ok == 'True' and flag }}\"", ["r3"]),
    ("\"{{ meta.lang == 'my' }}\"", ["r1", "r3"]),
    ("\"{{ 'no' in tags }}\"", ["r2"]),
    ('"{{ flag is true }}"', ["r1", "r3"]),
    ('"{{ flag == false }}"', ["r2"]),
    ("\"{{ said in ['True', 'yes'] }}\"", ["r1"]),
    # meta.name holds other text too ("Open a tab"): plain text, its emptiness its truth (Pontoon's idiom)
    ("\"{{ (meta.name or '') | trim != '' }}\"", ["r1", "r3"]),
    ('"{{ not meta.name }}"', ["r2"]),
])
def test_a_verdict_that_compares_the_text_keeps_its_rows(tmp_path, where, kept):
    from glotbench.registry import get_benchmark

    items = get_benchmark(str(task_file(tmp_path, where, NESTED))).load()
    assert [it.id for it in items] == kept
    assert items.rows_left_out == 3 - len(kept)


# a CSV: every cell is text; `label` and `year` hold numbers written as text, `label` 0/1/2 (not flags)
CSV = "id,q,a,label,year\nr1,တစ် ပေါင်း တစ်,2,0,2017\nr2,နှစ် ပေါင်း တစ်,3,1,2018\nr3,တစ် ပေါင်း သုံး,4,2,2017\n"


@pytest.mark.parametrize("where,message", [
    # before: "0" != 0 and "2017" != 2017 are always true: every row kept, or only the other test's
    ('"{{ label != 0 }}"', "rows.csv:2: data.where: column 'label' holds the text '0', not a number: "
                           "compare it as text ({{ label == '0' }}) or convert it (label | float)"),
    ("\"{{ year == 2017 or id == 'r2' }}\"", "rows.csv:2: data.where: column 'year' holds the text '2017', not a number"),
    ('"{{ year in [2017, 2018] }}"', "rows.csv:2: data.where: column 'year' holds the text '2017', not a number"),
    ('"{{ not label }}"', "rows.csv:2: data.where: column 'label' holds the text '0', not a number"),
])
def test_a_number_written_as_text_is_refused_against_a_number(tmp_path, where, message):
    line = one_error(cli("tasks", "check", str(task_file(tmp_path, where, CSV, "rows.csv"))))
    assert message in line, line


@pytest.mark.parametrize("where,kept", [
    ('"{{ label | int != 0 }}"', ["r2", "r3"]),
    ("\"{{ year == '2017' or id == 'r2' }}\"", ["r1", "r2", "r3"]),
    ('"{{ year | int > 2017 }}"', ["r2"]),
])
def test_a_number_written_as_text_converted_or_compared_as_text_keeps_its_rows(tmp_path, where, kept):
    from glotbench.registry import get_benchmark

    items = get_benchmark(str(task_file(tmp_path, where, CSV, "rows.csv"))).load()
    assert [it.id for it in items] == kept


def test_a_limited_run_says_n_counts_part_of_the_kept_rows(tmp_path, srv):
    """--limit 1 of the 2 rows ALT's filter keeps: n is 1, and the note no longer says n counts 2."""
    from glotbench.rundir.validity import notes

    res = limited_alt_run(tmp_path, srv)[1]
    note = "data.where left out 1 of 3 rows (n counts 1 of the 2 kept)"
    assert note in notes(res) and not any("n counts the 2 kept" in t for t in notes(res))
    proc = cli("report", str(tmp_path / "r"))
    assert proc.returncode == 0 and note in proc.stdout, proc.stdout + proc.stderr


def test_the_card_says_the_rows_data_where_left_out_next_to_n(tmp_path, srv):
    """Two models on ALT Burmese (1 of its 3 fixture rows has no Burmese text): the card's task says
    n=2 and the row left out, in the terminal, JSON and HTML card."""
    for m in ("good", "bad"):
        run(tmp_path / m, srv, "alt", "alt_parallel_test.jsonl", ALT_MY if m == "good" else {}, config="my")
    html = tmp_path / "card.html"
    proc = cli("board", str(tmp_path), "--pivot", "language", "--format", "json", "--html", str(html))
    assert proc.returncode == 0, proc.stderr
    card = json.loads(proc.stdout)["tables"][0]["card"]
    assert [(t["task"], t["n"], t["rows_note"]) for t in card["tasks"]] == [("alt", 2, "data.where left out 1 of 3 rows")]
    assert "alt (chrf++): n=2, data.where left out 1 of 3 rows, translated" in html.read_text(encoding="utf-8")
    proc = cli("board", str(tmp_path), "--pivot", "language")
    assert "- alt (chrf++): n=2, data.where left out 1 of 3 rows, translated" in proc.stdout, proc.stdout


def test_the_suites_table_says_the_rows_data_where_left_out(tmp_path, srv):
    """`sweep --language my` prints each run's n: its notes stand beside it, as in every other view."""
    import shutil

    data = tmp_path / "my-data"
    data.mkdir()
    shutil.copy(FX / "alt_parallel_test.jsonl", data / "alt.jsonl")
    srv.configure(answers=ALT_MY)
    proc = cli("sweep", "--language", "my", "--model", srv.spec(), "--data", str(data), "--out", str(tmp_path / "s"),
               "--no-progress", env={"GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("alt-my/"))
    assert " n=2 " in line and line.endswith("[data.where left out 1 of 3 rows (n counts the 2 kept)]"), line


def test_few_shot_examples_of_the_same_split_are_the_rows_already_kept(tmp_path):
    """The evaluated split's kept rows are the few-shot pool as they are: filtered once. Before, the
    filter ran again over the kept rows alone, where `note` holds only yes/no (flags written as text),
    and `(note or '')` was refused there after it had kept the rows."""
    from glotbench.registry import get_benchmark

    rows = "".join(json.dumps({"id": f"r{i}", "q": f"ကိန်း {i}", "a": str(i), "note": note}, ensure_ascii=False) + "\n"
                   for i, note in enumerate(["yes", "no", "maybe", "yes"]))
    bench = get_benchmark(str(task_file(tmp_path, "\"{{ (note or '') != 'maybe' }}\"", rows)), shots=1)
    items = bench.load()
    assert [it.id for it in items] == ["r0", "r1", "r3"] and items.rows_left_out == 1
    assert all(len(it.public["fewshot"]) == 1 and it.public["fewshot"][0]["public"]["question"] != "ကိန်း 2"
               for it in items)
