"""A run reads its units' cached replies a chunk at a time (`get_many`): what `get` gives for each
key, on SQLite and on PostgreSQL; queued and committed replies alike; a damaged row is a miss; more
keys than one query holds."""

from __future__ import annotations

import os
import uuid

import pytest

from glotbench.engine.cache import CallCache, open_cache
from glotbench.models.base import Response, Usage


def _store(cache) -> dict[str, str]:
    """A cache holding 1,200 committed replies, 3 queued ones, and one damaged row (SQLite only,
    where a row can be written behind the cache's back); returns the texts by key."""
    tag = uuid.uuid4().hex[:8]
    texts = {f"{tag}-{i:05d}": f"reply {i} · Sáng nay" for i in range(1203)}
    for i, (key, text) in enumerate(texts.items()):
        cache.put(key, "m", Response(text, "stop", Usage(3, 4), 0.1, raw={"id": str(i)}))
        if i == 1199:
            cache.flush()  # the last 3 stay queued
    return texts


def _check(cache, texts: dict[str, str], damaged: str | None) -> None:
    keys = [*texts, "no-such-key", *(["no-such-key"] * 2)]
    got = cache.get_many(keys)
    for key in keys:
        one = cache.get(key)
        assert (got.get(key) is None) == (one is None), key
        if one is not None:
            assert got[key] == one and got[key].text == texts[key]
    assert len(got) == len(texts) - (damaged is not None)
    assert cache.get_many([]) == {}


def test_get_many_is_get_for_each_key_sqlite(tmp_path):
    cache = CallCache(tmp_path / "calls.sqlite")
    texts = _store(cache)
    damaged = next(iter(texts))
    cache._db.execute("UPDATE calls SET response = ? WHERE key = ?", ("{not json", damaged))
    _check(cache, texts, damaged)
    cache.close()


@pytest.mark.skipif(os.environ.get("GLOTBENCH_TEST_PG_URL") is None,
                    reason="no PostgreSQL server: set GLOTBENCH_TEST_PG_URL (.ci/run starts one)")
def test_get_many_is_get_for_each_key_postgresql():
    cache = open_cache(os.environ["GLOTBENCH_TEST_PG_URL"])
    texts = _store(cache)
    _check(cache, texts, None)
    cache.flush()


@pytest.mark.parametrize("concurrency", [1, 4])
def test_an_item_repeated_in_the_data_reads_the_reply_the_run_stored(tmp_path, concurrency):
    """Units are looked up 64 at a time, before any is sent; an item whose prompt is an earlier
    item's (every 10th: the same question under another id) reads the reply stored since, when its
    turn comes. With one in flight every repeat finds it; with four, a repeat sent while the first
    is still out is asked again, as when each unit was looked up alone."""
    import json

    import helpers
    from glotbench.engine.evaluate import RunOptions, evaluate

    base = {"data_type": "Knowledge Application", "question": "Capital of Laos?", "A": "Luang Prabang",
            "B": "Vientiane", "C": "Pakse", "D": "Savannakhet", "answer": "B", "lang": "en"}
    rows = [dict(base, id=f"q{i}", **({} if i % 10 == 0 else {"question": f"Question number {i}?"}))
            for i in range(200)]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    helpers.PROMPTS_ASKED.clear()
    res = evaluate("laobench-mcq", "python:helpers:counted_letter",
                   RunOptions(data=str(data), out=str(tmp_path / "run"), cache_path=str(tmp_path / "c.sqlite"),
                              progress=False, concurrency=concurrency)).results
    asked = helpers.PROMPTS_ASKED
    assert len(set(asked)) == 181  # every distinct prompt asked
    assert len(asked) == 181 if concurrency == 1 else 181 <= len(asked) <= 181 + concurrency
    assert res["counts"]["cache_hits"] == 200 - len(asked) and res["counts"]["model_calls"] == len(asked)
