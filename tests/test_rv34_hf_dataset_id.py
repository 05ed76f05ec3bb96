"""`export --format hf-eval-results --hf-dataset ID`: the Hub links each entry to that dataset, so an
id the Hub cannot have (`../../etc`, `a b/c`, `a/b/c`, non-ASCII) is one `error:` line and nothing
is written; it was written into every entry as given. An empty or multi-line --hf-task likewise."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import cli

FIX = Path(__file__).parent / "fixtures" / "card"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, server):
    out = tmp_path_factory.mktemp("hfid") / "run"
    r = cli("run", "card-lo-sum", "--include-path", str(FIX / "tasks"), "--data", str(FIX / "data" / "card-lo-sum.jsonl"),
            "--model", server.spec("m"), "--limit", "3", "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    return out


@pytest.mark.parametrize("args, what", [
    (["--hf-dataset", "../../etc"], "--hf-dataset '../../etc': not a Hub dataset id"),
    (["--hf-dataset", "a b/c"], "not a Hub dataset id"),
    (["--hf-dataset", "a/b/c"], "not a Hub dataset id"),
    (["--hf-dataset", "ບັນ/ທຶກ"], "not a Hub dataset id"),
    (["--hf-dataset", "a/b", "--hf-task", ""], "--hf-task '': the dataset's task id"),
    (["--hf-dataset", "a/b", "--hf-task", "x\ny"], "--hf-task 'x\\ny'"),
])
def test_an_id_the_hub_cannot_have_is_refused(run_dir, tmp_path, args, what):
    out = tmp_path / "hf"
    r = cli("export", str(run_dir), "--format", "hf-eval-results", "--out", str(out), *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and what in lines[0], r.stderr
    assert not out.exists()


def test_a_hub_id_is_written(run_dir, tmp_path):
    out = tmp_path / "hf"
    r = cli("export", str(run_dir), "--format", "hf-eval-results", "--out", str(out),
            "--hf-dataset", "aisingapore/NLU-Sentiment-Analysis", "--hf-task", "th")
    assert r.returncode == 0, r.stderr
    text = next(out.rglob("*.yaml")).read_text(encoding="utf-8")
    assert "id: aisingapore/NLU-Sentiment-Analysis" in text and "task_id: th" in text
