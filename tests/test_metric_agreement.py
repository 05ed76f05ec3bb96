"""`glotbench rescore --agreement`: Kendall's τ between metric columns, per benchmark and language, over
segments (from one run on) and over runs (from MIN_SYSTEMS on); and docs/metrics.md's table is what
the documented command prints on the shipped fixtures (FLORES+-schema sentences, replayed systems)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from scipy.stats import kendalltau

from conftest import cli
from glotbench.checks.rescore import MIN_SYSTEMS, RunRescore, agreement, columns
from glotbench.engine.evaluate import RunOptions, evaluate

ROOT = Path(__file__).resolve().parents[1]
AGREE = ROOT / "tests" / "fixtures" / "agreement"
TARGETS = ("lao_Laoo", "khm_Khmr", "mya_Mymr", "tha_Thai")
SYSTEMS = ("sys-a", "sys-b", "sys-c", "sys-d", "source")
VARIANTS = ("segmenter=charcluster", "segmenter=none", "bleu_tokenize=spm:tests/fixtures/agreement/tiny_spm.model")


def _run(model: str, scores: dict[str, dict[str, tuple[float, list[float]]]], valid: bool = True) -> RunRescore:
    """A re-scored run by hand: variant -> metric -> (corpus score, sentence scores)."""
    return RunRescore(f"runs/{model}", model, "bench", "sig", None,
                      {v: {m: {"overall": x, "groups": {}, "segments": {"all": seg}} for m, (x, seg) in per.items()}
                       for v, per in scores.items()}, {}, valid=valid,
                      kinds={"chrf++": "chrf++", "bleu": "bleu"}, languages=("lo",))


def test_tau_by_hand_against_scipy():
    runs = [_run("a", {"as_run": {"chrf++": (50.0, [10.0, 80.0]), "bleu": (20.0, [5.0, 30.0])},
                       "segmenter=none": {"chrf++": (40.0, [30.0, 20.0]), "bleu": (0.0, [0.0, 0.0])}}),
            _run("b", {"as_run": {"chrf++": (60.0, [60.0, 40.0]), "bleu": (10.0, [15.0, 1.0])},
                       "segmenter=none": {"chrf++": (45.0, [50.0, 10.0]), "bleu": (0.0, [0.0, 0.0])}}),
            _run("c", {"as_run": {"chrf++": (70.0, [90.0, 70.0]), "bleu": (30.0, [40.0, 20.0])},
                       "segmenter=none": {"chrf++": (35.0, [70.0, 60.0]), "bleu": (0.0, [0.0, 0.0])}})]
    assert [c[0] for c in columns(runs[0])] == ["chrf++", "bleu", "chrf++ (segmenter=none)", "bleu (segmenter=none)"]
    seg, sys_ = agreement(runs)
    assert (seg["level"], seg["n"], sys_["level"], sys_["n"]) == ("segment", 6, "system", 3)
    assert seg["language"] == "lo" and seg["note"] is None and sys_["note"] is None
    chrf = [10.0, 80.0, 60.0, 40.0, 90.0, 70.0]
    bleu = [5.0, 30.0, 15.0, 1.0, 40.0, 20.0]
    want = kendalltau(chrf, bleu)
    assert seg["tau"][0][1] == seg["tau"][1][0] == pytest.approx(want.statistic)
    assert seg["p"][0][1] == pytest.approx(want.pvalue)
    assert seg["tau"][0][2] == pytest.approx(kendalltau(chrf, [30.0, 20.0, 50.0, 10.0, 70.0, 60.0]).statistic)
    assert sys_["tau"][0][1] == pytest.approx(1 / 3)  # 50<60<70 against 20>10<30: one discordant pair of three
    assert sys_["tau"][0][2] == pytest.approx(kendalltau([50, 60, 70], [40, 45, 35]).statistic)
    assert seg["tau"][3][0] is None and sys_["tau"][0][3] is None  # a constant column: τ undefined
    # two runs: no system level; an invalid run is not pooled
    seg2, sys2 = agreement(runs[:2] + [_run("x", {"as_run": {"chrf++": (1.0, [1.0, 2.0]), "bleu": (1.0, [2.0, 1.0])},
                                                 "segmenter=none": {"chrf++": (1.0, [1.0, 1.0]), "bleu": (0.0, [0.0, 0.0])}},
                                                valid=False)])
    assert sys2["note"] == f"fewer than {MIN_SYSTEMS} runs: not computed" and sys2["tau"][0][1] is None
    assert seg2["n"] == 4 and seg2["runs"] == 2
    assert seg2["not_pooled"] == [{"model": "x", "path": "runs/x", "why": "not valid"}] and seg["not_pooled"] == []
    from glotbench.report.checks_text import agreement_markdown

    assert "> not pooled: x (`runs/x`): not valid" in agreement_markdown([seg2, sys2])


def test_a_variant_is_a_column_only_for_the_metrics_it_changes():
    run = _run("a", {"as_run": {"chrf++": (1.0, [1.0]), "bleu": (1.0, [1.0])},
                     "bleu_tokenize=13a": {"chrf++": (1.0, [1.0]), "bleu": (2.0, [2.0])}})
    assert [c[0] for c in columns(run)] == ["chrf++", "bleu", "bleu (bleu_tokenize=13a)"]


def agreement_section(markdown: str) -> str:
    """The tables under the printed `## Metric agreement` heading (the doc has its own heading)."""
    return markdown[markdown.index("## Metric agreement"):].split("\n", 1)[1].strip()


def test_docs_table_is_what_the_documented_command_prints(tmp_path):
    """docs/metrics.md, "Metric agreement": the runs its command makes (here through the same entry
    point, in process), then its `rescore --agreement` run by the CLI; the block must match."""
    doc = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- agreement:begin -->\n(.*?)<!-- agreement:end -->", doc, re.S).group(1)
    for t in TARGETS:
        for s in SYSTEMS:
            evaluate("flores-plus", f"replay:{AGREE / t / s}.jsonl",
                     RunOptions(data=str(ROOT / "tests/fixtures/tasks/flores_plus_devtest.jsonl"),
                                bench_options=(("target", t),), out=str(tmp_path / "agree" / t / s),
                                cache_path=str(tmp_path / "calls.sqlite"), progress=False))
    args = [x for v in VARIANTS for x in ("--variant", v)]
    r = cli("rescore", str(tmp_path / "agree"), "--agreement", *args, cwd=str(ROOT))
    assert r.returncode == 0, r.stderr
    assert agreement_section(r.stdout) == block.strip()
