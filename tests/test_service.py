"""The scoring service over real HTTP: submissions, privacy, limits, SSRF, rotation, leaks, fuzzing,
PostgreSQL (when a server is available) and a browser."""

from __future__ import annotations

import os
import threading

import pytest
import requests

from conftest import start_server
from glotbench.benchmarks.laobench import LaoBenchMCQ
from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
from service_helpers import prepare, start

LAO = LaoBenchMCQ().load()
VI = VietnameseDiacritics().load()


@pytest.fixture(scope="module")
def svc(tmp_path_factory):
    db = f"sqlite:///{tmp_path_factory.mktemp('svc')}/db.sqlite"
    keys = prepare(db)
    # --release-noise 0: these tests read exact boards, ranks and limits; the noise (on by default, for
    # untrusted keys) is tested in tests/test_service_collusion.py and below.
    s = start(db, "--daily-limit", "1000", "--min-group", "3", "--rate-per-minute", "1000",
              "--allow-host", "127.0.0.1", "--release-noise", "0")
    s.keys.update(keys)
    yield s
    s.stop()
    _assert_no_private_gold(s.seen)  # every response of the module, whatever order the tests ran in


def answers(items, right=lambda it: True):
    """A complete submission: the gold letter where `right`, else another valid option."""
    return {it.id: (it.gold["answer"] if right(it) else "ABCD"[("ABCD".index(it.gold["answer"]) + 1) % 4])
            for it in items}


def test_answers_submission_returns_ladder_aggregates_only(svc):
    r = svc.call("POST", "/api/submissions", "alice", json={"benchmark": "laobench-mcq", "model": "half",
                                                            "answers": answers(LAO, lambda it: it.meta["subdomain"] == "mathematics")})
    assert r.status_code == 200, r.text
    res = r.json()["result"]
    true = 100 * 6 / 25
    step = res["ladder_step"]
    # The first release of a key, the noise off: the score rounded to a multiple of the Ladder's step
    # (at least one item, 4 points here) with the key's secret offset: within one step of the score.
    assert step >= 4.0 and abs(res["score"] - true) < step and res["improved"] is True and res["noise_sd"] == 0
    assert abs(res["score"] / step - round(res["score"] / step)) < 0.02
    assert res["coverage"] == 1.0 and res["items"] == 25
    # subdomains are keyed by their dimension; economy has 1 item < k=3 and is hidden
    assert not any(k.endswith("/economy") for k in res["subdomains"])
    assert res["ci95"][0] <= res["score"] <= res["ci95"][1]
    assert not any(it.id in r.text for it in LAO)


def test_incomplete_or_invalid_submissions_are_refused_free(svc):
    before = svc.call("GET", "/api/submissions/1", "alice")  # any call: the quota is what matters below
    assert before.status_code in (200, 404)
    sub = dict(list(answers(LAO).items())[:5])
    r = svc.call("POST", "/api/submissions", "alice", json={"set": "lao-1", "model": "five", "answers": sub})
    assert r.status_code == 400 and "answers every item" in r.json()["error"], r.text
    bad = answers(LAO)
    bad[LAO[0].id] = "Z"  # not one of the options: a known-wrong filler would make partial submissions possible
    r = svc.call("POST", "/api/submissions", "alice", json={"set": "lao-1", "model": "z", "answers": bad})
    assert r.status_code == 400 and "valid answer" in r.json()["error"], r.text


