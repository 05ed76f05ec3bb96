"""`glotbench plan`: Connor's paired-test power against a hand computation and against simulated
paired binary outcomes (McNemar's test, and glotbench's own approximate randomisation), and the
command through the console script (items, a benchmark, two runs)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from conftest import cli
from glotbench.stats import paired_test
from glotbench.stats import power as pw


def test_cells_and_phi_round_trip():
    c = pw.cells(0.55, 0.65, 0.4)
    assert c.p11 + c.p10 + c.p01 + c.p00 == pytest.approx(1.0)
    assert (c.p11 + c.p10, c.p11 + c.p01) == pytest.approx((0.55, 0.65))
    assert pw.phi(c.p11, 0.55, 0.65) == pytest.approx(0.4)
    assert not c.capped and pw.cells(0.1, 0.9, 0.9).capped  # margins this far apart cannot correlate 0.9
    with pytest.raises(ValueError):
        pw.cells(0.5, 1.2, 0.0)


def test_connor_normal_approximation_by_hand():
    # base 0.55, d 0.1: p_A 0.5, p_B 0.6, rho 0 -> p11 0.3, p10 0.2, p01 0.3, psi 0.5
    za, zb = 1.959963984540054, 0.8416212335729143
    by_hand = ((za * math.sqrt(0.5) + zb * math.sqrt(0.5 - 0.01)) / 0.1) ** 2
    assert pw.items_needed_normal(0.1, 0.55, 0.0) == pytest.approx(by_hand) == pytest.approx(390.078, abs=1e-3)
    assert pw.power_normal(by_hand, 0.5, 0.6, 0.0) == pytest.approx(0.8, abs=1e-3)
    # the exact power at large n agrees with it
    assert pw.power(2000, 0.55, 0.6, 0.3) == pytest.approx(pw.power_normal(2000, 0.55, 0.6, 0.3), abs=0.02)


def test_exact_power_by_hand_on_a_tiny_set():
    """n = 3, every item discordant (p11 = p00 = 0) with p01 = 0.75: the two-sided exact test at
    alpha 0.3 rejects when all 3 discordant items go one way (p = 2 / 8 = 0.25); it cannot reject with
    fewer than 3 discordant items. P = 0.75^3 + 0.25^3."""
    c = pw.cells(0.25, 0.75, -1.0)
    assert (c.p11, c.p00) == pytest.approx((0.0, 0.0))
    assert pw.power(3, 0.25, 0.75, -1.0, alpha=0.3) == pytest.approx(0.75 ** 3 + 0.25 ** 3)
    assert pw.power(3, 0.25, 0.75, -1.0, alpha=0.2) == 0.0  # p = 0.25 never reaches 0.2


@pytest.mark.parametrize("n,base,rho", [(279, 0.6, 0.5), (37, 0.8, 0.3), (500, 0.5, 0.7), (900, 0.35, 0.2)])
def test_power_at_the_min_detectable_difference_matches_simulation(n, base, rho):
    d = pw.min_detectable(n, base, rho)
    sim = pw.simulate(n, base - d / 2, base + d / 2, rho, sims=20_000, seed=1)
    assert sim == pytest.approx(0.8, abs=0.012)  # 20,000 simulations: standard error 0.003
    # the items needed for d, simulated, reach the power too
    need = pw.items_needed(d, base, rho)
    assert need <= n + 2
    assert pw.simulate(need, base - d / 2, base + d / 2, rho, sims=20_000, seed=2) >= 0.79
    # with no difference the exact test holds its level
    assert pw.simulate(n, base, base, rho, sims=20_000, seed=3) <= 0.05 + 0.006


def test_glotbench_randomisation_test_has_the_planned_power():
    """The power `plan` promises is the power of the test `compare` and the board run."""
    n, base, rho = 279, 0.6, 0.5
    d = pw.min_detectable(n, base, rho)
    c = pw.cells(base - d / 2, base + d / 2, rho)
    rng = np.random.default_rng(5)
    sims, hits = 160, 0
    for s in range(sims):
        cell = rng.choice(4, size=n, p=[c.p11, c.p10, c.p01, c.p00])
        a = np.isin(cell, (0, 1)).astype(float)
        b = np.isin(cell, (0, 2)).astype(float)
        rows = lambda x: np.column_stack([x, np.ones(n)])  # noqa: E731
        res = paired_test(rows(a), rows(b), lambda r: r[0] / r[1], resamples=10, trials=400, seed=s)
        hits += res.p_randomization < 0.05
    assert hits / sims == pytest.approx(0.8, abs=0.1)  # 160 simulations: standard error 0.03


def test_plan_command_from_items_and_from_a_benchmark():
    r = cli("plan", "--items", "279", "--base-rate", "0.6", "--correlation", "0.5", "--target-diff", "0.02",
            "--format", "json")
    assert r.returncode == 0, r.stderr
    p = json.loads(r.stdout)
    assert p["min_detectable_diff"] == pytest.approx(pw.min_detectable(279, 0.6, 0.5), abs=1e-6)
    assert p["items_needed"] == pw.items_needed(0.02, 0.6, 0.5) and p["power_at_target"] < 0.2
    assert p["correlation_from"] == "given"
    # a design effect of 2 halves the effective items, and doubles the items needed
    p2 = json.loads(cli("plan", "--items", "279", "--base-rate", "0.6", "--correlation", "0.5", "--target-diff",
                        "0.02", "--design-effect", "2", "--format", "json").stdout)
    assert p2["effective_items"] == pytest.approx(139.5) and p2["items_needed"] == 2 * p["items_needed"]
    text = cli("plan", "vi-diacritics", "--base-rate", "0.7")
    assert text.returncode == 0, text.stderr
    assert "items: 164 from vi-diacritics" in text.stdout and "assumed" in text.stdout
    bad = cli("plan", "--items", "100")
    assert bad.returncode == 2 and "--base-rate" in bad.stderr and "Traceback" not in bad.stderr
    both = cli("plan", "vi-diacritics", "--items", "100", "--base-rate", "0.5")
    assert both.returncode == 2 and "one of" in both.stderr
    assert cli("plan", "--items", "50", "--base-rate", "1.5").returncode == 2


def test_plan_command_from_two_runs(tmp_path):
    """n, the base rate and the correlation measured from two runs' per-item outcomes."""
    from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics

    items = VietnameseDiacritics().load()
    a = [i % 3 != 0 for i in range(len(items))]
    b = [i % 3 != 0 if i % 5 else not (i % 3 != 0) for i in range(len(items))]
    runs = []
    for name, right in (("a", a), ("b", b)):
        f = tmp_path / f"{name}.jsonl"
        f.write_text("".join(json.dumps({"id": it.id, "output": json.dumps(
            {"restored_text": it.gold["references"][0] if ok else it.public["text"]}, ensure_ascii=False)},
            ensure_ascii=False) + "\n" for it, ok in zip(items, right)), encoding="utf-8")
        r = cli("run", "vi-diacritics", "--model", f"replay:{f}", "--out", str(tmp_path / name), "--no-cache",
                "--no-progress")
        assert r.returncode == 0, r.stderr
        runs.append(str(tmp_path / name))
    r = cli("plan", "--runs", runs[0], "--runs", runs[1], "--target-diff", "0.05", "--format", "json")
    assert r.returncode == 0, r.stderr
    p = json.loads(r.stdout)
    n = len(items)
    xa, xb = np.array(a, float), np.array(b, float)
    assert p["items"] == n and p["base_rate"] == pytest.approx((xa.mean() + xb.mean()) / 2)
    assert p["correlation"] == pytest.approx(np.corrcoef(xa, xb)[0, 1])  # phi = Pearson on 0/1
    assert p["measured"]["discordant"] == pytest.approx(float((xa != xb).mean()))
    assert p["correlation_from"].startswith("measured")


@pytest.mark.parametrize("args, says", [
    (("--power", "0.01"), "--power must exceed --alpha"),  # was scipy's "f(a) and f(b) must have different signs"
    (("--power", "0.05"), "--power must exceed --alpha"),  # was "smallest detectable difference 1.1 points"
    (("--base-rate", "0.99", "--target-diff", "0.5"), "at most 0.02 here"),  # was "accuracies must lie in [0, 1]"
    (("--design-effect", "inf"), "--design-effect must be a positive number"),  # was "effective items 0"
    (("--design-effect", "500"), "0.558 effective items"),
])
def test_plan_refuses_inputs_that_have_no_answer_in_one_line(args, says):
    base = ("plan", "--items", "279") + (() if "--base-rate" in args else ("--base-rate", "0.5"))
    r = cli(*base, *args)
    assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
