"""Issue 33, a smaller surface: at most 20 top-level commands (the folded ones stay hidden aliases
that name their new form on stderr) and one `--html [FILE]` convention across report, board,
compare and diff."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import cli

from glotbench.cli.options import ALIASES, html_args, html_page

RUN = Path(__file__).parent / "fixtures" / "rundir_golden" / "tones"
ARAGEN_OK = {"model": "m", "family": "f", "per_judge": {}, "item_scores": {}}
ARENA_OK = {"candidate": "c", "scores": {"judges": {"j": {"value": 0.5}, "k": {"value": 0.7}}}}


def _listed(help_text: str) -> list[str]:
    return [line.split()[0] for line in help_text.split("Commands:")[1].splitlines()
            if line.startswith("  ") and line[2] != " "]


@pytest.fixture()
def run(tmp_path: Path) -> Path:
    d = tmp_path / "r1"
    shutil.copytree(RUN, d)
    return d


def test_help_lists_at_most_20_commands_and_no_alias():
    out = cli("--help")
    listed = _listed(out.stdout)
    assert out.returncode == 0 and 0 < len(listed) <= 20, listed
    assert not set(ALIASES) & set(listed)
    for new in ALIASES.values():  # each new form's command is listed
        assert new.split()[0] in listed


def _judged_dir(tmp: Path, name: str, file: str, doc: dict) -> str:
    d = tmp / name
    d.mkdir()
    (d / file).write_text(json.dumps(doc), encoding="utf-8")
    return str(d)


@pytest.mark.parametrize("old, file, doc", [("arena-report", "arena.json", ARENA_OK),
                                            ("judge-audit", "aragen.json", ARAGEN_OK)])
def test_the_judges_report_aliases_print_what_report_judges_prints(tmp_path, old, file, doc):
    d = _judged_dir(tmp_path, "j", file, doc)
    new = cli("report", "--judges", d)
    assert new.returncode == 0 and new.stderr == "", new.stderr
    assert json.loads(new.stdout)  # the report itself
    was = cli(old, d)
    assert was.returncode == 0 and was.stdout == new.stdout
    assert was.stderr.splitlines() == [f"note: `glotbench {old}` is now `glotbench {ALIASES[old]}`; the old name will go"]


def test_several_judged_directories_are_the_judges_report_and_kinds_do_not_mix(tmp_path, run):
    a = _judged_dir(tmp_path, "a", "arena.json", ARENA_OK)
    b = _judged_dir(tmp_path, "b", "arena.json", {**ARENA_OK, "candidate": "d"})
    r = cli("report", a, b)
    assert r.returncode == 0, r.stderr
    assert r.stdout == cli("arena-report", a, b).stdout
    g = _judged_dir(tmp_path, "g", "aragen.json", ARAGEN_OK)
    for args, fragment in [((a, g), "one kind at a time"), ((str(run), a), "one kind at a time"),
                           ((g, "--bt"), "--bt ranks arena directories"), ((a, b, "--html"), "JSON only")]:
        r = cli("report", *args)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], r.stderr


def test_html_alone_writes_each_views_default_page(tmp_path, run):
    assert cli("report", str(run), "--html", cwd=tmp_path).returncode == 0
    assert (run / "report.html").is_file()
    r = cli("board", str(run), "--html", cwd=tmp_path)
    assert r.returncode == 0 and "board: board.html" in r.stderr, r.stderr
    r = cli("compare", str(run), str(run), "--html", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "compare: compare.html", r.stdout
    r = cli("diff", str(run), str(run), "--html", cwd=tmp_path)  # the hidden alias of `compare --items`
    assert r.returncode == 0 and r.stdout.strip() == "diff: diff.html", r.stdout
    assert r.stderr.splitlines() == [f"note: `glotbench diff` is now `glotbench {ALIASES['diff']}`; the old name will go"]
    for page in ("board.html", "compare.html", "diff.html"):
        assert (tmp_path / page).read_text(encoding="utf-8").lower().startswith("<!doctype html>"), page


@pytest.mark.parametrize("command, runs", [("report", 1), ("board", 1), ("compare", 2), ("diff", 2)])
def test_html_file_is_the_same_option_everywhere(tmp_path, run, command, runs):
    dirs = [str(run)] * runs
    for args, page in [(("--html", "p 1.html"), "p 1.html"), (("--html=page.out",), "page.out"),
                       (("--html", "P.HTM"), "P.HTM")]:
        r = cli(command, *args, *dirs, cwd=tmp_path)  # the option before the runs: FILE is not taken for a run
        assert r.returncode == 0, r.stderr
        assert (tmp_path / page).is_file(), (command, args, r.stdout, r.stderr)
        (tmp_path / page).unlink()


def test_html_before_a_run_directory_is_the_bare_flag(tmp_path, run):
    r = cli("report", "--html", str(run), cwd=tmp_path)
    assert r.returncode == 0 and (run / "report.html").is_file(), r.stderr
    r = cli("report", str(run), "old.html", "--html", cwd=tmp_path)  # the form before --html [FILE]
    assert r.returncode == 0 and (tmp_path / "old.html").is_file(), r.stderr
    assert "is now `report RUN --html FILE`" in r.stderr


def test_html_args_and_page():
    assert html_args(["board", "r", "--html"]) == ["board", "r", "--html="]
    assert html_args(["board", "--html", "r"]) == ["board", "--html=", "r"]
    assert html_args(["board", "--html", "b.HTML", "r"]) == ["board", "--html", "b.HTML", "r"]
    assert html_args(["board", "--html", "--format", "json"]) == ["board", "--html=", "--format", "json"]
    assert html_args(["x", "--", "--html"]) == ["x", "--", "--html"]
    assert html_page(None, "d.html") is None and html_page("", "d.html") == "d.html" and html_page("f", "d.html") == "f"


def test_rescore_checks_reads_each_run_and_write_needs_checks(tmp_path, run):
    one = cli("rescore", "--checks", str(run))
    assert one.returncode == 0, one.stderr
    other = tmp_path / "r2"
    shutil.copytree(run, other)
    both = cli("rescore", "--checks", str(run), str(other))
    assert both.returncode == 0, both.stderr
    assert json.loads(both.stdout) == {str(run): json.loads(one.stdout), str(other): json.loads(one.stdout)}
    for args, fragment in [(("--write",), "--write needs --checks"),
                           (("--checks", "--variant", "norm=nfc"), "drop --variant")]:
        r = cli("rescore", str(run), *args)
        assert r.returncode == 2 and r.stderr.startswith("error: ") and fragment in r.stderr, r.stderr


def test_compare_items_needs_two_runs_and_board_bt_its_own_output(tmp_path, run):
    r = cli("compare", "--items", str(run), str(run), str(run))
    assert r.returncode == 2 and "compare two runs' items; got 3 runs" in r.stderr, r.stderr
    for args, fragment in [(("--style-control",), "--style-control needs --bt"),
                           (("--bt", "--html"), "drop --html"), (("--bt", "--format", "csv"), "md (text) or json")]:
        r = cli("board", str(run), *args)
        assert r.returncode == 2 and r.stderr.startswith("error: ") and fragment in r.stderr, r.stderr
