import json

import numpy as np
import pytest

from glotbench.stats import cohens_kappa, fleiss_kappa, kendall, paired_test, ratio_fn, spearman
from conftest import cli, module_main


def test_paired_test_identical_systems():
    x = np.column_stack([np.random.default_rng(0).integers(0, 2, 200), np.ones(200)])
    r = paired_test(x, x, ratio_fn(0, 1), resamples=500, trials=500)
    assert r.delta == 0 and r.ci_low == 0 and r.ci_high == 0
    assert r.p_bootstrap == 1.0 and r.p_randomization == 1.0


def test_paired_test_detects_a_real_difference():
    rng = np.random.default_rng(1)
    a = np.column_stack([rng.random(300) < 0.5, np.ones(300)]).astype(float)
    b = np.column_stack([(a[:, 0] == 1) | (rng.random(300) < 0.4), np.ones(300)]).astype(float)
    r = paired_test(a, b, ratio_fn(0, 1), resamples=1000, trials=1000)
    assert r.delta > 0.1 and r.ci_low > 0
    assert r.p_bootstrap < 0.01 and r.p_randomization < 0.01


def test_paired_test_small_noise_is_not_significant():
    rng = np.random.default_rng(2)
    a = np.column_stack([rng.random(100) < 0.5, np.ones(100)]).astype(float)
    b = a.copy()
    b[:2, 0] = 1 - b[:2, 0]  # two items flip
    r = paired_test(a, b, ratio_fn(0, 1), resamples=1000, trials=1000)
    assert r.p_bootstrap > 0.2 and r.p_randomization > 0.2


def test_agreement_statistics():
    assert cohens_kappa(["a", "b", "a", "b"], ["a", "b", "a", "b"]) == pytest.approx(1.0)
    # Two raters, 10 items: observed agreement 0.7, chance 0.5*0.6 + 0.5*0.4 = 0.5, kappa (0.7-0.5)/0.5.
    r1 = ["y"] * 5 + ["n"] * 5
    r2 = ["y", "y", "y", "y", "n", "n", "n", "n", "y", "y"]
    assert cohens_kappa(r1, r2) == pytest.approx(0.4)
    assert fleiss_kappa([["a", "a", "a"], ["b", "b", "b"], ["a", "a", "a"]]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40])[0] == pytest.approx(1.0)
    assert kendall([1, 2, 3, 4], [4, 3, 2, 1])[0] == pytest.approx(-1.0)
    assert spearman([1, 1, 1], [1, 2, 3])[0] is None  # constant input: undefined, not NaN
    assert cohens_kappa(["y", "y"], ["y", "y"]) is None


def test_score_command_matches_sacrebleu_cli(tmp_path):
    hyp, ref1, ref2 = tmp_path / "h.txt", tmp_path / "r1.txt", tmp_path / "r2.txt"
    hyp.write_text("the cat sat on the mat\nhello world\nthe end\n", encoding="utf-8")
    ref1.write_text("the cat sat on a mat\nhello there world\nthis is the end\n", encoding="utf-8")
    ref2.write_text("a cat was on the mat\nhello world\nthe end .\n", encoding="utf-8")
    for metric, sb_args in (("chrf++", ["-m", "chrf", "--chrf-word-order", "2"]), ("bleu", ["-m", "bleu"])):
        out = cli("score", "--metric", metric, str(hyp), str(ref1), str(ref2))
        assert out.returncode == 0, out.stderr
        ours = float(out.stdout.split("=")[1].split()[0])
        sb = module_main("sacrebleu", str(ref1), str(ref2), "-i", str(hyp), *sb_args, "-b", "-w", "2")
        assert ours == float(sb.stdout.strip()), (out.stdout, sb.stdout)
        assert "version:" in out.stdout and "95% CI" in out.stdout
    bad = tmp_path / "short.txt"
    bad.write_text("one line\n", encoding="utf-8")
    out = cli("score", str(hyp), str(bad))
    assert out.returncode == 2 and "has 1 lines but" in out.stderr and "Traceback" not in out.stderr


def test_compare_command(tmp_path, cache_path):
    import helpers
    from glotbench.engine.evaluate import RunOptions, evaluate

    helpers._calls.clear()
    opts = dict(limit=40, progress=False, cache_path=cache_path)
    evaluate("vi-diacritics", "python:helpers:async_echo", RunOptions(out=str(tmp_path / "a"), **opts))
    evaluate("vi-diacritics", "python:helpers:flaky_model", RunOptions(out=str(tmp_path / "b"), **opts))
    out = cli("compare", str(tmp_path / "a"), str(tmp_path / "b"))
    assert out.returncode == 0, out.stderr
    assert "sentence_exact" in out.stdout and "+100.0" in out.stdout and "40 shared items" in out.stdout
    from glotbench.report.compare import compare_runs

    res = compare_runs(str(tmp_path / "a"), str(tmp_path / "b"))
    r = res["metrics"]["sentence_exact"]
    assert (r["a"], r["b"]) == (0.0, 1.0) and r["p_randomization"] < 0.01
    json.dumps(res)  # serialisable
