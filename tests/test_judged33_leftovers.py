"""Review leftovers of issue #33's judged runs, each through the console script: a store row indexed
before today's validity rule is refreshed by `runs import`; the arena's signature names every judge
asked; `run aragen --dry-run` counts the follow-up round's second turns; `runs import` names each
folder it skips; a folded command's usage error is one `error:` line. Judges are real HTTP
endpoints on loopback (conftest's server)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import cli

from glotbench.signature import Signature
from glotbench.store.db import ResultsStore, run_record

GOOD, PLAIN = "python:helpers:good_answer", "python:helpers:plain_answer"


def _arena(srv, tmp_path, out: Path, *judges: str) -> None:
    p = cli("run", "laobench-arena", "--model", GOOD, "--bench-opt", f"baseline={PLAIN}",
            *(a for j in judges for a in ("--judge", srv.spec(j))), "--out", str(out), "--no-progress",
            "--cache-path", str(tmp_path / "calls.sqlite"), "--max-retries", "0", "--limit", "3")
    assert (out / "results.json").is_file(), p.stderr


def test_runs_import_refreshes_a_row_indexed_before_with_todays_validity(srv, tmp_path):
    """An arena written by an earlier release (arena.json) that judged nothing, recorded valid, and
    indexed then as valid: `runs import` of its directory again gives its row today's rule (invalid)."""
    srv.configure(judges={"broken": {"mode": "malformed"}})
    _arena(srv, tmp_path, tmp_path / "new", "broken")
    old = tmp_path / "old"
    shutil.copytree(tmp_path / "new", old)
    record = json.loads((old / "results.json").read_text(encoding="utf-8"))
    summary = {**record["judged"]["summary"], "validity": {"valid": True, "failed": 0, "of": 3}}  # as written then
    (old / "arena.json").write_text(json.dumps(summary), encoding="utf-8")
    (old / "results.json").unlink()
    db = f"sqlite:///{tmp_path / 'store.sqlite'}"
    row = run_record(old)
    assert row["validity"]["valid"] is False  # read today: no prompt has a judged score
    store = ResultsStore(db)
    assert store.add({**row, "validity": {"valid": True, "failed": 0, "of": 3}})  # the row an earlier indexer kept
    store.close()
    assert "invalid" not in cli("runs", "ls", "--db", db).stdout  # the stale row, as it was
    p = cli("runs", "import", str(old), "--db", db)
    assert p.returncode == 0 and "0 runs indexed, 1 already indexed" in p.stdout, p.stdout + p.stderr
    ls = " ".join(cli("runs", "ls", "--db", db).stdout.split())
    assert "invalid" in ls and "no item has a judged score" in ls, ls
    (stored,) = ResultsStore(db).list()
    assert stored.validity["valid"] is False


def test_the_arena_signature_names_every_judge_asked(srv, tmp_path):
    """A judge whose every verdict was unreadable has no score, but it was asked: the number was made
    with it in the panel, and the signature says so (it named only the judges with scores)."""
    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}, "broken": {"mode": "malformed"}})
    _arena(srv, tmp_path, tmp_path / "two", "fair", "broken")
    _arena(srv, tmp_path, tmp_path / "one", "fair")
    two = json.loads((tmp_path / "two" / "results.json").read_text(encoding="utf-8"))
    one = json.loads((tmp_path / "one" / "results.json").read_text(encoding="utf-8"))
    assert list(two["judged"]["summary"]["scores"]["judges"]) == [srv.spec("fair")]  # the broken one has no score
    judges = Signature.parse(two["signature"]).get("judges")
    assert judges is not None and len(judges.split(",")) == 2 and "broken" in judges, two["signature"]
    assert two["judged"]["judges"] == [srv.spec("fair"), srv.spec("broken")]
    assert two["signature"] != one["signature"]  # two panels, two signatures: never one column
    p = cli("compare", str(tmp_path / "one"), str(tmp_path / "two"))
    assert "judges" in p.stdout + p.stderr, p.stdout + p.stderr


