"""rev36b: `tasks check NAME --eval-yaml PATH` never replaces a file of the user's: an existing file that
glotbench did not write (at PATH, a README.md or data/SPLIT.jsonl beside it) is one `error:` line and
nothing is written (before: PATH was overwritten, a user's data/test.jsonl replaced); a parent that is
a file, a folder at PATH, an empty PATH are one line each; a re-export over its own files still works."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import cli

ROWS = Path(__file__).parent / "fixtures" / "tasks" / "sib200_lao_Laoo.jsonl"


def _export(out: str, cwd: Path):
    return cli("tasks", "check", "sib200", "--data", str(ROWS), "--eval-yaml", out, cwd=str(cwd))


def _one_error(r, *parts: str) -> None:
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(err) == 1 and err[0].startswith("error: "), r.stderr
    assert all(p in err[0] for p in parts), r.stderr


def _tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("case", ["file at path", "eval.yaml of the user's", "data file of the user's",
                                  "README of the user's"])
def test_a_file_of_the_user_s_is_never_replaced(case, tmp_path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    out = {"file at path": "notes.txt"}.get(case, "eval.yaml")
    mine = {"file at path": "notes.txt", "eval.yaml of the user's": "eval.yaml",
            "data file of the user's": "data/test.jsonl", "README of the user's": "README.md"}[case]
    (work / mine).parent.mkdir(parents=True, exist_ok=True)
    (work / mine).write_text("mine\n", encoding="utf-8")
    before = _tree(work)
    r = _export(out, work)
    _one_error(r, mine, "glotbench did not write")
    assert _tree(work) == before  # nothing written, nothing replaced


@pytest.mark.parametrize("out,why", [("afile/eval.yaml", "afile is a file, not a folder"),
                                     ("afile/sub/eval.yaml", "afile is a file, not a folder"),
                                     ("adir", "is a directory, not a file"), ("", "an empty path"),
                                     (" ", "an empty path")])
def test_odd_paths_are_one_line(out, why, tmp_path) -> None:
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    (tmp_path / "adir").mkdir()
    r = _export(out, tmp_path)
    _one_error(r, why)
    assert (tmp_path / "afile").read_text(encoding="utf-8") == "x" and not (tmp_path / "README.md").exists()


def test_a_re_export_over_its_own_files(tmp_path) -> None:
    for _ in range(2):
        r = _export("out/eval.yaml", tmp_path)
        assert r.returncode == 0, r.stderr
    assert sorted(_tree(tmp_path / "out")) == ["README.md", "data/test.jsonl", "eval.yaml"]
