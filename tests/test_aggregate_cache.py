"""A run whose every score is stored keeps its aggregate in the call cache: a fully cached re-run of
unchanged code reads it; anything that can change it (a sample's score, the items, the resamples,
the benchmark's options, the aggregating code) computes it afresh; the numbers are the same."""

from __future__ import annotations

import importlib
import os
import json
import sys

import pytest

from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
from glotbench.engine.cache import CallCache, code_fingerprint, storable
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.items import Item
from glotbench.metrics import ItemScore

N = 12


class Counting(VietnameseDiacritics):
    """vi-diacritics that counts its aggregates (per class: runs make new instances)."""

    aggregates = 0

    def aggregate(self, samples, dataset=None, **kw):
        type(self).aggregates += 1
        return super().aggregate(samples, dataset, **kw)


class Broken(Counting):
    """Item 3's scorer raises: its score is not stored, so neither is the run's aggregate."""

    def score(self, answer, item):
        if item.id == self._third:
            raise ValueError("no score for this one")
        return super().score(answer, item)

    _third = VietnameseDiacritics().load()[3].id


@pytest.fixture
def replay(tmp_path):
    items = VietnameseDiacritics().load()[:N]
    f = tmp_path / "preds.jsonl"
    rows = []
    for i, it in enumerate(items):
        ref = it.gold["references"][0]
        out = json.dumps({"restored_text": ref if i % 3 else it.public["text"]}, ensure_ascii=False)
        rows.append(json.dumps({"id": it.id, "output": out if i != 5 else "no JSON"}, ensure_ascii=False))
    f.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return f"replay:{f}"


def _run(bench, replay, cache_path, tmp_path, dataset=None, **kw):
    out = tmp_path / f"r{len(list(tmp_path.glob('r*')))}"
    kw.setdefault("limit", N)
    return evaluate(bench, replay, RunOptions(cache_path=cache_path, progress=False, out=str(out), **kw),
                    dataset=dataset)


def _stored(cache_path) -> int:
    """The benchmark aggregates kept (the table also keeps each run's checks: glotbench.checks)."""
    return CallCache(cache_path)._db.execute("SELECT COUNT(*) FROM aggregates WHERE key NOT LIKE 'checks:%'").fetchone()[0]


def test_a_fully_cached_rerun_reads_its_aggregate(replay, cache_path, tmp_path):
    Counting.aggregates = 0
    first = _run(Counting(), replay, cache_path, tmp_path)
    assert Counting.aggregates == 1 and _stored(cache_path) == 1
    second = _run(Counting(), replay, cache_path, tmp_path)
    assert Counting.aggregates == 1  # read, not computed
    assert second.results["counts"]["cache_hits"] == N
    assert second.results["scores"] == first.results["scores"]
    assert (tmp_path / "r1" / "results.json").read_text().count("ci_low") > 0
    # what was read is what the aggregate gives: computed afresh without the cache, the same
    recomputed = Counting().aggregate(list(second.samples), Counting().load(), resamples=1000)
    assert json.loads(json.dumps(recomputed)) == second.results["scores"]


def test_what_changes_the_aggregate_computes_it_afresh(replay, cache_path, tmp_path):
    Counting.aggregates = 0
    base = _run(Counting(), replay, cache_path, tmp_path)
    fewer = _run(Counting(), replay, cache_path, tmp_path, limit=N - 1)  # other items
    assert Counting.aggregates == 2 and fewer.results["scores"] != base.results["scores"]
    _run(Counting(), replay, cache_path, tmp_path, bootstrap_resamples=200)  # other resamples
    assert Counting.aggregates == 3
    _run(Counting(), replay, cache_path, tmp_path, bench_options=(("x", "1"),))  # other options
    assert Counting.aggregates == 4
    again = _run(Counting(), replay, cache_path, tmp_path)  # the first again: still kept
    assert Counting.aggregates == 4 and again.results["scores"] == base.results["scores"]
    assert _stored(cache_path) == 4


