"""`glotbench diff RUN_A RUN_B` through the console script: the items whose outcome differs, counted
overall and per group against a hand count, with the paired test, both outputs and the references,
filters by group and by "A right / B right", the HTML page's filters in a real browser, and the same
refusals as `compare`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli
from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
from test_reports import Page, browser  # noqa: F401 - the browser fixture

HOSTILE = "<img src=x onerror=alert(1)><script>alert(2)</script>"


def _replay(tmp: Path, name: str, right, extra: dict[str, str] | None = None, limit: int | None = None) -> str:
    items = VietnameseDiacritics().load()
    rows = []
    for n, it in enumerate(items):
        out = (extra or {}).get(it.id)
        if out is None:
            out = json.dumps({"restored_text": it.gold["references"][0] if right(n) else it.public["text"]}, ensure_ascii=False)
        rows.append(json.dumps({"id": it.id, "output": out}, ensure_ascii=False))
    f = tmp / f"{name}.jsonl"
    f.write_text("\n".join(rows) + "\n", encoding="utf-8")
    args = ["run", "vi-diacritics", "--model", f"replay:{f}", "--out", str(tmp / name), "--no-cache", "--no-progress"]
    r = cli(*args, *(["--limit", str(limit)] if limit else []))
    assert r.returncode == 0, r.stderr
    return str(tmp / name)


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("diff")
    items = VietnameseDiacritics().load()
    a_right = lambda n: n % 3 != 0  # noqa: E731
    b_right = lambda n: n % 4 != 0  # noqa: E731
    hostile = {items[1].id: HOSTILE}  # B answers item 1 with hostile HTML (no JSON: a format failure)
    a = _replay(tmp, "a", a_right)
    b = _replay(tmp, "b", b_right, hostile)
    expect_a = [it.id for n, it in enumerate(items) if a_right(n) and (not b_right(n) or it.id in hostile)]
    expect_b = [it.id for n, it in enumerate(items) if b_right(n) and not a_right(n) and it.id not in hostile]
    return tmp, a, b, items, expect_a, expect_b


def test_diff_lists_the_items_that_differ_with_the_paired_test(two):
    tmp, a, b, items, expect_a, expect_b = two
    r = cli("compare", "--items", a, b, "--format", "json", "--resamples", "300")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["items"] == len(items) and d["outcomes"] == "0/1"
    assert (d["a_better"], d["b_better"], d["differ"]) == (len(expect_a), len(expect_b), len(expect_a) + len(expect_b))
    assert sorted(x["id"] for x in d["listed"] if x["winner"] == "A") == sorted(expect_a)
    assert {x["outcome"] for x in d["listed"]} == {"A right, B wrong", "B right, A wrong"}
    # per group, against a hand count
    cat = {it.id: it.meta["category"] for it in items}
    for c, counts in d["by_group"]["category"].items():
        assert counts == {"a": sum(cat[i] == c for i in expect_a), "b": sum(cat[i] == c for i in expect_b)}
    # the paired test: B − A in exact-match accuracy
    n = len(items)
    assert d["test"]["delta"] == pytest.approx((len(expect_b) - len(expect_a)) / n) and d["test"]["n"] == n
    # the paired bootstrap on fewer than 100 items: marked, as every interval on too few units is
    assert d["test"]["too_few_units"] is (n < 100)
    # both outputs and the references, side by side
    one = next(x for x in d["listed"] if x["id"] == items[1].id)
    assert one["b"]["output"] == HOSTILE and one["b"]["failure"] and one["a"]["value"] == 1.0
    assert one["reference"]["references"] == list(items[1].gold["references"])
    assert "SHA-256 verified" in d["references"]


def test_diff_filters_and_text(two):
    tmp, a, b, items, expect_a, expect_b = two
    only_b = json.loads(cli("compare", "--items", a, b, "--only", "b", "--format", "json", "--resamples", "50").stdout)
    assert sorted(x["id"] for x in only_b["listed"]) == sorted(expect_b) and only_b["a_better"] == len(expect_a)
    cat = items[0].meta["category"]
    grp = json.loads(cli("compare", "--items", a, b, "--group", f"category={cat}", "--format", "json", "--resamples", "50").stdout)
    assert grp["listed"] and all(x["groups"]["category"] == cat for x in grp["listed"])
    assert len(grp["listed"]) == sum(items_by(items, cat, expect_a + expect_b))
    text = cli("compare", "--items", a, b, "--only", "a", "--resamples", "50")
    assert text.returncode == 0, text.stderr
    assert f"outcomes differ on {len(expect_a) + len(expect_b)} items: A right on {len(expect_a)}, B on {len(expect_b)}" in text.stdout
    assert "[A right, B wrong]" in text.stdout and "[B right, A wrong]" not in text.stdout
    assert "reference:" in text.stdout and "p randomisation" in text.stdout
    assert ("† too few units for its measured coverage" in text.stdout) is (len(items) < 100)
    # a paired CI on fewer than 100 items, or on clusters, is marked with what it rests on
    from glotbench.report.diff import diff_text
    from glotbench.stats import paired_too_few

    assert (paired_too_few(99), paired_too_few(100), paired_too_few(500, clusters=40)) == (True, False, True)
    few = {**grp, "test": {**grp["test"], "n": 40, "clusters": 8, "too_few_units": True}}
    assert "† too few units for its measured coverage: n=40‡8)" in diff_text(few)
    bad = cli("compare", "--items", a, b, "--only", "c")
    assert bad.returncode == 2 and "--only must be" in bad.stderr
    bad = cli("compare", "--items", a, b, "--group", "category")
    assert bad.returncode == 2 and "KEY=VALUE" in bad.stderr


def items_by(items, cat, ids):
    wanted = set(ids)
    return [1 for it in items if it.id in wanted and it.meta["category"] == cat]


def test_diff_refuses_different_item_sets_like_compare(two, tmp_path):
    tmp, a, b, *_ = two
    short = _replay(tmp_path, "short", lambda n: True, limit=5)
    r = cli("compare", "--items", a, short)
    assert r.returncode == 2 and r.stderr.startswith("error: the runs scored different item sets")
    assert "Traceback" not in r.stderr


def test_diff_page_filters_by_group_and_outcome(two, browser):  # noqa: F811
    tmp, a, b, items, expect_a, expect_b = two
    r = cli("compare", a, b, "--html", str(tmp / "diff.html"), "--resamples", "50")
    assert r.returncode == 0, r.stderr
    pg = Page(browser, tmp / "diff.html")
    p = pg.page
    counts = p.locator("#sample-count")
    assert counts.get_attribute("data-shown") == str(len(expect_a) + len(expect_b))
    p.select_option("#f-outcome", "B right, A wrong")
    assert counts.get_attribute("data-shown") == str(len(expect_b))
    p.select_option("#f-outcome", "A right, B wrong")
    cat = items[1].meta["category"]
    p.select_option("select[data-group='category']", cat)
    assert counts.get_attribute("data-shown") == str(sum(items_by(items, cat, expect_a)))
    p.locator(f"details.sample[data-id='{items[1].id}'] summary").click()
    sides = p.locator(f"details.sample[data-id='{items[1].id}'] .pair").first.locator("pre").all_inner_texts()
    assert sides[1] == HOSTILE and json.loads(sides[0])["restored_text"] == items[1].gold["references"][0]
    assert pg.dialogs == [] and pg.errors == [] and all(u.startswith("file:") for u in pg.requests)
    pg.close()


def test_diff_and_plan_count_a_circular_runs_items_not_its_rotations(tmp_path):
    """permute=circular runs: diff and plan --runs read the run as its aggregate did (per original
    item, right only if right in every rotation). Before, diff said 'circular accuracy over 16
    shared items: A 25.0' for a run whose circular accuracy is 0 (each rotation an item, the CI and
    the test over dependent rows), and plan counted 16 items at a base rate from the rotations."""
    from checks_models import write_mcq

    data = write_mcq(tmp_path / "mcq.jsonl")
    runs = []
    for name, fn in (("a", "always_a"), ("b", "knows_content")):
        r = cli("run", "laobench-mcq", "--data", data, "--model", f"python:checks_models:{fn}", "--bench-opt",
                "permute=circular", "--out", str(tmp_path / name), "--no-cache", "--no-progress")
        assert r.returncode == 0, r.stderr
        runs.append(str(tmp_path / name))
    r = cli("compare", "--items", *runs, "--format", "json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["items"] == 4 and d["test"]["a"] == 0.0 and d["test"]["b"] == 1.0  # circular accuracy, by hand
    assert d["differ"] == 4 and d["b_better"] == 4 and d["outcomes"] == "0/1"
    q1 = next(it for it in d["listed"] if it["id"] == "q1")
    assert q1["a"]["answer"] == ["A", "A", "A", "A"]  # the letter given in each rotation: follows the position
    assert q1["b"]["answer"] == ["B", "A", "D", "C"]  # Vientiane (gold B) wherever it stands
    p = cli("plan", "--runs", runs[0], "--runs", runs[1], "--format", "json")
    assert p.returncode == 0, p.stderr
    plan = json.loads(p.stdout)
    assert plan["items"] == 4 and plan["measured"]["accuracy_a"] == 0.0 and plan["measured"]["accuracy_b"] == 1.0
