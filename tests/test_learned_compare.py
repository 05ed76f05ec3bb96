"""The learned metric in the paired views: `run --metric-checkpoint` keeps each sample's score in
samples.jsonl (`learned`, format 1), so `compare`'s paired tests and the board's significance tests
(a column of its own) cover it; a run written before the field (no per-sample score) is named
untested, never tested on zeros. Two replayed systems on flores-plus's fixture, an xCOMET-style tiny
checkpoint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import cli, importorskip_lazily

importorskip_lazily("torch")


FX = Path(__file__).parent / "fixtures"
DATA = FX / "tasks" / "flores_plus_devtest.jsonl"
SYSTEMS = FX / "agreement" / "khm_Khmr"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory):
    """flores-plus into Khmer (its fixture) answered by two replayed systems, both scored with one
    xCOMET-style tiny checkpoint: the same item set and checkpoint, so the same signature."""
    from glotbench.testing.learned_checkpoint import TinyXComet, build_xcomet

    tmp = tmp_path_factory.mktemp("learned_compare")
    text = " ".join(f.read_text(encoding="utf-8") for f in (DATA, *sorted(SYSTEMS.glob("*.jsonl"))))
    ckpt = build_xcomet(tmp / "xcomet", TinyXComet(), text)
    out = {}
    for name in ("a", "b"):
        r = cli("run", "flores-plus", "--data", str(DATA), "--bench-opt", "target=khm_Khmr",
                "--model", f"replay:{SYSTEMS / f'sys-{name}.jsonl'}", "--out", str(tmp / name), "--no-cache",
                "--no-progress", "--metric-checkpoint", str(ckpt), timeout=300)
        assert r.returncode == 0, r.stderr
        out[name] = tmp / name
    # a run as written before samples.jsonl kept the learned score: the same lines without the field
    old = tmp / "a_old"
    shutil.copytree(out["a"], old)
    lines = [json.loads(x) for x in (old / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    (old / "samples.jsonl").write_text("".join(json.dumps({k: v for k, v in x.items() if k != "learned"},
                                                          ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return {**out, "old": old, "ckpt": ckpt}


def _lines(d: Path) -> list[dict]:
    return [json.loads(x) for x in (d / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


def test_samples_keep_each_learned_score_and_they_make_the_aggregate(runs) -> None:
    res = json.loads((runs["a"] / "results.json").read_text(encoding="utf-8"))
    lines = _lines(runs["a"])
    assert all(x["learned"]["format"] == 1 and x["learned"]["metric"] == "xcomet" for x in lines)
    assert list(lines[0])[-1] == "learned"  # after the checks: SampleRecord's order
    assert res["scores"]["overall"]["xcomet"]["value"] == pytest.approx(np.mean([x["learned"]["score"] for x in lines]),
                                                                      abs=1e-12)
    assert len({x["learned"]["score"] for x in lines}) > 1


def test_compare_tests_the_learned_metric_on_the_stored_scores(runs) -> None:
    r = cli("compare", str(runs["a"]), str(runs["b"]), "--format", "json", timeout=300)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    pair = got["pairs"][0] if "pairs" in got else got
    sa = [x["learned"]["score"] for x in _lines(runs["a"])]
    sb = [x["learned"]["score"] for x in _lines(runs["b"])]
    m = pair["metrics"]["xcomet"]
    assert m["a"] == pytest.approx(np.mean(sa), abs=1e-12) and m["b"] == pytest.approx(np.mean(sb), abs=1e-12)
    assert m["delta"] == pytest.approx(np.mean(sb) - np.mean(sa), abs=1e-12) and m["delta"] != 0.0
    assert 0.0 < m["p_bootstrap"] <= 1.0 and 0.0 < m["p_randomization"] <= 1.0 and m["n"] == len(sa)
    assert "untested" not in pair and "chrf++" in pair["metrics"]
    text = cli("compare", str(runs["a"]), str(runs["b"]), timeout=300)
    assert text.returncode == 0 and "xcomet" in text.stdout


def test_compare_names_an_older_run_untested(runs) -> None:
    r = cli("compare", str(runs["old"]), str(runs["b"]), "--format", "json", timeout=300)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    pair = got["pairs"][0] if "pairs" in got else got
    assert "xcomet" not in pair["metrics"] and "chrf++" in pair["metrics"]  # never tested on zeros; the others are
    assert "samples.jsonl of A holds no per-sample xCOMET score" in pair["untested"]["xcomet"]
    text = cli("compare", str(runs["old"]), str(runs["b"]), timeout=300)
    assert text.returncode == 0 and "xcomet: not tested" in " ".join(text.stdout.split())


def test_board_tests_the_learned_metric_in_its_own_column(runs) -> None:
    r = cli("board", str(runs["a"]), str(runs["b"]), "--format", "json", timeout=300)
    assert r.returncode == 0, r.stderr
    board = json.loads(r.stdout)
    cols = {c["benchmark"]: c for c in board["columns"]}
    learned = cols["flores-plus · km · learned"]
    assert learned["headline"] == "xcomet" and "flores-plus · km" in cols
    cells = learned["cells"]
    best = next(m for m, c in cells.items() if c["best"])
    other = next(m for m in cells if m != best)
    assert cells[best]["value"] >= cells[other]["value"]
    # the paired test ran on the stored per-sample scores: its delta is the difference of the means
    assert cells[other]["delta_vs_best"] == pytest.approx(cells[other]["value"] - cells[best]["value"], abs=1e-9)
    assert 0.0 <= cells[other]["p_vs_best"] <= 1.0


def test_board_names_an_older_run_untested(runs) -> None:
    r = cli("board", str(runs["old"]), str(runs["b"]), "--format", "json", timeout=300)
    assert r.returncode == 0, r.stderr
    cells = {c["benchmark"]: c for c in json.loads(r.stdout)["columns"]}["flores-plus · km · learned"]["cells"]
    untested = [c for c in cells.values() if "untested" in c]
    assert len(untested) == 1 and "holds no per-sample xCOMET score" in untested[0]["untested"]
    assert "p_vs_best" not in untested[0]


def test_an_error_score_column_ranks_the_lowest_best(tmp_path) -> None:
    """MetricX-24 (0 best, 25 worst): its column's best is the run with the lowest mean error, and the
    other is tested against it."""
    from glotbench.testing.learned_checkpoint import TinyMetricX, build_metricx

    text = " ".join(f.read_text(encoding="utf-8") for f in (DATA, *sorted(SYSTEMS.glob("*.jsonl"))))
    ckpt = build_metricx(tmp_path / "mx", TinyMetricX(), text)
    for name in ("a", "c"):
        r = cli("run", "flores-plus", "--data", str(DATA), "--bench-opt", "target=khm_Khmr",
                "--model", f"replay:{SYSTEMS / f'sys-{name}.jsonl'}", "--out", str(tmp_path / name), "--no-cache",
                "--no-progress", "--metric-checkpoint", str(ckpt), timeout=300)
        assert r.returncode == 0, r.stderr
    r = cli("board", str(tmp_path / "a"), str(tmp_path / "c"), "--format", "json", timeout=300)
    assert r.returncode == 0, r.stderr
    col = {c["benchmark"]: c for c in json.loads(r.stdout)["columns"]}["flores-plus · km · learned"]
    cells = col["cells"]
    assert col["headline"] == "metricx24" and len(cells) == 2
    values = {m: c["value"] for m, c in cells.items()}
    assert values[min(values, key=values.__getitem__)] != values[max(values, key=values.__getitem__)]
    best = next(m for m, c in cells.items() if c["best"])
    assert best == min(values, key=values.__getitem__)
    other = next(m for m in cells if m != best)
    assert 0.0 <= cells[other]["p_vs_best"] <= 1.0
    # the direction is said in every view, as rescore says it (the #36 review): the board's label and
    # field, compare's metric cell and JSON
    assert col["lower_is_better"] is True and col["label"].endswith("(lower is better)")
    md = cli("board", str(tmp_path / "a"), str(tmp_path / "c"), timeout=300)
    assert md.returncode == 0 and "(lower is better)" in md.stdout, md.stderr
    js = cli("compare", str(tmp_path / "a"), str(tmp_path / "c"), "--format", "json", timeout=300)
    assert js.returncode == 0, js.stderr
    [pair] = json.loads(js.stdout)["pairs"] if "pairs" in json.loads(js.stdout) else [json.loads(js.stdout)]
    assert pair["metrics"]["metricx24"]["lower_is_better"] is True
    assert pair["metrics"]["chrf++"]["lower_is_better"] is False
    txt = cli("compare", str(tmp_path / "a"), str(tmp_path / "c"), timeout=300)
    assert txt.returncode == 0 and "metricx24 (lower is better)" in txt.stdout and "chrf++ (lower" not in txt.stdout