def test_other_groups_for_the_same_scores_compute_it_afresh(replay, cache_path, tmp_path):
    """An in-memory dataset (a judge phase's games) has no file hash: the same replies and scores
    under other group labels are another aggregate."""
    from glotbench.core import Dataset
    from glotbench.items import Item

    items = VietnameseDiacritics().load()[:N]
    relabel = Dataset([Item.create(it.id, dict(it.public), dict(it.gold), {"category": f"g{i % 2}"})
                       for i, it in enumerate(items)])
    Counting.aggregates = 0
    first = _run(Counting(), replay, cache_path, tmp_path, dataset=Dataset(items))
    second = _run(Counting(), replay, cache_path, tmp_path, dataset=relabel)
    assert second.results["counts"]["cache_hits"] == N  # the same replies and stored scores
    assert Counting.aggregates == 2
    assert set(second.results["scores"]["groups"]["category"]) == {"g0", "g1"}
    assert second.results["scores"]["groups"] != first.results["scores"]["groups"]


def test_an_unstored_score_means_no_stored_aggregate(replay, cache_path, tmp_path):
    Broken.aggregates = 0
    first = _run(Broken(), replay, cache_path, tmp_path)
    assert first.results["counts"]["failures"]["scorer_error"] == 1
    _run(Broken(), replay, cache_path, tmp_path)
    assert Broken.aggregates == 2 and _stored(cache_path) == 0


def test_without_the_cache_nothing_is_stored_or_read(replay, cache_path, tmp_path):
    Counting.aggregates = 0
    _run(Counting(), replay, cache_path, tmp_path, use_cache=False)
    _run(Counting(), replay, cache_path, tmp_path, use_cache=False)
    assert Counting.aggregates == 2


