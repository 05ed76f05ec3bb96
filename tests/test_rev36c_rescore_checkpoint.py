"""`rescore --metric-checkpoint` with a checkpoint other than the one a run was scored with (rev36c):
the run's stored learned figure (the old checkpoint's) was printed as `stored in results.json`
directly above the new checkpoint's `as_run` figure under the one metric name, as if the two were
the same metric. Now the stored figure is left out with a note naming both checkpoints; with the
run's own checkpoint it is kept, equal to `as_run`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli, importorskip_lazily

importorskip_lazily("torch")

@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from glotbench.testing.learned_checkpoint import TinyXComet, build_xcomet
    from test_rev36c_learned_samples import flores_text, learned_run

    tmp = tmp_path_factory.mktemp("rev36c_swap")
    old = build_xcomet(tmp / "old", TinyXComet(), flores_text())
    new = build_xcomet(tmp / "new", TinyXComet(seed=7), flores_text())  # the same layout, other weights
    return {"run": learned_run(tmp / "a", "a", old), "old": old, "new": new}


def _rescore(run: Path, ckpt: Path) -> dict:
    r = cli("rescore", str(run), "--metric-checkpoint", str(ckpt), "--format", "json", timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["runs"][0]


def test_another_checkpoint_hides_the_stored_figure_with_a_note(setup) -> None:
    got = _rescore(setup["run"], setup["new"])
    assert got["stored"]["xcomet"]["overall"] is None
    assert got["scores"]["as_run"]["xcomet"]["overall"] is not None
    note = [n for n in got["notes"] if "another checkpoint" in n]
    old_sha = json.loads((setup["run"] / "results.json").read_text(encoding="utf-8"))["signature"]
    assert len(note) == 1 and "ckpt:sha256:" in note[0]
    assert note[0].split("(")[1].split(")")[0].split("|")[1].split(":")[-1] in old_sha
    assert got["stored"]["chrf++"]["overall"] is not None  # the other metrics keep theirs
    text = cli("rescore", str(setup["run"]), "--metric-checkpoint", str(setup["new"]), timeout=300)
    assert text.returncode == 0 and "another checkpoint" in text.stdout
    assert "| stored in results.json | xcomet | — |" in text.stdout


def test_the_runs_own_checkpoint_keeps_the_stored_figure(setup) -> None:
    got = _rescore(setup["run"], setup["old"])
    assert not [n for n in got["notes"] if "another checkpoint" in n]
    assert got["stored"]["xcomet"]["overall"] == pytest.approx(got["scores"]["as_run"]["xcomet"]["overall"], abs=1e-9)
