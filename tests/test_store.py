"""The results store: indexing run directories, and many concurrent writers (separate processes,
as Ray workers are) neither losing nor duplicating a run, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cli
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import GlotbenchError
from glotbench.store import ResultsStore, run_record


@pytest.fixture(scope="module")
def run_dirs(tmp_path_factory, server):
    """One real finished run, copied into 60 distinct run directories (distinct start times)."""
    root = tmp_path_factory.mktemp("store_runs")
    server.configure()
    res = evaluate("vi-diacritics", server.spec(), RunOptions(limit=4, out=str(root / "r0"), progress=False,
                                                             cache_path=str(root / "c.sqlite")))
    dirs = [res.out_dir]
    for i in range(1, 60):
        d = root / f"r{i}"
        shutil.copytree(res.out_dir, d)
        data = json.loads((d / "results.json").read_text())
        data["started"] = f"2026-01-01T00:00:{i:02d}+00:00"
        (d / "results.json").write_text(json.dumps(data))
    return dirs + [root / f"r{i}" for i in range(1, 60)]


def test_record_holds_scores_tokens_and_identity(run_dirs):
    rec = run_record(run_dirs[0])
    assert rec["benchmark"] == "vi-diacritics" and rec["headline"] == "sentence_exact"
    assert rec["items"] == 4 and rec["scores"]["overall"]["sentence_exact"]["n"] == 4
    assert rec["signature"].startswith("glotbench:vi-diacritics") and rec["prompt_tokens"] > 0
    assert rec["run_key"] != run_record(run_dirs[1])["run_key"]
    assert rec["run_key"] == run_record(run_dirs[0])["run_key"]


@pytest.mark.parametrize("content, message", [
    (None, "has no results.json"), ("{not json", "results.json:1: not valid JSON"),
    ('{"status": "running"}', "results.json:1: not a finished glotbench run"),
    ('{"status": "complete", "scores": {}}', "results.json:1: format: missing; benchmark: missing"),
])
def test_bad_run_directories(tmp_path, content, message):
    d = tmp_path / "bad"
    d.mkdir()
    if content is not None:
        (d / "results.json").write_text(content)
    with pytest.raises(GlotbenchError, match=message):
        run_record(d)


def test_import_cli_counts_and_warns(tmp_path, run_dirs):
    url = f"sqlite:///{tmp_path / 's.sqlite'}"
    bad = tmp_path / "runs" / "broken"
    bad.mkdir(parents=True)
    (bad / "results.json").write_text("{")
    proc = cli("runs", "import", str(run_dirs[0]), str(run_dirs[1]), str(tmp_path / "runs"), "--db", url)
    assert proc.returncode == 1
    assert "2 runs indexed, 0 already indexed, 1 unreadable" in proc.stdout
    assert "warning:" in proc.stderr and "broken" in proc.stderr
    proc = cli("runs", "import", str(run_dirs[0]), "--db", url)
    assert proc.returncode == 0 and "0 runs indexed, 1 already indexed" in proc.stdout
    proc = cli("runs", "import", str(tmp_path / "nothing"), "--db", url)
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    proc = cli("runs", "ls", "--db", "postgresql+psycopg://u:secret@127.0.0.1:1/none")
    assert proc.returncode == 2 and proc.stderr.startswith("error: cannot open the results store")
    assert "secret" not in proc.stderr and proc.stderr.count("\n") == 1


def _writers(url: str, run_dirs: list[Path], n: int = 6) -> list[subprocess.CompletedProcess]:
    """n processes at once, each importing 15 runs; neighbours overlap by 5, so 35 are written twice."""
    procs = []
    for i in range(n):
        chunk = [str(d) for d in run_dirs[i * 10: i * 10 + 15]]
        procs.append(subprocess.Popen([sys.executable, "-m", "glotbench", "runs", "import", *chunk, "--db", url],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=180)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


def _check_concurrent(url: str, run_dirs: list[Path]) -> None:
    results = _writers(url, run_dirs)
    for r in results:
        assert r.returncode == 0, r.stderr
    indexed = sum(int(r.stdout.split(" runs indexed")[0].split()[-1]) for r in results)
    store = ResultsStore(url)
    keys = [row.run_key for row in store.list()]
    assert len(keys) == len(set(keys)) == 60 == indexed  # none lost, none twice
    assert {row.run_dir for row in store.list()} == {str(Path(d).resolve()) for d in run_dirs}
    store.close()


def test_concurrent_writers_sqlite(tmp_path, run_dirs):
    _check_concurrent(f"sqlite:///{tmp_path / 'fresh' / 'store.sqlite'}", run_dirs)  # a new store: migrations race too


def _pg_url() -> str | None:
    return os.environ.get("GLOTBENCH_TEST_PG_URL")


@pytest.mark.skipif(_pg_url() is None, reason="no PostgreSQL server: set GLOTBENCH_TEST_PG_URL (.ci/run starts one)")
def test_concurrent_writers_postgresql(run_dirs):
    from sqlalchemy import create_engine, text

    url = _pg_url()
    engine = create_engine(url)
    with engine.begin() as conn:  # a fresh store in the shared test database
        conn.execute(text("DROP TABLE IF EXISTS runs"))
        conn.execute(text("DROP TABLE IF EXISTS glotbench_store_version"))
    engine.dispose()
    _check_concurrent(url, run_dirs)


@pytest.mark.skipif(_pg_url() is None, reason="no PostgreSQL server: set GLOTBENCH_TEST_PG_URL (.ci/run starts one)")
def test_call_cache_in_postgresql_is_shared_between_processes(tmp_path, srv):
    """Two `glotbench run` processes (two nodes) with the cache in PostgreSQL: the second makes no call."""
    from sqlalchemy import create_engine, text

    engine = create_engine(_pg_url())
    with engine.begin() as conn:
        for table in ("glotbench_calls", "glotbench_scores", "glotbench_aggregates"):
            conn.execute(text(f"DROP TABLE IF EXISTS {table}"))
    args = ["run", "vi-diacritics", "--model", srv.spec(), "--limit", "7", "--no-progress", "--cache-path", _pg_url()]
    first = cli(*args, "--out", str(tmp_path / "a"))
    assert first.returncode == 0, first.stderr
    assert len(srv.requests()) == 7
    second = cli(*args, "--out", str(tmp_path / "b"))
    assert second.returncode == 0, second.stderr
    assert len(srv.requests()) == 7
    res = json.loads((tmp_path / "b" / "results.json").read_text())
    assert res["counts"]["cache_hits"] == 7 and res["counts"]["model_calls"] == 0
    # the scores and the aggregate are shared too: the second process read what the first stored
    assert res["scores"] == json.loads((tmp_path / "a" / "results.json").read_text())["scores"]
    with engine.connect() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM glotbench_scores")).scalar() == 7
        # one benchmark aggregate (and the run's checks: glotbench.checks keeps them in the same table)
        assert conn.execute(text("SELECT COUNT(*) FROM glotbench_aggregates WHERE key NOT LIKE 'checks:%'")).scalar() == 1
        assert conn.execute(text("SELECT COUNT(*) FROM glotbench_aggregates WHERE key LIKE 'checks:%'")).scalar() == 1
    engine.dispose()
    proc = cli("run", "vi-diacritics", "--model", srv.spec(), "--limit", "1", "--no-progress",
               "--cache-path", "postgresql+psycopg://u:pw@127.0.0.1:1/none", "--out", str(tmp_path / "c"))
    assert proc.returncode == 2 and proc.stderr.startswith("error: cannot open the call cache") and "pw" not in proc.stderr


def test_board_never_puts_two_signatures_in_one_column():
    from glotbench.store.db import RunRow, board

    def row(model, bench, sig, score, lo=None, hi=None, scale="fraction"):
        return RunRow(model=model, benchmark=bench, signature=sig, score=score, ci_low=lo, ci_high=hi, scale=scale)

    rows = [row("m1", "vi", "sigA", 0.5, 0.4, 0.6),
            row("m2", "vi", "sigB", 0.7, 0.6, 0.8),  # another prompt or data: its own column
            row("m1", "mcq", "s", 0.2), row("m1", "mcq", "s", 0.4), row("m1", "mcq", "s", 0.3),  # three seeds
            row("m2", "mcq", "s", None), row("m1", "chrf", "c", 41.25, 39.5, 43.0, "points"),
            row("m2", "chrf", "c", 0.25, None, None, None)]  # indexed before the unit was recorded
    columns, table = board(rows)
    assert len(columns) == 4 and "mcq" in columns
    vi_cols = [c for c in columns if c.startswith("vi [")]
    assert len(vi_cols) == 2
    # one unit for people: percent (points for a points metric); the store keeps fractions
    assert table["m1"]["mcq"] == "30.0 [3 runs 20.0–40.0]" and table["m2"]["mcq"] == "-"
    assert sorted(v for m in table.values() for c, v in m.items() if c in vi_cols) == ["50.0 (40.0–60.0)",
                                                                                        "70.0 (60.0–80.0)"]
    assert (table["m1"]["chrf"], table["m2"]["chrf"]) == ("41.2 (39.5–43.0)", "0.25?")
    assert not set(table["m1"]) & set(table["m2"]) - {"mcq", "chrf"}  # m1's and m2's vi runs never share a column


def test_board_columns_say_what_tells_them_apart():
    """`runs board` names each column by a hash; under the table it says what each holds: its items,
    the sample-data label, and the signature parts the benchmark's other columns do not share."""
    from glotbench.store.db import RunRow, board_columns

    def row(sig, n, of, label=None, limit=None):
        sel = {"full": n == of, "subset": None, "limit": limit, "n": n, "of": of, "repeats": 1,
               "items_sha256": None if n == of else "f" * 64}
        return RunRow(benchmark="mcq", signature=sig, model="m", items=n, selection=sel, options={}, data_label=label)

    cols = board_columns([row("glotbench:mcq|v:1|data:aa|method:generate", 25, 25, "sample data (25 ...)"),
                          row("glotbench:mcq|v:1|data:aa|method:loglik", 25, 25, "sample data (25 ...)"),
                          row("glotbench:mcq|v:1|data:aa|method:generate|subset:limit5,5of25,ffffffffffff", 5, 25,
                              "sample data (25 ...)", limit=5),
                          row("glotbench:mcq|v:1|data:bb|method:generate", 40, 40)])
    assert sorted(cols.values()) == sorted([
        "all 25 items; sample data (25 ...); data:aa method:generate",
        "all 25 items; sample data (25 ...); data:aa method:loglik",
        "subset: 5 of 25 items (--limit 5); sample data (25 ...); data:aa method:generate",
        "all 40 items; data:bb method:generate"])
    assert all(c.startswith("mcq [") for c in cols)
