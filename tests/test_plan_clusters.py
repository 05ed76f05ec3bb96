"""`plan --runs` on clustered runs whose per-item differences do not vary (every Khmer Belebele item
right in one run, wrong in the other): the design effect is undefined, and the plan said
"independent items" of runs over 4 passages. It now says the clusters gave none; the hint names
`--runs` as the option is given (twice)."""

from __future__ import annotations

import json

from conftest import cli

PASSAGES = ["ភ្នំពេញជារាជធានី។", "ទន្លេមេគង្គហូរកាត់។", "អង្គរវត្តនៅសៀមរាប។", "កំពតមានម្រេច។"]
OPTIONS = ["សៀមរាប", "ភ្នំពេញ", "បាត់ដំបង", "កំពត"]


def test_clustered_runs_without_a_design_effect_say_so(tmp_path, srv):
    rows = [{"link": f"https://x/{i % 4}", "question_number": i, "flores_passage": PASSAGES[i % 4],
             "question": f"សំណួរ {i} តើណា?", **{f"mc_answer{k + 1}": o for k, o in enumerate(OPTIONS)},
             "correct_answer_num": str(i % 4 + 1), "dialect": "khm_Khmr"} for i in range(12)]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    for name, right in (("a", True), ("b", False)):
        srv.configure(answers={r["question"]: "ABCD"[(i % 4 + (0 if right else 1)) % 4] for i, r in enumerate(rows)})
        r = cli("run", "belebele", "--bench-opt", "config=khm_Khmr", "--data", str(data), "--model", srv.spec(),
                "--no-cache", "--no-progress", "--out", str(tmp_path / name))
        assert r.returncode == 0, r.stderr
    p = cli("plan", "--runs", str(tmp_path / "a"), "--runs", str(tmp_path / "b"))
    assert p.returncode == 0, p.stderr
    line = next(x for x in p.stdout.splitlines() if x.startswith("design effect:"))
    assert "the runs' 4 clusters give no design effect" in line and "independent items" not in line
    e = cli("plan")
    assert e.returncode != 0 and "--runs RUN_A --runs RUN_B" in e.stderr
