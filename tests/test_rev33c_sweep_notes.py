"""Review rev33c: the sweep's summary printed each run's number with its interval and nothing else
that must be read with it (only `invalid`): a `--limit` run's "subset", bundled sample data, a judged
run's "judge not validated for lo" stood in `report`, `board` and `runs ls`, not there. Each line now
carries the run's notes (rundir/validity.py `notes`), on a fresh run and on a finished one skipped."""

from __future__ import annotations

import yaml
from conftest import cli
from test_judged_dispatch import configure, task_naming


def test_the_summary_says_what_every_view_says_beside_the_number(tmp_path, srv):
    configure(srv)
    task = task_naming(tmp_path, srv.spec("judge1"))
    spec = {"out": str(tmp_path / "out"), "cache": str(tmp_path / "calls.sqlite"),
            "store": f"sqlite:///{tmp_path / 'store.sqlite'}",
            "models": [{"spec": srv.spec("cand"), "name": "cand"}],
            "benchmarks": [{"name": task}, {"name": "laobench-mcq", "limit": 2}]}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    for status in ("done", "skipped"):
        proc = cli("sweep", str(path), "--no-progress")
        assert proc.returncode == 0, proc.stderr
        judged = next(x for x in proc.stdout.splitlines() if "qa.yaml" in x and f" {status} " in x)
        assert "[judge not validated for lo: openai:judge1" in judged, proc.stdout
        mcq = next(x for x in proc.stdout.splitlines() if x.startswith("laobench-mcq/") and f" {status} " in x)
        assert "[subset: 2 of" in mcq and "; sample data" in mcq, proc.stdout