@pytest.mark.parametrize("extra, requests", [((), 16), (("--limit", "9"), 10), (("--limit", "4"), 4)])
def test_the_aragen_dry_run_counts_the_follow_ups_second_turns(extra, requests):
    # the bundled sample: 12 entries, rounds 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2 (the last four follow-ups)
    p = cli("run", "aragen", "--model", "openai:x@http://127.0.0.1:9/v1", "--judge", "openai:j@http://127.0.0.1:9/v1",
            "--dry-run", *extra)
    assert p.returncode == 0, p.stderr
    assert f": {requests} requests," in p.stdout, p.stdout


def test_the_aragen_dry_run_counts_the_system_message():
    def tokens(*extra: str) -> int:
        p = cli("run", "aragen", "--model", "openai:x@http://127.0.0.1:9/v1", "--judge", "openai:j@http://127.0.0.1:9/v1",
                "--dry-run", *extra)
        assert p.returncode == 0, p.stderr
        line = next(x for x in p.stdout.splitlines() if "prompt tokens" in x)
        return int(line.split("): ", 1)[1].split()[0].replace(",", ""))

    assert tokens("--bench-opt", "system_prompt=" + "أجب بإيجاز ودقة. " * 20) > tokens() + 16 * 20


def test_runs_import_names_each_folder_it_skips(srv, tmp_path):
    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}})
    _arena(srv, tmp_path, tmp_path / "done", "fair")
    shutil.copytree(tmp_path / "done", tmp_path / "judged-unfinished")
    (tmp_path / "judged-unfinished" / "results.json").unlink()  # its phases finished, its record not
    plain = tmp_path / "plain-unfinished"
    plain.mkdir()
    run_json = json.loads((tmp_path / "done" / "candidate" / "run.json").read_text(encoding="utf-8"))
    run_json["config"].pop("phase", None)
    (plain / "run.json").write_text(json.dumps(run_json), encoding="utf-8")  # a plain run stopped midway
    (tmp_path / "empty").mkdir()
    db = f"sqlite:///{tmp_path / 'store.sqlite'}"
    p = cli("runs", "import", str(tmp_path / "done"), str(tmp_path / "judged-unfinished"), str(plain),
            str(tmp_path / "empty"), "--db", db)
    assert p.returncode == 0, p.stderr
    assert "1 runs indexed" in p.stdout and "2 unfinished (skipped)" in p.stdout, p.stdout
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 3, p.stderr
    assert lines[0] == (f"warning: {tmp_path / 'judged-unfinished'}: skipped: a judged run that did not finish (its "
                        "phases are there, its results.json is not): run the same command again to finish it")
    assert lines[1].startswith(f"warning: {plain}: skipped: a run that did not finish")
    assert lines[2].startswith(f"warning: {tmp_path / 'empty'}: skipped: no run directory")
    # a folder above them: each unfinished run named once, the finished one indexed (already)
    p = cli("runs", "import", str(tmp_path), "--db", db)
    assert p.returncode == 0 and "1 already indexed" in p.stdout and len(p.stderr.strip().splitlines()) == 2, p.stderr


@pytest.mark.parametrize("args, words", [
    (("arena", "--model", "local", "--judge", "local"), "Missing option '--baseline'"),
    (("aragen", "--model", "local"), "Missing option '--judge'"),
    (("arena", "--model", "local", "--baseline", "b", "--judge", "j", "--nosuch"), "No such option: --nosuch"),
    (("diff", "x"), "Missing argument"),
    (("arena-report",), "Missing argument"),
])
def test_a_folded_commands_usage_error_is_one_line(args, words):
    p = cli(*args)
    assert p.returncode == 2
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith(f"error: {args[0]}: ") and words in line and "is now `glotbench " in line, line
