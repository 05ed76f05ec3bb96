"""`glotbench run` indexes its finished run in the results store, as `sweep` does (issue 21), so
`runs ls` lists it; a store that cannot be written is a warning, not a failed run. Every
human-facing number of the store's commands and the sweep summary is in percent (points for a
points metric), like run, report and board; JSON keeps fractions."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from conftest import cli

from glotbench.store import ResultsStore
from glotbench.store.index import HEAD_REVISION, JSON_COLUMNS, index_run, record_of


def test_head_revision_is_alembics_head():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    import glotbench.store.db as db

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(db.__file__).parent / "migrations"))
    assert ScriptDirectory.from_config(cfg).get_current_head() == HEAD_REVISION
    json_cols = {c.name for c in db.RunRow.__table__.columns if isinstance(c.type, db.JSON)}
    assert json_cols == set(JSON_COLUMNS)


@pytest.fixture
def vi_run(srv, tmp_path) -> Path:
    srv.configure(answers={"Sang nay": '{"restored_text": "Sáng nay tôi dậy muộn nên không kịp ăn sáng."}'})
    out = tmp_path / "vi"
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    r = cli("run", "vi-diacritics", "--model", srv.spec(), "--limit", "4", "--no-cache", "--no-progress",
            "--out", str(out), env={"GLOTBENCH_STORE_URL": url})
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    return out


def test_a_finished_run_is_listed_in_percent(vi_run, tmp_path):
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    res = json.loads((vi_run / "results.json").read_text(encoding="utf-8"))
    head = res["scores"]["overall"]["sentence_exact"]
    assert head["value"] == 0.25  # one of four right
    ls = cli("runs", "ls", "--db", url)
    assert ls.returncode == 0 and "1 runs" in ls.stdout, ls.stdout
    line = next(x for x in ls.stdout.splitlines() if "vi-diacritics" in x)
    # the interval as every view prints it, then n (the units it rests on), then the unit
    assert re.search(rf"sentence_exact\s+25\.0\s+\({100 * head['ci_low']:.1f}–{100 * head['ci_high']:.1f}\)†\s+4\s+%", line), line
    assert "† = too few units" in ls.stdout  # 4 items: under Wilson's measured 30
    as_json = json.loads(cli("runs", "ls", "--db", url, "--json").stdout)
    assert (as_json["score"], as_json["scale"]) == (0.25, "fraction")  # JSON keeps fractions
    show = cli("runs", "show", str(vi_run), "--db", url)
    assert show.returncode == 0, show.stderr
    # 4 items: under the 30 where Wilson's measured coverage reaches 93%, so the interval carries †
    assert head["too_few_units"] is True
    assert re.search(r"^sentence_exact: 25\.0 \(\d+\.\d–\d+\.\d\)† n=4   \[percent, 95% CI\]$", show.stdout, re.M), show.stdout
    assert "by category:" in show.stdout and f"directory: {vi_run.resolve()}" in show.stdout
    assert json.loads(cli("runs", "show", str(vi_run), "--db", url, "--json").stdout)["score"] == 0.25


def test_a_points_metric_is_shown_in_points(srv, tmp_path):
    """laobench-translation's BLEU is in points (0–100) and has no pooled overall score: each
    direction's score, as the results table prints it."""
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    out = tmp_path / "tr"
    r = cli("run", "laobench-translation", "--model", srv.spec(), "--no-cache", "--no-progress", "--out", str(out),
            env={"GLOTBENCH_STORE_URL": url})
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    head = res["headline"]
    assert res["metrics"][head]["scale"] == "points" and not res["scores"]["overall"]
    line = next(x for x in cli("runs", "ls", "--db", url).stdout.splitlines() if "laobench-translation" in x)
    assert line.split()[4:8] == ["-", "-", "-", "points"], line  # no score, interval or n: no pooled overall
    show = cli("runs", "show", str(out), "--db", url).stdout
    assert "[points (0–100), 95% CI]" in show, show
    for key, groups in res["scores"]["groups"].items():
        for value, est in groups.items():
            e = est[head]
            mark = "†" if e.get("too_few_units") else ""
            assert f"  {value}: {e['value']:.1f} ({e['ci_low']:.1f}–{e['ci_high']:.1f}){mark} n={e['n']}" in show, show


def test_the_fast_path_writes_what_the_orm_reads(vi_run, tmp_path):
    """A run indexed by sqlite3 (the store's schema is current) reads back through SQLAlchemy with
    the same values as one added through the ORM."""
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    res = json.loads((vi_run / "results.json").read_text(encoding="utf-8"))
    copy = tmp_path / "copy"
    copy.mkdir()
    store = ResultsStore(url)
    assert store.add(record_of(res, copy))  # the ORM's row for the same results, another directory
    fast = store.get(str(vi_run))
    orm = store.get(str(copy))
    for col in (c.name for c in fast.__table__.columns):
        if col not in ("id", "run_key", "run_dir", "indexed"):
            assert getattr(fast, col) == getattr(orm, col), col
    assert abs((fast.indexed - orm.indexed).total_seconds()) < 120
    assert index_run(res, vi_run, url) is False  # twice: kept once
    assert store.count() == 2