@pytest.mark.parametrize("body, status, fragment", [
    ('{"benchmark": "laobench-mcq", "answers": {"sample-001": "A"', 422, "invalid request"),
    ('{"benchmark": "laobench-mcq", "answers": {"not-an-id": "A"}}', 400, "no other id"),
    ('{"benchmark": "laobench-mcq", "answers": {"sample-001": "A", "sample-001": "B"}}', 400, "duplicate ids"),
    ('{"benchmark": "laobench-mcq", "answers": {"sample-001": 3}}', 422, "invalid request"),
    ('{"benchmark": "laobench-mcq", "answers": {}, "endpoint": "http://x"}', 422, "exactly one"),
    ('{"benchmark": "laobench-mcq", "answers": {}}', 400, "answers every item"),
    ('{"benchmark": "laobench-mcq", "model": "a\\u0000b", "answers": {}}', 400, "NUL"),
    ('[1, 2]', 422, "invalid request"),
    ('{"benchmark": "no-such", "answers": {}}', 404, "no open test set"),
])
def test_bad_submissions_are_4xx_and_not_stored(svc, body, status, fragment):
    before = _count(svc.db)
    r = svc.call("POST", "/api/submissions", "bob", data=body, headers={"Content-Type": "application/json"})
    assert r.status_code == status and fragment in r.json()["error"] and set(r.json()) == {"error"}, r.text
    assert _count(svc.db) == before


def test_oversized_payload_and_auth(svc):
    big = {"benchmark": "laobench-mcq", "answers": {f"x{i}": "A" * 100 for i in range(60_000)}}
    r = svc.call("POST", "/api/submissions", "bob", json=big)
    assert r.status_code == 413 and "larger than" in r.json()["error"]
    assert svc.call("POST", "/api/submissions", None, json={"benchmark": "laobench-mcq", "answers": {}}).status_code == 401
    assert svc.call("POST", "/api/submissions", "gb_wrong", json={"benchmark": "laobench-mcq", "answers": {}}).status_code == 401


def _count(db: str) -> int:
    from sqlalchemy import create_engine, text

    with create_engine(db).connect() as c:
        return c.execute(text("SELECT COUNT(*) FROM submissions")).scalar()


def test_publish_and_leaderboard(svc):
    sid = svc.call("POST", "/api/submissions", "alice", json={"set": "vi-1", "model": "perfect-vi", "description": "oracle",
                                                              "answers": {it.id: it.gold["references"][0] for it in VI}}).json()["id"]
    assert svc.call("GET", f"/api/submissions/{sid}", "bob").status_code == 404  # not bob's
    assert svc.call("POST", f"/api/submissions/{sid}/publish", "alice", json={}).json()["public"] is True
    board = svc.call("GET", "/api/leaderboard").json()
    vi = next(t for t in board if t["set"] == "vi-1")
    row = next(r for r in vi["rows"] if r["model"] == "perfect-vi")  # other tests may publish too
    assert row["score"] == 100.0 and vi["rows"][0]["score"] == 100.0  # and it ranks at the top
    page = svc.call("GET", "/").text
    assert "perfect-vi" in page and "oracle" in page and "vi-diacritics" in page and 'name="viewport"' in page


def test_endpoint_submission_and_ssrf_guard(svc):
    model_srv = start_server()
    target = start_server()
    try:
        bench = LaoBenchMCQ()
        model_srv.configure(answers={bench.render(it.to_public()).messages[0]["content"]: f"Answer: {it.gold['answer']}"
                                     for it in LAO})
        r = svc.call("POST", "/api/submissions", "alice", json={"benchmark": "laobench-mcq", "model": "m",
                                                                "endpoint": f"http://127.0.0.1:{model_srv.port}/v1"})
        assert r.status_code == 202, r.text
        sid = r.json()["id"]
        for _ in range(300):
            st = svc.call("GET", f"/api/submissions/{sid}", "alice").json()
            if st["status"] in ("done", "failed"):
                break
            threading.Event().wait(0.1)
        assert st["status"] == "done" and st["result"]["score"] == 100.0, st
        # Refused without any request: loopback by other names, private ranges, metadata, IPv6 loopback.
        for url in (f"http://localhost:{target.port}/v1", "http://10.0.0.1/v1", "http://192.168.1.5/v1",
                    "http://169.254.169.254/latest", "http://[::1]:80/v1", "ftp://example.org/"):
            r = svc.call("POST", "/api/submissions", "alice", json={"benchmark": "laobench-mcq", "model": "m", "endpoint": url})
            assert r.status_code == 400, (url, r.text)
        # An allowed host that redirects to a forbidden one: the redirect is refused, the target never called.
        model_srv.configure(faults=[{"match": "*", "redirect": f"http://localhost:{target.port}/v1/chat/completions", "times": 999}])
        sid = svc.call("POST", "/api/submissions", "alice", json={"benchmark": "laobench-mcq", "model": "m",
                                                                  "endpoint": f"http://127.0.0.1:{model_srv.port}/v1"}).json()["id"]
        for _ in range(300):
            st = svc.call("GET", f"/api/submissions/{sid}", "alice").json()
            if st["status"] in ("done", "failed"):
                break
            threading.Event().wait(0.1)
        # Every request failed: the run is invalid and releases nothing.
        assert st["status"] == "failed" and st["error"].startswith("invalid: 25 of 25 items failed"), st
        assert target.requests() == []
    finally:
        for s in (model_srv, target):
            s.proc.terminate()


