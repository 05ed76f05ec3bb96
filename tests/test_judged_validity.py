"""Issue #33 leftovers: a judged run whose verdicts could not be read is invalid, and says why in every
view. An AraGen run whose every verdict was unparseable was VALID with a null score; the class: any
judged run (AraGen, the arena, a task's rubric judges) is invalid when a judge's unreadable verdicts
(with its failed calls) are above --max-failure-rate, or when no item has a judged score. Judges are
real HTTP endpoints on loopback (conftest's server) replying garbage."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from conftest import cli
from test_aragen_parity import ALL5, run
from test_tasks_rubric import files, verdict



def results(out) -> dict:
    return json.loads((Path(out) / "results.json").read_text(encoding="utf-8"))


def views(out: Path, tmp_path: Path, html_page: bool = True) -> dict[str, str]:
    """What every view of the run directory prints: the terminal table, the HTML report (a rubric
    run has none yet: `html_page` False), the board, the results store's list and board, and the export."""
    db = f"sqlite:///{tmp_path / 'store.sqlite'}"
    html = tmp_path / "page.html"
    got: dict[str, str] = {}
    for name, args in (("report", ("report", str(out))), *((("html", ("report", str(out), "--html", str(html))),)
                                                            if html_page else ()),
                       ("board", ("board", str(out))), ("import", ("runs", "import", str(out), "--db", db)),
                       ("runs ls", ("runs", "ls", "--db", db)), ("runs board", ("runs", "board", "--db", db)),
                       ("export", ("export", str(out), "--format", "json"))):
        p = cli(*args)
        assert p.returncode == 0 and "Traceback" not in p.stderr, (name, p.stderr)
        got[name] = p.stdout
    if html_page:
        got["html"] = html.read_text(encoding="utf-8")
    return got


def assert_invalid_everywhere(got: dict[str, str], why: str) -> None:
    for name in ("report", "html", "board", "runs ls", "runs board", "export"):
        if name == "html" and name not in got:
            continue
        # the reason itself, not only the word (which a page's legend may hold whatever the run)
        assert "invalid: " in got[name] and why in got[name], (name, why, got[name][-3000:])
    (row,) = json.loads(got["export"]) if got["export"].lstrip().startswith("[") else [json.loads(got["export"])]
    assert row["valid"] is False, row


def test_an_aragen_run_whose_every_verdict_is_unreadable_is_invalid_in_every_view(srv, cache_path, tmp_path):
    srv.configure(judges={"bad": {"mode": "rubric", "scores": ALL5, "break": "not_json"}})
    res = run(tmp_path, cache_path, "python:helpers:good_answer", [srv.spec("bad")], limit=2)
    v = res["validity"]
    assert v["valid"] is False, v
    judge = v["phases"][f"judge {srv.spec('bad')}"]
    assert judge["valid"] is False and judge["failed"] == judge["of"] == 2, judge
    assert set(judge["kinds"]) == {"unreadable verdict (bad_response)"}, judge
    assert v["phases"]["judged"]["valid"] is False and v["phases"]["judged"]["failed"] == 2
    head = results(res["out_dir"])["scores"]["overall"]["3c3h"]
    assert head["value"] is None and head["n"] == 0, head  # n: the items the (absent) value rests on
    got = views(Path(res["out_dir"]), tmp_path)
    assert_invalid_everywhere(got, "unreadable verdict")
    assert "no item has a judged score" in got["report"], got["report"]


def test_an_aragen_run_with_a_few_unreadable_verdicts_is_invalid_above_the_limit_only(srv, cache_path, tmp_path):
    # two entries, each judge's first reply per prompt malformed and not retried: 1 of 2 verdicts lost
    srv.configure(judges={"fl": {"mode": "rubric", "scores": ALL5, "malformed_first": 1}})
    res = run(tmp_path, cache_path, "python:helpers:good_answer", [srv.spec("fl")], limit=1, judge_repeats=2,
              judge_temperature=0.7)
    phase = res["validity"]["phases"][f"judge {srv.spec('fl')}"]
    assert not res["validity"]["valid"] and phase["failed"] == 1 and phase["of"] == 2, phase
    assert res["mean_of_judges"]["3c3h"]["value"] == 1.0  # a number, but one the run does not stand behind
    assert "judged" not in res["validity"]["phases"]  # an item was judged
    srv.configure(judges={"fl": {"mode": "rubric", "scores": ALL5, "malformed_first": 1}})
    from glotbench.engine.aragen import run_aragen
    from glotbench.engine.evaluate import RunOptions

    lax = RunOptions(progress=False, cache_path=cache_path, limit=1, out=str(tmp_path / "lax"), max_retries=0,
                     bootstrap_resamples=50, max_failure_rate=0.5)
    res = asyncio.run(run_aragen("python:helpers:good_answer", [srv.spec("fl")], lax, judge_repeats=2,
                                 judge_temperature=0.7))
    assert res["validity"]["valid"], res["validity"]  # 1 of 2 is not above --max-failure-rate 0.5


