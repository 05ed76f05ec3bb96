"""A judged set in the scoring service: an endpoint run of a task scored by a rubric takes the same
entry point as `glotbench run` (evaluate_async's judged branch), so its judges score the endpoint's
answers and the released number is the judged score (the mean of judges), never the answered rate;
the judge is never a contestant of the leaderboard. Answers uploaded without an endpoint run are
refused for such a set, not released as their answered rate (issue #33)."""

from __future__ import annotations

import pytest
from service_helpers import start
from test_judged_dispatch import EXPECTED, configure, task_naming

from glotbench.service.core import Service, Settings

FLAGS = ("--daily-limit", "100", "--rate-per-minute", "10000", "--allow-host", "127.0.0.1", "--min-group", "3",
         "--release-noise", "0", "--ladder-step", "0.1")


@pytest.fixture
def judged_service(tmp_path, srv):
    configure(srv)
    task = task_naming(tmp_path, srv.spec("judge1"))
    db = f"sqlite:///{tmp_path}/db.sqlite"
    svc = Service(Settings(db_url=db))
    svc.load_set("lao-qa", task, None)
    svc.rotate("lao-qa")
    key = svc.create_key("alice")[1]
    s = start(db, *FLAGS)
    s.keys["alice"] = key
    yield s, srv
    s.stop()


def test_an_endpoint_run_of_a_judged_set_releases_the_judged_score(judged_service):
    s, srv = judged_service
    url = srv.spec("x").split("@", 1)[1]
    r = s.call("POST", "/api/submissions", "alice", json={"set": "lao-qa", "model": "cand", "endpoint": url})
    assert r.status_code == 202, r.text
    st = s.wait(r.json()["id"], timeout=120)
    assert st["status"] == "done", (st, s.output()[-2000:])
    res = st["result"]
    # the mean of judges, 58.3 (released on a 0.1 grid, no noise), never the answered rate 100.0
    assert res["metric"] == "rubric" and abs(res["score"] - 100 * EXPECTED) <= 0.1 + 1e-9, res
    judged = [x["model"] for x in srv.requests() if x["model"] == "judge1"]
    assert len(judged) == 3  # one verdict per answered item, asked by the service
    pub = s.call("POST", f"/api/submissions/{st['id']}/publish", "alice", json={"public": True})
    assert pub.status_code == 200, pub.text
    board = s.call("GET", "/api/leaderboard").json()
    models = [row.get("model") for table in board for row in table.get("rows", [])]
    assert models == ["cand"], board  # the candidate alone: the judge is no contestant
    assert "judge1" not in str(board)


def test_answers_uploaded_to_a_judged_set_are_refused(judged_service):
    s, _ = judged_service
    r = s.call("POST", "/api/submissions", "alice",
               json={"set": "lao-qa", "model": "m", "answers": {"q1": "ວຽງຈັນ", "q2": "ແມ່ນ້ຳຂອງ", "q3": "17"}})
    assert r.status_code == 400 and "scored by judges" in r.text, r.text
