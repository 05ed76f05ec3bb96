"""rev36b: `run --dry-run --metric-checkpoint DIR` refuses what the run refuses (a file, an empty or
malformed directory, a benchmark that is not a translation benchmark) with one `error:` line, instead
of an estimate for a run that would then stop; a good checkpoint still gets its estimate."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import cli, importorskip_lazily

importorskip_lazily("torch")

MODEL = "openai:test@http://127.0.0.1:9/v1"  # a dry run contacts no endpoint


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from glotbench.benchmarks.laobench import LaoBenchTranslation
    from glotbench.testing.learned_checkpoint import TinyComet, build

    tmp = tmp_path_factory.mktemp("rev36b_dry")
    text = " ".join(it.public["source"] + " " + it.gold["reference"] for it in LaoBenchTranslation().load())
    return build(tmp / "comet", TinyComet(), text)


def _dry(bench: str, checkpoint: str, tmp: Path):
    return cli("run", bench, "--model", MODEL, "--dry-run", "--metric-checkpoint", checkpoint,
               "--cache-path", str(tmp / "calls.sqlite"), timeout=300)


def test_a_bad_checkpoint_is_refused_by_the_dry_run(ckpt, tmp_path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    loop = tmp_path / "loopA"
    loop.symlink_to(tmp_path / "loopB")
    (tmp_path / "loopB").symlink_to(loop)
    for bad in (afile, tmp_path / "empty", loop, tmp_path / "absent"):
        r = _dry("laobench-translation", str(bad), tmp_path)
        err = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(err) == 1 and err[0].startswith("error: --metric-checkpoint"), (bad, r.stderr)
        assert "requests" not in r.stdout, r.stdout
    good = _dry("laobench-translation", str(ckpt), tmp_path)
    assert good.returncode == 0 and "requests" in good.stdout, good.stderr


def test_a_benchmark_that_is_not_translation_is_refused_by_the_dry_run(ckpt, tmp_path) -> None:
    r = _dry("laobench-mcq", str(ckpt), tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("error: --metric-checkpoint: laobench-mcq"), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "requests" not in r.stdout
