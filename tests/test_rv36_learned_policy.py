"""A learned metric under `wrong_language=zero` (and for failures) cannot be raised by the policy:
COMET-22's regression head is unbounded (the tiny checkpoint scores below 0, as a real one can), so
an uncredited reply gets the worse of the metric's worst and its own score, never a bare 0 above its
own (review of #36). Checked through the command on replayed runs of one system, flag vs zero."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli, importorskip_lazily

importorskip_lazily("torch")

FX = Path(__file__).resolve().parent / "fixtures"
DATA = FX / "tasks" / "flores_plus_devtest.jsonl"


@pytest.mark.parametrize("kind", ["comet", "metricx"])
def test_wrong_language_zero_never_raises_a_learned_metric(tmp_path: Path, kind: str) -> None:
    from glotbench.metrics.learned import load
    from glotbench.testing.learned_checkpoint import build, build_metricx

    ckpt = (build if kind == "comet" else build_metricx)(tmp_path / "ck")
    good = [json.loads(x) for x in (FX / "agreement" / "khm_Khmr" / "sys-a.jsonl").read_text(encoding="utf-8").splitlines()]
    english = [json.loads(x) for x in (FX / "agreement" / "khm_Khmr" / "source.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [good[0], english[1], good[2]]  # one reply in English: flagged wrong_language
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    got = {}
    for policy in ("flag", "zero"):
        out = tmp_path / policy
        r = cli("run", "flores-plus", "--data", str(DATA), "--bench-opt", "target=khm_Khmr", "--model", f"replay:{replay}",
                "--bench-opt", f"wrong_language={policy}", "--out", str(out), "--cache-path", str(tmp_path / "c.sqlite"))
        assert r.returncode == 0, r.stderr
        r = cli("rescore", str(out), "--metric-checkpoint", str(ckpt), "--format", "json", timeout=300)
        assert r.returncode == 0, r.stderr
        got[policy] = json.loads(r.stdout)["runs"][0]["scores"]["as_run"]
    name = "comet22" if kind == "comet" else "metricx24"
    flag, zero = got["flag"][name]["overall"], got["zero"][name]["overall"]
    if load(ckpt).checkpoint.higher_is_better:
        assert zero <= flag + 1e-9, (zero, flag)
    else:
        assert zero >= flag - 1e-9, (zero, flag)
    flagged = [json.loads(x).get("flags") or [] for x in (tmp_path / "zero" / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sum("wrong_language" in f for f in flagged) == 1  # the English reply is the one the policy zeroes
