"""The shared reading rules' version is in every signature built on them (issue #30, reading item 9):
a user's own task file, a library task and the built-ins that read letters or numbers change their
signature when the rules read replies differently (`glotbench.extract.READING_VERSION`)."""

from __future__ import annotations

import json

from conftest import cli
from test_tasks_files import SMALL, write

import glotbench.extract as extract
from glotbench.registry import get_benchmark
from glotbench.tasks import from_file


def test_a_user_task_file_names_the_reading_version(tmp_path, srv):
    path = write(tmp_path, SMALL)
    r = cli("tasks", "check", str(path))
    assert r.returncode == 0, r.stderr
    assert f"number=number@r{extract.READING_VERSION};first_line=first_line>number@r{extract.READING_VERSION}" in r.stdout
    srv.configure(answers={"ໜຶ່ງບວກໜຶ່ງ": "ຄຳຕອບ: ໒", "ສາມບວກສີ່": "7", "ສິບລົບສອງ": "8"})
    r = cli("run", str(path), "--model", srv.spec(), "--out", str(tmp_path / "run"), "--no-cache", "--no-progress")
    assert r.returncode == 0, r.stderr
    sig = json.loads((tmp_path / "run" / "results.json").read_text())["signature"]
    assert f"number@r{extract.READING_VERSION}" in sig and f"numeric_em(to_ascii_digits@r{extract.READING_VERSION})" in sig


def test_a_bumped_reading_rule_changes_every_task_signature(tmp_path, monkeypatch):
    path = write(tmp_path, SMALL)
    user = from_file(path)
    before = {"user": user().signature_parts(), "belebele": get_benchmark("belebele").signature_parts()}
    monkeypatch.setattr(extract, "READING_VERSION", extract.READING_VERSION + 1)
    after = {"user": user().signature_parts(), "belebele": get_benchmark("belebele").signature_parts()}
    for name in before:
        assert before[name]["extract"] != after[name]["extract"], name
    assert before["user"]["scorer"] != after["user"]["scorer"]  # numeric match reads numbers by the rules


def test_steps_that_do_not_read_by_the_shared_rules_carry_no_version(tmp_path):
    path = write(tmp_path, SMALL.replace("  number: [number]\n  first_line: [first_line, number]\n",
                                         "  line: [first_line, free_text]\n").replace("numeric_match", "exact_match"))
    assert from_file(path)().signature_parts()["extract"] == "line=first_line>free_text"
