"""`glotbench export RUN --format bibtex`: glotbench's entry (as CITATION.cff says) and each run's
benchmark citation from its datasheet — a user's task file's kept copy, else the registered family."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from conftest import cli
from test_tasks_files import SMALL, write

from glotbench.datasheet import bibtex_entries
from glotbench.report.export import GLOTBENCH_BIBTEX

ROOT = Path(__file__).resolve().parents[1]
SHEET = """datasheet:
  licence: CC-BY-4.0
  commercial: true
  origin: native
  source: https://example.org/sums
  citation: |
    @inproceedings{sums2024,
      title = {Lao Sums},
      author = {Somchai, A.},
      year = {2024}
    }
  languages: {lo: {}}
"""


def _run(tmp_path: Path, srv, sheet: str, out: str) -> Path:
    work = tmp_path / f"w-{out}"
    work.mkdir()
    write(work, SMALL + sheet)
    rows = [{"id": "s1", "q": "ໜຶ່ງບວກໜຶ່ງເທົ່າກັບເທົ່າໃດ?", "a": "2"}, {"id": "s2", "q": "ສາມບວກສີ່ເທົ່າກັບເທົ່າໃດ?", "a": "7"}]
    (work / "sums.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    srv.configure(answers={"ໜຶ່ງບວກໜຶ່ງ": "2", "ສາມບວກສີ່": "8"})
    proc = cli("run", "t.yaml", "--model", srv.spec("m"), "--out", str(tmp_path / out), "--no-progress",
               "--no-cache", cwd=str(work))
    assert proc.returncode == 0, proc.stderr
    return tmp_path / out


def test_bibtex_has_glotbench_and_the_task_citation(tmp_path, srv):
    a = _run(tmp_path, srv, SHEET, "a")
    b = _run(tmp_path, srv, SHEET, "b")  # the same citation twice is one entry
    (a.parent / "w-a" / "t.yaml").unlink()  # read from the run's kept copy
    proc = cli("export", str(a), str(b), "--format", "bibtex")
    assert proc.returncode == 0, proc.stderr
    entries = bibtex_entries(proc.stdout)
    assert [e["ID"] for e in entries] == ["glotbench", "sums2024"]
    assert entries[1]["title"] == "Lao Sums" and entries[1]["year"] == "2024"


def test_a_run_without_a_datasheet_is_named(tmp_path, srv):
    a = _run(tmp_path, srv, "", "plain")
    proc = cli("export", str(a), "--format", "bibtex")
    assert proc.returncode == 0, proc.stderr
    assert [e["ID"] for e in bibtex_entries(proc.stdout)] == ["glotbench"]
    assert "declares no datasheet, so no citation" in proc.stderr


def test_glotbench_entry_agrees_with_citation_cff():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert GLOTBENCH_BIBTEX["title"] == cff["title"]
    assert GLOTBENCH_BIBTEX["version"] == str(cff["version"])
    assert GLOTBENCH_BIBTEX["license"] == cff["license"]
    assert GLOTBENCH_BIBTEX["author"] == "{" + " and ".join(a["name"] for a in cff["authors"]) + "}"
    assert "--format bibtex" in cff["message"]
