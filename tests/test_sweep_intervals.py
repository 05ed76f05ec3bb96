"""The sweep's summary prints each run's headline as every view does (interval_text: value, 95%
interval, † on too few units, n), on a real sweep against the loopback test server."""

from __future__ import annotations

import json

from conftest import cli
from glotbench.report.terminal import FEW_NOTE, interval_text
from test_sweep import base_spec, write_sweep


def test_the_summary_prints_the_interval_n_and_the_mark(tmp_path, srv):
    spec = base_spec(tmp_path, srv.url, models=[{"spec": f"openai:a@{srv.url}", "concurrency": 2}],
                     benchmarks=[{"name": "laobench-mcq", "limit": 4}])  # Lao MCQ, 4 items: Wilson, marked †
    proc = cli("sweep", str(write_sweep(tmp_path / "s.yaml", **spec)), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    (path,) = (tmp_path / "out").rglob("results.json")
    res = json.loads(path.read_text(encoding="utf-8"))
    est = res["scores"]["overall"][res["headline"]]
    assert est["n"] == 4 and est["too_few_units"]
    text = interval_text(est, res["metrics"][res["headline"]]["scale"])
    assert "(" in text and ")† n=4" in text
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("laobench-mcq") or "laobench" in ln.split()[0])
    assert text in line, (text, proc.stdout)
    assert FEW_NOTE in proc.stdout and "score (95% CI) n" in proc.stdout
