"""samples.jsonl's `learned` field edited by hand (rev36c): a NaN or infinite score, a line without
it, a line of another metric, or every line naming a metric that is not a learned one. Each was
read silently (NaN deltas with p=0.001; a missing line a zero in the paired test; a foreign name
added to that metric's statistics); each is now one error line in compare and the board."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import cli, importorskip_lazily

importorskip_lazily("torch")

FX = Path(__file__).parent / "fixtures"
DATA = FX / "tasks" / "flores_plus_devtest.jsonl"
SYSTEMS = FX / "agreement" / "khm_Khmr"


def flores_text() -> str:
    """The fixture's sources, references and both systems' replies: the tiny checkpoint's vocabulary."""
    return " ".join(f.read_text(encoding="utf-8") for f in (DATA, *sorted(SYSTEMS.glob("*.jsonl"))))


def learned_run(out: Path, system: str, ckpt: Path) -> Path:
    """flores-plus into Khmer answered by a replayed system, scored with the checkpoint."""
    r = cli("run", "flores-plus", "--data", str(DATA), "--bench-opt", "target=khm_Khmr",
            "--model", f"replay:{SYSTEMS / f'sys-{system}.jsonl'}", "--out", str(out), "--no-cache",
            "--no-progress", "--metric-checkpoint", str(ckpt), timeout=300)
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from glotbench.testing.learned_checkpoint import TinyXComet, build_xcomet

    tmp = tmp_path_factory.mktemp("rev36c")
    ckpt = build_xcomet(tmp / "xcomet", TinyXComet(), flores_text())
    return {name: learned_run(tmp / name, name, ckpt) for name in ("a", "b")}


def _edit(src: Path, dst: Path, how: str) -> Path:
    shutil.copytree(src, dst)
    lines = [json.loads(x) for x in (dst / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    got = lines[1]["learned"]
    if how == "nan":
        got["score"] = float("nan")
    elif how == "inf":
        got["score"] = float("-inf")
    elif how == "missing":
        del lines[1]["learned"]
    elif how == "other":
        got["metric"] = "chrf++"
    elif how == "all_other":
        for x in lines:
            x["learned"]["metric"] = "bleu"
    (dst / "samples.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines),
                                       encoding="utf-8")
    return dst


WHY = {"nan": "not a finite number", "inf": "not a finite number", "missing": "has no learned score",
       "other": "one learned metric", "all_other": "is not a learned metric"}


@pytest.mark.parametrize("how", sorted(WHY))
def test_edited_learned_scores_are_one_error(runs: dict[str, Path], tmp_path: Path, how: str) -> None:
    bad = _edit(runs["a"], tmp_path / how, how)
    b = str(runs["b"])
    for args in (("compare", b, str(bad)), ("board", b, str(bad), "--format", "json")):
        r = cli(*args, timeout=300)
        assert r.returncode != 0, (args, r.stdout[-500:])
        err = r.stderr.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and WHY[how] in err[0], r.stderr
        assert "Traceback" not in r.stderr


def test_untouched_runs_still_compare(runs: dict[str, Path]) -> None:
    r = cli("compare", str(runs["a"]), str(runs["b"]), "--format", "json", timeout=300)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    pair = got["pairs"][0] if "pairs" in got else got
    assert pair["metrics"]["xcomet"]["delta"] != 0.0 and 0.0 < pair["metrics"]["xcomet"]["p_bootstrap"] <= 1.0
    r = cli("board", str(runs["a"]), str(runs["b"]), "--format", "json", timeout=300)
    assert r.returncode == 0, r.stderr


def test_check_samples_accepts_none_and_all() -> None:
    from glotbench.errors import GlotbenchError
    from glotbench.metrics.learned import check_samples, sample_field

    check_samples([{"id": "1"}, {"id": "2"}], "x")  # a run written before the field
    check_samples([{"id": "1", **sample_field("metricx24", 3.5)}, {"id": "2", **sample_field("metricx24", 0)}], "x")
    with pytest.raises(GlotbenchError, match="not a finite number"):
        check_samples([{"id": "1", **sample_field("comet22", 0.5)}, {"id": "2", **sample_field("comet22", True)}], "x")
