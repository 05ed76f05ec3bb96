"""The arena and AraGen as sets of the scoring service (issue #33, "a service endpoint job"): the
operator names a set's judges and its benchmark options when loading it (`glotbench service
load-set --judge J --bench-opt baseline=SPEC`); an endpoint job of the set runs through the same entry
point as `glotbench run`, and the number it releases is the judged score that run prints. A judge is
never a contestant: the leaderboard lists the candidate alone. A submission may pin the judges and
options it expects (as GET /api/sets shows them: no endpoint, no server path); a pin that differs,
and every hostile variant of one, is refused in one line before anything is charged or sent."""

from __future__ import annotations

import json

import pytest
from conftest import cli
from service_helpers import start
from test_fold33_judged_run import MID, RUBRIC

FLAGS = ("--daily-limit", "100", "--rate-per-minute", "10000", "--allow-host", "127.0.0.1", "--min-group", "3",
         "--release-noise", "0", "--ladder-step", "0.1")
PROMPTS = [("p1", "ຄຳຖາມ ກ"), ("p2", "ຄຳຖາມ ຂ"), ("p3", "ຄຳຖາມ ຄ"), ("p4", "ຄຳຖາມ ງ")]


def _configure(srv) -> None:
    # the candidate's answer to p4 is plain (a tie for the fair judge), its others GOOD (wins)
    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}, "biased": {"mode": "always_A"},
                          "rubric": {"mode": "rubric", "scores": RUBRIC}, "mid": {"mode": "rubric", "scores": MID}},
                  model_answers={"cand": {"ຄຳຖາມ ງ": "ຄຳຕອບ plain", "": "ຄຳຕອບ GOOD"},
                                 "base": {"": "ຄຳຕອບ plain"}})


def _cli_score(*args: str, env: dict) -> float:
    """`glotbench run` of the same benchmark, model and judges: its judged score (results.json)."""
    out = args[args.index("--out") + 1]
    proc = cli("run", *args, "--no-progress", "--no-cache", env=env)
    assert proc.returncode == 0, proc.stderr
    record = json.loads(open(f"{out}/results.json", encoding="utf-8").read())
    return 100 * record["scores"]["overall"][record["headline"]]["value"]


def _models_on_board(s) -> list:
    board = s.call("GET", "/api/leaderboard").json()
    return [row.get("model") for table in board for row in table.get("rows", [])], json.dumps(board)


def _arena_set(tmp_path, srv, *names: str):
    """A served arena set (arena-1) judged by the judges `names`: (service, data file, --judge flags)."""
    data = tmp_path / "arena.jsonl"
    data.write_text("".join(json.dumps({"id": i, "prompt": p}, ensure_ascii=False) + "\n" for i, p in PROMPTS),
                    encoding="utf-8")
    db = f"sqlite:///{tmp_path}/db.sqlite"
    judges = tuple(a for n in names for a in ("--judge", srv.spec(n)))
    load = cli("service", "load-set", "arena-1", "--benchmark", "laobench-arena", "--data", str(data), "--db", db,
               "--bench-opt", f"baseline={srv.spec('base')}", *judges, "--current")
    assert load.returncode == 0, load.stderr
    assert f"judged by {len(names)} judge(s)" in load.stdout, load.stdout
    key = cli("service", "create-key", "alice", "--db", db)
    assert key.returncode == 0, key.stderr
    s = start(db, *FLAGS)
    s.keys["alice"] = key.stdout.split()[-1]
    return s, data, judges


@pytest.fixture
def arena_service(tmp_path, srv):
    _configure(srv)
    s, data, judges = _arena_set(tmp_path, srv, "fair", "biased")
    yield s, srv, data, judges
    s.stop()


def test_a_judge_whose_verdicts_fail_releases_nothing(tmp_path, srv):
    """A judge whose verdicts cannot be read (a broken judge, or answers written to break it) would
    leave the friendlier judges' mean: the judged run is invalid, and nothing is released. The
    message names the judge without its endpoint."""
    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}, "broken": {"mode": "malformed"}},
                  model_answers={"cand": {"": "ຄຳຕອບ GOOD"}, "base": {"": "ຄຳຕອບ plain"}})
    s, _, _ = _arena_set(tmp_path, srv, "fair", "broken")
    try:
        r = s.call("POST", "/api/submissions", "alice", json={"set": "arena-1", "model": "cand", "endpoint": srv.url})
        assert r.status_code == 202, r.text
        st = s.wait(r.json()["id"], timeout=120)
        assert st["status"] == "failed" and st["result"] is None, st
        # its 8 games (4 prompts, both orders) unreadable
        assert st["error"].startswith("invalid: judge openai:broken: 8 of 8 items failed (unreadable verdict"), st["error"]
        assert "nothing was released" in st["error"] and "127.0.0.1" not in st["error"], st["error"]
        assert st["prompts_sent"] is True  # its prompts were shown: charged, as every run that sent one
        assert _models_on_board(s)[0] == []
    finally:
        s.stop()


