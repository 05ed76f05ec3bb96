"""A judge's verdict file (`--judge replay:FILE`) is checked against the benchmark's data, not only
against the entries this run judges: a `--limit` run judges a prefix, and an entry the candidate left
unanswered never reaches a judge, yet upstream's verdict file still has its line (issue #33)."""

from __future__ import annotations

import json

import pytest
from conftest import cli
from test_aragen_parity import A_FINAL, ANSWERS, JUDGE_A, TASK_FILE, replay_jsonl, run, upstream_copy, write

from judged_helpers import summary
from glotbench.errors import DataError


def verdicts_file(tmp_path, sns=(1, 2, 3, 4), extra=()):
    lines = [{"id": str(sn), "output": next(v for k, v in JUDGE_A.items() if k in ANSWERS[sn][0])} for sn in sns]
    lines += [{"id": x, "output": "whatever"} for x in extra]
    return write(tmp_path, "verdicts.jsonl", "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))


def test_a_limit_run_replays_a_verdict_file_of_the_whole_data(srv, cache_path, tmp_path):
    repo, data = upstream_copy(tmp_path), write(tmp_path, "task.json", TASK_FILE)
    answers, verdicts = replay_jsonl(tmp_path, ANSWERS), verdicts_file(tmp_path)
    res = run(tmp_path, cache_path, f"replay:{answers}", [f"replay:{verdicts}"], data=data, limit=2,
              judge_prompt=str(repo), parse="3c3h", policy="upstream")
    pj = res["per_judge"][f"replay:{verdicts}"]
    assert pj["item_scores"] == pytest.approx({k: A_FINAL[k] for k in ("1", "2")}, abs=1e-9)
    assert res["entries"] == 2 and res["selection"]["full"] is False
    assert srv.requests() == []


def test_an_unanswered_entry_keeps_its_verdict_line(srv, cache_path, tmp_path):
    repo, data = upstream_copy(tmp_path), write(tmp_path, "task.json", TASK_FILE)
    answers = replay_jsonl(tmp_path, {k: v for k, v in ANSWERS.items() if k != 3})
    verdicts = verdicts_file(tmp_path)  # upstream judged entry 3 too
    res = run(tmp_path, cache_path, f"replay:{answers}", [f"replay:{verdicts}"], data=data,
              judge_prompt=str(repo), parse="3c3h", policy="upstream")
    assert res["no_answer"] == ["3"]
    pj = res["per_judge"][f"replay:{verdicts}"]
    assert pj["item_scores"] == pytest.approx({k: A_FINAL[k] for k in ("1", "2", "4")}, abs=1e-9)


def test_an_id_outside_the_data_is_still_refused(srv, cache_path, tmp_path):
    repo, data = upstream_copy(tmp_path), write(tmp_path, "task.json", TASK_FILE)
    answers, verdicts = replay_jsonl(tmp_path, ANSWERS), verdicts_file(tmp_path, extra=("99",))
    with pytest.raises(DataError, match=r"1 id\(s\) not in the benchmark's data: '99'"):
        run(tmp_path, cache_path, f"replay:{answers}", [f"replay:{verdicts}"], data=data, limit=2,
            judge_prompt=str(repo), parse="3c3h", policy="upstream")


def test_the_command_with_limit(srv, cache_path, tmp_path):
    repo, data = upstream_copy(tmp_path), write(tmp_path, "task.json", TASK_FILE)
    answers, verdicts = replay_jsonl(tmp_path, ANSWERS), verdicts_file(tmp_path)
    p = cli("run", "aragen", "--model", f"replay:{answers}", "--judge", f"replay:{verdicts}", "--data", data,
            "--limit", "1", "--bench-opt", f"judge_prompt={repo}", "--bench-opt", "parse=3c3h", "--bench-opt", "policy=upstream",
            "--out", str(tmp_path / "out"), "--cache-path", cache_path)
    assert p.returncode == 0, p.stderr
    res = summary(tmp_path / "out")
    assert res["per_judge"][f"replay:{verdicts}"]["item_scores"] == pytest.approx({"1": A_FINAL["1"]}, abs=1e-9)
