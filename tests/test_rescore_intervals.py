"""`glotbench rescore` prints the stored figure with its interval, † and n (through interval_text), in
the run's unit, and says why its re-scored figures carry none."""

from __future__ import annotations

import json

from checks_models import write_vi_tone
from conftest import cli
from glotbench.engine.evaluate import RunOptions, evaluate


def test_the_stored_row_has_its_interval_and_n_and_the_rescored_rows_say_why_not(tmp_path):
    data = write_vi_tone(tmp_path / "vi.jsonl")  # 3 Vietnamese sentences: Wilson on 3 items, marked †
    for name in ("old_tone_placement", "new_tone_placement"):
        evaluate("vi-diacritics", f"python:checks_models:{name}",
                 RunOptions(data=data, out=str(tmp_path / "runs" / name), cache_path=str(tmp_path / "c.sqlite"), progress=False))
    r = cli("rescore", str(tmp_path / "runs"), "--variant", "norm=nfc")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "runs" / "old_tone_placement" / "results.json").read_text(encoding="utf-8"))
    est = res["scores"]["overall"]["sentence_exact"]
    lo, hi = 100 * est["ci_low"], 100 * est["ci_high"]
    assert est["too_few_units"] and est["n"] == 3
    assert f"| stored in results.json | sentence_exact | 100.0 ({lo:.1f}–{hi:.1f})† n=3 |" in r.stdout, r.stdout
    assert "| norm=nfc | sentence_exact | 0.0 |" in r.stdout  # the same unit (percent) as the stored row
    assert r.stdout.count("carry no interval") == 2 and "† too few units" in r.stdout
    j = cli("rescore", str(tmp_path / "runs"), "--variant", "norm=nfc", "--format", "json")
    run = next(x for x in json.loads(j.stdout)["runs"] if x["model"].endswith("old_tone_placement"))
    assert run["stored_estimates"]["sentence_exact"]["overall"] == est and run["scales"]["sentence_exact"] == "fraction"
