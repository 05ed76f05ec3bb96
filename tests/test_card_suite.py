"""One command per language and its report card, end to end on loopback: three scripted models
(the OpenAI-compatible test server, one reply script per model) and a fourth whose endpoint is
down, over the Lao suite of three test families (tests/fixtures/card: task files with datasheets,
data in their column schema given with --data), then `board --pivot language`'s card, checked
against numbers computed by hand."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import cli

FIX = Path(__file__).parent / "fixtures" / "card"
TASKS = ("card-lo-bigger", "card-lo-diff", "card-lo-sum")
L = "ABCD"


def _scripts() -> dict[str, dict[str, str]]:
    """good: every item right; mid: wrong on items i % 3 == 0 (8 of 24); mid2: wrong on i % 3 == 1."""
    out: dict[str, dict[str, str]] = {"good": {}, "mid": {}, "mid2": {}}
    for name in TASKS:
        for line in (FIX / "data" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            i, k, pos = int(r["id"][-2:]), len(r["choices"]), r["label"]
            right, wrong = f"Answer: {L[pos]}", f"Answer: {L[(pos + 1) % k]}"
            out["good"][r["question"]] = right
            out["mid"][r["question"]] = wrong if i % 3 == 0 else right
            out["mid2"][r["question"]] = wrong if i % 3 == 1 else right
    return out


@pytest.fixture
def suite_env(tmp_path):
    return {"GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")}


def test_one_command_runs_the_lao_suite_and_the_card_tiers_the_models(srv, tmp_path, suite_env):
    sweep = tmp_path / "lao.yaml"  # the sweep file gives the models' settings; --language the benchmarks
    # flaky answers as good does, but every call of the 4-option task fails (HTTP 500): that run is invalid
    scripts = _scripts()
    srv.configure(model_answers={**scripts, "flaky": scripts["good"]},
                  faults=[{"match": "ບວກ", "model": "flaky", "status": 500, "times": 1000}])
    sweep.write_text("models:\n" + "".join(f"  - {{spec: '{srv.spec(m)}', max_retries: 0}}\n"
                                           for m in ("good", "mid", "mid2", "flaky")), encoding="utf-8")
    out = tmp_path / "suite"
    args = ["sweep", str(sweep), "--language", "lao_Laoo", "--include-path", str(FIX / "tasks"), "--data", str(FIX / "data"),
            "--out", str(out), "--no-progress"]
    r = cli(*args, env=suite_env)
    text = r.stdout + r.stderr
    assert r.returncode == 3, text  # flaky's failed task: invalid, named, exit 3
    assert "lo: 3 benchmark families in the suite" in text and "Traceback" not in text
    assert "11 runs finished, 0 failed, 1 invalid" in text
    for task in TASKS:
        assert (out / task / "openai_good" / "default-seed" / "results.json").is_file()  # each task its own run
    assert any("card-lo-sum/openai_flaky" in ln and "invalid" in ln for ln in text.splitlines())
    calls = [b["model"] for b in srv.requests()]
    assert len(calls) == 4 * 3 * 24  # four models, three tasks of 24 items (flaky's failed calls counted)
    r2 = cli(*args, env=suite_env)  # resumable: finished runs are skipped; only the invalid one runs again
    again = [b["model"] for b in srv.requests()][len(calls):]
    assert r2.returncode == 3 and set(again) == {"flaky"} and len(again) == 24

    # a smoke run of mid on 5 items of one task: another item set, left out of the table and the card
    r = cli("run", "card-lo-sum", "--model", srv.spec("mid"), "--include-path", str(FIX / "tasks"), "--data",
            str(FIX / "data" / "card-lo-sum.jsonl"), "--limit", "5", "--out", str(out / "smoke"), env=suite_env)
    assert r.returncode == 0, r.stdout + r.stderr
    html = tmp_path / "board.html"
    r = cli("board", str(out), "--pivot", "language", "--format", "json", "--html", str(html), env=suite_env)
    assert r.returncode == 0, r.stdout + r.stderr
    card = json.loads(r.stdout)["tables"][0]["card"]
    assert card["language"] == "lo"
    rows = {m["model"].split(":")[1].split("@")[0]: m for m in card["models"]}
    assert set(rows) == {"good", "mid", "mid2"}  # flaky: left out, named, with its invalid run
    flaky = [x["reason"] for x in card["left_out"] if "openai:flaky" in x["reason"]]
    assert any("card-lo-sum: invalid run of openai:flaky" in x for x in flaky), flaky
    assert any("no valid run of card-lo-sum; not in the card" in x for x in flaky), flaky
    smoke = [x["reason"] for x in card["left_out"] if x["path"].endswith("smoke")]
    assert len(smoke) == 1 and "another item set" in smoke[0]
    # By hand: mid and mid2 are right on 16 of 24 items in each task. Normalised (SEA-HELM), floor =
    # 1/options: 4 options (0.6667-0.25)/0.75 = 0.5556, 2 options (0.6667-0.5)/0.5 = 0.3333,
    # 3 options (0.6667-0.3333)/0.6667 = 0.5; their mean 0.46296. good: 1 in each task.
    tasks = {t["task"]: t for t in card["tasks"]}
    assert {t: (v["n"], v["origin"], round(v["floor"], 4)) for t, v in tasks.items()} == {
        "card-lo-sum": (24, "native", 0.25), "card-lo-bigger": (24, "translated", 0.5),
        "card-lo-diff": (24, "translated", 0.3333)}
    for m in ("mid", "mid2"):
        assert rows[m]["tasks"]["card-lo-sum"]["normalised"] == pytest.approx(5 / 9)
        assert rows[m]["tasks"]["card-lo-bigger"]["normalised"] == pytest.approx(1 / 3)
        assert rows[m]["tasks"]["card-lo-diff"]["normalised"] == pytest.approx(0.5)
        assert rows[m]["normalised_mean"]["value"] == pytest.approx((5 / 9 + 1 / 3 + 0.5) / 3)
        assert rows[m]["rank_score"]["value"] > 1.0
    assert rows["good"]["normalised_mean"]["value"] == 1.0 and rows["good"]["rank_score"]["value"] == 1.0
    # Tiers: good against mid (or mid2) differs on 8 items per task, all for good: separated after maxT;
    # mid against mid2 differs on 16 items per task, 8 each way: the same tier.
    assert {m: v["tier"] for m, v in rows.items()} == {"good": 1, "mid": 2, "mid2": 2}
    assert card["too_few_tasks"] is True  # three tasks: the interval is marked (coverage measured from 5)
    page = html.read_text(encoding="utf-8")
    assert "Report card" in page and "card-lo-sum" in page and "native" in page and "invalid run of openai:flaky" in page
    r = cli("board", str(out), "--pivot", "language", env=suite_env)  # the terminal's markdown
    md = r.stdout
    assert "#### Report card: Lao (lo)" in md and "| 2 | openai:mid" in md and "46.3" in md
    assert "card-lo-bigger (accuracy): n=24, translated, floor 0.5 (random choice)" in md
    import csv
    import io

    r = cli("board", str(out), "--pivot", "language", "--format", "csv", env=suite_env)
    card_rows = [x for x in csv.DictReader(io.StringIO(r.stdout)) if x["benchmark"] == "report card"]
    assert len(card_rows) == 6  # three models, normalised mean and rank score
    mid = next(x for x in card_rows if "openai:mid@" in x["model"] and x["metric"] == "normalised_mean")
    assert float(mid["value"]) == pytest.approx((5 / 9 + 1 / 3 + 0.5) / 3) and mid["notes"].startswith("tier 2")
    assert "card-lo-sum (n=24, native)" in mid["item_set"] and "invalid run of openai:flaky" in mid["item_set"]
    r = cli("board", str(out), "--pivot", "language", "--format", "latex", env=suite_env)
    assert "Tier & Model & Normalised mean & Mean rank score" in r.stdout and "card-lo-sum (n=24, native)" in r.stdout


def test_offline_suite_names_the_families_it_cannot_run(tmp_path, suite_env):
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(FIX / "data" / "card-lo-sum.jsonl", data)
    r = cli("sweep", "--language", "lo", "--model", "openai:m@http://127.0.0.1:9/v1", "--include-path", str(FIX / "tasks"),
            "--data", str(data), "--out", str(tmp_path / "o"), "--dry-run", env=suite_env)
    text = r.stdout + r.stderr
    assert r.returncode == 0, text
    # the library's Lao families are skipped too (no data for them in the folder): counted, not fixed here
    assert re.search(r"lo: 1 benchmark families in the suite, \d+ skipped", text), text
    assert f"skipped card-lo-bigger: no data in {data}" in text and "skipped card-lo-diff" in text


@pytest.mark.parametrize("args,says", [
    (["--language", "lo"], "--language needs a model"),
    (["--language", "xx1", "--model", "openai:m@http://127.0.0.1:9/v1"], "not a language tag in the IANA registry"),
    (["--language", "nv", "--model", "openai:m@http://127.0.0.1:9/v1"], "no benchmark family to run in nv"),
    (["--language", "lo", "--model", "openai:m@http://127.0.0.1:9/v1", "--data", "nowhere"], "not a folder"),
    ([], "give a sweep file, or --language"),
])
def test_a_bad_suite_command_is_one_error_line(args, says, suite_env):
    r = cli("sweep", *args, "--include-path", str(FIX / "tasks"), env=suite_env)
    text = r.stdout + r.stderr
    assert r.returncode == 2 and says in text and "Traceback" not in text, text


RUBRIC_TASK = """\
name: card-lo-open
version: "1.0"
language: lo
data: {file: card-lo-open.jsonl}
fields: {id: id, public: {question: question}, gold: {reference: reference}}
prompt: {user: "{{ question }}", max_tokens: 64}
scorer:
  kind: rubric
  criteria:
    - {name: correct, description: "Does the answer agree with the reference?", scale: [0, 1]}
