"""A failure or error rate declares that lower is better, and the views that state a direction say
so: results.json's metric info carries `lower_is_better` and the EEE record's `metric_config` takes
it (every metric was exported `lower_is_better: false`, a share of replies without an answer too)."""

from __future__ import annotations

import json

from conftest import cli
from glotbench.benchmarks.laobench import LaoBenchMCQ
from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics as ViDiacritics
from glotbench.benchmarks.vi_tone_errors import VietnameseToneErrors as ViToneErrors
from glotbench.metrics.ratio import RatioMetric


def test_builtin_failure_rates_declare_their_direction():
    rates = {m.name: m.lower_is_better for b in (ViDiacritics, ViToneErrors) for m in b.metrics}
    assert rates["format_failure_rate"] and rates["rewritten_rate"] and rates["false_alarm_rate"]
    assert not rates["sentence_exact"] and not rates["word_accuracy"] and not rates["detection_f1"]
    lao = {m.name: m.lower_is_better for m in LaoBenchMCQ().metrics}
    assert lao["extraction_failure_rate"] and not any(v for k, v in lao.items() if k != "extraction_failure_rate")
    assert RatioMetric("x", "a", "b").lower_is_better is False


def test_eee_record_states_the_no_answer_rate_lower_is_better(srv, tmp_path):
    run = tmp_path / "run"
    r = cli("run", "belebele", "--data", "docs/examples/belebele-lao.jsonl", "--model", srv.spec("m"),
            "--out", str(run))
    assert r.returncode == 0, r.stdout + r.stderr
    info = json.loads((run / "results.json").read_text(encoding="utf-8"))["metrics"]
    assert info["no_answer_rate"]["lower_is_better"] is True and "lower_is_better" not in info["accuracy"]
    r = cli("export", str(run), "--format", "eee", "--out", str(tmp_path / "eee"))
    assert r.returncode == 0, r.stderr
    rec = json.loads(next((tmp_path / "eee").glob("*.json")).read_text(encoding="utf-8"))
    got = {e["metric_config"]["metric_id"]: e["metric_config"]["lower_is_better"] for e in rec["evaluation_results"]}
    assert got["no_answer_rate"] is True and got["accuracy"] is False, got
