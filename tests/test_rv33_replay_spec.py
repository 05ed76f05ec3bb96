"""Review of issue #33: a replay spec that names no file, or names a directory, is one error line that
says so, as a candidate and as a judge (`--judge replay:`); it was "replay file not found: .", naming
the current folder."""

from __future__ import annotations

import pytest
from conftest import cli

from glotbench.errors import GlotbenchError
from glotbench.models.replay import ReplayModel


@pytest.mark.parametrize("path, says", [("", "names no file"), ("  ", "names no file"), (".", "is a directory")])
def test_replay_spec_without_a_file(path, says, tmp_path):
    with pytest.raises(GlotbenchError, match=says):
        ReplayModel(path)
    proc = cli("run", "vi-diacritics", "--model", f"replay:{path}", "--limit", "2", "--no-progress",
               "--out", str(tmp_path / "o"), cwd=str(tmp_path))
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error:") and says in line