def test_the_code_fingerprint_follows_the_source(tmp_path, monkeypatch):
    """A development checkout that edits the aggregating code without a version bump gets a new key."""
    mod = tmp_path / "agg_plugin_fp.py"
    mod.write_text("class Agg:\n    def aggregate(self):\n        return 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    first = code_fingerprint(importlib.import_module("agg_plugin_fp").Agg)
    assert first == code_fingerprint(sys.modules["agg_plugin_fp"].Agg)
    mod.write_text("class Agg:\n    def aggregate(self):\n        return 2\n", encoding="utf-8")
    assert code_fingerprint(sys.modules["agg_plugin_fp"].Agg) != first
    assert code_fingerprint(VietnameseDiacritics) != code_fingerprint(Counting)  # this file is in Counting's


@pytest.mark.parametrize("value", [float("nan"), float("inf"), (1, 2), {"a": object()}, {1: "int key"}])
def test_what_does_not_survive_json_is_not_stored(value):
    assert storable({"scores": value}) is None


def test_plain_scores_are_stored_exactly():
    scores = {"overall": {"m": {"value": 0.1 + 0.2, "ci_low": None, "ci_high": 1e-300, "n": 3}}, "groups": {}}
    blob = storable(scores)
    assert blob is not None and json.loads(blob) == scores


# -- what the aggregate reads, beyond the score keys (review of the aggregate cache) ---------------

def _afresh(bench, result, dataset=None):
    """The aggregate computed now from the run's own samples, as results.json would carry it."""
    full = dataset if dataset is not None else bench.load()
    return json.loads(json.dumps(bench.aggregate(list(result.samples), full, resamples=1000)))


def test_new_replies_under_old_keys_compute_it_afresh(cache_path, tmp_path, monkeypatch):
    """The replies were deleted from the cache (or a concurrent run replaced them) and the model now
    answers otherwise: the score keys are the same (they name the call, not the reply), the samples
    are not, so the stored aggregate must not be served."""
    import sqlite3

    mod = tmp_path / "agg_model_flip.py"
    mod.write_text(
        "import json\nfrom glotbench.benchmarks.vi_diacritics import VietnameseDiacritics\n"
        "GOLD = {it.public['text']: it.gold['references'][0] for it in VietnameseDiacritics().load()}\n"
        "WRONG = False\n"
        "def fn(messages):\n"
        "    text = json.dumps(messages, ensure_ascii=False)\n"
        "    ref = next((r for s, r in GOLD.items() if json.dumps(s, ensure_ascii=False)[1:-1] in text), '?')\n"
        "    return json.dumps({'restored_text': 'sai' if WRONG else ref}, ensure_ascii=False)\n",
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    flip = importlib.import_module("agg_model_flip")
    first = _run(VietnameseDiacritics(), "python:agg_model_flip:fn", cache_path, tmp_path)
    assert first.results["scores"]["overall"]["sentence_exact"]["value"] == 1.0
    with sqlite3.connect(cache_path) as db:
        db.execute("DELETE FROM calls")
    flip.WRONG = True
    second = _run(VietnameseDiacritics(), "python:agg_model_flip:fn", cache_path, tmp_path)
    assert second.results["counts"]["model_calls"] == N
    assert second.results["scores"] == _afresh(VietnameseDiacritics(), second)
    assert second.results["scores"]["overall"]["sentence_exact"]["value"] == 0.0


def test_a_groups_file_edited_between_runs_computes_it_afresh(tmp_path, cache_path):
    """DeepSEA's resource groups come from `--bench-opt groups=FILE`: the key held the path only."""
    from glotbench.registry import get_benchmark

    bench = get_benchmark("deepsea-xquad")
    f = tmp_path / "preds.jsonl"
    f.write_text("".join(json.dumps({"id": it.id, "output": "<answer>x</answer>"}) + "\n" for it in bench.load()),
                 encoding="utf-8")
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps({"high": ["id", "th", "vi", "ms"], "low": ["lo"]}), encoding="utf-8")
    opts = (("groups", str(groups)),)
    first = _run("deepsea-xquad", f"replay:{f}", cache_path, tmp_path, limit=None, bench_options=opts)
    assert first.results["scores"]["resource_groups"]["high"]["value"] is None  # ms has no items
    groups.write_text(json.dumps({"high": ["th"], "low": ["vi"]}), encoding="utf-8")
    second = _run("deepsea-xquad", f"replay:{f}", cache_path, tmp_path, limit=None, bench_options=opts)
    assert second.results["counts"]["cache_hits"] == len(bench.load())
    assert second.results["scores"] == _afresh(get_benchmark("deepsea-xquad", groups=str(groups)), second)
    assert second.results["scores"]["resource_groups"]["high"]["languages"] == ["th"]


def test_a_benchmark_object_with_other_settings_computes_it_afresh(replay, cache_path, tmp_path):
    """A benchmark object (the library API, a judge phase) carries settings the options do not name."""
    Counting.aggregates = 0
    first = _run(Counting(), replay, cache_path, tmp_path)
    ungrouped = Counting()
    ungrouped.group_by = ()
    second = _run(ungrouped, replay, cache_path, tmp_path)
    assert second.results["counts"]["cache_hits"] == N
    assert "category" in first.results["scores"]["groups"] and second.results["scores"]["groups"] == {}


def test_code_with_no_source_file_is_never_kept(replay, cache_path, tmp_path, monkeypatch):
    """A class defined in a notebook cell or `python -c` has no file to fingerprint: editing it and
    running again must not read the aggregate of the old code."""
    import types

    def define(body: str):
        mod = types.ModuleType("agg_notebook_cell")  # no __file__, as IPython's __main__
        monkeypatch.setitem(sys.modules, "agg_notebook_cell", mod)
        exec("from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics\n"
             "class Cell(VietnameseDiacritics):\n"
             "    def aggregate(self, samples, dataset=None, **kw):\n"
             "        out = super().aggregate(samples, dataset, **kw)\n"
             f"        out['note'] = {body!r}\n"
             "        return out\n", mod.__dict__)
        return mod.Cell

    assert code_fingerprint(define("first")) is None
    first = _run(define("first")(), replay, cache_path, tmp_path)
    second = _run(define("second")(), replay, cache_path, tmp_path)
    assert first.results["scores"]["note"] == "first" and second.results["scores"]["note"] == "second"
    assert _stored(cache_path) == 0


def test_an_unreadable_stored_aggregate_is_computed_afresh(replay, cache_path, tmp_path):
    """A damaged row (not JSON) is no reason to lose a finished run: it is computed and rewritten."""
    import sqlite3

    first = _run(VietnameseDiacritics(), replay, cache_path, tmp_path)
    with sqlite3.connect(cache_path) as db:
        db.execute("UPDATE aggregates SET record = '{not json'")
    second = _run(VietnameseDiacritics(), replay, cache_path, tmp_path)
    assert second.results["scores"] == first.results["scores"]
    third = _run(VietnameseDiacritics(), replay, cache_path, tmp_path)
    assert third.results["scores"] == first.results["scores"]


def test_a_read_only_cache_made_before_the_aggregates_table_still_serves(replay, cache_path, tmp_path, monkeypatch):
    """A cache file written by the previous release (no `aggregates` table) and opened read-only (a
    shared, published cache) still gives its replies and scores: the run neither fails nor calls."""
    import sqlite3

    import glotbench.engine.cache as cache_mod

    first = _run(VietnameseDiacritics(), replay, cache_path, tmp_path)
    with sqlite3.connect(cache_path) as db:
        db.execute("DROP TABLE aggregates")
    sqlite3.connect(cache_path).execute("PRAGMA wal_checkpoint(TRUNCATE)")
    real = sqlite3.connect
    monkeypatch.setattr(cache_mod.sqlite3, "connect",
                        lambda path, **kw: real(f"file:{path}?mode=ro", uri=True, **kw))  # SQLite's own read-only mode
    again = _run(VietnameseDiacritics(), replay, cache_path, tmp_path)
    assert again.results["counts"]["cache_hits"] == N and again.results["counts"]["model_calls"] == 0
    assert again.results["scores"] == first.results["scores"]


@pytest.mark.skipif(not os.environ.get("GLOTBENCH_TEST_PG_URL"),
                    reason="no PostgreSQL server: set GLOTBENCH_TEST_PG_URL (.ci/run starts one)")
def test_a_read_only_role_on_a_postgresql_cache_of_the_previous_release_still_serves(replay, tmp_path):
    """The same for a cache in PostgreSQL read by a role that may not create tables."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    url = os.environ["GLOTBENCH_TEST_PG_URL"]
    engine = create_engine(url)
    with engine.begin() as conn:
        for table in ("glotbench_calls", "glotbench_scores", "glotbench_aggregates"):
            conn.execute(text(f"DROP TABLE IF EXISTS {table}"))
    try:
        first = _run(VietnameseDiacritics(), replay, url, tmp_path)
        with engine.begin() as conn:
            conn.execute(text("DROP TABLE glotbench_aggregates"))  # as the previous release left it
            conn.execute(text("DROP ROLE IF EXISTS glotbench_agg_reader"))
            conn.execute(text("CREATE ROLE glotbench_agg_reader LOGIN PASSWORD 'reader'"))
            conn.execute(text("GRANT USAGE ON SCHEMA public TO glotbench_agg_reader"))  # whatever the defaults
            conn.execute(text("GRANT SELECT ON glotbench_calls, glotbench_scores TO glotbench_agg_reader"))
            conn.execute(text("REVOKE CREATE ON SCHEMA public FROM PUBLIC"))
        reader = make_url(url).set(username="glotbench_agg_reader", password="reader")
        again = _run(VietnameseDiacritics(), replay, reader.render_as_string(hide_password=False), tmp_path)
        assert again.results["counts"]["cache_hits"] == N and again.results["counts"]["model_calls"] == 0
        assert again.results["scores"] == first.results["scores"]
    finally:
        with engine.begin() as conn:
            conn.execute(text("REVOKE ALL ON glotbench_calls, glotbench_scores FROM glotbench_agg_reader"))
            conn.execute(text("REVOKE ALL ON SCHEMA public FROM glotbench_agg_reader"))
            conn.execute(text("DROP ROLE IF EXISTS glotbench_agg_reader"))
        engine.dispose()


class PerCategory(VietnameseDiacritics):
    """Scores carry a per-category statistic read from the item's meta, as DeepSEA IndoMMLU's
    `correct:<subject>` (and LaoBench's scorer reads the public `direction`, which no prompt shows)."""

    def score(self, answer, item):
        s = super().score(answer, item)
        c = item.meta["category"]
        return ItemScore({**s.stats, f"exact:{c}": s.stats["exact"]}, s.flags, s.failure)


def test_an_item_relabelled_under_the_same_prompt_and_gold_is_scored_afresh(replay, cache_path, tmp_path):
    """A stored score is keyed by what the scorer reads of the item (meta, public fields), not only
    its id and gold: a dataset fix that relabels an item's category keeps the request, yet a cached
    re-run must score as a run without the cache does."""
    bench = PerCategory()
    items = list(bench.load()[:N])
    before = bench.dataset(items, "memory")
    after = bench.dataset([Item.create(it.id, it.public, it.gold, {"category": "relabelled"}) for it in items],
                          "memory")
    _run(PerCategory(), replay, cache_path, tmp_path, dataset=before)
    cached = _run(PerCategory(), replay, cache_path, tmp_path, dataset=after)
    fresh = _run(PerCategory(), replay, cache_path, tmp_path, dataset=after, use_cache=False)
    assert cached.results["counts"]["cache_hits"] == N
    assert [dict(s.score.stats) for s in cached.samples] == [dict(s.score.stats) for s in fresh.samples]
    assert any("exact:relabelled" in s.score.stats for s in cached.samples)
    assert cached.results["scores"] == fresh.results["scores"]
