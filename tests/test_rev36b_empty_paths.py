"""rev36b: an empty `--moved ""` or `--metric-checkpoint ""` is one `error:` line saying the path is
empty, not the current folder read in its place ("is a directory", "no hparams.yaml" for `.`)."""

from __future__ import annotations

import pytest

from conftest import cli


@pytest.mark.parametrize("value", ["", "   "])
@pytest.mark.parametrize("command", [("rescore", "absent-run"), ("report", "absent-run"), ("compare", "a", "b")])
def test_an_empty_moved_path(command, value, tmp_path) -> None:
    r = cli(*command, "--moved", value, cwd=str(tmp_path))
    assert r.returncode == 2 and r.stderr.strip() == "error: --moved: an empty path; give the file", r.stderr


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_metric_checkpoint(value, tmp_path) -> None:
    dry = cli("run", "laobench-translation", "--model", "openai:x@http://127.0.0.1:9/v1", "--dry-run",
              "--metric-checkpoint", value, "--cache-path", str(tmp_path / "c.sqlite"), cwd=str(tmp_path))
    resc = cli("rescore", "absent-run", "--metric-checkpoint", value, cwd=str(tmp_path))
    for r in (dry, resc):
        assert r.returncode == 2 and r.stderr.strip().startswith("error: --metric-checkpoint: an empty path"), r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