@pytest.fixture
def own_svc(tmp_path):
    """A service of its own, for tests that change what the shared one serves (rotation)."""
    db = f"sqlite:///{tmp_path}/own.sqlite"
    keys = prepare(db)
    s = start(db, "--daily-limit", "1000", "--min-group", "3", "--rate-per-minute", "1000", "--release-noise", "0")
    s.keys.update(keys)
    yield s
    s.stop()


def test_rotation_releases_the_old_set(own_svc):
    from glotbench.service.core import Service, Settings

    svc = own_svc
    Service(Settings(db_url=svc.db)).rotate("lao-2")
    sets = {s["name"]: s for s in svc.call("GET", "/api/sets").json()}
    assert sets["lao-1"]["status"] == "released" and sets["lao-2"]["status"] == "current"
    dl = svc.call("GET", "/api/sets/lao-1/download").json()
    assert len(dl["items"]) == 25 and dl["items"][0]["gold"]["answer"] in "ABCD"
    assert svc.call("GET", "/api/sets/vi-1/download").status_code == 404  # still private
    r = svc.call("POST", "/api/submissions", "alice", json={"set": "lao-1", "model": "late", "answers": {}})
    assert r.status_code == 404
    # The rotation came from another process (as `glotbench service rotate` does): the server's
    # leaderboard cache shows it within its time-to-live (2 s).
    for _ in range(50):
        board = {t["set"]: t for t in svc.call("GET", "/api/leaderboard").json()}
        if board["lao-1"]["released"]:
            break
        threading.Event().wait(0.1)
    assert board["lao-1"]["released"] is True


def test_no_private_gold_or_id_in_any_response(svc):
    """Every kind of response about the private set vi-1, whatever ran before; the module's fixture
    searches all the module's responses again when it stops."""
    start_at = len(svc.seen)
    sub = svc.call("POST", "/api/submissions", "bob", json={"set": "vi-1", "model": "leak-check",
                                                            "answers": {it.id: it.gold["references"][0] for it in VI}})
    assert sub.status_code == 200, sub.text
    sid = sub.json()["id"]
    svc.call("GET", f"/api/submissions/{sid}", "bob")
    svc.call("POST", f"/api/submissions/{sid}/publish", "bob", json={})
    svc.call("GET", "/api/sets/vi-1/download")
    svc.call("GET", "/api/sets")
    svc.call("GET", "/api/leaderboard")
    svc.call("GET", "/")
    _assert_no_private_gold(svc.seen[start_at:])


def _assert_no_private_gold(seen: list[str]) -> None:
    everything = "\n".join(seen)
    for it in VI:  # vi-1 stays private for the whole session
        assert it.id not in everything
        for ref in it.gold["references"]:
            if ref != it.public["text"]:
                assert ref not in everything, ref


