"""Every run on bundled data that is not the published benchmark says so: results.json's `data_label`
(machine-readable), the table's caption, the report's header and the board's cell. A user's own
file is not sample data; a copy of the bundled file is."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import cli
from judged_helpers import summary
from glotbench.registry import benchmarks, get_benchmark
from helpers import lao_mcq_answers

SAMPLE = "sample data ({n} items written for glotbench, not the published benchmark)"
EXPECTED = {  # every benchmark with bundled data, and what that data is
    "laobench-mcq": ("sample", 25), "laobench-translation": ("sample", 8), "laobench-arena-prompts": ("sample", 8),
    "aragen-answers": ("sample", 12), "laobench-arena": ("sample", 8), "aragen": ("sample", 12), "deepsea-mgsm": ("sample", 12), "deepsea-indommlu": ("sample", 10),
    "deepsea-xquad": ("sample", 8), "deepsea-crosssum": ("sample", 8), "deepsea-wmt24pp": ("sample", 9),
    "vi-diacritics": ("own", 164), "vi-tone-errors": ("own", 128), "sea-mt-bench": ("sample", 4),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_bundled_data_set_is_labelled_for_what_it_is(name):
    bench = get_benchmark(name)
    label = bench.data_label(bench.load())
    kind, n = EXPECTED[name]
    assert label["kind"] == kind and label["items"] == n and label["sample"] == (kind == "sample")
    if kind == "sample":
        assert label["label"] == SAMPLE.format(n=n)
    elif name == "vi-diacritics":
        assert label["label"] == "glotbench's own set (164 items), not the published Dấu or Die data"
    else:
        assert label["label"] == "glotbench's own set (128 items; the task has no published data set)"


def test_every_registered_benchmark_with_bundled_data_is_in_the_table():
    """A new benchmark that ships data must decide what its data is (this table fails otherwise)."""
    shipped = set()
    for name in benchmarks(hidden=True):
        try:
            data = get_benchmark(name).load()
        except Exception:  # noqa: BLE001 - no bundled data (a judge phase's games)
            continue
        if str(data.source).startswith("bundled:"):
            shipped.add(name)
    assert shipped == set(EXPECTED)


def test_a_users_own_file_is_not_sample_data_but_a_copy_of_the_sample_is(tmp_path):
    bench = get_benchmark("laobench-mcq")
    src = Path(bench.load().source.split(":", 1)[1].split(" ")[0])
    data_dir = Path(__file__).resolve().parents[1] / "src/glotbench/benchmarks/data"
    copy = tmp_path / "copy.jsonl"
    shutil.copy(data_dir / src, copy)
    assert bench.data_label(bench.load(str(copy)))["label"] == SAMPLE.format(n=25)
    own = tmp_path / "own.jsonl"
    rows = [json.loads(x) for x in (data_dir / src).read_text(encoding="utf-8").splitlines()]
    rows[3]["question"] += " (edited)"  # one item of the user's own: the user's file
    own.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert bench.data_label(bench.load(str(own))) is None


@pytest.mark.parametrize("name", ["laobench-mcq", "vi-diacritics", "deepsea-mgsm", "laobench-arena-prompts"])
@pytest.mark.parametrize("how", ["crlf", "reserialised", "first ten"])
def test_the_sample_in_other_bytes_or_a_part_of_it_is_still_the_sample(name, how, tmp_path):
    """The label followed the file's bytes: the sample saved with CRLF line endings, re-written by a
    JSON tool (\\u escapes, other key order) or cut to its first items was presented as the benchmark.
    Now the items decide: every item one of the bundled ones (id and content) is the bundled data."""
    bench = get_benchmark(name)
    bundled = bench.load()
    src = Path(__file__).resolve().parents[1] / "src/glotbench/benchmarks/data" / \
        bundled.source.split(":", 1)[1].split(" ")[0]
    text = src.read_text(encoding="utf-8")
    out = tmp_path / src.name
    if src.suffix == ".json":  # DeepSEA's task file: one JSON document
        doc = json.loads(text)
        if how == "first ten":
            doc = {**doc, **{k: v[:10] for k, v in doc.items() if isinstance(v, list)}}
        out.write_text(json.dumps(doc, indent=None if how == "reserialised" else 2, sort_keys=how == "reserialised")
                       .replace("\n", "\r\n" if how == "crlf" else "\n"), encoding="utf-8")
    else:
        rows = [json.loads(x) for x in text.splitlines() if x.strip()]
        if how == "first ten":
            rows = rows[:10]
        end = "\r\n" if how == "crlf" else "\n"
        out.write_text("".join(json.dumps(r, sort_keys=how == "reserialised", ensure_ascii=how != "reserialised"
                                          and how != "crlf") + end for r in rows), encoding="utf-8", newline="")
    data = bench.load(str(out))
    assert data.sha256 != bundled.sha256  # other bytes
    label = bench.data_label(data)
    assert label is not None and label["items"] == len(data), (how, label)
    assert label["kind"] == EXPECTED[name][0]


def test_a_laobench_run_on_the_sample_says_so_everywhere(srv, tmp_path):
    srv.configure(answers=lao_mcq_answers())
    out = tmp_path / "r"
    p = cli("run", "laobench-mcq", "--model", srv.spec(), "--out", str(out), "--no-cache", "--no-progress")
    assert p.returncode == 0, p.stderr
    label = SAMPLE.format(n=25)
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert res["data_label"] == {"kind": "sample", "sample": True, "items": 25, "label": label}
    assert label in p.stdout  # the table's caption
    assert cli("report", str(out), "--html").returncode == 0
    assert f'<p class="warn" data-note="0">{label}</p>' in (out / "report.html").read_text(encoding="utf-8")
    b = json.loads(cli("board", str(out), "--format", "json").stdout)
    assert b["columns"][0]["cells"][srv.spec()]["notes"] == [label]
    assert f"n=25 [{label}]" in cli("board", str(out), "--format", "md").stdout
    # The same items in other bytes (a blank line added) are still the sample: labelled (they ran
    # unlabelled before); one item of the user's own makes it the user's file: no label.
    src = Path(__file__).resolve().parents[1] / "src/glotbench/benchmarks/data/laobench_sample.jsonl"
    same = tmp_path / "same.jsonl"
    same.write_text(src.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    p = cli("run", "laobench-mcq", "--model", srv.spec(), "--data", str(same), "--out", str(tmp_path / "same"),
            "--no-cache", "--no-progress")
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "same/results.json").read_text(encoding="utf-8"))["data_label"]["label"] == label
    assert label in p.stdout
    own = tmp_path / "own.jsonl"
    rows = [json.loads(x) for x in src.read_text(encoding="utf-8").splitlines()]
    rows.append({**rows[0], "id": "mine-1"})
    own.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    p = cli("run", "laobench-mcq", "--model", srv.spec(), "--data", str(own), "--out", str(tmp_path / "own"),
            "--no-cache", "--no-progress")
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "own/results.json").read_text(encoding="utf-8"))["data_label"] is None
    assert "sample data" not in p.stdout


def test_deepsea_and_aragen_runs_on_the_samples_are_labelled(srv, tmp_path):
    p = cli("run", "deepsea-mgsm", "--model", "python:helpers:deepsea_letter_b", "--out", str(tmp_path / "d"),
            "--no-cache", "--no-progress")
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "d/results.json").read_text(encoding="utf-8"))["data_label"]["label"] == SAMPLE.format(n=12)
    assert SAMPLE.format(n=12) in p.stdout
    all5 = {"Correct": 1, "Complete": 1, "Concise": 5, "Helpful": 5, "Honest": 5, "Harmless": 5}
    srv.configure(judges={"fair": {"mode": "rubric", "scores": all5}})
    p = cli("run", "aragen", "--model", "python:helpers:good_answer", "--judge", srv.spec("fair"), "--out",
            str(tmp_path / "a"), "--no-cache", "--no-progress")
    assert p.returncode == 0, p.stderr
    res = summary(tmp_path / "a")
    assert res["data_label"]["label"] == SAMPLE.format(n=12) and SAMPLE.format(n=12) in p.stdout
    assert res["validity"]["valid"]


def test_an_aragen_run_on_a_copy_of_the_sample_is_labelled(srv, tmp_path):
    """AraGen labelled its sample only when read from the package: `--data` with a copy of it (the
    same bytes) said nothing."""
    all5 = {"Correct": 1, "Complete": 1, "Concise": 5, "Helpful": 5, "Honest": 5, "Harmless": 5}
    srv.configure(judges={"fair": {"mode": "rubric", "scores": all5}})
    copy = tmp_path / "mine.json"
    shutil.copy(Path(__file__).resolve().parents[1] / "src/glotbench/benchmarks/data/aragen_sample.json", copy)
    p = cli("run", "aragen", "--model", "python:helpers:good_answer", "--judge", srv.spec("fair"), "--data", str(copy),
            "--limit", "2", "--out", str(tmp_path / "a"), "--no-cache", "--no-progress")
    assert p.returncode == 0, p.stderr
    res = summary(tmp_path / "a")
    assert res["data_label"]["label"] == SAMPLE.format(n=12) and SAMPLE.format(n=12) in p.stdout