datasheet:
  licence: CC0-1.0
  commercial: true
  origin: native
  source: tests/fixtures/card/README.md
  citation: "@misc{t, title={A judged Lao test task}, year={2026}}"
  languages: {lo: {}}
"""


def test_a_judged_family_runs_with_a_judge_and_is_named_without_one(tmp_path, suite_env):
    tasks, data = tmp_path / "tasks", tmp_path / "data"
    tasks.mkdir()
    shutil.copytree(FIX / "data", data)
    (tasks / "card-lo-open.yaml").write_text(RUBRIC_TASK, encoding="utf-8")
    (data / "card-lo-open.jsonl").write_text(json.dumps({"id": "q1", "question": "ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ?",
                                                         "reference": "ວຽງຈັນ"}, ensure_ascii=False) + "\n", encoding="utf-8")
    base = ["sweep", "--language", "lo", "--model", "openai:m@http://127.0.0.1:9/v1", "--include-path", str(FIX / "tasks"),
            "--include-path", str(tasks), "--data", str(data), "--out", str(tmp_path / "o"), "--dry-run"]
    r = cli(*base, env=suite_env)
    text = r.stdout + r.stderr
    assert r.returncode == 0, text
    assert re.search(r"3 benchmark families in the suite, \d+ skipped", text), text
    assert "skipped card-lo-open: judged by a rubric and no judge named: give --judge SPEC" in text
    r = cli(*base, "--judge", "openai:j@http://127.0.0.1:9/v1", env=suite_env)
    text = r.stdout + r.stderr
    assert r.returncode == 0, text
    assert "lo: 4 benchmark families in the suite" in text and "card-lo-open" in text


def test_a_family_whose_data_cannot_be_loaded_is_named_and_the_rest_run(tmp_path, suite_env):
    """Offline with an empty hub cache: the library's Lao families cannot load their data; each is
    named with the reason, and the test families (local files) are still the suite."""
    env = {**suite_env, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    r = cli("sweep", "--language", "lo", "--model", "openai:m@http://127.0.0.1:9/v1", "--include-path",
            str(FIX / "tasks"), "--out", str(tmp_path / "o"), "--dry-run", env=env)
    text = r.stdout + r.stderr
    assert r.returncode == 0, text
    assert re.search(r"lo: 3 benchmark families in the suite, \d+ skipped", text), text
    assert "skipped belebele: its data cannot be loaded: facebook/belebele@" in text
    assert "HF_HUB_OFFLINE=1" in text and "Traceback" not in text
