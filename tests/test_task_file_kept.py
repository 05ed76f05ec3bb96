"""A task-file run keeps its task file: run.json and results.json record its resolved path, its
SHA-256 and a copy in the run directory, and every reader (report --html, diff, compare, rescore)
rebuilds the benchmark from there, from any folder, after the task file is moved (issue #33)."""

from __future__ import annotations

import hashlib
import json
import os

from conftest import cli
from test_tasks_files import SMALL, write


# token F1 (rescore varies its normalisation), no extraction pipelines
TASK = SMALL.replace('extract:\n  number: [number]\n  first_line: [first_line, number]\n', "").replace(
    "scorer: numeric_match", "scorer: token_f1")


def _runs(tmp_path, srv):
    work = tmp_path / "work"
    work.mkdir()
    path = write(work, TASK)
    rows = [{"id": "s1", "q": "ໜຶ່ງບວກໜຶ່ງເທົ່າກັບເທົ່າໃດ?", "a": "ສອງ"}, {"id": "s2", "q": "ສາມບວກສີ່ເທົ່າກັບເທົ່າໃດ?", "a": "ເຈັດ"},
            {"id": "s3", "q": "ສິບລົບສອງເທົ່າກັບເທົ່າໃດ?", "a": "ແປດ"}]
    (work / "sums.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    srv.configure(answers={"ໜຶ່ງບວກໜຶ່ງ": "ສອງ", "ສາມບວກສີ່": "ເຈັດ ແທ້", "ສິບລົບສອງ": "ຫົກ"})
    for name in ("a", "b"):  # the task file as typed: a relative path, from its folder
        proc = cli("run", "t.yaml", "--model", srv.spec(name), "--out", str(tmp_path / name), "--no-progress",
                   "--no-cache", cwd=str(work))
        assert proc.returncode == 0, proc.stderr
    return path


def test_the_run_records_and_copies_its_task_file(tmp_path, srv):
    path = _runs(tmp_path, srv)
    for f in ("run.json", "results.json"):
        tf = json.loads((tmp_path / "a" / f).read_text(encoding="utf-8"))["benchmark"]["task_file"]
        assert tf["path"] == str(path.resolve())
        assert tf["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert tf["copy"] == str((tmp_path / "a" / "task.yaml").resolve())
    assert (tmp_path / "a" / "task.yaml").read_bytes() == path.read_bytes()


def test_readers_work_from_another_folder_after_the_task_file_moved(tmp_path, srv):
    path = _runs(tmp_path, srv)
    os.rename(path, tmp_path / "moved.yaml")  # the data file stays where the task named it
    other = tmp_path / "elsewhere"
    other.mkdir()
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    page = cli("report", a, "--html", str(other / "a.html"), cwd=str(other))
    assert page.returncode == 0, page.stderr
    assert "references from" in (other / "a.html").read_text(encoding="utf-8")  # gold re-read from the data
    for args in (("compare", "--items", a, b), ("compare", a, b), ("rescore", a, b, "--variant", "norm=nfc")):
        proc = cli(*args, cwd=str(other))
        assert proc.returncode == 0, (args, proc.stderr)
        assert "unknown benchmark" not in proc.stderr and "not found" not in proc.stderr


def test_a_changed_copy_and_a_gone_original_say_so(tmp_path, srv):
    path = _runs(tmp_path, srv)
    path.unlink()
    (tmp_path / "a" / "task.yaml").write_text(TASK.replace("1.0", "2.0"), encoding="utf-8")
    proc = cli("compare", str(tmp_path / "a"), str(tmp_path / "b"), cwd=str(tmp_path))
    assert proc.returncode == 2 and "is gone or changed" in proc.stderr
