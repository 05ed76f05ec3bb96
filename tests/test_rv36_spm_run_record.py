"""A run with `--bench-opt bleu_tokenize=spm:PATH` read again (rescore, compare): a relative PATH is
recorded as an absolute one, so the run is re-scored from any folder; a model file replaced since the
run (another SentencePiece model at the same path) is one error line, never a silently different
as_run figure; a model gone is one readable reason (review of #36)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import cli
from test_spbleu import TEXT, train

pytest.importorskip("sentencepiece")

FX = Path(__file__).parent / "fixtures"
DATA = FX / "tasks" / "flores_plus_devtest.jsonl"
SYSTEM = FX / "agreement" / "khm_Khmr" / "sys-a.jsonl"


def _run(tmp_path: Path, cwd: Path, model_arg: str, bench: list[str] | None = None) -> Path:
    out = tmp_path / "run"
    r = cli("run", "flores-plus", "--data", str(DATA), "--bench-opt", "target=khm_Khmr", "--model", f"replay:{SYSTEM}",
            "--bench-opt", f"bleu_tokenize=spm:{model_arg}", "--out", str(out), "--cache-path", str(tmp_path / "c.sqlite"),
            cwd=str(cwd))
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture
def relative_run(tmp_path: Path) -> tuple[Path, Path]:
    """A run made in `work/` with the model given as `models/m.model` (relative to `work/`)."""
    work = tmp_path / "work"
    (work / "models").mkdir(parents=True)
    model = Path(train(work / "models" / "m.model"))
    return _run(tmp_path, work, "models/m.model"), model


def test_a_relative_model_path_is_recorded_absolute(relative_run, tmp_path: Path) -> None:
    run, model = relative_run
    opts = json.loads((run / "results.json").read_text(encoding="utf-8"))["config"]["bench_options"]
    assert opts["bleu_tokenize"] == f"spm:{model}"  # absolute: tmp_path's, not "models/m.model"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = cli("rescore", str(run), "--format", "json", cwd=str(elsewhere))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)["runs"][0]
    assert got["scores"]["as_run"]["bleu"]["overall"] == pytest.approx(got["stored"]["bleu"]["overall"], abs=1e-9)


def test_a_model_replaced_since_the_run_is_refused_not_used(relative_run, tmp_path: Path) -> None:
    run, model = relative_run
    other = Path(train(tmp_path / "other.model", TEXT[:9], extra=5))
    shutil.copyfile(other, model)  # another SentencePiece model at the run's path
    for args in (("rescore", str(run)), ("compare", str(run), str(run))):
        r = cli(*args)
        lines = [x for x in r.stderr.splitlines() if x.strip()]
        assert r.returncode == 2 and len(lines) == 1, (args, r.stdout, r.stderr)
        assert "has changed since the run" in lines[0] and lines[0].startswith("error:"), lines
    model.unlink()
    r = cli("rescore", str(run))
    # gone: the line names the file and how to give its new place (tests/test_moved_files.py)
    assert r.returncode == 2 and "is gone" in r.stderr and "--moved FILE" in r.stderr, r.stderr


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_refused_not_read_without_end(tmp_path: Path, path: str) -> None:
    """`spm:/dev/zero` was read forever (stat gives size 0): a model must be a regular file."""
    r = cli("rescore", str(tmp_path), "--variant", f"bleu_tokenize=spm:{path}", timeout=60)
    assert r.returncode == 2 and r.stderr.strip() == f"error: SentencePiece model {path}: not a regular file (a device or a pipe)", r.stderr
