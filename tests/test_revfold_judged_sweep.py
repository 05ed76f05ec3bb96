"""Review (revfold): a sweep entry of a judged benchmark that could not start (no judge named, the
arena's baseline not given) is refused when the sweep is read, one `error:` line before any run or
call, as a bad option value is; it used to be a failed run after the others had run."""

from __future__ import annotations

import pytest
import yaml
from conftest import cli

GOOD, PLAIN = "python:helpers:good_answer", "python:helpers:plain_answer"


def _sweep(tmp_path, benchmarks, judges=None) -> str:
    body = {"out": str(tmp_path / "out"), "models": [{"spec": GOOD}],
            "benchmarks": [{"name": "laobench-mcq", "limit": 2}, *benchmarks]}
    if judges:
        body["judges"] = judges
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(body), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("entry, judged, said", [
    ({"name": "laobench-arena", "limit": 2}, True, "needs options: {baseline: SPEC}"),
    ({"name": "laobench-arena", "limit": 2, "options": {"baseline": PLAIN}}, False, "names no judge: add `judges: [SPEC]`"),
    ({"name": "aragen", "limit": 1}, False, "names no judge"),
])
@pytest.mark.parametrize("dry", [False, True])
def test_a_judged_entry_that_cannot_start_is_refused_before_any_run(tmp_path, entry, judged, said, dry):
    path = _sweep(tmp_path, [entry], ["python:helpers:judge_fails_swapped_odd"] if judged else None)
    r = cli("sweep", path, "--no-progress", *(["--dry-run"] if dry else []),
            env={"GLOTBENCH_CACHE_DIR": str(tmp_path / "c")})
    assert r.returncode == 2, r.stdout + r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and said in lines[0] and entry["name"] in lines[0], r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "out").exists()  # nothing ran, laobench-mcq included


def test_a_complete_judged_entry_runs(tmp_path):
    path = _sweep(tmp_path, [{"name": "laobench-arena", "limit": 2, "options": {"baseline": PLAIN}}],
                  ["python:helpers:judge_fails_swapped_odd"])
    r = cli("sweep", path, "--no-progress", env={"GLOTBENCH_CACHE_DIR": str(tmp_path / "c")})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 runs finished" in r.stdout, r.stdout