def test_an_arena_endpoint_job_releases_the_runs_judged_score(arena_service, tmp_path):
    s, srv, data, judges = arena_service
    url = srv.url
    r = s.call("POST", "/api/submissions", "alice", json={"set": "arena-1", "model": "cand", "endpoint": url})
    assert r.status_code == 202, r.text
    st = s.wait(r.json()["id"], timeout=120)
    assert st["status"] == "done", (st, s.output()[-2000:])
    res = st["result"]
    # fair: 3 wins and a tie over 4 prompts (0.875); biased (always A): 0.5 in both orders; mean 0.6875
    expected = _cli_score("laobench-arena", "--model", srv.spec("cand"), "--bench-opt", f"baseline={srv.spec('base')}",
                          *judges, "--data", str(data), "--out", str(tmp_path / "cli"),
                          env={"GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")})
    assert expected == pytest.approx(68.75)
    assert abs(res["score"] - expected) <= 0.1 + 1e-9, res  # released on a 0.1 grid, no noise
    assert res["judges"] == ["openai:fair", "openai:biased"]  # what judged it, without the endpoint
    asked = [x["model"] for x in srv.requests()]
    assert asked.count("fair") == 2 * 2 * len(PROMPTS) and asked.count("biased") == 2 * 2 * len(PROMPTS)  # both runs
    pub = s.call("POST", f"/api/submissions/{st['id']}/publish", "alice", json={"public": True})
    assert pub.status_code == 200, pub.text
    models, text = _models_on_board(s)
    assert models == ["cand"], text  # neither a judge nor the baseline is a contestant
    assert "fair" not in text and "biased" not in text and "base" not in models


def test_the_sets_judges_and_options_are_public_without_their_endpoints(arena_service):
    s, srv, _, _ = arena_service
    sets = {x["name"]: x for x in s.call("GET", "/api/sets").json()}
    assert sets["arena-1"]["judges"] == ["openai:fair", "openai:biased"]
    assert sets["arena-1"]["bench_options"] == {"baseline": "openai:base"}
    assert "127.0.0.1" not in json.dumps(sets["arena-1"])
    # a submission pinning them as shown is accepted
    r = s.call("POST", "/api/submissions", "alice", json={
        "set": "arena-1", "model": "cand", "endpoint": srv.url, "judges": ["openai:fair", "openai:biased"],
        "bench_options": {"baseline": "openai:base"}})
    assert r.status_code == 202, r.text
    assert s.wait(r.json()["id"], timeout=120)["status"] == "done"


HOSTILE_PINS = [
    {"judges": ["python:os:system"]},
    {"judges": ["replay:/etc/passwd"]},
    {"judges": ["openai:fair@http://169.254.169.254/v1"]},
    {"judges": ["openai:fair"]},  # a subset: a friendlier panel
    {"judges": ["openai:biased", "openai:fair", "openai:fair"]},
    {"judges": []},
    {"bench_options": {"baseline": "replay:/etc/passwd"}},
    {"bench_options": {"baseline": "openai:base", "unanswered": "drop"}},
    {"bench_options": {"system_prompt": "@/etc/shadow"}},
    {"bench_options": {}},
]


@pytest.mark.parametrize("pin", HOSTILE_PINS, ids=lambda p: json.dumps(p)[:40])
def test_a_pin_that_differs_is_refused_uncharged(arena_service, pin):
    s, srv, _, _ = arena_service
    r = s.call("POST", "/api/submissions", "alice", json={"set": "arena-1", "model": "cand", "endpoint": srv.url, **pin})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert "\n" not in err and "fixed by its operator" in err and "nothing was charged" in err, err
    assert s.call("GET", "/api/submissions", "alice").json() == []  # nothing stored, nothing charged
    assert not [x for x in srv.requests() if x["model"] in ("cand", "fair", "biased", "base")]  # nothing sent


@pytest.mark.parametrize("body, words", [
    ({"judges": "openai:fair"}, "judges"),  # not a list
    ({"judges": [1, 2]}, "judges"),
    ({"judges": ["x" * 301]}, "judges"),
    ({"judges": ["j"] * 17}, "judges"),
    ({"bench_options": {"baseline": 3}}, "bench_options"),
    ({"bench_options": {f"k{i}": "v" for i in range(17)}}, "more than 16 members"),  # the body's guard
    ({"answers": {"p1": "a"}, "judges": ["openai:fair"]}, "endpoint submission only"),
])
def test_malformed_pins_are_one_line_errors(arena_service, body, words):
    s, srv, _, _ = arena_service
    base = {"set": "arena-1", "model": "cand", **({} if "answers" in body else {"endpoint": srv.url})}
    r = s.call("POST", "/api/submissions", "alice", json={**base, **body})
    assert r.status_code in (400, 422), r.text
    err = r.json()["error"]
    assert "\n" not in err and words in err, err
    assert s.call("GET", "/api/submissions", "alice").json() == []