def test_an_older_store_is_upgraded_and_its_units_filled_in(vi_run, tmp_path):
    """A store made before the unit was recorded (s0001): the next run migrates it through Alembic,
    and its rows get their unit from their run's results.json where it can be read."""
    from alembic import command
    from alembic.config import Config

    import glotbench.store.db as db

    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(db.__file__).parent / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url)
    cfg.set_main_option("version_table", db.VERSION_TABLE)
    command.upgrade(cfg, "s0001")
    rec = {k: v for k, v in record_of(json.loads((vi_run / "results.json").read_text(encoding="utf-8")),
                                      vi_run).items()
           if k not in ("scale", "selection", "validity", "data_label", "judge_validation")}  # columns added after s0001
    con = sqlite3.connect(tmp_path / "old.sqlite")
    row = {**{k: json.dumps(v) if k in JSON_COLUMNS else v for k, v in rec.items()}, "indexed": "2026-01-01 00:00:00.000000"}
    con.execute(f"INSERT INTO runs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
    gone = {**row, "run_key": "x" * 64, "run_dir": str(tmp_path / "deleted")}
    con.execute(f"INSERT INTO runs ({', '.join(gone)}) VALUES ({', '.join('?' * len(gone))})", list(gone.values()))
    con.commit()
    con.close()
    res = json.loads((vi_run / "results.json").read_text(encoding="utf-8"))
    other = tmp_path / "other"
    other.mkdir()
    assert index_run(res, other, url) is True  # not current: through ResultsStore, which migrates
    rows = {r.run_dir: r.scale for r in ResultsStore(url).list()}
    assert rows == {str(vi_run.resolve()): "fraction", str(tmp_path / "deleted"): None,
                    str(other.resolve()): "fraction"}
    ls = cli("runs", "ls", "--db", url)
    assert "0.25?" in ls.stdout and "indexed before the unit was recorded" in ls.stdout, ls.stdout


def test_a_store_that_cannot_be_written_is_a_warning(srv, tmp_path):
    out = tmp_path / "r"
    r = cli("run", "vi-diacritics", "--model", srv.spec(), "--limit", "2", "--no-cache", "--no-progress",
            "--out", str(out), env={"GLOTBENCH_STORE_URL": "postgresql+psycopg://u:pw@127.0.0.1:1/none"})
    assert r.returncode == 0, r.stderr
    assert (out / "results.json").is_file() and "run directory:" in r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: the run is not in the results store"), r.stderr
    assert f"glotbench runs import {out}" in lines[0] and "pw" not in lines[0]
    bad = tmp_path / "notadb.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    r = cli("run", "vi-diacritics", "--model", srv.spec(), "--limit", "1", "--no-cache", "--no-progress",
            "--out", str(tmp_path / "r2"), env={"GLOTBENCH_STORE_URL": f"sqlite:///{bad}"})
    assert r.returncode == 0 and r.stderr.startswith("warning: the run is not in the results store"), r.stderr


def test_the_sweep_summary_prints_percent(srv, tmp_path):
    srv.configure(answers={"Sang nay": '{"restored_text": "Sáng nay tôi dậy muộn nên không kịp ăn sáng."}'})
    path = tmp_path / "s.yaml"
    path.write_text(f"models: [{{spec: 'openai:a@{srv.url}'}}]\nbenchmarks: [{{name: vi-diacritics, limit: 4}}]\n"
                    f"out: {tmp_path / 'out'}\nstore: sqlite:///{tmp_path / 'st.sqlite'}\n", encoding="utf-8")
    r = cli("sweep", str(path), "--no-progress")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if "vi-diacritics" in x)
    assert re.search(r"\bdone\s+25\.0 \(\d+\.\d–\d+\.\d\)† n=4\s+%\s", line), line


@pytest.mark.parametrize("store", ["fast", "orm"])
def test_a_run_finished_in_place_replaces_its_invalid_row(srv, tmp_path, store):
    """An invalid run run again in its directory (the same command, once the endpoint works) left its
    invalid row beside the new one: `runs ls` listed a run no directory holds, and `runs show DIR`
    printed the stale invalid numbers. A directory holds one run: its newest row replaces the older."""
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    # "fast": `glotbench run` indexes with sqlite3; "orm": `runs import` (ResultsStore, SQLAlchemy)
    env = {"GLOTBENCH_STORE_URL": url if store == "fast" else f"sqlite:///{tmp_path / 'other.sqlite'}"}
    out = tmp_path / "r"
    args = ["run", "vi-diacritics", "--model", srv.spec(), "--limit", "3", "--no-cache", "--no-progress",
            "--max-retries", "0", "--out", str(out)]
    srv.configure(faults=[{"match": "*", "status": 503, "times": 99}])
    assert cli(*args, env=env).returncode == 3
    if store == "orm":
        assert cli("runs", "import", str(out), "--db", url).returncode == 0
    srv.configure()
    r = cli(*args, env=env)
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    if store == "orm":
        assert cli("runs", "import", str(out), "--db", url).stdout.startswith("1 runs indexed")
    rows = [json.loads(x) for x in cli("runs", "ls", "--db", url, "--json").stdout.splitlines()]
    assert len(rows) == 1 and rows[0]["validity"]["valid"], rows
    show = cli("runs", "show", str(out), "--db", url).stdout
    assert "invalid" not in show and f"directory: {out.resolve()}" in show
    assert cli("runs", "import", str(out), "--db", url).stdout.startswith("0 runs indexed, 1 already indexed")
