"""Issue #33 leftovers: "judge not validated for the language" (judge validity cards, --judge-cards)
was shown by report and board but not by the results store's views. The store keeps each run's judge
validation as its results.json records it (a column, `judge_validation`), and `runs ls`, `runs show`
and `runs board` print the note beside the number; rows indexed before get it from their run
directory when the store is upgraded."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from conftest import cli
from test_tasks_rubric import files, verdict

NOTE = "judge not validated for lo: openai:judge1 (no card for lo)"


@pytest.fixture
def judged(srv, tmp_path) -> tuple[Path, str]:
    """A rubric task judged by a judge with no card for Lao, indexed by `run` into a store."""
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]": [verdict(1, 5)]})
    (tmp_path / "cards").mkdir()
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    out = tmp_path / "r"
    p = cli("run", files(tmp_path), "--model", srv.spec("cand"), "--judge", srv.spec("judge1"), "--out", str(out),
            "--no-progress", "--no-cache", "--judge-cards", str(tmp_path / "cards"), env={"GLOTBENCH_STORE_URL": url})
    assert p.returncode == 0 and "warning" not in p.stderr, p.stderr
    return out, url


def _ls(url: str) -> list[str]:
    p = cli("runs", "ls", "--db", url)
    assert p.returncode == 0, p.stderr
    return [line for line in p.stdout.splitlines()  # the rows: an id first (not the "N runs" footer)
            if re.match(r"\s*\d+\s", line) and not re.match(r"\s*\d+ runs\b", line)]


def test_runs_ls_show_and_board_say_the_judge_is_not_validated(judged):
    out, url = judged
    (row,) = _ls(url)
    assert f"[{NOTE}]" in " ".join(row.split()), row
    p = cli("runs", "ls", "--db", url, "--json")
    (rec,) = [json.loads(line) for line in p.stdout.splitlines()]
    assert rec["judge_validation"]["judges"]["openai:judge1@" + rec["model"].split("@", 1)[1]]["validated"] is False
    show = cli("runs", "show", str(rec["id"]), "--db", url)
    assert show.returncode == 0 and NOTE in " ".join(show.stdout.split()), show.stdout
    board = cli("runs", "board", "--db", url)
    assert board.returncode == 0, board.stderr
    (cell,) = [line for line in board.stdout.splitlines() if line.startswith("openai:cand")]
    assert f"[{NOTE}]" in " ".join(cell.split()), cell
    # the same note the run's own views print (report, from the one results record)
    report = cli("report", str(out))
    assert NOTE in " ".join(report.stdout.split()), report.stdout


def test_runs_import_of_a_judged_run_keeps_its_judge_validation(judged, tmp_path):
    out, _ = judged
    url = f"sqlite:///{tmp_path / 'other.sqlite'}"  # a new store: through SQLAlchemy, not the sqlite3 fast path
    p = cli("runs", "import", str(out), "--db", url)
    assert p.returncode == 0, p.stderr
    (row,) = _ls(url)
    assert f"[{NOTE}]" in " ".join(row.split()), row


def test_a_plain_run_has_no_judge_note(srv, tmp_path):
    srv.configure(answers={"Sang nay": '{"restored_text": "Sáng nay tôi dậy muộn nên không kịp ăn sáng."}'})
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    p = cli("run", "vi-diacritics", "--model", srv.spec(), "--limit", "2", "--no-cache", "--no-progress",
            "--out", str(tmp_path / "vi"), env={"GLOTBENCH_STORE_URL": url})
    assert p.returncode == 0, p.stderr
    (row,) = _ls(url)
    assert "judge not validated" not in row, row
    (rec,) = [json.loads(line) for line in cli("runs", "ls", "--db", url, "--json").stdout.splitlines()]
    assert rec["judge_validation"] is None


def store_at(path: Path, revision: str = "s0003") -> str:
    """A results store at `path` migrated only up to `revision` (a store of an earlier release); its URL."""
    from alembic import command
    from alembic.config import Config

    import glotbench.store.db as db
    from glotbench.store.index import VERSION_TABLE

    url = f"sqlite:///{path}"
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(db.__file__).parent / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url)
    cfg.set_main_option("version_table", VERSION_TABLE)
    command.upgrade(cfg, revision)
    return url


def test_upgrading_a_store_fills_the_judge_validation_of_rows_indexed_before(judged, tmp_path):
    from glotbench.store import ResultsStore

    out, _ = judged
    path = tmp_path / "old.sqlite"
    url = store_at(path)  # a store of the release before
    con = sqlite3.connect(path)
    con.execute("INSERT INTO runs (run_key, benchmark, benchmark_version, signature, model, model_info, options, "
                "headline, score, scores, items, failed, prompt_tokens, completion_tokens, run_dir, started, "
                "finished, indexed) VALUES ('k1', 'lao-open-qa', '1.0', '', 'openai:cand', '{}', '{}', 'rubric', "
                "1.0, '{}', 3, 0, 0, 0, :d, '', '', '2026-01-01 00:00:00'), ('k2', 'gone', '1', '', 'm', '{}', "
                "'{}', 'x', 0.5, '{}', 1, 0, 0, 0, :g, '', '', '2026-01-01 00:00:00')",
                {"d": str(out.resolve()), "g": str(tmp_path / "deleted")})
    con.commit()
    con.close()
    store = ResultsStore(url)  # upgrades to the head
    rows = {r.run_key: r for r in store.list()}
    store.close()
    assert rows["k1"].judge_validation["language"] == "lo"
    assert rows["k2"].judge_validation is None  # its directory is gone: nothing recorded, no note
    (row, _) = sorted(_ls(url), key=lambda line: "gone" in line)
    assert f"[{NOTE}]" in " ".join(row.split()), row