def test_an_aragen_run_with_nothing_answered_has_no_judged_item_and_is_invalid(srv, cache_path, tmp_path):
    # The candidate's replies are empty: its own failures (a valid answers phase), nothing to judge,
    # so no judge fails either; the null score still measures nothing.
    srv.configure(answers={"": ""}, judges={"good": {"mode": "rubric", "scores": ALL5}})
    res = run(tmp_path, cache_path, srv.spec("mute"), [srv.spec("good")], limit=2)
    assert res["answered"] == 0, res["no_answer"]
    v = res["validity"]
    assert v["valid"] is False and v["phases"]["answers"]["valid"] is True, v
    assert v["phases"]["judged"]["reason"].startswith("no item has a judged score (0 of 2 items)"), v
    got = views(Path(res["out_dir"]), tmp_path)
    assert_invalid_everywhere(got, "no item has a judged score")


def test_an_arena_with_one_judge_replying_garbage_is_written_invalid(srv, cache_path, tmp_path):
    from glotbench.engine.arena import run_arena
    from glotbench.engine.evaluate import RunOptions

    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}, "bad": {"mode": "malformed"}})
    opts = RunOptions(progress=False, cache_path=cache_path, out=str(tmp_path / "arena"), max_retries=0,
                      bootstrap_resamples=50)
    res = asyncio.run(run_arena("python:helpers:good_answer", "python:helpers:plain_answer",
                                [srv.spec("fair"), srv.spec("bad")], opts)).results
    v = res["validity"]["phases"]
    assert v[f"judge {srv.spec('fair')}"]["valid"] is True
    bad = v[f"judge {srv.spec('bad')}"]
    assert bad["valid"] is False and bad["failed"] == bad["of"] == 16, bad
    assert res["validity"]["valid"] is False and "judged" not in v  # the fair judge's verdicts score it
    assert res["scores"]["final"]["value"] == 1.0
    got = views(tmp_path / "arena", tmp_path)
    assert_invalid_everywhere(got, "unreadable verdict")


def test_an_arena_whose_every_verdict_is_unreadable_exits_invalid_naming_the_judge(srv, cache_path, tmp_path):
    srv.configure(judges={"broken": {"mode": "malformed"}})  # prose, never the verdict's JSON
    p = cli("run", "laobench-arena", "--model", "python:helpers:good_answer", "--bench-opt", "baseline=python:helpers:plain_answer",
            "--judge", srv.spec("broken"), "--out", str(tmp_path / "a"), "--no-progress", "--cache-path", cache_path,
            "--max-retries", "0")
    assert p.returncode == 3, p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith(f"error: invalid: judge {srv.spec('broken')}: 16 of 16 items failed (unreadable verdict"), line


def test_a_rubric_task_whose_judge_replies_garbage_exits_invalid_and_says_why(srv, tmp_path):
    # the judge is the server's default reply: prose, never a verdict block
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"})
    args = ("run", files(tmp_path), "--model", srv.spec("cand"), "--judge", srv.spec("judge1"), "--out",
            str(tmp_path / "r"), "--no-progress", "--max-retries", "0", "--cache-path", str(tmp_path / "c.sqlite"))
    p = cli(*args)
    assert p.returncode == 3, p.stdout + p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith(f"error: invalid: judge {srv.spec('judge1')}: 3 of 3 items failed (unreadable verdict "), line
    assert "no item has a judged score" in line and "Traceback" not in p.stderr, line


def test_a_rubric_task_with_one_unreadable_verdict_of_three_is_invalid_unless_the_limit_allows(srv, tmp_path):
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]\nວຽງຈັນ": [verdict(1, 5)] * 4, "[Answer]\nແມ່ນ້ຳຂອງ": [verdict(1, 5)] * 4})
    task = files(tmp_path)
    out = tmp_path / "r"
    base = ("run", task, "--model", srv.spec("cand"), "--judge", srv.spec("judge1"), "--no-progress",
            "--max-retries", "0", "--cache-path", str(tmp_path / "c.sqlite"))
    p = cli(*base, "--out", str(out))
    assert p.returncode == 3, p.stdout + p.stderr
    assert p.stderr.startswith(f"error: invalid: judge {srv.spec('judge1')}: 1 of 3 items failed (unreadable verdict"), p.stderr
    rec = results(out)
    assert rec["validity"]["valid"] is False and rec["scores"]["overall"]["rubric"]["n"] == 2
    got = views(out, tmp_path, html_page=False)
    assert_invalid_everywhere(got, "unreadable verdict")
    p = cli(*base, "--out", str(tmp_path / "lax"), "--max-failure-rate", "0.5")
    assert p.returncode == 0, p.stderr
    assert results(tmp_path / "lax")["validity"]["valid"] is True


def test_an_arena_with_nothing_answered_exits_invalid_with_the_reason(srv, cache_path, tmp_path):
    # both sides reply with nothing: every call succeeded, no game to judge; it was exit 2, "no judge
    # produced a valid verdict (... failures: {...: {}})", blaming the judge
    srv.configure(answers={"": ""}, judges={"fair": {"mode": "prefer", "prefer": "GOOD"}})
    p = cli("run", "laobench-arena", "--model", srv.spec("mute"), "--bench-opt", "baseline=" + srv.spec("mute2"), "--judge", srv.spec("fair"),
            "--out", str(tmp_path / "a"), "--no-progress", "--cache-path", cache_path, "--max-retries", "0")
    assert p.returncode == 3, p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith("error: invalid: judged: no item has a judged score (0 of 8 items)"), line
