"""A `--pivot` run's phases are not runs of their own in a folder (issue #35 review): `export runs/`
exported `pivot/translate-in` (the pivot model's translations, benchmark `pivot-translate`) and
`pivot/native` beside the pivot run as if they were results, and `board runs/` showed the translations
as a column. Each phase now records `config.phase`, as a judged run's phases do, so a folder search
leaves them out; the pivot run, and a phase named by its own path, are still exported."""

from __future__ import annotations

import csv
import io
import json

from checks_models import MGSM_TH, XQUAD_TH, write_json
from conftest import cli
from glotbench.engine.evaluate import RunOptions
from glotbench.engine.pivot import pivot_cli


def _runs(stdout: str) -> set[str]:
    return {r["run"] for r in csv.DictReader(io.StringIO(stdout))}


def test_a_folder_with_pivot_runs_exports_the_runs_not_their_phases(tmp_path, cache_path):
    runs = tmp_path / "runs"
    for name, data in (("mgsm", MGSM_TH), ("xquad", XQUAD_TH)):  # answers as given; text answers translated back
        pivot_cli(f"deepsea-{name}", "python:checks_models:english_solver", "en", "python:checks_models:translator",
                  RunOptions(data=write_json(tmp_path / f"{name}.json", data), out=str(runs / name),
                             cache_path=cache_path, progress=False))
    phases = sorted(p.parent.relative_to(runs).as_posix() for p in runs.rglob("results.json") if p.parent.parent != runs)
    assert phases == ["mgsm/pivot/native", "mgsm/pivot/translate-in", "xquad/pivot/answers", "xquad/pivot/native",
                      "xquad/pivot/translate-back", "xquad/pivot/translate-in"]
    for ph in phases:
        assert json.loads((runs / ph / "results.json").read_text(encoding="utf-8"))["config"]["phase"].startswith("pivot ")
    proc = cli("export", str(runs), "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    assert _runs(proc.stdout) == {str(runs / "mgsm"), str(runs / "xquad")}
    proc = cli("board", str(runs), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert "pivot-translate" not in proc.stdout
    proc = cli("export", str(runs / "mgsm" / "pivot" / "native"), "--format", "csv")  # named by its path: exported
    assert proc.returncode == 0 and _runs(proc.stdout) == {str(runs / "mgsm" / "pivot" / "native")}


def test_a_pivot_run_on_a_limit_records_its_subset(tmp_path, cache_path):
    """`run --pivot en --limit N` (and --quick): the pivot run's results.json said every item of the dataset
    (`full`, no `subset:` part in its signature) while its native phase said `subset:limit2,2ofN`; export,
    the Hub file and the board then presented a few items as the whole benchmark. Both answer routes: the
    answers as given (MGSM) and translated back (XQuAD)."""
    from glotbench.rundir.selection import selection_text

    xquad3 = {**XQUAD_TH, "languages": {"th": XQUAD_TH["languages"]["th"] * 3}}  # three items, one text
    for name, data in (("mgsm", MGSM_TH), ("xquad", xquad3)):
        out = tmp_path / name
        pivot_cli(f"deepsea-{name}", "python:checks_models:english_solver", "en", "python:checks_models:translator",
                  RunOptions(data=write_json(tmp_path / f"{name}.json", data), out=str(out), limit=2,
                             cache_path=cache_path, progress=False))
        root = json.loads((out / "results.json").read_text(encoding="utf-8"))
        native = json.loads((out / "pivot" / "native" / "results.json").read_text(encoding="utf-8"))
        assert root["selection"]["full"] is False and root["selection"]["n"] == 2 == native["selection"]["n"]
        assert root["selection"]["of"] == native["selection"]["of"] > 2
        assert root["selection"]["items_sha256"] == native["selection"]["items_sha256"]
        assert "|subset:limit2,2of" in root["signature"] and selection_text(root)
        proc = cli("export", str(out), "--format", "csv")
        assert proc.returncode == 0, proc.stderr
        assert {r["n"] for r in csv.DictReader(io.StringIO(proc.stdout))} <= {"2", "1", "0", ""}
