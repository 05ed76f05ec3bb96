"""Review rev33c: the task file is kept with its run (issue #33), but the data it reads was not found
again. Three cases of one class, "where a run's items are loaded from again":
- `--data RELATIVE` was recorded as typed: `compare`, `rescore` and the report's references from
  another folder failed with "data file not found" (the page silently showed no references);
- a task moved with its data (a folder renamed): "data file not found", with no way to say where it
  went although the run recorded the file's SHA-256 (`--moved` took only option files);
- a plugin benchmark whose own data is labelled other than "bundled..." (the docs' `source="inline"`):
  `compare` and `rescore` loaded "inline" as a file (the report's references had the right rule)."""

from __future__ import annotations

import json
import sys

import pytest
from conftest import cli

from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.report.compare import compare_runs

TASK = """\
name: caps-lo
version: "1.0"
language: lo
data: {file: qa.jsonl}
fields: {id: id, public: {question: question}, gold: {answer: reference}}
prompt: {user: "{{ question }}", max_tokens: 16}
scorer: {kind: exact_match}
"""
QA = [{"id": "q1", "question": "ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ?", "reference": "ວຽງຈັນ"},
      {"id": "q2", "question": "ແມ່ນ້ຳໃດໄຫຼຜ່ານວຽງຈັນ?", "reference": "ແມ່ນ້ຳຂອງ"},
      {"id": "q3", "question": "ລາວມີຈັກແຂວງ?", "reference": "17"}]


def _task(folder):
    folder.mkdir(parents=True)
    (folder / "qa.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in QA), encoding="utf-8")
    (folder / "data copy.jsonl").write_bytes((folder / "qa.jsonl").read_bytes())
    (folder / "caps.yaml").write_text(TASK, encoding="utf-8")
    return folder


def _runs(srv, tmp_path, *data):
    srv.configure(model_answers={"a": {"ນະຄອນຫຼວງ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ແຂວງ": "18"},
                                 "b": {"ນະຄອນຫຼວງ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "x", "ແຂວງ": "17"}})
    folder = _task(tmp_path / "ງານ tasks")
    runs = []
    for m in ("a", "b"):
        out = tmp_path / "runs" / f"{m} run"
        p = cli("run", "caps.yaml", *data, "--model", srv.spec(m), "--out", str(out), "--no-progress",
                "--cache-path", str(tmp_path / "c.sqlite"), cwd=str(folder))
        assert p.returncode == 0, p.stderr
        runs.append(str(out))
    return folder, runs


def test_a_relative_data_option_is_read_again_from_another_folder(srv, tmp_path):
    folder, runs = _runs(srv, tmp_path, "--data", "data copy.jsonl")
    assert json.loads((tmp_path / "runs" / "a run" / "run.json").read_text())["benchmark"]["data_path"] == \
        str((folder / "data copy.jsonl").resolve())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    p = cli("compare", *runs, cwd=str(elsewhere))
    assert p.returncode == 0, p.stderr
    assert "exact_match" in p.stdout
    p = cli("rescore", "--checks", runs[0], cwd=str(elsewhere))
    assert p.returncode == 0, p.stderr
    p = cli("report", runs[0], "--html", str(elsewhere / "r.html"), cwd=str(elsewhere))
    assert p.returncode == 0, p.stderr
    page = (elsewhere / "r.html").read_text(encoding="utf-8")
    assert "SHA-256 verified" in page and "references not shown" not in page


@pytest.mark.parametrize("data", [(), ("--data", "data copy.jsonl")])
def test_a_task_moved_with_its_data_is_found_by_moved(srv, tmp_path, data):
    folder, runs = _runs(srv, tmp_path, *data)
    moved = folder.rename(tmp_path / "renamed ໃໝ່")
    read = moved / ("data copy.jsonl" if data else "qa.jsonl")
    p = cli("compare", *runs)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    (line,) = [x for x in p.stderr.splitlines() if x.startswith("error:")]
    assert "is gone" in line and "--moved FILE" in line, line
    p = cli("compare", *runs, "--moved", str(read))
    assert p.returncode == 0, p.stderr
    assert "exact_match" in p.stdout and "66.7" in p.stdout
    p = cli("rescore", "--checks", runs[0], "--moved", str(read))
    assert p.returncode == 0, p.stderr
    p = cli("report", runs[0], "--html", str(tmp_path / "r.html"), "--moved", str(read))
    assert p.returncode == 0, p.stderr
    assert "SHA-256 verified" in (tmp_path / "r.html").read_text(encoding="utf-8")
    other = moved / "other.jsonl"  # another file is never taken for it
    other.write_text(json.dumps(QA[0], ensure_ascii=False) + "\n", encoding="utf-8")
    p = cli("compare", *runs, "--moved", str(other))
    assert p.returncode == 2 and "not that file" in p.stderr, p.stderr


PLUGIN = '''
import hashlib, json
from glotbench import Benchmark, Extraction, GenerateConfig, Item, ItemScore, Prompt, RatioMetric

ROWS = [("France", "Paris"), ("Laos", "Vientiane"), ("Vietnam", "Hanoi")]


class Capitals(Benchmark):
    name = "rev33c-capitals"
    version = "1.0"
    description = "capitals, a plugin with its own inline data"
    metrics = (RatioMetric("accuracy", "correct", "items", "share right"),)
    default_config = GenerateConfig(temperature=0.0, max_tokens=8)

    def load(self, path=None):
        rows = ROWS if path is None else [tuple(json.loads(x)) for x in open(path, encoding="utf-8")]
        items = [Item.create(f"c{i}", {"country": c}, {"capital": k}) for i, (c, k) in enumerate(rows)]
        return self.dataset(items, source=path or "inline", sha256=hashlib.sha256(json.dumps(rows).encode()).hexdigest())

    def render(self, item):
        return Prompt(messages=({"role": "user", "content": f"Capital of {item['country']}?"},))

    def extract(self, text, item):
        return Extraction(text.strip() or None)

    def score(self, answer, item):
        return ItemScore({"correct": float(answer == item.gold["capital"]), "items": 1.0})

    def failure_score(self, failure, item):
        return ItemScore({"correct": 0.0, "items": 1.0}, failure=failure)
'''


def test_a_plugins_own_data_whatever_its_label(srv, tmp_path, monkeypatch):
    (tmp_path / "rev33c_plugin.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    from glotbench.registry import register_benchmark

    sys.modules.pop("rev33c_plugin", None)
    import rev33c_plugin

    register_benchmark("rev33c-capitals")(rev33c_plugin.Capitals)
    srv.configure(model_answers={"a": {"Laos": "Vientiane", "France": "Paris"}, "b": {"Laos": "Vientiane"}})
    outs = []
    for m in ("a", "b"):
        res = evaluate("rev33c-capitals", srv.spec(m), RunOptions(out=str(tmp_path / m), progress=False,
                                                                   cache_path=str(tmp_path / "c.sqlite")))
        assert res.results["benchmark"]["data"] == "inline"
        outs.append(str(res.out_dir))
    cmp = compare_runs(*outs, resamples=100)
    assert cmp["metrics"]["accuracy"]["a"] == pytest.approx(2 / 3)
    assert cmp["metrics"]["accuracy"]["b"] == pytest.approx(1 / 3)