def test_daily_limit_is_atomic_under_concurrency(tmp_path):
    db = f"sqlite:///{tmp_path}/limit.sqlite"
    keys = prepare(db)
    s = start(db, "--daily-limit", "1", "--rate-per-minute", "1000")
    try:
        results = []

        def go():
            r = requests.post(s.base + "/api/submissions", headers={"Authorization": f"Bearer {keys['alice']}"},
                              json={"benchmark": "laobench-mcq", "model": "m", "answers": answers(LAO)}, timeout=60)
            results.append(r.status_code)
        threads = [threading.Thread(target=go) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(results) == [200] + [429] * 7
        assert _count(db) == 1
    finally:
        s.stop()


def test_rate_limit_per_key(tmp_path):
    db = f"sqlite:///{tmp_path}/rate.sqlite"
    keys = prepare(db)
    s = start(db, "--rate-per-minute", "3")
    try:
        codes = [requests.get(s.base + "/api/submissions/999", headers={"Authorization": f"Bearer {keys['bob']}"},
                              timeout=10) for _ in range(4)]
        assert [c.status_code for c in codes] == [404, 404, 404, 429]
        assert int(codes[-1].headers["Retry-After"]) > 0
    finally:
        s.stop()


def _pg_url() -> str | None:
    url = os.environ.get("GLOTBENCH_TEST_PG_URL")
    if not url:
        return None
    try:
        from sqlalchemy import create_engine, text

        with create_engine(url).connect() as c:
            c.execute(text("SELECT 1"))
        return url
    except Exception:  # noqa: BLE001
        return None


@pytest.mark.skipif(_pg_url() is None, reason="no PostgreSQL server: set GLOTBENCH_TEST_PG_URL (.ci/run starts one)")
def test_postgresql_backend():
    from sqlalchemy import create_engine, text

    url = _pg_url()
    with create_engine(url, isolation_level="AUTOCOMMIT").connect() as c:
        c.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    keys = prepare(url)
    s = start(url, "--daily-limit", "1", "--rate-per-minute", "1000", "--min-group", "3", "--release-noise", "0")
    try:
        results = []

        def go():
            r = requests.post(s.base + "/api/submissions", headers={"Authorization": f"Bearer {keys['alice']}"},
                              json={"benchmark": "laobench-mcq", "model": "m", "answers": answers(LAO)}, timeout=60)
            results.append((r.status_code, r.json()))
        threads = [threading.Thread(target=go) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        codes = sorted(c for c, _ in results)
        assert codes == [200] + [429] * 5
        assert next(b for c, b in results if c == 200)["result"]["score"] == 100.0
    finally:
        s.stop()


def test_openapi_fuzz_has_no_server_errors(svc):
    import schemathesis
    from hypothesis import HealthCheck, given, settings

    schema = schemathesis.openapi.from_url(svc.base + "/openapi.json")
    failures = []
    for op in schema.get_all_operations():
        operation = op.ok()

        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def run(case):
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {svc.keys['bob']}"}
            response = case.call()
            if response.status_code >= 500:
                failures.append((case.method, case.path, response.status_code, response.text[:200]))

        run()
    assert failures == [], failures


@pytest.mark.skipif(not os.path.exists("/usr/bin/chromium"), reason="Debian's chromium is not installed (.ci/run installs it)")
def test_browser_sorts_the_leaderboard(tmp_path):
    """Numbers sort as numbers (9.5 < 10 < 100) and a missing cell sorts last both ways; the page
    runs under its Content-Security-Policy (the sorting script is not inline)."""
    from playwright.sync_api import sync_playwright

    from service_helpers import make_mcq_set

    from glotbench.service.core import Service, Settings

    gold = make_mcq_set(tmp_path / "set.jsonl", 400, seed=1, groups=4)
    db = f"sqlite:///{tmp_path}/b.sqlite"
    service = Service(Settings(db_url=db))
    service.load_set("big", "laobench-mcq", str(tmp_path / "set.jsonl"))
    service.rotate("big")
    keys = {n: service.create_key(n)[1] for n in ("k1", "k2", "k3")}
    s = start(db, "--min-group", "100", "--rate-per-minute", "1000", "--daily-limit", "100", "--release-noise", "0")
    s.keys.update(keys)
    ids = sorted(gold)

    def wrong(i):
        return "ABCD"[("ABCD".index(gold[i]) + 1) % 4]
    # topic-0 right for 10%, 100% and 9.5%-ish of its items; k3's row misses nothing but scores lowest.
    plans = {"k1": lambda n: n % 40 < 4, "k2": lambda n: True, "k3": lambda n: n % 80 < 3}
    try:
        for key, right in plans.items():
            if key == "k3":  # k3's cells are not released (cells of 100 < 200): its topic-0 cell is empty
                s.stop()
                s = start(db, "--min-group", "200", "--rate-per-minute", "1000", "--daily-limit", "100", "--release-noise", "0")
                s.keys.update(keys)
            answers = {i: gold[i] if (int(i[1:]) % 4 == 0 and right(int(i[1:]))) else wrong(i) for i in ids}
            sid = s.call("POST", "/api/submissions", key, json={"set": "big", "model": key, "answers": answers}).json()["id"]
            assert s.call("POST", f"/api/submissions/{sid}/publish", key, json={}).status_code == 200
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            page = browser.new_page(viewport={"width": 390, "height": 844})  # a phone
            errors = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(s.base + "/")
            table = page.locator("h2:has-text('big') + div table")
            models = lambda: [t.split("\n")[0] for t in table.locator("tbody td.model").all_inner_texts()]  # noqa: E731
            col = table.locator("th", has_text="topic-0")
            values = dict(zip(models(), table.locator("tbody td:nth-child(4)").all_inner_texts()))
            col.click()  # descending
            order_desc = models()
            col.click()  # ascending
            order_asc = models()
            page.screenshot(path=str(tmp_path / "leaderboard.png"), full_page=True)
            browser.close()
        assert values["k3"] == "—", values
        nums = {m: float(v) for m, v in values.items() if m != "k3"}
        assert order_desc == sorted(nums, key=lambda m: -nums[m]) + ["k3"], (values, order_desc)
        assert order_asc == sorted(nums, key=lambda m: nums[m]) + ["k3"], (values, order_asc)
        assert not any("Content Security Policy" in e for e in errors), errors
        assert (tmp_path / "leaderboard.png").stat().st_size > 1000
    finally:
        s.stop()


def test_deepsea_set_is_scored_over_http(tmp_path):
    """A DeepSEA set scored through the benchmark's own Dataset and aggregate (was an HTTP 500)."""
    from glotbench.benchmarks.deepsea import DeepSEATask
    from glotbench.service.core import Service, Settings

    db = f"sqlite:///{tmp_path}/sea.sqlite"
    admin = Service(Settings(db_url=db))
    admin.load_set("sea-1", "deepsea-indommlu", None)
    admin.rotate("sea-1")
    key = admin.create_key("carol")[1]
    s = start(db, "--min-group", "1", "--rate-per-minute", "1000", "--daily-limit", "10", "--release-noise", "0")
    try:
        items = DeepSEATask("indommlu").load()
        outputs = {it.id: f"Thinking... <answer>{it.gold['answer']}</answer>" for it in items}
        # An output with no readable answer would score as a known zero (a partial submission): refused.
        unreadable = {**outputs, items[0].id: "I would rather not say."}
        r = requests.post(s.base + "/api/submissions", headers={"Authorization": f"Bearer {key}"},
                          json={"benchmark": "deepsea-indommlu", "model": "m", "answers": unreadable}, timeout=60)
        assert r.status_code == 400 and "valid answer" in r.json()["error"], r.text
        r = requests.post(s.base + "/api/submissions", headers={"Authorization": f"Bearer {key}"},
                          json={"benchmark": "deepsea-indommlu", "model": "oracle", "answers": outputs}, timeout=60)
        assert r.status_code == 200, r.text
        res = r.json()["result"]
        assert res["metric"] == "accuracy_macro_subjects" and res["score"] == 100.0 and res["coverage"] == 1.0
        assert not any(it.id in r.text for it in items)
    finally:
        s.stop()