def test_a_candidate_named_as_a_judge_is_stopped_before_any_prompt_and_refunded(arena_service):
    """The candidate's name is the submitter's: named as a judge, the panel's self-judging rule would
    drop that judge (a friendlier panel). The service keeps a set's whole panel: the run stops before
    any prompt leaves, uncharged."""
    s, srv, _, _ = arena_service
    r = s.call("POST", "/api/submissions", "alice", json={"set": "arena-1", "model": "fair", "endpoint": srv.url})
    assert r.status_code == 202, r.text
    st = s.wait(r.json()["id"], timeout=120)
    assert st["status"] == "failed" and "every judge of this set scores every run" in st["error"], st
    assert st["counts_against_limit"] is False and st["prompts_sent"] is False
    assert not [x for x in srv.requests() if x["model"] in ("fair", "biased", "base")]


def test_an_aragen_endpoint_job_runs_both_passes_and_its_judges(tmp_path, srv):
    """AraGen's set keeps each entry (rounds, follow-up questions, references) with its items: an
    endpoint job runs both answer passes and the set's 3C3H judges, as `glotbench run aragen` does."""
    _configure(srv)
    db = f"sqlite:///{tmp_path}/db.sqlite"
    judges = ("--judge", srv.spec("rubric"), "--judge", srv.spec("mid"))
    load = cli("service", "load-set", "ar-1", "--benchmark", "aragen", "--data",
               str(_bundled_aragen(tmp_path)), "--db", db, *judges, "--bench-opt", "policy=zero", "--current")
    assert load.returncode == 0, load.stderr
    key = cli("service", "create-key", "alice", "--db", db).stdout.split()[-1]
    s = start(db, *FLAGS)
    s.keys["alice"] = key
    try:
        r = s.call("POST", "/api/submissions", "alice", json={"set": "ar-1", "model": "cand", "endpoint": srv.url,
                                                               "bench_options": {"policy": "zero"}})
        assert r.status_code == 202, r.text
        st = s.wait(r.json()["id"], timeout=180)
        assert st["status"] == "done", (st, s.output()[-2000:])
        cand_calls = [x for x in srv.requests() if x["model"] == "cand"]
        expected = _cli_score("aragen", "--model", srv.spec("cand"), *judges, "--bench-opt", "policy=zero",
                              "--data", str(_bundled_aragen(tmp_path)), "--out", str(tmp_path / "cli"),
                              env={"GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")})
        # the follow-up round's second answers were asked too (12 entries, 4 of them follow-ups: round 2)
        entries = json.loads(_bundled_aragen(tmp_path).read_text(encoding="utf-8"))
        assert len(cand_calls) == len(entries) + sum(e["Meta"]["Round"] == 2 for e in entries) == 16, len(cand_calls)
        assert 0 < expected < 100 and abs(st["result"]["score"] - expected) <= 0.1 + 1e-9, (st["result"], expected)
        assert st["result"]["judges"] == ["openai:rubric", "openai:mid"]
        assert s.call("POST", f"/api/submissions/{st['id']}/publish", "alice", json={"public": True}).status_code == 200
        models, text = _models_on_board(s)
        assert models == ["cand"], text
    finally:
        s.stop()


def _bundled_aragen(tmp_path):
    from importlib import resources

    path = tmp_path / "aragen.json"
    if not path.exists():
        path.write_bytes(resources.files("glotbench.benchmarks").joinpath("data/aragen_sample.json").read_bytes())
    return path


@pytest.mark.parametrize("args, words", [
    (("--benchmark", "laobench-arena", "--judge", "J"), "needs a baseline: --bench-opt baseline=SPEC"),
    (("--benchmark", "laobench-arena", "--bench-opt", "baseline=local"), "scored by judges: name them"),
    (("--benchmark", "laobench-mcq", "--judge", "local"), "not scored by judges"),
    (("--benchmark", "laobench-arena", "--bench-opt", "baseline=local", "--judge", "nosuch:x"), "nosuch"),
    (("--benchmark", "laobench-arena", "--bench-opt", "baseline", "--judge", "local"), "KEY=VALUE"),
    (("--benchmark", "aragen", "--judge", "local", "--bench-opt", "policy=lenient"), "policy"),
])
def test_load_set_checks_a_judged_sets_judges_and_options(tmp_path, args, words):
    db = f"sqlite:///{tmp_path}/db.sqlite"
    proc = cli("service", "load-set", "s", *_data_for(tmp_path, args), "--db", db, *args)
    assert proc.returncode != 0
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and words in err[0], proc.stderr


def _data_for(tmp_path, args) -> tuple[str, ...]:
    bench = args[args.index("--benchmark") + 1]
    if bench == "aragen":
        return ("--data", str(_bundled_aragen(tmp_path)))
    if bench == "laobench-arena":
        path = tmp_path / "arena.jsonl"
        path.write_text(json.dumps({"id": "p1", "prompt": "ຄຳຖາມ ກ"}, ensure_ascii=False) + "\n", encoding="utf-8")
        return ("--data", str(path))
    from importlib import resources

    path = tmp_path / "mcq.jsonl"
    path.write_bytes(resources.files("glotbench.benchmarks").joinpath("data/laobench_sample.jsonl").read_bytes())
    return ("--data", str(path))
