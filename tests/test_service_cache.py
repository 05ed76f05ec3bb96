"""The server caches each set it scores (items, gold, options, subdomains) in memory. A running
server must never score with a cached set that the database no longer holds: after a rotation, and
after a set is deleted and another loaded under the same id by another process (the admin CLI)."""

from __future__ import annotations

import json

from sqlalchemy import create_engine, select, text

from glotbench.service.core import Service, Settings
from glotbench.service import db
from service_helpers import start

N = 40


def write_set(path, shift: int) -> dict[str, str]:
    """N LaoBench-format items with the same ids in every set; gold letter i+shift (mod 4)."""
    gold = {}
    with open(path, "w", encoding="utf-8") as f:
        for i in range(N):
            gold[f"q{i:03d}"] = g = "ABCD"[(i + shift) % 4]
            f.write(json.dumps({"id": f"q{i:03d}", "data_type": "Knowledge Application", "subdomain": f"t-{i % 2}",
                                "question": f"ຄຳຖາມທີ {i}?", "A": "a", "B": "b", "C": "c", "D": "d", "answer": g},
                               ensure_ascii=False) + "\n")
    return gold


def submit(s, key: str, answers: dict[str, str]) -> float:
    r = s.call("POST", "/api/submissions", key, json={"benchmark": "laobench-mcq", "model": "m", "answers": answers})
    assert r.status_code == 200, r.text
    return r.json()["result"]["score"]


def test_a_running_server_scores_with_the_set_the_database_holds(tmp_path):
    db = f"sqlite:///{tmp_path}/db.sqlite"
    admin = Service(Settings(db_url=db))
    gold_a = write_set(tmp_path / "a.jsonl", 0)
    gold_b = write_set(tmp_path / "b.jsonl", 1)  # every gold letter differs from set a's
    first = admin.load_set("set-a", "laobench-mcq", str(tmp_path / "a.jsonl"))
    admin.rotate("set-a")
    keys = [admin.create_key(f"k{i}")[1] for i in range(4)]
    s = start(db, "--daily-limit", "100", "--rate-per-minute", "1000", "--release-noise", "0")  # exact scores: the noise is off here
    try:
        assert submit(s, keys[0], gold_a) == 100.0  # set a is now cached by the server

        # Rotation: the benchmark's current set is another one, scored with its own gold.
        admin.load_set("set-b", "laobench-mcq", str(tmp_path / "b.jsonl"))
        admin.rotate("set-b")
        assert submit(s, keys[1], gold_a) == 0.0
        assert submit(s, keys[1], gold_b) == 100.0

        # Replacement: both sets deleted by hand, and a new set loaded under the first set's id
        # (SQLite reuses the highest free id), holding set b's gold under set a's name.
        with create_engine(db).begin() as c:
            for table in ("ladder_states", "submissions", "set_items", "test_sets"):
                c.execute(text(f"DELETE FROM {table}"))
        again = admin.load_set("set-a", "laobench-mcq", str(tmp_path / "b.jsonl"))
        assert again == first  # the same id and name as the cached set: only its content differs
        admin.rotate("set-a")
        assert submit(s, keys[2], gold_a) == 0.0
        assert submit(s, keys[3], gold_b) == 100.0
    finally:
        s.stop()


def test_the_cached_set_is_reused_while_its_row_is_unchanged(tmp_path):
    svc = Service(Settings(db_url=f"sqlite:///{tmp_path}/db.sqlite"))
    write_set(tmp_path / "a.jsonl", 0)
    svc.load_set("set-a", "laobench-mcq", str(tmp_path / "a.jsonl"))
    with svc.Session() as s:
        ts = s.scalar(select(db.TestSet).where(db.TestSet.name == "set-a"))
        first = svc.load_items(s, ts)
        assert svc.load_items(s, ts) is first
        assert len(first.dataset) == N and set(first.by_id) == {f"q{i:03d}" for i in range(N)}
        ts.data_sha256 = "0" * 64  # another content under the same id is another set
        assert svc.load_items(s, ts) is not first
