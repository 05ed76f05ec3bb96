"""`glotbench export --out` never replaces a file of the user's (issue #35 review; the rule rev36b set
for `tasks check --eval-yaml`): `--format bibtex --out refs.bib` overwrote the user's own bibliography,
csv/json a file of any kind, hf-eval-results a `.eval_results/*.yaml` the user wrote. A file the export
wrote before is replaced (a re-export); any other is one `error:` line and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import cli

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "rundir_golden"


@pytest.mark.parametrize("fmt", ["csv", "json", "bibtex"])
def test_a_users_file_at_out_is_never_replaced_and_a_re_export_is(fmt, tmp_path):
    mine = tmp_path / "ລາວ refs.bib"
    mine.write_text("@book{mine, title={Mine}, year={2020}}\n", encoding="utf-8")
    proc = cli("export", str(GOLDEN / "subset"), "--format", fmt, "--out", str(mine))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "a file glotbench did not write" in proc.stderr
    assert mine.read_text(encoding="utf-8") == "@book{mine, title={Mine}, year={2020}}\n"
    out = tmp_path / f"out.{fmt}"
    for run in ("subset", "tones"):  # the second export replaces the first: the export wrote it
        proc = cli("export", str(GOLDEN / run), "--format", fmt, "--out", str(out))
        assert proc.returncode == 0, proc.stderr
    assert out.read_text(encoding="utf-8") == cli("export", str(GOLDEN / "tones"), "--format", fmt).stdout


def test_a_users_eval_results_file_is_never_replaced(tmp_path):
    args = ("export", str(GOLDEN / "subset"), "--format", "hf-eval-results", "--out", str(tmp_path / "hf"),
            "--hf-dataset", "me/laobench")
    proc = cli(*args)
    assert proc.returncode == 0, proc.stderr
    path = Path(proc.stdout.strip())
    assert yaml.safe_load(path.read_text(encoding="utf-8"))[0]["dataset"]["id"] == "me/laobench"
    assert cli(*args).returncode == 0  # its own file: replaced
    path.write_text("- dataset: {id: me/laobench, task_id: default}\n  value: 0.5\n", encoding="utf-8")
    proc = cli(*args)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and str(path) in proc.stderr, proc.stderr
    assert "value: 0.5" in path.read_text(encoding="utf-8")
